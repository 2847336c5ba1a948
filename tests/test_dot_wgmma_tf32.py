"""Hopper's tf32 wgmma path of fp32 tl.dot (`to_llvm/dot_wgmma_tf32.py`) checked without a GPU.

Simulated: every thread stores its elements where the lowering puts them (16-byte runs where it
stores them as vectors), the tensor core reads each m64nNk8 instruction's operands through the
descriptor's start, LBO and SBO as the PTX ISA defines K-major no-swizzle tf32 tiles (core matrices
of 8 rows x 4 elements, written out here on their own), or takes a from each warp's registers
(m16n8k8 fragment), and the accumulator each thread gets back must be a @ b + c. Then the PTX for
sm_90a: the instruction counts, and ptxas accepts it.
"""

from __future__ import annotations

import platform

import pytest
import torch

from inductor_tile.kernel_compiler.ir.dot_layouts import DotOperand, NvidiaMma
from inductor_tile.kernel_compiler.ir.layouts import Blocked, LayoutMap
from inductor_tile.kernel_compiler.to_llvm.dot_mma import mma_steps
from inductor_tile.kernel_compiler.to_llvm.dot_operands import IntOps
from inductor_tile.kernel_compiler.to_llvm.dot_tf32 import k8_a_slots
from inductor_tile.kernel_compiler.to_llvm.dot_tf32_tiles import choose_tile, conflicts, k_run, store_place, tf32_tile
from wgmma_sim import check_accumulators, instructions, integer_operands


@pytest.fixture(autouse=True)
def _tf32_tensor_cores(monkeypatch):
    """The default: tf32 tensor cores (TILE_TF32_MMA=0 would send fp32 dots to FMAs)."""
    monkeypatch.delenv("TILE_TF32_MMA", raising=False)


def _hardware_read(smem, start, lbo, sbo, mn, k):
    """Element (mn, k) of an instruction's K-major tf32 operand (offsets in 16-bit units): core matrices
    of 8 rows of 16 bytes (4 consecutive k); SBO from one to the next along mn, LBO along k."""
    return smem[start + (mn // 8) * sbo + (k // 4) * lbo + (mn % 8) * 8 + (k % 4) * 2]


def _store(smem, base, tile, op_idx, src_map, values, num_warps, permuted=False):
    o, groups = IntOps(), num_warps // 4
    run = 1 if permuted else k_run(src_map, op_idx)
    for warp in range(num_warps):
        for lane in range(32):
            first_offset = None
            for slot in range(src_map.num_slots):
                r, c = src_map.index(slot, lane, warp)
                offset = base + store_place(o, tile, op_idx, r, c, groups, permuted)
                if slot % run == 0:
                    first_offset = offset
                    assert offset % 8 == 0 or run == 1  # 16-byte aligned vector stores
                assert offset == first_offset + 2 * (slot % run)  # a run is contiguous
                assert smem.get(offset, float(values[r, c])) == float(values[r, c])  # no two elements share a place
                smem[offset] = float(values[r, c])


def _load_layout(rows, cols, num_warps, run):
    """A coalesced load layout: runs of `run` along the columns."""
    lanes_c = min(32, cols // run)
    return Blocked((1, run), (32 // lanes_c, lanes_c), (num_warps, 1), (1, 0))


@pytest.mark.parametrize("run", [1, 4])
@pytest.mark.parametrize("M,N,K,num_warps", [(64, 64, 32, 4), (128, 32, 16, 4), (128, 64, 16, 8), (64, 8, 8, 4)])
def test_tiles_in_shared_memory_compute_the_product(M, N, K, num_warps, run):
    groups = num_warps // 4
    a, b, c = integer_operands(M, N, K, seed=3)
    c_map = LayoutMap(NvidiaMma((num_warps, 1), 3), (M, N))
    a_src, b_src = (LayoutMap(_load_layout(M, K, num_warps, min(run, K)), (M, K)),
                    LayoutMap(_load_layout(K, N, num_warps, run), (K, N)))
    a_tile, b_tile = choose_tile(a_src, 0, groups), choose_tile(b_src, 1, groups)
    smem: dict[int, float] = {}
    _store(smem, 0, a_tile, 0, a_src, a, num_warps)
    _store(smem, a_tile.elements, b_tile, 1, b_src, b, num_warps)
    assert len(smem) == M * K + K * N and max(smem) < a_tile.elements + b_tile.elements
    expected = a @ b + c
    for group, i in instructions(M, groups):
        d = torch.zeros(64, N, dtype=torch.float64)
        for q in range(K // 8):  # the lowering's descriptor starts
            a_start = group * 8 * a_tile.sbo + (64 * groups * i // 8) * a_tile.sbo + 2 * q * a_tile.lbo  # as lowered
            b_start = a_tile.elements + 2 * q * b_tile.lbo
            A = torch.tensor([[_hardware_read(smem, a_start, a_tile.lbo, a_tile.sbo, r, k) for k in range(8)]
                              for r in range(64)], dtype=torch.float64)
            B = torch.tensor([[_hardware_read(smem, b_start, b_tile.lbo, b_tile.sbo, n, k) for n in range(N)]
                              for k in range(8)], dtype=torch.float64)
            d += A @ B
        check_accumulators(d, c_map, c, expected, group, i)


@pytest.mark.parametrize("M,N,K,num_warps", [(64, 64, 32, 4), (128, 32, 16, 8)])
def test_a_in_registers_computes_the_product(M, N, K, num_warps):
    """Each warp gives its m16n8k8 fragments ({g, t}, {g+8, t}, {g, t+4}, {g+8, t+4}) as its 16 rows of the
    instruction; b's rows are stored in the order those registers pair k in."""
    mma = NvidiaMma((num_warps, 1), 3)
    groups = num_warps // 4
    a, b, c = integer_operands(M, N, K, seed=4)
    a_map, b_map = LayoutMap(DotOperand(0, mma), (M, K)), LayoutMap(DotOperand(1, mma), (K, N))
    c_map = LayoutMap(mma, (M, N))
    b_src = LayoutMap(_load_layout(K, N, num_warps, 4), (K, N))
    b_tile = choose_tile(b_src, 1, groups, permuted=True)
    smem: dict[int, float] = {}
    _store(smem, 0, b_tile, 1, b_src, b, num_warps, permuted=True)
    pieces = {(t.p, t.q): t for t in mma_steps(a_map, b_map, c_map) if t.s == 0}
    expected = a @ b + c
    for group, i in instructions(M, groups):
        d = torch.zeros(64, N, dtype=torch.float64)
        for step in range(K // 8):
            A = torch.full((64, 8), float("nan"), dtype=torch.float64)
            for warp in range(4 * group, 4 * group + 4):
                for lane in range(32):
                    g, t = divmod(lane, 4)
                    slots = k8_a_slots(pieces[(i, step // 2)], step % 2)
                    for (row, col), slot in zip([(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)], slots):
                        A[16 * (warp % 4) + row, col] = float(a[a_map.index(slot, lane, warp)])
            B = torch.tensor([[_hardware_read(smem, 2 * step * b_tile.lbo, b_tile.lbo, b_tile.sbo, n, k)
                               for n in range(N)] for k in range(8)], dtype=torch.float64)
            d += A @ B
        check_accumulators(d, c_map, c, expected, group, i)


@pytest.mark.parametrize("M,N,K", [(128, 128, 32), (128, 128, 16), (64, 256, 32), (128, 64, 64)])
def test_padding_spreads_the_stores_over_the_banks(M, N, K):
    """a's 16-byte runs of k (the loads' layout): each quarter-warp reaches 8 bank groups once; b's 4-byte
    stores of 32 mn at one k: at most 4 addresses per bank (32 rows 16 bytes apart can do no better),
    where the unpadded tile puts 16 (a) and 16 (b) in one."""
    a_src = LayoutMap(_load_layout(M, K, 4, 4), (M, K))
    b_src = LayoutMap(_load_layout(K, N, 4, 4), (K, N))
    stores = min(a_src.num_slots, 16) // 4
    assert conflicts(a_src, 0, choose_tile(a_src, 0, 1), 1, False) == 4 * stores  # 4 phases x 1
    assert conflicts(a_src, 0, tf32_tile(M, K), 1, False) > 4 * stores
    b_stores = min(b_src.num_slots, 4)
    assert conflicts(b_src, 1, choose_tile(b_src, 1, 1), 1, False) <= 4 * b_stores
    assert conflicts(b_src, 1, tf32_tile(N, K), 1, False) >= 8 * b_stores


needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")
WGMMA = "wgmma.mma_async.sync.aligned.m64n{}k8.f32.tf32.tf32"


@needs_ptxas
@pytest.mark.parametrize("precision,products", [("tf32", 1), ("tf32x3", 3)])
def test_ptx_of_a_dot_with_a_in_registers(precision, products):
    from test_dot_tf32 import _ptx, fp32_dot_no_acc_kernel

    ptx = _ptx(precision, 90, 128, 64, 32, 4, kernel=fp32_dot_no_acc_kernel)
    assert ptx.count(WGMMA.format(64)) == products * 2 * 4  # 2 row blocks x 4 k8 steps
    assert "mma.sync" not in ptx and "cvt.rna.tf32.f32" in ptx


@needs_ptxas
@pytest.mark.parametrize("wgmma", ["1", "0"])
def test_matmul_ptx_uses_tf32_wgmma(wgmma, monkeypatch):
    """The fp32 matmul without cp.async rings (TILE_PIPELINE=0: operands prefetched a loop iteration ahead,
    both converted right before the dot): both tiles stored in shared memory; TILE_WGMMA=0 keeps mma.sync
    m16n8k8. (With rings, the default on sm_90: test_pipeline_tf32_rings.py.)"""
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from dot_kernel_specs import matmul_specs
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
    from inductor_tile.kernel_compiler.to_llvm.nvptx import ptx_arch
    from model_benchmarks import dot_kernels

    monkeypatch.setenv("TILE_WGMMA", wgmma)
    monkeypatch.setenv("TILE_PIPELINE", "0")
    kernel = dot_kernels.matmul_kernel
    specs = matmul_specs("fp32", 128, 128, 32)
    ptx = compile_specialized(kernel, specs, target="cuda:90", num_warps=4, native=False).asm["ptx"]
    check_ptx(ptx, ptx_arch(ptx, 90), kernel.__name__)
    if wgmma == "1":
        assert ptx.count(WGMMA.format(128)) == 2 * 4
        assert "st.shared.v4.b32" in ptx or "st.shared.v4.u32" in ptx  # a's runs of 4 k: 16-byte stores
        assert "mma.sync" not in ptx
    else:
        assert "wgmma" not in ptx
        assert ptx.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") == 128 * 128 * 32 // (16 * 8 * 8 * 4)
