"""Host simulation of tl.dot on MFMA (no AMD GPU here): the lowering's plan (to_llvm/dot_mfma.mfma_steps)
run on each lane's registers, with the instructions' semantics written from the CDNA3 ISA's register
description, must give a @ b + c for random tiles; and a wrong index in a layout must make it fail.

The ISA's description, for lane l (0..63) of a wave and register j / v:
  v_mfma_f32_32x32x8_f16 / _bf16:  a[j] = A[l % 32][4 * (l // 32) + j],  b[j] = B[4 * (l // 32) + j][l % 32],
                                   d[v] = D[8 * (v // 4) + 4 * (l // 32) + v % 4][l % 32]   (j < 4, v < 16)
  v_mfma_f32_16x16x16_f16 / _bf16: a[j] = A[l % 16][4 * (l // 16) + j],  b[j] = B[4 * (l // 16) + j][l % 16],
                                   d[v] = D[4 * (l // 16) + v][l % 16]                      (j < 4, v < 4)
and D = A @ B + C with C read from the same registers as D.
"""

from __future__ import annotations

import numpy as np
import pytest

from inductor_tile.kernel_compiler.ir.dot_layouts import DotOperand
from inductor_tile.kernel_compiler.ir.layouts import AmdMfma, Blocked, LayoutMap
from inductor_tile.kernel_compiler.passes.accelerate_matmul_amd import mfma_layout
from inductor_tile.kernel_compiler.to_llvm.dot_mfma import mfma_steps

LANES = 64


def _isa_a(size: int, lane: int, j: int) -> tuple[int, int]:
    return lane % size, 4 * (lane // size) + j


def _isa_b(size: int, lane: int, j: int) -> tuple[int, int]:
    return 4 * (lane // size) + j, lane % size


def _isa_d(size: int, lane: int, v: int) -> tuple[int, int]:
    if size == 32:
        return 8 * (v // 4) + 4 * (lane // 32) + v % 4, lane % 32
    return 4 * (lane // 16) + v, lane % 16


def thread_registers(lmap: LayoutMap, tile: np.ndarray, num_warps: int, lanes: int = LANES) -> np.ndarray:
    """[warp, lane, slot]: what each thread holds of `tile` in layout `lmap` (test_amd_dot_wmma_sim.py too)."""
    out = np.empty((num_warps, lanes, lmap.num_slots))
    for warp in range(num_warps):
        for lane in range(lanes):
            for slot in range(lmap.num_slots):
                out[warp, lane, slot] = tile[lmap.index(slot, lane, warp)]
    return out


def simulate(mfma: AmdMfma, a: np.ndarray, b: np.ndarray, c: np.ndarray, num_warps: int) -> np.ndarray:
    """The result tile the lowering's instructions compute, in float64."""
    (m, k), n = a.shape, b.shape[1]
    a_map = LayoutMap(DotOperand(0, mfma), (m, k))
    b_map = LayoutMap(DotOperand(1, mfma), (k, n))
    c_map = LayoutMap(mfma, (m, n))
    a_regs, b_regs, c_regs = (thread_registers(lm, t, num_warps) for lm, t in ((a_map, a), (b_map, b), (c_map, c)))
    size, kw = mfma.size, mfma.k_width
    for step in mfma_steps(mfma, a_map, b_map, c_map):
        for warp in range(num_warps):
            # the instruction's matrices, gathered from the wave's registers as the ISA reads them
            a_local, b_local, c_local = (np.full(s, np.nan) for s in ((size, kw), (kw, size), (size, size)))
            for lane in range(LANES):
                for j, slot in enumerate(step.a):
                    a_local[_isa_a(size, lane, j)] = a_regs[warp, lane, slot]
                for j, slot in enumerate(step.b):
                    b_local[_isa_b(size, lane, j)] = b_regs[warp, lane, slot]
                for v, slot in enumerate(step.c):
                    c_local[_isa_d(size, lane, v)] = c_regs[warp, lane, slot]
            d_local = a_local @ b_local + c_local
            for lane in range(LANES):
                for v, slot in enumerate(step.c):
                    c_regs[warp, lane, slot] = d_local[_isa_d(size, lane, v)]
    result = np.full((m, n), np.nan)
    for warp in range(num_warps):
        for lane in range(LANES):
            for slot in range(c_map.num_slots):
                index = c_map.index(slot, lane, warp)
                held = c_regs[warp, lane, slot]
                assert np.isnan(result[index]) or result[index] == held, f"copies of {index} disagree"
                result[index] = held
    return result


def _tiles(m: int, n: int, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random fp16-representable operands (what the registers would hold) and an fp32 accumulator."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16).astype(np.float64)
    b = rng.standard_normal((k, n)).astype(np.float16).astype(np.float64)
    c = rng.standard_normal((m, n)).astype(np.float32).astype(np.float64)
    return a, b, c


CASES = [  # (M, N, K, waves): each instruction and wave placement the pass picks, with repetitions
    (64, 128, 32, 4),   # 32x32x8, waves along N
    (32, 64, 16, 2),    # 32x32x8, 2 waves
    (128, 64, 16, 1),   # 32x32x8, one wave, 4 x 2 pieces
    (64, 64, 32, 4),    # 16x16x16, waves along N
    (128, 32, 48, 4),   # 16x16x16, waves along M, 2 x 2 pieces, 3 k steps
    (16, 128, 16, 4),   # 16x16x16, waves along N, 2 column pieces
]


@pytest.mark.parametrize("m, n, k, num_warps", CASES)
def test_mfma_plan_computes_the_dot(m, n, k, num_warps):
    mfma = mfma_layout((m, n, k), num_warps)
    assert mfma is not None
    a, b, c = _tiles(m, n, k)
    result = simulate(mfma, a, b, c, num_warps)
    assert not np.isnan(result).any()
    np.testing.assert_allclose(result, a @ b + c, rtol=1e-12, atol=1e-12)


def test_cases_cover_every_instruction_and_wave_placement():
    chosen = {(x.size, x.warps_per_cta) for x in (mfma_layout((m, n, k), w) for m, n, k, w in CASES)}
    assert chosen == {(32, (1, 4)), (32, (1, 2)), (32, (1, 1)), (16, (4, 1)), (16, (1, 4))}


def _wrong_a_order(self, op_idx):  # a's lanes numbered along K first: rows and k groups swapped between lanes
    right = _right_operand(self, op_idx)
    return Blocked(right.size_per_thread, right.threads_per_warp, right.warps_per_cta, (1, 0)) if op_idx == 0 else right


def _wrong_b_lanes(self, op_idx):  # b's lanes numbered along K first: columns and k groups swapped
    right = _right_operand(self, op_idx)
    return Blocked(right.size_per_thread, right.threads_per_warp, right.warps_per_cta, (0, 1)) if op_idx == 1 else right


def _wrong_result_rows(self, shape=None):  # the result's lanes numbered along M first
    right = _right_result(self, shape)
    return Blocked(right.size_per_thread, right.threads_per_warp, right.warps_per_cta, (0, 1))


_right_operand, _right_result = AmdMfma.operand_blocked, AmdMfma.to_blocked


@pytest.mark.parametrize("method, broken", [("operand_blocked", _wrong_a_order), ("operand_blocked", _wrong_b_lanes),
                                            ("to_blocked", _wrong_result_rows)])
@pytest.mark.parametrize("m, n, k, num_warps", [CASES[0], CASES[3]])
def test_simulation_fails_for_a_wrong_layout_index(monkeypatch, method, broken, m, n, k, num_warps):
    mfma = mfma_layout((m, n, k), num_warps)
    monkeypatch.setattr(AmdMfma, method, broken)
    a, b, c = _tiles(m, n, k, seed=1)
    result = simulate(mfma, a, b, c, num_warps)
    assert not np.isnan(result).any()  # every element computed, but not the dot
    assert np.abs(result - (a @ b + c)).max() > 1.0


@pytest.mark.parametrize("m, n, num_warps, dst, plan", [
    (128, 128, 4, Blocked((1, 1), (1, 64), (2, 2), (1, 0)), (0, 32)),   # 32x32x8: chunks of rows
    (128, 128, 8, Blocked((1, 4), (4, 16), (8, 1), (1, 0)), (0, 32)),   # 16x16x16 along N: chunks of rows
    (128, 128, 4, Blocked((4, 1), (16, 4), (1, 4), (0, 1)), (0, 64)),   # column-major: 64-row tile, over budget
    (128, 64, 8, Blocked((1, 1), (64, 1), (1, 8), (0, 1)), (1, 32)),    # 16x16x16 along M: chunks of columns
])
def test_epilogue_chunks_move_every_element_once(m, n, num_warps, dst, plan):
    """The chunked accumulator exchange (to_llvm/dot_mfma_epilogue.py): in each chunk every element a thread
    reads back was written by some thread in the same chunk, inside the chunk's LDS rows, and every slot of the
    destination is read in exactly one chunk."""
    from inductor_tile.kernel_compiler.to_llvm.dot_mfma_epilogue import CHUNK_BYTES, _chunk_slots, chunking

    mfma = mfma_layout((m, n, 32), num_warps)
    src, dst_map = LayoutMap(mfma, (m, n)), LayoutMap(dst, (m, n))
    assert chunking(src, dst_map, 4) == plan
    dim, size = plan
    width = n if dim == 0 else size
    assert (size if dim == 0 else m) * (width + 1) * 4 <= (CHUNK_BYTES if plan[1] < 64 else 2 * CHUNK_BYTES)
    read = np.zeros((num_warps, LANES, dst_map.num_slots), dtype=int)
    for chunk in range(src.shape[dim] // size):
        written = {src.index(slot, lane, warp) for warp in range(num_warps) for lane in range(LANES)
                   for slot in _chunk_slots(src, dim, size, chunk)}
        assert all(chunk * size <= index[dim] < (chunk + 1) * size for index in written)
        for warp in range(num_warps):
            for lane in range(LANES):
                for slot in _chunk_slots(dst_map, dim, size, chunk):
                    assert dst_map.index(slot, lane, warp) in written
                    read[warp, lane, slot] += 1
    assert (read == 1).all()


def _check_runs(lmap: LayoutMap, groups: list[list[int]], k_dim: int, num_warps: int, lanes: int) -> None:
    """Every group holds, in every thread, consecutive k of one row / column from a multiple of its length."""
    assert sorted(s for g in groups for s in g) == list(range(lmap.num_slots))
    for warp in range(num_warps):
        for lane in range(lanes):
            for group in groups:
                first = lmap.index(group[0], lane, warp)
                assert first[k_dim] % len(group) == 0
                for j, slot in enumerate(group):
                    expected = tuple(c + j if d == k_dim else c for d, c in enumerate(first))
                    assert lmap.index(slot, lane, warp) == expected


@pytest.mark.parametrize("m, n, k, num_warps", CASES)
def test_operand_runs_are_vector_loads(m, n, k, num_warps):
    """to_llvm/dot_amd_operands.py reads each group of `operand_runs` as one vector from k-major LDS rows."""
    from inductor_tile.kernel_compiler.to_llvm.dot_amd_operands import operand_runs, store_run

    mfma = mfma_layout((m, n, k), num_warps)
    for op_idx, shape in ((0, (m, k)), (1, (k, n))):
        lmap = LayoutMap(DotOperand(op_idx, mfma), shape)
        k_dim = 1 if op_idx == 0 else 0
        groups = operand_runs(lmap)
        assert {len(g) for g in groups} == {4}
        _check_runs(lmap, groups, k_dim, num_warps, LANES)
        # a source loaded 16 bytes at a time along k is stored by runs of 8 halves
        spt = (1, 8) if k_dim == 1 else (8, 1)
        src = LayoutMap(Blocked(spt, (8, 8), (num_warps, 1), (k_dim, 1 - k_dim)), shape)
        run = store_run(src, k_dim, 2)
        assert run == min(8, shape[k_dim])
        _check_runs(src, [list(range(s, s + run)) for s in range(0, src.num_slots, run)], k_dim, num_warps, LANES)
