"""The planning of layout conversions through shared memory (`to_llvm/shared_plan.py`): the bank model,
and the plans it picks for the layout pairs of test_convert_ptx_sim.py (which runs their PTX)."""

from __future__ import annotations

import numpy as np
import pytest

from inductor_tile.kernel_compiler.ir.layouts import LayoutMap
from inductor_tile.kernel_compiler.to_llvm.shared_plan import _Side, linear, plan_exchange, thread_indices, wavefronts
from test_convert_ptx_sim import PAIRS

BYTES = {"f32": 4, "f16": 2, "i8": 1, "i1": 1}


def _lanes(addresses) -> np.ndarray:
    return np.array(addresses, dtype=np.int64).reshape(1, 1, -1)


def test_wavefronts_of_warp_accesses():
    assert wavefronts(_lanes([4 * lane for lane in range(32)]), 4, 32) == 1  # one word per bank
    assert wavefronts(_lanes([0] * 32), 4, 32) == 1  # one word for everyone: a broadcast
    assert wavefronts(_lanes([2 * lane for lane in range(32)]), 2, 32) == 1  # two b16 per word
    assert wavefronts(_lanes([128 * lane for lane in range(32)]), 4, 32) == 32  # a column of 32-word rows
    assert wavefronts(_lanes([132 * lane for lane in range(32)]), 4, 32) == 1  # ... padded by one word
    assert wavefronts(_lanes([16 * lane for lane in range(32)]), 16, 32) == 4  # 512 bytes: four phases
    assert wavefronts(_lanes([64 * lane for lane in range(32)]), 16, 32) == 16  # 4 lanes of a phase per bank
    assert wavefronts(_lanes([64 * lane + 16 * (lane // 2) for lane in range(32)]), 16, 32) == 4


def _old_cost(shape, src, dst, element_bytes, warps) -> float:
    """Before vector accesses: one element per access, one padding element after every row."""
    total = 0.0
    for layout in (src, dst):
        places = linear(thread_indices(LayoutMap(layout, shape), 32, warps), shape, tuple(reversed(range(len(shape)))))
        total += _Side(places, element_bytes, 32, 1).cost(1, shape[-1], 1 if shape[-1] > 1 else 0)
    return total


CASES = [pytest.param(shape, element, src, dst, warps, id=f"{name}-{element}")
         for name, shape, src, dst, warps, elements in PAIRS for element in elements]


@pytest.mark.parametrize("shape,element,src,dst,warps", CASES)
def test_plans_cost_no_more_than_one_element_per_access(shape, element, src, dst, warps):
    size = BYTES[element]
    plan = plan_exchange(src, dst, shape, shape, size, 32, warps)
    src_places = linear(thread_indices(LayoutMap(src, shape), 32, warps), shape, plan.store_order)
    dst_places = linear(thread_indices(LayoutMap(dst, shape), 32, warps), shape, plan.load_order)
    cost = (_Side(src_places, size, 32, 16).cost(plan.store_run, plan.interval, plan.pad)
            + _Side(dst_places, size, 32, 16).cost(plan.load_run, plan.interval, plan.pad))
    assert cost <= _old_cost(shape, src, dst, size, warps)
    assert plan.elements <= np.prod(shape) * 1.125  # padding grows the buffer by an eighth at most


@pytest.mark.parametrize("name,element,runs", [("ln_f32", "f32", (4, 4)), ("ln_f16", "f16", (8, 8)),
                                               ("columns_both", "f32", (4, 4))])
def test_sixteen_bytes_without_bank_conflicts(name, element, runs):
    _, shape, src, dst, warps, _ = next(pair for pair in PAIRS if pair[0] == name)
    size = BYTES[element]
    plan = plan_exchange(src, dst, shape, shape, size, 32, warps)
    assert (plan.store_run, plan.load_run) == runs
    for layout, order, run in ((src, plan.store_order, plan.store_run), (dst, plan.load_order, plan.load_run)):
        side = _Side(linear(thread_indices(LayoutMap(layout, shape), 32, warps), shape, order), size, 32, 16)
        assert side.cost(run, plan.interval, plan.pad) == side.ideal(run)
