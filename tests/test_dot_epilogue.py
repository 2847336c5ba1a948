"""The mma accumulator leaving its layout through shared memory with vector accesses
(`to_llvm/dot_epilogue.py`), checked without a GPU.

- Simulated: every thread stores its runs of the mma layout at row * stride + column, then loads its
  runs of the store layout; each run is aligned for its vector width, and every thread gets back the
  elements its new layout names.
- Banks: with the chosen padding, warp 0's accesses take the fewest wavefronts 128-byte phases allow
  (the unpadded rows: four times as many for the stores), for rows of 128 bytes or more.
- PTX: the matmul's epilogue stores pairs (st.shared.v2 for fp32, one 32-bit store per fp16 pair) and
  loads 16 bytes at a time, instead of one element per instruction, on sm_80 and sm_90a; the runs a
  constant distance from a thread's first are addressed from one register with immediate offsets
  (`constant_deltas`): an address per run, next to the live accumulators, cost the benchmark's matmuls
  18-53 registers; and a half-result matmul run by the PTX interpreter gets the product.
"""

from __future__ import annotations

import platform
import re

import pytest

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.ir.dot_layouts import NvidiaMma
from inductor_tile.kernel_compiler.ir.layouts import Blocked, LayoutMap
from inductor_tile.kernel_compiler.to_llvm.dot_epilogue import (access_cost, applies, choose_padding, constant_deltas,
                                                                 run_of)

# (M, N, warps, element bytes, the store layout's elements per thread)
CASES = [(128, 128, 4, 4, 4), (128, 128, 4, 2, 8), (64, 64, 4, 4, 4), (128, 256, 8, 4, 4), (64, 32, 4, 2, 8),
         (32, 64, 4, 4, 4)]


def _maps(M, N, warps, per_thread):
    mma_warps = (warps, 1) if M % (16 * warps) == 0 else (1, warps)
    lanes_n = min(32, N // per_thread)
    store = Blocked((1, per_thread), (32 // lanes_n, lanes_n), (warps, 1), (1, 0))
    return LayoutMap(NvidiaMma(mma_warps, 3 if mma_warps[1] == 1 else 2), (M, N)), LayoutMap(store, (M, N))


@pytest.mark.parametrize("M,N,warps,size,per_thread", CASES)
def test_every_thread_gets_its_elements(M, N, warps, size, per_thread):
    src, dst = _maps(M, N, warps, per_thread)
    assert applies(src, dst, size)
    stride = N + choose_padding(src, dst, size)
    memory: dict[int, tuple[int, int]] = {}
    for lmap, storing in ((src, True), (dst, False)):
        run = run_of(lmap, size)
        assert run * size == min(16, lmap.root.size_per_thread[1] * size)
        for warp in range(warps):
            for lane in range(32):
                for first in range(0, lmap.num_slots, run):
                    row, col = lmap.index(first, lane, warp)
                    offset = row * stride + col
                    assert offset % run == 0  # the vector is aligned
                    for j in range(run):
                        element = lmap.index(first + j, lane, warp)
                        assert element == (row, col + j)  # a run is consecutive columns
                        if storing:
                            assert memory.setdefault(offset + j, element) == element
                        else:
                            assert memory[offset + j] == element
    assert len(memory) == M * N


@pytest.mark.parametrize("M,N,warps,size,per_thread", CASES)
def test_constant_deltas_hold_in_every_thread(M, N, warps, size, per_thread):
    """Each run's offset is the thread's first run's plus the constant the lowering puts in the address."""
    src, dst = _maps(M, N, warps, per_thread)
    stride = N + choose_padding(src, dst, size)
    for lmap in (src, dst):
        run = run_of(lmap, size)
        deltas = constant_deltas(lmap, stride, run, warps)
        assert all(delta is not None for delta in deltas.values())  # no wrapping in these shapes
        for warp in range(warps):
            for lane in range(32):
                first = lmap.index(0, lane, warp)
                for slot, delta in deltas.items():
                    row, col = lmap.index(slot, lane, warp)
                    assert row * stride + col == first[0] * stride + first[1] + delta


@pytest.mark.parametrize("M,N,warps,size,per_thread", CASES)
def test_padding_avoids_bank_conflicts(M, N, warps, size, per_thread):
    src, dst = _maps(M, N, warps, per_thread)
    stride = N + choose_padding(src, dst, size)
    store_bytes = 32 * max(4, run_of(src, size) * size)
    total = access_cost(src, stride, size) + access_cost(dst, stride, size)
    assert total <= access_cost(src, N, size) + access_cost(dst, N, size)
    if N * size < 128:  # rows shorter than a quarter-warp's loads: padding them costs the loads (64 x 32 fp16)
        return
    assert access_cost(src, stride, size) == store_bytes // 128  # one wavefront per 128 bytes
    assert access_cost(dst, stride, size) == 32 * run_of(dst, size) * size // 128
    if store_bytes > 128:
        assert access_cost(src, N, size) >= 4 * access_cost(src, stride, size)


def test_only_mma_accumulators_of_2_or_4_bytes():
    src, dst = _maps(64, 64, 4, 4)
    assert not applies(dst, src, 4)  # blocked -> mma: the operand conversions
    assert not applies(src, dst, 8)  # fp64
    assert not applies(src, dst, 1)


needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("out,stores,loads", [("fp32", "st.shared.v2.b32", "ld.shared.v4.b32"),
                                              ("fp16", "st.shared.b32", "ld.shared.v4.b32")])
def test_matmul_epilogue_moves_vectors(arch, out, stores, loads):
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from dot_kernel_specs import matmul_specs
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
    from inductor_tile.kernel_compiler.to_llvm.nvptx import ptx_arch
    from model_benchmarks import dot_kernels

    kernel = dot_kernels.matmul_kernel
    specs = matmul_specs("fp16", 128, 128, 32, out=out)
    ptx = compile_specialized(kernel, specs, target=f"cuda:{arch}", num_warps=4, native=False).asm["ptx"]
    check_ptx(ptx, ptx_arch(ptx, arch), kernel.__name__)
    accesses = re.findall(r"(?:st|ld)\.shared\.\S+", ptx)
    # 128 x 128 results over 128 threads: 64 pairs stored, 16-byte loads of 4 fp32 or 8 fp16
    assert accesses.count(stores) == 64
    assert accesses.count(loads) == (32 if out == "fp32" else 16)
    assert not [a for a in accesses if a in ("st.shared.f32", "ld.shared.f32", "st.shared.b16", "ld.shared.b16")
                or (a in ("ld.shared.b32",))]  # no element-wise epilogue left (operands: ldmatrix or cp.async)


@needs_ptxas
@pytest.mark.parametrize("blocks,warps", [((128, 128, 64), 4), ((128, 256, 64), 8)], ids=["128x128x64", "128x256x64"])
def test_epilogue_addresses_runs_by_immediate_offsets(blocks, warps, tmp_path):
    """sm_90a, fp16 results: the 64 pair stores of a thread use one or two address registers plus immediates,
    and ptxas needs at most Triton 3.6's registers for the same kernels (198 and 202) plus a margin."""
    from filecheck_tool import filecheck
    from model_benchmarks import dot_kernels
    from test_pipeline_async_copies import _matmul_specs, _ptx

    ptx, report, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(*blocks, out="fp16"), 90, 3, num_warps=warps)
    stores = re.findall(r"st\.shared\.b32\s+\[(%r\w+|%rd\w+)(?:\+(\d+))?\]", ptx)
    assert len(stores) == 64  # 128 results a thread: 64 pairs
    assert len({register for register, _ in stores}) <= 2 and sum(1 for _, imm in stores if imm) >= len(stores) - 2
    filecheck(ptx, """
CHECK: wgmma.wait_group.sync.aligned 0;
CHECK: cvt.rn.f16x2.f32
CHECK: st.shared.b32 [{{%r[dl]?[0-9]+}}+{{[0-9]+}}]
""", tmp_path)
    registers = int(re.search(r"Used (\d+) registers", report).group(1))
    assert registers <= 206 and " 0 bytes spill stores" in report, report


@inductor_tile.jit
def half_result_kernel(a_ptr, b_ptr, out_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows, cols, ks = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None] * N + cols[None, :], mask=(k[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc.to(tl.float16), mask=mask)


@needs_ptxas
@pytest.mark.parametrize("arch,blocks,warps", [(90, (128, 64), 4), (90, (128, 128), 8), (80, (64, 64), 4)])
def test_half_results_through_the_epilogue_ptx(arch, blocks, warps, monkeypatch):
    """The PTX interpreter runs a masked fp16 matmul (sm_90a: wgmma, rings of padded core matrices, which it
    simulates; sm_80: mma.sync) whose rounded result leaves the mma layout through the epilogue: a NaN-poisoned
    output gets the float64 product within fp16's rounding."""
    import numpy as np
    import torch

    from dot_ptx_sim import Machine
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

    monkeypatch.setenv("TILE_PIPELINE", "padded")
    monkeypatch.delenv("TILE_WGMMA", raising=False)
    (BM, BN), (M, N, K) = blocks, (blocks[0] - 3, blocks[1] - 5, 77)
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "out_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32"}
    constexprs = {"BM": BM, "BN": BN, "BK": 32}
    specs = [spec_from_signature(n, signature[n]) if n in signature
             else spec_from_signature(n, "constexpr", constexprs[n]) for n in half_result_kernel.arg_names]
    ptx = compile_specialized(half_result_kernel, specs, target=f"cuda:{arch}", num_warps=warps, native=False,
                              num_stages=3).asm["ptx"]
    assert ("wgmma.mma_async" in ptx) == (arch == 90) and "cvt.rn.f16x2.f32" in ptx
    gen = torch.Generator().manual_seed(21)
    a, b = torch.randn(M, K, generator=gen).half(), torch.randn(K, N, generator=gen).half()
    out = np.full((M, N), np.nan, dtype=np.float16).view(np.int16)
    machine = Machine(ptx, 32 * warps, [a.view(torch.int16).numpy(), b.view(torch.int16).numpy(), out],
                      {"3": M, "4": N, "5": K})
    machine.run(max_steps=4000000)
    got = torch.from_numpy(machine.buffer(2, out).view(np.float16)).double()
    exact = a.double() @ b.double()
    assert not got.isnan().any()
    assert (got - exact).abs().max() / exact.abs().max() <= 1e-3
