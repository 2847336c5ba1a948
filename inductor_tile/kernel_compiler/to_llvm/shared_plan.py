"""Where a tile lies in shared memory while it changes layout, and how many elements each access moves.

An exchange (`shared.exchange`) stores every thread's slots, then loads the slots of the new layout. Here,
without emitting anything, that is planned from the two layouts (every thread's every slot, in numpy):

- Buffer order: elements lie in row-major order of the shape, or (when both sides have one shape) along
  another order of the dimensions, e.g. column-major for two layouts whose threads hold columns.
- Runs: a thread's slots `k * run .. k * run + run - 1` whose buffer places are consecutive and aligned to
  `run` move in one access of up to 16 bytes (`st.shared.v4.b32`); the store side and the load side each
  get their own run (a store of 16 bytes and loads of 4 are fine).
- Padding: `pad` elements after every `interval` elements keep the accesses of a warp in different banks
  (a transpose reads a column: without padding every lane would hit one bank). `pad` and `interval` are
  multiples of both runs, so padding never splits a vector or breaks its alignment.

The plan taken is the one with the fewest shared-memory wavefronts (one per 128-byte phase; a bank asked
for several words of a phase serves them one after the other) plus half an instruction per access, counted
on warp 0; ties go to the smaller buffer. The search stops at the first plan (from the widest accesses and
the smallest buffer) without any conflict. Which slots move together, and whether every place is slot 0's
plus a constant, is checked on every thread.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from dataclasses import dataclass

import numpy as np

from ..ir.layouts import Layout, LayoutMap

MAX_ACCESS_BYTES = 16
#: padding may grow the buffer by an eighth at most (the pipeliner leaves 8 KiB beside its rings for a loop's
#: exchanges)
MAX_PADDING_FRACTION = 8
INSTRUCTION_COST = 0.5


@dataclass(frozen=True)
class SharedPlan:
    store_order: tuple[int, ...]  # the buffer's dimensions, fastest first, in the stored (source) shape
    load_order: tuple[int, ...]  # and in the loaded one (both row-major when the shapes differ: a reshape)
    interval: int  # `pad` elements follow every `interval` elements of the buffer
    pad: int
    store_run: int
    load_run: int
    elements: int  # the buffer's size, padding included
    store_firsts: tuple[int, ...] = ()  # the first slot of each store (groups a thread holds twice: once)
    load_sources: tuple[int, ...] = ()  # per group of `load_run` slots, the first slot of the load that fills it
    # when every slot's place is slot 0's plus the same constant in every thread (no dimension wraps): the
    # constants, per slot (then one address per thread and immediate offsets); else None
    store_constants: tuple[int, ...] | None = None
    load_constants: tuple[int, ...] | None = None

    def place(self, linear: np.ndarray) -> np.ndarray:
        return linear + (linear // self.interval) * self.pad


def thread_indices(lmap: LayoutMap, lanes: int, warps: int) -> np.ndarray:
    """[threads, slots, rank]: the tensor index of every slot of every thread (thread = warp * lanes + lane)."""
    rank = len(lmap.shape)
    slots = np.array([lmap.slot_offset(s) for s in range(lmap.num_slots)], dtype=np.int64).reshape(-1, rank)
    threads = np.array([lmap.thread_offset(lane, warp) for warp in range(warps) for lane in range(lanes)],
                       dtype=np.int64).reshape(-1, rank)
    return (slots[None, :, :] + threads[:, None, :]) % np.array(lmap.shape, dtype=np.int64)


def strides(shape: tuple[int, ...], order: tuple[int, ...]) -> list[int]:
    """Element strides of a dense buffer laid out along `order` (fastest first)."""
    out = [0] * len(shape)
    step = 1
    for d in order:
        out[d] = step
        step *= shape[d]
    return out


def linear(indices: np.ndarray, shape: tuple[int, ...], order: tuple[int, ...]) -> np.ndarray:
    return (indices * np.array(strides(shape, order), dtype=np.int64).reshape(-1)).sum(-1)


def longest_run(places: np.ndarray, limit: int) -> int:
    """The longest power-of-two run (at most `limit`) in which every thread's slots are consecutive places
    aligned to the run."""
    slots = places.shape[1]
    run = 1
    while run * 2 <= limit and slots % (run * 2) == 0:
        groups = places.reshape(places.shape[0], -1, run * 2)
        if not ((groups - groups[:, :, :1] == np.arange(run * 2)).all() and (groups[:, :, 0] % (run * 2) == 0).all()):
            break
        run *= 2
    return run


def distinct_groups(places: np.ndarray, run: int) -> list[int]:
    """Per group of `run` slots, the first slot of the earliest group with the same places (a thread holding
    copies of an element moves it once; which slots are copies is the same in every thread)."""
    seen: dict[tuple[int, ...], int] = {}
    return [seen.setdefault(tuple(places[0, first:first + run].tolist()), first)
            for first in range(0, places.shape[1], run)]


def _firsts(places: np.ndarray, run: int) -> list[int]:
    return sorted(set(distinct_groups(places, run)))


def wavefronts(byte_addresses: np.ndarray, width: int, lanes: int) -> int:
    """Shared-memory wavefronts of accesses of `width` bytes: byte_addresses [warps, accesses, lanes]. A phase
    serves 128 bytes of lanes; in it, each bank serves its distinct 4-byte words one per wavefront."""
    words_per_lane = max(1, width // 4)
    per_phase = max(1, min(lanes, 32 // words_per_lane))
    words = byte_addresses[..., None] // 4 + np.arange(words_per_lane)  # [warps, accesses, lanes, words]
    words = words.reshape(-1, per_phase * words_per_lane)  # one row per phase
    words = np.sort(words, axis=1)
    first = np.ones_like(words, dtype=bool)
    first[:, 1:] = words[:, 1:] != words[:, :-1]
    rows = np.repeat(np.arange(words.shape[0]), words.shape[1]).reshape(words.shape)
    counts = np.bincount((rows * 32 + words % 32)[first], minlength=words.shape[0] * 32).reshape(-1, 32)
    return int(counts.max(axis=1).sum())


class _Side:
    """One side of an exchange (the stores or the loads) under a buffer order: its costs by run and padding,
    measured on warp 0 (the other warps' accesses are the same ones shifted, but for layouts that wrap)."""

    def __init__(self, places: np.ndarray, element_bytes: int, lanes: int, limit: int):
        self.places, self.element_bytes, self.lanes = places, element_bytes, lanes
        self.runs = _powers_of_two_up_to(longest_run(places, limit))
        self._firsts = {run: _firsts(places, run) for run in self.runs}
        self._costs: dict[tuple[int, int, int], float] = {}

    def cost(self, run: int, interval: int, pad: int) -> float:
        key = (run, interval if pad else 0, pad)
        if key not in self._costs:
            firsts = self._firsts[run]
            places = self.places[:self.lanes, firsts]
            places = places + (places // interval) * pad
            addresses = places.T[None] * self.element_bytes  # [1 warp, accesses, lanes]
            self._costs[key] = (wavefronts(addresses, run * self.element_bytes, self.lanes)
                                + INSTRUCTION_COST * len(firsts))
        return self._costs[key]

    def ideal(self, run: int) -> float:
        """The cost without any bank conflict: one wavefront per phase."""
        phases = -(-self.lanes // max(1, min(self.lanes, 32 // max(1, run * self.element_bytes // 4))))
        return (phases + INSTRUCTION_COST) * len(self._firsts[run])


def _powers_of_two_up_to(n: int) -> list[int]:
    out, p = [], 1
    while p <= n:
        out.append(p)
        p *= 2
    return out


def _paddings(numel: int, element_bytes: int, step: int) -> list[tuple[int, int]]:
    """(interval, pad) pairs to try, multiples of `step`, buffers from the smallest: no padding first."""
    pairs = [(numel, 0)]
    for interval in _powers_of_two_up_to(numel):
        if interval % step or interval * element_bytes < 64:
            continue
        pairs += [(interval, pad) for pad in _powers_of_two_up_to(interval // MAX_PADDING_FRACTION)
                  if pad % step == 0 and pad * element_bytes <= 64]
    return sorted(pairs, key=lambda pair: pair[1] * ((numel - 1) // pair[0]))


@functools.lru_cache(maxsize=1024)
def plan_exchange(src: Layout, dst: Layout, src_shape: tuple[int, ...], dst_shape: tuple[int, ...],
                  element_bytes: int, lanes: int, warps: int) -> SharedPlan:
    """The plan of an exchange of `element_bytes` elements from layout `src` (shape `src_shape`) to `dst`."""
    src_map, dst_map = LayoutMap(src, src_shape), LayoutMap(dst, dst_shape)
    src_idx, dst_idx = thread_indices(src_map, lanes, warps), thread_indices(dst_map, lanes, warps)
    numel = int(np.prod(dst_shape)) if dst_shape else 1
    rank = len(dst_shape)
    row_major = tuple(reversed(range(rank)))
    orders = [row_major]
    if src_shape == dst_shape:
        for lmap in (src_map, dst_map):
            if len(lmap.root.order) == rank and lmap.root.order not in orders:
                orders.append(tuple(lmap.root.order))
    limit = max(1, MAX_ACCESS_BYTES // element_bytes)
    best: tuple[float, int, SharedPlan] | None = None
    for order in orders:
        store_order = order if src_shape == dst_shape else tuple(reversed(range(len(src_shape))))
        stores = _Side(linear(src_idx, src_shape, store_order), element_bytes, lanes, limit)
        loads = _Side(linear(dst_idx, dst_shape, order), element_bytes, lanes, limit)
        ideal = stores.ideal(stores.runs[-1]) + loads.ideal(loads.runs[-1])
        for store_run, load_run in itertools.product(reversed(stores.runs), reversed(loads.runs)):
            for interval, pad in _paddings(numel, element_bytes, max(store_run, load_run)):
                plan = SharedPlan(store_order, order, interval, pad, store_run, load_run,
                                  numel + (numel - 1) // interval * pad)
                cost = stores.cost(store_run, interval, pad) + loads.cost(load_run, interval, pad)
                if best is None or (cost, plan.elements) < best[:2]:
                    best = (cost, plan.elements, plan)
                if cost <= ideal:  # this order's widest accesses without a conflict, in the smallest buffer
                    break
            if cost <= ideal:
                break
    assert best is not None
    plan = best[2]
    stores = plan.place(linear(src_idx, src_shape, plan.store_order))
    loads = plan.place(linear(dst_idx, dst_shape, plan.load_order))
    return dataclasses.replace(plan, store_firsts=tuple(_firsts(stores, plan.store_run)),
                               load_sources=tuple(distinct_groups(loads, plan.load_run)),
                               store_constants=_constant_steps(stores), load_constants=_constant_steps(loads))


def _constant_steps(places: np.ndarray) -> tuple[int, ...] | None:
    steps = places - places[:, :1]
    return tuple(steps[0].tolist()) if (steps == steps[:1]).all() else None
