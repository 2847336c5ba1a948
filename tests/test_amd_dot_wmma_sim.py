"""Host simulation of tl.dot on RDNA3 WMMA (no AMD GPU here): the lowering's plan (to_llvm/dot_wmma.wmma_steps,
each lane completing its operands from lane l ^ 16 as `halves_from` says) run on each lane's registers, with the
instruction's semantics written from the RDNA3 ISA's register description, must give a @ b + c for random tiles,
and a wrong index in a layout must make it fail.

The ISA's description of v_wmma_f32_16x16x16_f16 / _bf16 (wave32), lane l (0..31):
  a[k] = A[l % 16][k], b[k] = B[k][l % 16] (k < 16; lanes 16-31 must hold what lanes 0-15 hold),
  d[v] = D[2 * v + l // 16][l % 16] (v < 8), and D = A @ B + C with C in the same registers as D.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_amd_dot_mfma_sim import thread_registers

from inductor_tile.kernel_compiler.ir.dot_layouts import DotOperand
from inductor_tile.kernel_compiler.ir.layouts import AmdWmma, Blocked, LayoutMap
from inductor_tile.kernel_compiler.passes.accelerate_matmul_amd import wmma_layout
from inductor_tile.kernel_compiler.to_llvm.dot_wmma import halves_from, wmma_steps

LANES = 32


def _full(regs: np.ndarray, lane: int, slots: tuple[int, ...]) -> np.ndarray:
    """The 16 values the lowering hands the instruction in `lane`: its own 8 and its partner's, by k."""
    first, second = halves_from(lane)
    return np.concatenate([regs[first, list(slots)], regs[second, list(slots)]])


def simulate(wmma: AmdWmma, a: np.ndarray, b: np.ndarray, c: np.ndarray, num_warps: int) -> np.ndarray:
    (m, k), n = a.shape, b.shape[1]
    a_map, b_map, c_map = LayoutMap(DotOperand(0, wmma), (m, k)), LayoutMap(DotOperand(1, wmma), (k, n)), \
        LayoutMap(wmma, (m, n))
    a_regs, b_regs, c_regs = (thread_registers(lm, t, num_warps, LANES)
                              for lm, t in ((a_map, a), (b_map, b), (c_map, c)))
    for step in wmma_steps(a_map, b_map, c_map):
        for warp in range(num_warps):
            a_local, b_local, c_local = np.full((16, 16), np.nan), np.full((16, 16), np.nan), np.full((16, 16), np.nan)
            for lane in range(LANES):
                a_in, b_in = _full(a_regs[warp], lane, step.a), _full(b_regs[warp], lane, step.b)
                if lane >= 16:  # the ISA's requirement: the upper half of the wave repeats the lower
                    assert (a_in == a_local[lane % 16]).all() and (b_in == b_local[:, lane % 16]).all()
                a_local[lane % 16], b_local[:, lane % 16] = a_in, b_in
                for v, slot in enumerate(step.c):
                    c_local[2 * v + lane // 16, lane % 16] = c_regs[warp, lane, slot]
            d_local = a_local @ b_local + c_local
            for lane in range(LANES):
                for v, slot in enumerate(step.c):
                    c_regs[warp, lane, slot] = d_local[2 * v + lane // 16, lane % 16]
    result = np.full((m, n), np.nan)
    for warp in range(num_warps):
        for lane in range(LANES):
            for slot in range(c_map.num_slots):
                index = c_map.index(slot, lane, warp)
                assert np.isnan(result[index]) or result[index] == c_regs[warp, lane, slot]
                result[index] = c_regs[warp, lane, slot]
    return result


def _tiles(m: int, n: int, k: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float16).astype(np.float64)
    b = rng.standard_normal((k, n)).astype(np.float16).astype(np.float64)
    c = rng.standard_normal((m, n)).astype(np.float32).astype(np.float64)
    return a, b, c


CASES = [(64, 64, 32, 4), (16, 64, 16, 4), (32, 32, 48, 1), (128, 64, 32, 2)]


@pytest.mark.parametrize("m, n, k, num_warps", CASES)
def test_wmma_plan_computes_the_dot(m, n, k, num_warps):
    wmma = wmma_layout((m, n, k), num_warps)
    assert wmma is not None and wmma.warps_per_cta == (1, num_warps)
    a, b, c = _tiles(m, n, k)
    result = simulate(wmma, a, b, c, num_warps)
    assert not np.isnan(result).any()
    np.testing.assert_allclose(result, a @ b + c, rtol=1e-12, atol=1e-12)


_right_operand, _right_result = AmdWmma.operand_blocked, AmdWmma.to_blocked


def _wrong_a_lanes(self, op_idx):  # a's lanes numbered along K first
    right = _right_operand(self, op_idx)
    return Blocked(right.size_per_thread, right.threads_per_warp, right.warps_per_cta, (1, 0)) if op_idx == 0 else right


def _wrong_b_lanes(self, op_idx):  # b's lanes numbered along K first
    right = _right_operand(self, op_idx)
    return Blocked(right.size_per_thread, right.threads_per_warp, right.warps_per_cta, (0, 1)) if op_idx == 1 else right


def _wrong_result_lanes(self, shape=None):  # the result's lanes numbered along M first
    right = _right_result(self, shape)
    return Blocked(right.size_per_thread, right.threads_per_warp, right.warps_per_cta, (0, 1))


@pytest.mark.parametrize("method, broken", [("operand_blocked", _wrong_a_lanes), ("operand_blocked", _wrong_b_lanes),
                                            ("to_blocked", _wrong_result_lanes)])
def test_simulation_fails_for_a_wrong_layout_index(monkeypatch, method, broken):
    m, n, k, num_warps = CASES[0]
    wmma = wmma_layout((m, n, k), num_warps)
    monkeypatch.setattr(AmdWmma, method, broken)
    a, b, c = _tiles(m, n, k, seed=1)
    try:
        result = simulate(wmma, a, b, c, num_warps)
    except AssertionError:
        return  # the halves of the wave no longer repeat each other: the instruction's input is undefined
    assert not np.isnan(result).any()
    assert np.abs(result - (a @ b + c)).max() > 1.0



@pytest.mark.parametrize("m, n, k, num_warps", CASES)
def test_operand_runs_are_vector_loads(m, n, k, num_warps):
    """to_llvm/dot_amd_operands.py reads each lane's 8 halves of a WMMA operand as one 16-byte vector."""
    from test_amd_dot_mfma_sim import _check_runs

    from inductor_tile.kernel_compiler.to_llvm.dot_amd_operands import operand_runs

    wmma = wmma_layout((m, n, k), num_warps)
    for op_idx, shape in ((0, (m, k)), (1, (k, n))):
        lmap = LayoutMap(DotOperand(op_idx, wmma), shape)
        groups = operand_runs(lmap)
        assert {len(g) for g in groups} == {8}
        _check_runs(lmap, groups, 1 if op_idx == 0 else 0, num_warps, LANES)
