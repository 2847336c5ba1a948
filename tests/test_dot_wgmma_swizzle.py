"""Swizzled wgmma operand tiles (the cp.async rings' slots, to_llvm/dot_wgmma.py `swizzled_layout`),
checked without a GPU.

- Simulated: every thread copies its elements where the ring's slot keeps them, the tensor core reads
  each m64nNk16 instruction's operands through the descriptor's start, LBO, SBO and swizzle mode as
  the PTX ISA defines the swizzled canonical layouts (written out here on their own: rows of 32, 64
  or 128 bytes, the 16-byte chunk index XORed with bits 7.. of the address), and the accumulator
  each thread gets back must be the slots of the mma layout that hold a @ b + c.
- Every warp's 16-byte copies into a slot take 4 wavefronts (no bank conflict).
- The benchmark's matmuls get the descriptors Triton 3.6 emits for the same kernels (read off its
  PTX for sm_90): a in 64-byte rows (BLOCK_K 32) or 128-byte rows (BLOCK_K 64), b in 128-byte rows.
"""

from __future__ import annotations

import pytest
import torch

from inductor_tile.kernel_compiler.ir.dot_layouts import NvidiaMma
from inductor_tile.kernel_compiler.ir.layouts import Blocked, LayoutMap
from inductor_tile.kernel_compiler.to_llvm.dot_operands import IntOps, stored_transposed, wgmma_tile
from inductor_tile.kernel_compiler.to_llvm.dot_wgmma import store_offset
from wgmma_sim import check_accumulators, instructions, integer_operands

LOADS = {  # the coalesced layouts of the benchmark's loads: a [M, K] and b [K, N], rows or transposed
    "rows": (lambda m, k, w: Blocked((1, 8), (32 * 8 // k if k < 256 else 1, min(32, k // 8)), (w, 1), (1, 0)),
             lambda k, n, w: Blocked((1, 8), (32 * 8 // n if n < 256 else 1, min(32, n // 8)), (w, 1), (1, 0))),
    "transposed": (lambda m, k, w: Blocked((8, 1), (min(32, m // 8), 32 * 8 // m if m < 256 else 1), (1, w), (0, 1)),
                   lambda k, n, w: Blocked((8, 1), (min(32, k // 8), 32 * 8 // k if k < 256 else 1), (1, w), (0, 1))),
}


def _physical(element: int, swizzle: int) -> int:
    """The element offset the hardware reads for logical offset `element` (a tile at a multiple of 1 KiB)."""
    byte = 2 * element
    byte ^= ((byte >> 7) & (swizzle // 16 - 1)) << 4
    return byte // 2


def _hardware_read(smem: dict[int, float], start: int, lbo: int, sbo: int, swizzle: int, mn_major: bool,
                   mn: int, k: int) -> float:
    """Element (mn, k) of an instruction's operand (k < 16) as the tensor core finds it, in 16-bit
    elements. K-major: rows of `swizzle` bytes hold k, one row per mn, 8-row groups SBO apart (LBO
    unused). MN-major: rows hold mn, one row per k, 8-row groups SBO apart, the next `swizzle` bytes'
    worth of mn LBO further."""
    row = swizzle // 2
    if mn_major:
        logical = start + (mn // row) * lbo + (k // 8) * sbo + (k % 8) * row + mn % row
    else:
        logical = start + (mn // 8) * sbo + (mn % 8) * row + k
    return smem[_physical(logical, swizzle)]


def _copy(smem: dict[int, float], base: int, tile, op_idx: int, src_map: LayoutMap, values: torch.Tensor,
          num_warps: int) -> None:
    o = IntOps()
    for warp in range(num_warps):
        for lane in range(32):
            for slot in range(src_map.num_slots):
                r, c = src_map.index(slot, lane, warp)
                offset = base + store_offset(o, tile, op_idx, r, c, num_warps // 4)
                assert smem.get(offset, float(values[r, c])) == float(values[r, c])  # no two elements share a place
                smem[offset] = float(values[r, c])


def _tiles(M: int, N: int, K: int, num_warps: int, loads: str):
    a_src = LayoutMap(LOADS[loads][0](M, K, num_warps), (M, K))
    b_src = LayoutMap(LOADS[loads][1](K, N, num_warps), (K, N))
    groups = num_warps // 4
    return a_src, b_src, wgmma_tile(a_src, 0, groups, swizzled=True), wgmma_tile(b_src, 1, groups, swizzled=True)


SHAPES = [(128, 128, 32, 4), (128, 256, 64, 8), (128, 64, 32, 4), (64, 256, 16, 4), (256, 64, 16, 8),
          (128, 128, 128, 4), (64, 32, 16, 4)]


@pytest.mark.parametrize("loads", ["rows", "transposed"])
@pytest.mark.parametrize("M,N,K,num_warps", SHAPES)
def test_swizzled_wgmma_instructions_compute_the_product(M, N, K, num_warps, loads):
    groups = num_warps // 4
    mma = NvidiaMma((num_warps, 1), 3)
    a, b, c = integer_operands(M, N, K, seed=2)
    a_src, b_src, a_tile, b_tile = _tiles(M, N, K, num_warps, loads)
    assert a_tile.swizzle and b_tile.swizzle
    b_base = -(-a_tile.elements // 512) * 512  # 1 KiB: where the lowering starts a swizzled slot
    smem: dict[int, float] = {}
    _copy(smem, 0, a_tile, 0, a_src, a, num_warps)
    _copy(smem, b_base, b_tile, 1, b_src, b, num_warps)
    assert len(smem) == M * K + K * N and max(k for k in smem if k < b_base) < a_tile.elements
    c_map = LayoutMap(mma, (M, N))
    expected = a @ b + c
    for group, i in instructions(M, groups):
        first_row = 64 * (groups * i + group)  # of instruction i of warpgroup `group` (in a's stored order)
        d = torch.zeros(64, N, dtype=torch.float64)
        for q in range(K // 16):
            starts = []
            for tile, base, mn in ((a_tile, 0, first_row), (b_tile, b_base, 0)):
                row = tile.swizzle // 2
                if tile.mn_major:  # the instruction's 16 k: two 8-row groups
                    starts.append(base + (mn // row) * tile.lbo + 2 * q * tile.sbo)
                else:  # its 16 k within a row of the block of K columns holding them
                    starts.append(base + (16 * q // row) * tile.lbo + mn * row + 16 * q % row)
            A = torch.tensor([[_hardware_read(smem, starts[0], a_tile.lbo, a_tile.sbo, a_tile.swizzle,
                                              a_tile.mn_major, r, k) for k in range(16)] for r in range(64)])
            B = torch.tensor([[_hardware_read(smem, starts[1], b_tile.lbo, b_tile.sbo, b_tile.swizzle,
                                              b_tile.mn_major, n, k) for n in range(N)] for k in range(16)])
            assert starts[0] == a_tile.logical(IntOps(), first_row, 16 * q)  # what the lowering's descriptors hold
            assert starts[1] == b_base + b_tile.logical(IntOps(), 0, 16 * q)
            d += A @ B
        check_accumulators(d, c_map, c, expected, group, i)


@pytest.mark.parametrize("loads", ["rows", "transposed"])
@pytest.mark.parametrize("M,N,K,num_warps", SHAPES)
def test_swizzled_copies_avoid_bank_conflicts(M, N, K, num_warps, loads):
    """Each warp's 16-byte copies (one per lane: 128 words) take the minimum 4 wavefronts: 4 words a bank."""
    o = IntOps()
    a_src, b_src, a_tile, b_tile = _tiles(M, N, K, num_warps, loads)
    for op_idx, src, tile in ((0, a_src, a_tile), (1, b_src, b_tile)):
        for first in range(0, src.num_slots, 8):
            for warp in range(num_warps):
                words: dict[int, set[int]] = {}
                for lane in range(32):
                    start = store_offset(o, tile, op_idx, *src.index(first, lane, warp), num_warps // 4)
                    for word in range(4):  # 16 bytes: 4 words of 4 bytes (2 halves each)
                        address = start // 2 + word
                        words.setdefault(address % 32, set()).add(address)
                assert max(len(w) for w in words.values()) == 4, (op_idx, first, warp)


@pytest.mark.parametrize("M,N,K,num_warps,a_mode,b_lbo", [(128, 128, 32, 4, (64, 512), 4096),
                                                         (128, 256, 64, 8, (128, 1024), 8192),
                                                         (128, 64, 32, 4, (64, 512), 4096)])
def test_benchmark_tiles_match_triton(M, N, K, num_warps, a_mode, b_lbo):
    """Triton 3.6's descriptors for these matmuls (its PTX for sm_90): a K-major in rows of BLOCK_K
    halves (64 or 128 bytes), 8-row groups 512 or 1024 bytes apart; b MN-major in 128-byte rows, 8-row
    groups 1 KiB apart, 64-column blocks BLOCK_K x 128 bytes apart; the slot sizes have no padding."""
    _, _, a_tile, b_tile = _tiles(M, N, K, num_warps, "rows")
    assert (a_tile.mn_major, a_tile.swizzle, 2 * a_tile.sbo) == (False, *a_mode)
    assert (b_tile.mn_major, b_tile.swizzle, 2 * b_tile.sbo, 2 * b_tile.lbo) == (True, 128, 1024, b_lbo)
    assert (a_tile.elements, b_tile.elements) == (M * K, K * N)


def test_narrow_or_short_runs_keep_padded_core_matrices():
    """n = 8 fills no 32-byte row; runs of fewer than 8 halves would split 16-byte chunks."""
    _, _, _, b_tile = _tiles(64, 8, 32, 4, "rows")
    assert b_tile.swizzle == 0
    src = LayoutMap(Blocked((1, 4), (16, 2), (4, 1), (1, 0)), (64, 8))  # 4 halves a run
    assert wgmma_tile(src, 0, 1, swizzled=True).swizzle == 0
    assert stored_transposed(src) is False
