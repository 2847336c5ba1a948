"""mma.sync tf32 with operands stored in shared memory (`dot_tf32_store.py`) and read with ldmatrix
(`dot_tf32.py`), checked without a GPU: every thread stores its elements where the lowering puts them
(K-major tf32 tiles, rows in tensor order), each lane points ldmatrix.x4 at a row, ldmatrix gives lane
4g + t, per matrix, the fp32 at (row g, column t) (two b16 halves), and the k8 instructions (PTX ISA
fragments) must accumulate a @ b + c. With one operand in registers (mma layout, k pairs read as t and
t + 4), the stored one holds its k in that order."""

from __future__ import annotations

import pytest
import torch

from inductor_tile.kernel_compiler.ir.dot_layouts import DotOperand, NvidiaMma
from inductor_tile.kernel_compiler.ir.layouts import Blocked, LayoutMap
from inductor_tile.kernel_compiler.passes.accelerate_matmul import mma_warps
from inductor_tile.kernel_compiler.to_llvm.dot_mma import mma_steps
from inductor_tile.kernel_compiler.to_llvm.dot_operands import IntOps
from inductor_tile.kernel_compiler.to_llvm.dot_tf32 import a_fragment_row, b_fragment_row, k8_a_slots, k8_b_slots
from inductor_tile.kernel_compiler.to_llvm.dot_tf32_tiles import choose_tile, store_place, tf32_offset


def _ldmatrix(smem, tile, rows_of_lanes):
    """Per lane, the four registers of ldmatrix.x4 on fp32 core-matrix rows."""
    o = IntOps()
    out = []
    for lane in range(32):
        g, t = divmod(lane, 4)
        out.append([smem[tf32_offset(o, tile, *rows_of_lanes[8 * i + g]) + 2 * t] for i in range(4)])
    return out


def _k8(A_regs, B_regs, c, c_slots):
    """One warp's mma.sync.m16n8k8 tf32: a0..a3 = (g, t), (g+8, t), (g, t+4), (g+8, t+4); b0, b1 = (t, g), (t+4, g)."""
    A, B = torch.zeros(16, 8, dtype=torch.float64), torch.zeros(8, 8, dtype=torch.float64)
    for lane in range(32):
        g, t = divmod(lane, 4)
        for value, (row, col) in zip(A_regs[lane], [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]):
            A[row, col] = value
        for value, row in zip(B_regs[lane], [t, t + 4]):
            B[row, g] = value
    D = A @ B
    for lane in range(32):
        g, t = divmod(lane, 4)
        for slot, (row, col) in zip(c_slots, [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]):
            c[lane][slot] += float(D[row, col])


@pytest.mark.parametrize("stored", ["both", "a", "b"])
@pytest.mark.parametrize("M,N,K", [(64, 64, 32), (128, 32, 16), (16, 64, 16)])
def test_ldmatrix_fragments_compute_the_product(M, N, K, stored):
    num_warps = 4
    mma = NvidiaMma(mma_warps((M, N), num_warps))
    warps_m, warps_n = mma.warps_per_cta
    gen = torch.Generator().manual_seed(5)
    a, b, c = (torch.randint(-4, 5, shape, generator=gen).double() for shape in ((M, K), (K, N), (M, N)))
    a_map, b_map = LayoutMap(DotOperand(0, mma), (M, K)), LayoutMap(DotOperand(1, mma), (K, N))
    c_map = LayoutMap(mma, (M, N))
    permuted = stored != "both"
    o = IntOps()
    tiles, smems = {}, {}
    for op_idx, name, values in ((0, "a", a), (1, "b", b.t().contiguous())):
        if stored in ("both", name):
            src_values = values if op_idx == 0 else b
            smems[op_idx] = {}
            src = LayoutMap(Blocked((1, 4), (1, 32) if src_values.shape[1] >= 128 else
                                    (32 * 4 // src_values.shape[1], src_values.shape[1] // 4), (4, 1), (1, 0)),
                            tuple(src_values.shape))
            tiles[op_idx] = choose_tile(src, op_idx, 0, permuted)
            for warp in range(4):
                for lane in range(32):
                    for slot in range(src.num_slots):
                        r, col = src.index(slot, lane, warp)
                        smems[op_idx][store_place(o, tiles[op_idx], op_idx, r, col, 0, permuted)] = float(
                            src_values[r, col])
    expected = a @ b + c
    for warp in range(num_warps):
        acc = [[float(c[c_map.index(slot, lane, warp)]) for slot in range(c_map.num_slots)] for lane in range(32)]
        a_regs = [[float(a[a_map.index(s, lane, warp)]) for s in range(a_map.num_slots)] for lane in range(32)]
        b_regs = [[float(b[b_map.index(s, lane, warp)]) for s in range(b_map.num_slots)] for lane in range(32)]
        for step in mma_steps(a_map, b_map, c_map):
            for h in (0, 1):
                if 0 in smems:
                    rows = [a_fragment_row(o, lane, warp, step.p, step.q, h, warps_m) for lane in range(32)]
                    A_regs = _ldmatrix(smems[0], tiles[0], rows)
                else:
                    A_regs = [[a_regs[lane][s] for s in k8_a_slots(step, h)] for lane in range(32)]
                if 1 in smems:
                    rows = [b_fragment_row(o, lane, warp, step.s, step.q, warps_n) for lane in range(32)]
                    B_regs = [regs[2 * h:2 * h + 2] for regs in _ldmatrix(smems[1], tiles[1], rows)]
                else:
                    B_regs = [[b_regs[lane][s] for s in k8_b_slots(step, h)] for lane in range(32)]
                _k8(A_regs, B_regs, acc, step.c)
        for lane in range(32):
            for slot in range(c_map.num_slots):
                assert acc[lane][slot] == expected[c_map.index(slot, lane, warp)], (warp, lane, slot)
