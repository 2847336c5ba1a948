"""The benchmark's fp16/bf16 wgmma matmuls and causal attention with their cp.async rings (sm_90a PTX) run by the
PTX interpreter (dot_ptx_sim.py: cp.async, swizzled descriptors; reduce_ptx_sim.py for the softmax) against
float64: the descriptors are built once from a ring's slot 0 and moved to the slot and k step of each
instruction by 64-bit adds (to_llvm/dot_wgmma.py `Descriptors`), the slots' copies use 32-bit shared addresses
(dot_async.py), and a dot without an accumulator issues its first k step with scale-d 0 (`zero_accumulator`).
More k steps than stages, so every slot is reused."""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest
import torch

from dot_ptx_sim import Machine
from filecheck_tool import filecheck
from reduce_ptx_sim import ReduceMachine
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from model_benchmarks import dot_kernels
from test_pipeline_async_copies import _matmul_specs

needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")

DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16}


@pytest.fixture(autouse=True)
def rings_on(monkeypatch):
    monkeypatch.setenv("TILE_PIPELINE", "1")
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    monkeypatch.delenv("TILE_WGMMA", raising=False)


def _matmul_ptx(blocks: tuple[int, int, int], warps: int, dtype: str, out: str = "fp32") -> str:
    specs = _matmul_specs(*blocks, out=out, operands=dtype)
    return compile_specialized(dot_kernels.matmul_kernel, specs, target="cuda:90", num_warps=warps, native=False,
                               num_stages=3).asm["ptx"]


@needs_ptxas
@pytest.mark.parametrize("blocks,warps,dtype", [((128, 128, 32), 4, "fp16"), ((128, 128, 32), 8, "bf16"),
                                                ((128, 256, 64), 8, "fp16"), ((128, 64, 32), 4, "bf16")],
                         ids=["128x128x32-4w-fp16", "128x128x32-8w-bf16", "128x256x64-8w-fp16", "128x64x32-4w-bf16"])
def test_ring_matmul_ptx_computes_the_product(blocks, warps, dtype):
    ptx = _matmul_ptx(blocks, warps, dtype)
    assert re.search(r"wgmma\.mma_async\S+ \{[^}]*\}, %rd\d+, %rd\d+, p, 1, 1, 0, 1;", ptx)  # a K-major, b MN-major
    _run_matmul(ptx, blocks, warps, dtype)


def test_descriptors_are_moved_not_rebuilt(tmp_path):
    """In the loop, each operand's descriptor for the slot is one 64-bit add to the loop-invariant one of slot 0,
    every further instruction's one add of a constant: no shift or mask of an address per instruction."""
    ptx = _matmul_ptx((128, 128, 32), 4, "fp16")
    body = ptx[ptx.index("cp.async.wait_group 1;"):ptx.index("wgmma.commit_group.sync.aligned;")]
    # (16-byte units) a: rows of 64 bytes, one per m: the second m64 instruction 4096 bytes (256) on, a k step of
    # 16 elements 32 bytes (2); b: rows of 128 bytes, one per k: a k step of 16 rows 2048 bytes (128) on
    filecheck(body, """
CHECK: bar.sync
CHECK-COUNT-2: add.s64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, [[SLOT:%rd[0-9]+]];
CHECK: wgmma.fence.sync.aligned;
CHECK: wgmma.mma_async{{.*}}, [[A:%rd[0-9]+]], [[B:%rd[0-9]+]], p, 1, 1, 0, 1;
CHECK: add.s64 [[A2:%rd[0-9]+]], [[A]], 256;
CHECK: wgmma.mma_async{{.*}}, [[A2]], [[B]], p, 1, 1, 0, 1;
CHECK-DAG: add.s64 [[B2:%rd[0-9]+]], [[B]], 128;
CHECK-DAG: {{add.s64|or.b64}} [[A3:%rd[0-9]+]], [[A]], 2;
CHECK: wgmma.mma_async{{.*}}, [[A3]], [[B2]], p, 1, 1, 0, 1;
CHECK: add.s64 [[A4:%rd[0-9]+]], [[A]], 258;
CHECK: wgmma.mma_async{{.*}}, [[A4]], [[B2]], p, 1, 1, 0, 1;
""", tmp_path)
    a, b = re.search(r"wgmma\.mma_async\S+ \{[^}]*\}, (%rd\d+), (%rd\d+),", body).groups()
    moves = {target: slot for target, slot in re.findall(r"add\.s64\s+(%rd\d+), %rd\d+, (%rd\d+);", body)}
    assert moves[a] == moves[b]  # slot 0's descriptors plus the slot's distance (the same for a and b: 8 KiB slots)
    assert not re.search(r"\b(shr|bfe|and)\.[bu](32|64)\b", body[body.index("wgmma.fence"):])


def _run_matmul(ptx: str, blocks: tuple[int, int, int], warps: int, dtype: str, size: tuple[int, int] | None = None,
                out_dtype: type = np.float32) -> None:
    """Run program 0 of a matmul over five k steps (the last masked at K) and compare with float64. K is a
    multiple of 16, as the specialization (`_matmul_specs`) promises: the compiler may share a `k < K` bit
    over 16 rows. `size`: M and N below the block (multiples of 16 too), c's rows 16 elements longer than N
    and 16 more rows than M: the product lands in c[:M, :N] and the rest keeps its NaN."""
    block_m, block_n, block_k = blocks
    (M, N), K = size or (block_m, block_n), 5 * block_k - 16
    gen = torch.Generator().manual_seed(block_n + warps)
    a, b = (torch.randn(shape, generator=gen).to(DTYPES[dtype]) for shape in ((M, K), (K, N)))
    stride_cm = N + 16 if size else N
    out = np.full((M + 16 if size else M, stride_cm), np.nan, dtype=out_dtype)
    # M, N, K, then the strides of a, b and c by their positions among the parameters
    scalars = {str(i): value for i, value in enumerate((M, N, K, K, 1, N, 1, stride_cm, 1), start=3)}
    machine = Machine(ptx, 32 * warps, [a.view(torch.int16).numpy(), b.view(torch.int16).numpy(), out], scalars)
    machine.run(max_steps=2000000)
    everything = torch.from_numpy(machine.buffer(2, out).astype(np.float64))
    got, exact = everything[:M, :N], a.double() @ b.double()
    assert not got.isnan().any()
    assert (got - exact).abs().max() / exact.abs().max() <= (1e-5 if out_dtype == np.float32 else 1e-3)
    outside = torch.ones_like(everything, dtype=torch.bool)
    outside[:M, :N] = False
    assert everything[outside].isnan().all()


@needs_ptxas
@pytest.mark.parametrize("blocks,warps,dtype,out,size,stores", [
    ((128, 128, 32), 8, "fp16", "fp16", (80, 112), 1),  # c in a blocked layout: a thread's 8 rows 16 apart
    ((128, 128, 32), 4, "fp16", "fp32", (112, 48), 4),  # 32 rows 4 apart: a row compare serves 4 (constancy 16)
    ((128, 64, 32), 4, "bf16", "fp32", (16, 64), 2),  # 16 rows 8 apart
], ids=["128x128x32-8w-fp16-c16", "128x128x32-4w-fp16-c32", "128x64x32-4w-bf16-c32"])
def test_ring_matmul_stores_only_rows_and_columns_of_c(blocks, warps, dtype, out, size, stores, tmp_path):
    """M and N below the block: the store's mask `(rows < M) & (cols < N)`. M divisible by 16, the epilogue
    compares a thread's rows once per 16 (BLOCK_M / 16 = 8 compares), each just before the `and` with the
    column bit that predicates the stores of those rows; no bit of the mask is packed into an integer (selp)."""
    ptx = _matmul_ptx(blocks, warps, dtype, out)
    epilogue = "\n".join(line for line in ptx[ptx.rindex("wgmma.wait_group"):].splitlines()
                         if not line.strip().startswith("//"))
    assert not re.search(r"selp\.b(16|32|64)\s+%\w+, -?1, 0,", epilogue)
    group = "CHECK: setp.lt.s32 [[R{i}:%p[0-9]+]]\nCHECK: and.pred [[P{i}:%p[0-9]+]], {{{{.*}}}}[[R{i}]]\n" \
            "CHECK-NOT: setp\nCHECK: @[[P{i}]] st.global\n" + "CHECK-NEXT: @[[P{i}]] st.global\n" * (stores - 1)
    filecheck(epilogue, "".join(group.format(i=i) for i in range(blocks[0] // 16))
              + "CHECK-NOT: {{setp|st.global}}\n", tmp_path)
    _run_matmul(ptx, blocks, warps, dtype, size, np.float16 if out == "fp16" else np.float32)


@needs_ptxas
def test_more_shared_memory_than_the_start_field_covers_builds_each_descriptor(monkeypatch):
    """A target whose shared memory could reach 2^18 bytes: adding to the 14-bit start field could carry out
    of it, so each instruction's descriptor is built from its own address (and still computes the product)."""
    from inductor_tile.kernel_compiler.to_llvm.targets import nvidia

    monkeypatch.setitem(nvidia.MAX_SHARED_BYTES, 90, (1 << 18) - 1024 + 16)
    ptx = _matmul_ptx((128, 128, 32), 4, "fp16")
    body = ptx[ptx.index("wgmma.fence.sync.aligned;"):ptx.index("wgmma.commit_group.sync.aligned;")]
    assert len(re.findall(r"\b(?:shr|bfe)\.u(?:32|64)\b", body)) >= 4  # a start field per descriptor
    _run_matmul(ptx, (128, 128, 32), 4, "fp16")


def _attention_ptx(head_dim: int, block_m: int, block_n: int, warps: int, num_stages: int = 3) -> str:
    signature = dict(dot_kernels.ATTENTION_SIGNATURE)
    constexprs = {"HEAD_DIM": head_dim, "BLOCK_M": block_m, "BLOCK_N": block_n}
    specs = [spec_from_signature(n, signature[n], divisible_by_16=signature[n] != "fp32") if n in signature
             else spec_from_signature(n, "constexpr", constexprs[n])
             for n in dot_kernels.attention_fwd_kernel.arg_names]
    return compile_specialized(dot_kernels.attention_fwd_kernel, specs, target="cuda:90", num_warps=warps,
                               native=False, num_stages=num_stages).asm["ptx"]


@needs_ptxas
@pytest.mark.parametrize("head_dim,block_m,block_n,warps", [(64, 64, 16, 4), (32, 128, 32, 8)])
def test_attention_ptx_computes_causal_attention(head_dim, block_m, block_n, warps):
    """The scores' dot (q from registers, no accumulator) starts with scale-d 0; program 0 (the interpreter's)
    reads its keys over four iterations (every slot of the 3-stage rings reused)."""
    ptx = _attention_ptx(head_dim, block_m, block_n, warps)
    assert re.search(r"wgmma\.mma_async\S+ \{[^}]*\}, \{[^}]*\}, %rd\d+, 0, 1, 1, \d;", ptx)  # scale-d 0
    _run_attention(ptx, head_dim, block_m, warps)


@needs_ptxas
@pytest.mark.parametrize("pipeline,num_stages", [("resident", 3), ("resident,nofence", 3), ("resident", 2)])
@pytest.mark.parametrize("head_dim,block_m,block_n,warps", [(64, 64, 16, 4), (32, 128, 32, 8)])
def test_attention_resident_q_ptx_computes_causal_attention(head_dim, block_m, block_n, warps, pipeline, num_stages,
                                                            monkeypatch):
    """TILE_PIPELINE=resident: q copied by cp.async into its one slot with the first group, the scores' dot reading
    it through descriptors (a K-major, scale-d 0; with two warpgroups each from its own 64 rows)."""
    monkeypatch.setenv("TILE_PIPELINE", pipeline)
    ptx = _attention_ptx(head_dim, block_m, block_n, warps, num_stages)
    assert re.search(r"wgmma\.mma_async\S+ \{[^}]*\}, %rd\d+, %rd\d+, 0, 1, 1, 0, \d;", ptx)
    _run_attention(ptx, head_dim, block_m, warps)


def _run_attention(ptx: str, head_dim: int, block_m: int, warps: int) -> None:
    seq_len = 2 * block_m
    gen = torch.Generator().manual_seed(head_dim)
    q, k, v = (torch.randn(1, seq_len, head_dim, generator=gen).half() for _ in range(3))
    out = np.full((1, seq_len, head_dim), np.nan, dtype=np.float16)
    scale = head_dim ** -0.5
    values = {"seq_len": seq_len, "scale": int(np.float32(scale).view(np.uint32)),
              **{f"stride_{t}h": seq_len * head_dim for t in "qkvo"},
              **{f"stride_{t}": head_dim for t in ("qm", "kn", "vn", "om")}}
    order = [n for n in dot_kernels.ATTENTION_SIGNATURE if not n.endswith("_ptr")]
    scalars = {str(4 + i): values[name] for i, name in enumerate(order)}  # after the four pointers
    buffers = [t.view(torch.int16).numpy() for t in (q, k, v)] + [out.view(np.int16)]
    machine = ReduceMachine(ptx, 32 * warps, buffers, scalars)  # softmax: exp2, NaN-aware max, shuffles
    machine.run(max_steps=4000000)
    got = torch.from_numpy(machine.buffer(3, out.view(np.int16)).view(np.float16)).double()
    expected = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True,
                                                                scale=scale)
    assert not got[:, :block_m].isnan().any()  # program 0: the first block of queries
    assert (got[:, :block_m] - expected[:, :block_m]).abs().max() <= 2e-3
