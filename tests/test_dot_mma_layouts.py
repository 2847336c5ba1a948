"""The tensor-core dot checked without a GPU: every thread's registers are filled from the
mma and dot-operand layouts (`LayoutMap`), each `mma.sync.m16n8k16` the lowering issues
(`mma_steps`) is simulated with the fragment layout of the PTX ISA, and the result registers
must hold a @ b + c. This checks the layouts, the slot choice and the packing order together."""

from __future__ import annotations

import pytest
import torch

from inductor_tile.kernel_compiler.ir.dot_layouts import DotOperand, NvidiaMma
from inductor_tile.kernel_compiler.ir.layouts import LayoutMap
from inductor_tile.kernel_compiler.passes.accelerate_matmul import mma_warps
from inductor_tile.kernel_compiler.to_llvm.dot_mma import mma_steps


def _registers(lmap: LayoutMap, tile: torch.Tensor, lane: int, warp: int) -> list[float]:
    return [float(tile[lmap.index(slot, lane, warp)]) for slot in range(lmap.num_slots)]


def _simulate_mma(a_regs, b_regs, c_regs, step):
    """One warp's mma.sync.m16n8k16 (row.col), fragments as in the PTX ISA: lane = 4 g + t;
    a{0..7}: (g, 2t+i), (g+8, 2t+i), (g, 2t+8+i), (g+8, 2t+8+i); b{0..3}: (2t+i, g), (2t+8+i, g);
    c{0..3}: (g, 2t+i), (g+8, 2t+i)."""
    A, B, C = torch.zeros(16, 16, dtype=torch.float64), torch.zeros(16, 8, dtype=torch.float64), torch.zeros(16, 8, dtype=torch.float64)
    for lane in range(32):
        g, t = divmod(lane, 4)
        a_vals = [a_regs[lane][s] for pair in step.a for s in pair]
        for index, (row, col) in enumerate([(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1),
                                            (g, 2 * t + 8), (g, 2 * t + 9), (g + 8, 2 * t + 8), (g + 8, 2 * t + 9)]):
            A[row, col] = a_vals[index]
        b_vals = [b_regs[lane][s] for pair in step.b for s in pair]
        for index, row in enumerate([2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9]):
            B[row, g] = b_vals[index]
        for index, (row, col) in enumerate([(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]):
            C[row, col] = c_regs[lane][step.c[index]]
    D = A @ B + C
    for lane in range(32):
        g, t = divmod(lane, 4)
        for index, (row, col) in enumerate([(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]):
            c_regs[lane][step.c[index]] = float(D[row, col])


@pytest.mark.parametrize("M,N,K,num_warps", [(64, 64, 32, 4), (128, 128, 32, 4), (16, 64, 16, 4), (128, 64, 64, 8),
                                             (32, 32, 16, 2), (64, 16, 64, 4)])
def test_mma_steps_compute_the_product(M, N, K, num_warps):
    warps = mma_warps((M, N), num_warps)
    assert warps is not None
    mma = NvidiaMma(warps)
    gen = torch.Generator().manual_seed(0)
    a, b, c = (torch.randint(-4, 5, shape, generator=gen).double() for shape in ((M, K), (K, N), (M, N)))
    a_map, b_map, c_map = LayoutMap(DotOperand(0, mma), (M, K)), LayoutMap(DotOperand(1, mma), (K, N)), LayoutMap(mma, (M, N))
    steps = mma_steps(a_map, b_map, c_map)
    assert len(steps) == M * N * K // (16 * 8 * 16 * num_warps)  # every piece once, no warp idle
    expected = a @ b + c
    for warp in range(num_warps):
        a_regs = [_registers(a_map, a, lane, warp) for lane in range(32)]
        b_regs = [_registers(b_map, b, lane, warp) for lane in range(32)]
        c_regs = [_registers(c_map, c, lane, warp) for lane in range(32)]
        for step in steps:
            _simulate_mma(a_regs, b_regs, c_regs, step)
        for lane in range(32):
            for slot in range(c_map.num_slots):
                assert c_regs[lane][slot] == expected[c_map.index(slot, lane, warp)], (warp, lane, slot)
    # every result element is computed by some thread
    assert len(c_map.owners(32, num_warps)) == M * N


def test_small_dots_keep_the_fma_path():
    assert mma_warps((16, 16), 4) is None  # 16 rows cannot feed 4 warps along M, 16 columns not along N
    assert mma_warps((64, 16), 4) == (4, 1)
    assert mma_warps((16, 32), 4) == (1, 4)
