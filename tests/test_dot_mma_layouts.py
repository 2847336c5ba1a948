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
    rows = tile.tolist()
    return [rows[i][j] for i, j in (lmap.index(slot, lane, warp) for slot in range(lmap.num_slots))]


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


@pytest.mark.parametrize("M,N,K,num_warps", [(64, 64, 32, 4), (16, 64, 16, 4), (128, 32, 32, 8), (32, 32, 16, 2),
                                             (64, 16, 64, 4)])
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


# --- operands through ldmatrix ------------------------------------------------------------
def _ldmatrix(tile, addresses, transposed):
    """ldmatrix.x{n}[.trans] on a row-major tile: `addresses[lane]` = (row, col) of the row lane
    gives (lanes 8i..8i+7: matrix i); returns per lane, per register, the two elements it gets."""
    count = len(addresses) // 8
    out = []
    for lane in range(32):
        g, t = divmod(lane, 4)
        registers = []
        for i in range(count):
            def element(r, c, i=i):
                row, col = addresses[8 * i + r]
                return tile[row][col + c]
            if transposed:
                registers.append((element(2 * t, g), element(2 * t + 1, g)))
            else:
                registers.append((element(g, 2 * t), element(g, 2 * t + 1)))
        out.append(registers)
    return out


@pytest.mark.parametrize("stored_transposed", [False, True], ids=["rows", "columns"])
@pytest.mark.parametrize("M,N,K,num_warps", [(64, 64, 32, 4), (16, 64, 16, 4), (128, 32, 32, 8), (64, 32, 16, 4)])
def test_ldmatrix_fills_the_operand_registers(M, N, K, num_warps, stored_transposed):
    from inductor_tile.kernel_compiler.to_llvm.dot_operands import (
        IntOps, a_address, a_loads, a_slots, b_address, b_loads, b_slots, smem_row_col)

    mma = NvidiaMma(mma_warps((M, N), num_warps))
    a = torch.arange(M * K, dtype=torch.float64).reshape(M, K)
    b = torch.arange(K * N, dtype=torch.float64).reshape(K, N) + 0.5
    a_map, b_map = LayoutMap(DotOperand(0, mma), (M, K)), LayoutMap(DotOperand(1, mma), (K, N))
    o = IntOps()
    # shared memory as the lowering fills it: the tile, or its transpose (column by column)
    a_rows, b_rows = (a.t().tolist(), b.t().tolist()) if stored_transposed else (a.tolist(), b.tolist())
    for warp in range(num_warps):
        filled_a = [dict() for _ in range(32)]
        for p, q in a_loads(a_map):
            addresses = [smem_row_col(o, *a_address(o, lane, warp, p, q, mma.warps_per_cta[0]), stored_transposed)
                         for lane in range(32)]
            for lane, registers in enumerate(_ldmatrix(a_rows, addresses, transposed=stored_transposed)):
                for pair, slots in zip(registers, a_slots(a_map, p, q)):
                    filled_a[lane].update(zip(slots, pair))
        filled_b = [dict() for _ in range(32)]
        for q, s0, per_load in b_loads(b_map):
            addresses = [smem_row_col(o, *b_address(o, lane, warp, q, s0, per_load, mma.warps_per_cta[1]),
                                      stored_transposed) for lane in range(32)]
            addresses = addresses[: 8 * 2 * per_load]
            for lane, registers in enumerate(_ldmatrix(b_rows, addresses, transposed=not stored_transposed)):
                for pair, slots in zip(registers, b_slots(b_map, q, s0, per_load)):
                    filled_b[lane].update(zip(slots, pair))
        for lane in range(32):
            assert filled_a[lane] == {s: float(a[a_map.index(s, lane, warp)]) for s in range(a_map.num_slots)}
            assert filled_b[lane] == {s: float(b[b_map.index(s, lane, warp)]) for s in range(b_map.num_slots)}


@pytest.mark.parametrize("a_stationary", [False, True], ids=["rows-first", "a-stationary"])
@pytest.mark.parametrize("M,N,K,num_warps", [(64, 64, 32, 4), (16, 64, 16, 4), (128, 32, 32, 8), (64, 16, 32, 4),
                                             (128, 128, 32, 4)])
def test_fragments_loaded_inside_the_dot_compute_the_product(M, N, K, num_warps, a_stationary):
    """The dot loading its operands' fragments from shared memory itself (ldmatrix per row pair and
    k step, see dot_mma.lower_mma_dot): simulated end to end, tiles stored row by row, in both
    orders of the pieces."""
    from inductor_tile.kernel_compiler.to_llvm.dot_mma import b_load_of
    from inductor_tile.kernel_compiler.to_llvm.dot_operands import IntOps, a_address, b_address, smem_row_col

    mma = NvidiaMma(mma_warps((M, N), num_warps))
    gen = torch.Generator().manual_seed(5)
    a, b, c = (torch.randint(-4, 5, shape, generator=gen).double() for shape in ((M, K), (K, N), (M, N)))
    a_map, b_map, c_map = LayoutMap(DotOperand(0, mma), (M, K)), LayoutMap(DotOperand(1, mma), (K, N)), LayoutMap(mma, (M, N))
    per_load = 2 if b_map.slots_per_dim[1] >= 2 else 1
    o, a_rows, b_rows = IntOps(), a.tolist(), b.tolist()
    expected = a @ b + c
    for warp in range(num_warps):
        c_regs = [_registers(c_map, c, lane, warp) for lane in range(32)]
        steps = mma_steps(a_map, b_map, c_map, a_stationary)
        assert sorted((t.p, t.s, t.q) for t in steps) == sorted((t.p, t.s, t.q) for t in mma_steps(a_map, b_map, c_map))
        for step in steps:
            a_addresses = [smem_row_col(o, *a_address(o, lane, warp, step.p, step.q, mma.warps_per_cta[0]), False)
                           for lane in range(32)]
            a_loaded = _ldmatrix(a_rows, a_addresses, transposed=False)
            s0, first = b_load_of(step, per_load)
            b_addresses = [smem_row_col(o, *b_address(o, lane, warp, step.q, s0, per_load, mma.warps_per_cta[1]), False)
                           for lane in range(32)][: 16 * per_load]
            b_loaded = [regs[first:first + 2] for regs in _ldmatrix(b_rows, b_addresses, transposed=True)]
            # registers as values: slot i of a lane's "a" vector is the i-th loaded half
            flat_a = [[x for pair in regs for x in pair] for regs in a_loaded]
            flat_b = [[x for pair in regs for x in pair] for regs in b_loaded]
            slots = type(step)(step.c, ((0, 1), (2, 3), (4, 5), (6, 7)), ((0, 1), (2, 3)))
            _simulate_mma(flat_a, flat_b, c_regs, slots)
        for lane in range(32):
            for slot in range(c_map.num_slots):
                assert c_regs[lane][slot] == expected[c_map.index(slot, lane, warp)], (warp, lane, slot)
