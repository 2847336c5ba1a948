"""The wgmma ring loops of the benchmark's matmuls (issue 21): as lean as Triton's where the lowering decides.

- every wgmma descriptor of a dot is its operand's first descriptor plus a constant (one 64-bit add), not a
  start address shifted and masked again per instruction (to_llvm/dot_wgmma.py `descriptor_at`);
- a run of a thread's slots consecutive in memory but copied one element at a time (tf32 b: 4-byte copies
  along N into K-major tiles) reads from one 64-bit address plus immediates (to_llvm/dot_async.py);
- a tf32 ring's slots are sized with the padding the lowering will choose, so that the 128x256x64 fp32 matmul
  gets two stages in sm_90's shared memory instead of the register prefetch that spilled;
- the PTX of those loops, run by the PTX interpreter (dot_ptx_sim.py) on random inputs with edges in M, N and
  K and a NaN-poisoned output, matches a float64 product.
"""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest
import torch

from dot_ptx_sim import Machine
from filecheck_tool import filecheck
from model_benchmarks import dot_kernels
from test_pipeline_async_copies import SM90_SHARED, _matmul_specs, _ptx, _ttgir
from tf32_reference import tf32_truncated

needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@pytest.fixture(autouse=True)
def default_pipeline(monkeypatch):
    """What the benchmark compiles: wgmma rings on sm_90 by default, no cache."""
    monkeypatch.delenv("TILE_PIPELINE", raising=False)
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")


def _instructions(ptx: str) -> str:
    """The PTX without comment lines (inline asm markers), so that CHECK-NEXT sees instruction after instruction."""
    return "\n".join(line for line in ptx.splitlines() if not line.strip().startswith("//"))


@needs_ptxas
@pytest.mark.parametrize("operands,blocks,num_warps", [("fp16", (128, 128, 64), 4), ("bf16", (128, 256, 64), 8),
                                                       ("fp32", (128, 128, 32), 4)])
def test_wgmma_descriptors_step_from_one_base(operands, blocks, num_warps, tmp_path):
    ptx, report, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(*blocks, operands=operands), 90, 3,
                          num_warps=num_warps)
    # between the dot's first and last instruction: constant adds to the descriptors, nothing recomputed
    filecheck(_instructions(ptx), """
CHECK: wgmma.fence.sync.aligned
CHECK: wgmma.mma_async
CHECK-NOT: {{bfe|shr|shl|cvt|and\\.b}}
CHECK: wgmma.commit_group.sync.aligned
""", tmp_path)
    body = _instructions(ptx).split("wgmma.mma_async", 1)[1].split("wgmma.commit_group", 1)[0]
    others = [line.strip() for line in body.splitlines()[1:] if line.strip() and "wgmma.mma_async" not in line]
    assert others and all(re.fullmatch(r"(add\.s64|or\.b64) %rd\d+, %rd\d+, \d+;|mov\.b32 %r\d+, 1;",
                                       " ".join(line.split())) for line in others), others
    assert " 0 bytes spill stores" in report and "serialized" not in report, report


@needs_ptxas
def test_tf32_b_copies_read_one_address_per_run(tmp_path):
    """b [K, N] with unit stride along N: a thread's 4 consecutive columns are 4 copies into the K-major tile
    (16 bytes apart there) from one source register, 4 bytes apart."""
    ptx, report, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32, operands="fp32"), 90, 3)
    filecheck(_instructions(ptx), """
CHECK: cp.async.ca.shared.global [%r{{[0-9]+}} + {{[0-9]+}}], [%rd[[A:[0-9]+]]], 4,
CHECK-NEXT: cp.async.ca.shared.global [%r{{[0-9]+}} + {{[0-9]+}}], [%rd[[A]] + 4], 4,
CHECK-NEXT: cp.async.ca.shared.global [%r{{[0-9]+}} + {{[0-9]+}}], [%rd[[A]] + 8], 4,
CHECK-NEXT: cp.async.ca.shared.global [%r{{[0-9]+}} + {{[0-9]+}}], [%rd[[A]] + 12], 4,
""", tmp_path)
    copies = re.findall(r"cp\.async\.ca\.shared\.global \[[^]]*\], \[(%rd\d+)(?: \+ (\d+))?\], 4,", ptx)
    heads = [register for register, immediate in copies if not immediate]
    assert copies and len(heads) * 4 == len(copies)  # a quarter of the addresses


@needs_ptxas
def test_tf32_128x256x64_rings_fit_two_stages(tmp_path):
    specs = _matmul_specs(128, 256, 64, operands="fp32")
    text = _ttgir(dot_kernels.matmul_kernel, specs, mma_version=3, num_stages=3, num_warps=8)
    filecheck(text, """
CHECK: ttg.ring_alloc : !ttg.ring<2x128x64xf32>
CHECK: ttg.ring_alloc : !ttg.ring<2x64x256xf32>
CHECK: scf.for
CHECK: ttg.async_copy
""", tmp_path)
    ptx, report, shared = _ptx(dot_kernels.matmul_kernel, specs, 90, 3, num_warps=8)
    assert "cp.async" in ptx and shared <= SM90_SHARED
    assert " 0 bytes spill stores" in report, report


def test_b_copies_add_the_loop_offsets_to_pointers_from_before_the_loop(tmp_path):
    """ring_addresses.py: `b_ptr + k[:, None] * stride_bk + cols[None, :]`'s copies take `b_ptr + cols` (at the
    columns' shape, broadcast) from before the loop and add the broadcast row offsets in it."""
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 64), mma_version=3, num_stages=3)
    filecheck(text, """
CHECK: %[[SPLAT:[0-9]+]] = tt.splat %1 : !tt.ptr<f16> -> tensor<1x128x!tt.ptr<f16>
CHECK-NEXT: %[[COLS:[0-9]+]] = tt.addptr %[[SPLAT]], %{{[0-9]+}} : tensor<1x128x!tt.ptr<f16>
CHECK-NEXT: %[[WIDE:[0-9]+]] = tt.broadcast %[[COLS]] : tensor<1x128x!tt.ptr<f16>, {{.*}} -> tensor<64x128x!tt.ptr<f16>
CHECK: scf.for
CHECK: %[[ROWS:[0-9]+]] = tt.broadcast %{{[0-9]+}} : tensor<64x1xi32, {{.*}} -> tensor<64x128xi32
CHECK-NEXT: %[[B:[0-9]+]] = tt.addptr %[[WIDE]], %[[ROWS]]
CHECK: ttg.async_copy %{{[0-9]+}}, %{{[0-9]+}}, %[[B]]
""", tmp_path)


@needs_ptxas
def test_fp16_loop_addresses_stay_32_bit_until_the_last_multiply_add():
    ptx, _, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 64, out="fp16"), 90, 3)
    loop = ptx.split("cp.async.wait_group 1;")[1].split("cp.async.wait_group 0;")[0]
    assert "shl.b64" not in loop and "cvt.s64.s32" not in loop  # 64-bit: only mul.wide and add
    assert loop.count("mul.wide.s32") == 9  # a: one k offset for its 8 row pointers; b: one per row


def test_epilogue_store_takes_one_pointer_per_column_run(tmp_path):
    """ring_addresses.py `contiguous_offsets_first`: after a ring loop, `c_ptr + rows[:, None] * stride_cm +
    cols[None, :]` is stored through `c_ptr + cols` (at the columns' shape, broadcast) plus the rows' offsets."""
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32, operands="fp32"), mma_version=3,
                  num_stages=3)
    filecheck(text, """
CHECK: ttg.async_wait {pending = 0 : i32}
CHECK: %[[SPLAT:[0-9]+]] = tt.splat %2 : !tt.ptr<f32> -> tensor<1x128x!tt.ptr<f32>
CHECK-NEXT: %[[COLS:[0-9]+]] = tt.addptr %[[SPLAT]], %{{[0-9]+}} : tensor<1x128x!tt.ptr<f32>
CHECK-NEXT: %[[WIDE:[0-9]+]] = tt.broadcast %[[COLS]] : tensor<1x128x!tt.ptr<f32>, {{.*}} -> tensor<128x128x!tt.ptr<f32>
CHECK-NEXT: %[[ROWS:[0-9]+]] = tt.broadcast %{{[0-9]+}} : tensor<128x1xi32, {{.*}} -> tensor<128x128xi32
CHECK-NEXT: %[[C:[0-9]+]] = tt.addptr %[[WIDE]], %[[ROWS]]
CHECK-NEXT: tt.store %[[C]]
""", tmp_path)


@needs_ptxas
def test_tf32_matmul_registers_at_most_triton_s():
    """The tf32 128x128x32 matmul (4 warps) held 254 registers, its epilogue's 64-bit addresses computed while
    the accumulator was live; Triton 3.6 takes 216 for the same source."""
    _, report, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32, operands="fp32"), 90, 3)
    registers = int(re.search(r"Used (\d+) registers", report).group(1))
    assert registers <= 216 and " 0 bytes spill stores" in report, report


def _scalars(M: int, N: int, K: int) -> dict[int, int]:
    names = dot_kernels.matmul_kernel.arg_names
    values = {"M": M, "N": N, "K": K, "stride_am": K, "stride_ak": 1, "stride_bk": N, "stride_bn": 1,
              "stride_cm": N, "stride_cn": 1}
    return {names.index(name): value for name, value in values.items()}


@needs_ptxas
@pytest.mark.parametrize("operands,torch_dtype", [("fp16", torch.float16), ("bf16", torch.bfloat16),
                                                  ("fp32", torch.float32)])
def test_ring_matmul_ptx_computes_the_product(operands, torch_dtype):
    """One program of the 128x128x64 (fp32: x32) matmul over a 112 x 120 x (2.5 blocks of K) problem: ring
    wrap-around, masked rows, columns and k, the descriptors and source immediates of the loop."""
    block_k = 32 if operands == "fp32" else 64
    M, N, K = 112, 120, 5 * block_k // 2
    ptx, _, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(128, 128, block_k, operands=operands), 90, 3)
    gen = torch.Generator().manual_seed(7)
    a, b = (torch.randn(shape, generator=gen).to(torch_dtype) for shape in ((M, K), (K, N)))
    out = np.full((M, N), np.nan, dtype=np.float32)
    as_numpy = (lambda t: t.view(torch.int16).numpy()) if torch_dtype == torch.bfloat16 else (lambda t: t.numpy())
    machine = Machine(ptx, 128, [as_numpy(a), as_numpy(b), out], _scalars(M, N, K))
    machine.run(max_steps=2_000_000)
    got = torch.from_numpy(machine.buffer(2, out)).double()
    assert not got.isnan().any()
    reference = (lambda t: tf32_truncated(t)) if operands == "fp32" else (lambda t: t.double())
    expected = reference(a) @ reference(b)
    error = ((got - expected).abs().max() / expected.abs().max()).item()
    assert error <= 1e-5, error


@needs_ptxas
@pytest.mark.parametrize("head_dim", [64, 128])
def test_ring_attention_ptx_computes_causal_attention(head_dim):
    """The first block of queries (128, 8 warps) over 100 keys in blocks of 32: k and v through rings whose
    copies add the loop's key offsets to pointers computed before the loop (ring_addresses.py), the last
    block masked; float64 causal softmax(q k^T * scale) v as the reference."""
    from dot_kernel_specs import attention_specs
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from reduce_ptx_sim import ReduceMachine  # the dot machine with the softmax's instructions

    seq_len, scale = 100, 0.125
    ptx = compile_specialized(dot_kernels.attention_fwd_kernel, attention_specs(head_dim, 128, 32), target="cuda:90",
                              num_warps=8, native=False, num_stages=3).asm["ptx"]
    assert "cp.async" in ptx and "wgmma.mma_async" in ptx
    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn((seq_len, head_dim), generator=gen).half() for _ in range(3))
    out = np.full((seq_len, head_dim), np.nan, dtype=np.float16)
    names = dot_kernels.attention_fwd_kernel.arg_names
    scalars = {"seq_len": seq_len, "scale": int(np.float32(scale).view(np.uint32)),
               **{f"stride_{t}h": seq_len * head_dim for t in "qkvo"},
               **{f"stride_{t}": head_dim for t in ("qm", "kn", "vn", "om")}}
    machine = ReduceMachine(ptx, 256, [q.numpy(), k.numpy(), v.numpy(), out],
                      {names.index(name): value for name, value in scalars.items()})
    machine.run(max_steps=5_000_000)
    got = torch.from_numpy(machine.buffer(3, out)).double()
    scores = (q.double() @ k.double().T) * scale
    scores = scores.masked_fill(torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1), float("-inf"))
    expected = torch.softmax(scores, dim=1) @ v.double()
    assert not got.isnan().any()
    assert (got - expected).abs().max() <= 2e-2, (got - expected).abs().max()


def test_a_zero_accumulator_is_neither_zeroed_nor_read(tmp_path):
    """Attention's q k^T starts from zeros: its first wgmma per block takes scale-d false and undefined inputs
    (to_llvm/dot_wgmma.py `zero_accumulator`), the next ones add; no register is zeroed per iteration."""
    from dot_kernel_specs import attention_specs
    from inductor_tile.kernel_compiler.compiler import compile_specialized

    compiled = compile_specialized(dot_kernels.attention_fwd_kernel, attention_specs(64), target="cuda:90",
                                   num_warps=4, native=False, num_stages=3)
    filecheck(compiled.asm["llir"], """
CHECK: wgmma.mma_async.sync.aligned.m64n64k16
CHECK-SAME: (i64 %{{[^,]+}}, i64 %{{[^,]+}}, i32 0, float undef
CHECK-COUNT-3: (i64 %{{[^,]+}}, i64 %{{[^,]+}}, i32 1, float %
CHECK: wgmma.mma_async.sync.aligned.m64n64k16
CHECK-SAME: i32 1, float %
""", tmp_path)
    loop = compiled.asm["ptx"].split("cp.async.wait_group 1;")[1].split("cp.async.wait_group 0;")[0]
    assert loop.count("mov.b32") < 8, loop.count("mov.b32")  # not 32 zeroed accumulator registers


@needs_ptxas
def test_the_iteration_bound_is_tested_once_per_operand_copy_group():
    """The copies' sizes: `in range ? 16 : 0` once (dot_async.py `_copy_sizes`), then one select per copy for
    its own mask bits, not a chain through the loop's bound per copy."""
    ptx, _, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 64, out="fp16"), 90, 3)
    loop = _instructions(ptx).split("cp.async.wait_group 1;")[1].split("cp.async.wait_group 0;")[0]
    loop = "\n".join(" ".join(line.split()) for line in loop.splitlines())
    first = re.search(r"selp\.b32 (%r\d+), 16, 0, (%p\d+);", loop)
    assert first, loop
    predicate = first.group(2)
    selects = re.findall(r"selp\.b32 %r\d+, (%r\d+|\d+), 0, (%p\d+);", loop)
    assert sum(p == predicate for _, p in selects) == 1  # the bound, once
    assert len(selects) <= 2 * 16  # a's 8 and b's 8 copies
