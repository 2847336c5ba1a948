"""What the wgmma simulations (test_dot_wgmma.py: fp16/bf16, test_dot_wgmma_tf32.py: tf32) share: small
integer operands (exact in every element type and in float64 sums), the warpgroup instructions of a
result, and the check of the accumulator fragment each thread gets back from one instruction."""

from __future__ import annotations

import torch

from inductor_tile.kernel_compiler.ir.layouts import LayoutMap
from inductor_tile.kernel_compiler.to_llvm.dot_wgmma import accumulator_slots


def integer_operands(M: int, N: int, K: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random a [M, K], b [K, N] and c [M, N] of integers in [-4, 4], as float64."""
    gen = torch.Generator().manual_seed(seed)
    a, b, c = (torch.randint(-4, 5, shape, generator=gen).double() for shape in ((M, K), (K, N), (M, N)))
    return a, b, c


def instructions(M: int, groups: int) -> list[tuple[int, int]]:
    """(warpgroup, instruction) of every m64 instruction of an M-row result on `groups` warpgroups."""
    return [(g, i) for g in range(groups) for i in range(M // (64 * groups))]


def check_accumulators(d: torch.Tensor, c_map: LayoutMap, c: torch.Tensor, expected: torch.Tensor,
                       group: int, i: int) -> None:
    """`d` (the [64, N] product of instruction `i` of warpgroup `group`) plus `c`, read through wgmma's
    accumulator fragment (register 4s + 2h + j of lane 4g + t in warp w: row 16 (w % 4) + 8h + g, column
    8s + 2t + j) into the mma layout's slots (`accumulator_slots`), must be `expected` there."""
    slots = accumulator_slots(c_map, i)
    for warp in range(4 * group, 4 * group + 4):
        for lane in range(32):
            g, t = divmod(lane, 4)
            for index, slot in enumerate(slots):
                s, h, j = index // 4, (index // 2) % 2, index % 2
                row, col = c_map.index(slot, lane, warp)
                assert d[16 * (warp % 4) + 8 * h + g, 8 * s + 2 * t + j] + c[row, col] == expected[row, col], \
                    (i, warp, lane, index)
