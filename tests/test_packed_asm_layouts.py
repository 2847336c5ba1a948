"""The layout rule of a packed inline asm (passes/packed_asm_layouts.py): `packs_consecutively` reads a blocked
layout's fields; here it is held against the element-by-element truth (every thread's runs of `pack` slots, by
`LayoutMap`) on random layouts, and the layouts the passes build from it are checked the same way."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from inductor_tile.kernel_compiler.ir.layouts import Blocked, LayoutMap, blocked_for
from inductor_tile.kernel_compiler.passes.packed_asm_layouts import (packed_layout, packs_consecutively,
                                                                      widened_size_per_thread)


def runs_are_consecutive(layout: Blocked, shape: tuple[int, ...], pack: int, lanes: int, warps: int) -> bool:
    """Every thread's slots, `pack` at a time, are `pack` consecutive row-major elements from a multiple of it."""
    lmap = LayoutMap(layout, shape)
    if lmap.num_slots % pack:
        return False
    strides = [1] * len(shape)
    for d in reversed(range(len(shape) - 1)):
        strides[d] = strides[d + 1] * shape[d + 1]
    for lane, warp in itertools.product(range(lanes), range(warps)):
        flat = [sum(i * s for i, s in zip(lmap.index(slot, lane, warp), strides)) for slot in range(lmap.num_slots)]
        for start in range(0, len(flat), pack):
            if flat[start] % pack or flat[start:start + pack] != list(range(flat[start], flat[start] + pack)):
                return False
    return True


def _split(total: int, rank: int, rng: random.Random) -> tuple[int, ...]:
    """`total` (a power of two) as a product of `rank` powers of two."""
    parts = [1] * rank
    while total > 1:
        parts[rng.randrange(rank)] *= 2
        total //= 2
    return tuple(parts)


def random_layouts(count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        rank = rng.choice([1, 2, 2, 3])
        shape = tuple(rng.choice([1, 2, 4, 8, 16]) for _ in range(rank))
        lanes, warps = rng.choice([(1, 1), (4, 1), (4, 2), (8, 2)])
        layout = Blocked(tuple(rng.choice([1, 1, 2, 4, 8]) for _ in range(rank)), _split(lanes, rank, rng),
                         _split(warps, rank, rng), tuple(rng.sample(range(rank), rank)))
        yield layout, shape, rng.choice([2, 4, 8]), lanes, warps


def test_the_rule_matches_the_elements_on_random_layouts():
    agreed = {True: 0, False: 0}
    for layout, shape, pack, lanes, warps in random_layouts(1500, seed=20):
        truth = runs_are_consecutive(layout, shape, pack, lanes, warps)
        assert packs_consecutively(layout, shape, pack) == truth, (layout, shape, pack, lanes, warps)
        agreed[truth] += 1
    assert min(agreed.values()) > 100, agreed  # both answers were exercised


@pytest.mark.parametrize("shape", [(512,), (256,), (64, 2), (16, 16), (2, 2, 8), (8, 1, 4), (4, 1)])
@pytest.mark.parametrize("pack", [2, 4, 8])
@pytest.mark.parametrize("lanes, warps", [(1, 1), (32, 1), (32, 4), (32, 8)])
def test_built_layouts_pack(shape, pack, lanes, warps):
    """`packed_layout`, and row-major coalesced layouts widened for the pack, give consecutive runs on every
    thread (the language refuses tensors whose elements do not divide into groups of `pack`)."""
    if math.prod(shape) % pack:
        with pytest.raises(ValueError, match=f"packed_element={pack} does not divide a tensor of shape"):
            packed_layout(shape, pack, warps, lanes)
        return
    layout = packed_layout(shape, pack, warps, lanes)
    assert runs_are_consecutive(layout, shape, pack, lanes, warps), layout
    order = tuple(reversed(range(len(shape))))
    for width in (1, 2, 16):
        spt = tuple(min(width, shape[d]) if d == order[0] else 1 for d in range(len(shape)))
        widened = widened_size_per_thread(spt, order, shape, pack)
        assert widened is not None
        coalesced = blocked_for(shape, widened, order, warps, lanes)
        assert packs_consecutively(coalesced, shape, pack), coalesced
        assert runs_are_consecutive(coalesced, shape, pack, lanes, warps), coalesced


def test_no_widening_across_the_rows_of_a_column_major_order():
    """A layout running down the columns cannot give row-major neighbours: left to a conversion."""
    assert widened_size_per_thread((4, 1), (0, 1), (16, 16), 4) is None
    assert widened_size_per_thread((1, 4), (1, 0), (16, 16), 4) == (1, 4)
    assert widened_size_per_thread((1, 2), (1, 0), (16, 16), 4) == (1, 4)
    assert widened_size_per_thread((1, 1), (1, 0), (64, 2), 4) == (2, 2)
