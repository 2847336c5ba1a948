"""Slots of a thread that hold equal values, from the axis-info constancy.

A thread's slots often hold runs of one value: `cols < 768` over a thread's 8 consecutive
columns, a row mask broadcast along the columns, `x // 8` over 8 consecutive x. Slots that
wrap around a dimension smaller than the layout hold copies of one element. `constancy_leaders`
names, for each slot, the first slot proven to hold the same value in every thread;
`share_equal_slots` makes a lowered value read each slot from its leader, so that only the
leaders' lanes stay used and LLVM drops the computation of the others (one compare per run
instead of one per slot). The gathers of `rules_memory` share addresses and mask bits the same way.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from ..ir.layouts import LayoutMap

#: longer slot vectors are left alone (LLVM's code generation of a shufflevector grows with its length)
MAX_SHARED_SLOTS = 256


def largest_power_of_two_dividing(n: int) -> int:
    return n & -n if n > 0 else 1 << 30


def constancy_leaders(lmap: LayoutMap, constancy) -> list[int]:
    """For each of a thread's slots, the first slot holding an element of the same constancy run.

    Along a kept dimension a slot's element index is `(offset + t) % size`: `offset` the slot's own part
    (`rep * cta_tile + within`), `t` the thread's, a multiple of size_per_thread. With `block` a power of two
    dividing the constancy, size_per_thread and the size, the run of the element is
    `(offset // block + t // block) % (size // block)`: slots whose `(offset // block) % (size // block)`
    agree lie in one aligned run of equal values in every thread (slots that wrap around a small
    dimension hold the same element, any constancy). Where one thread spans the dimension (the CPU),
    `t` is 0 and `block` need not divide size_per_thread."""
    root = lmap.root
    periods = []
    for position, d in enumerate(lmap.kept):
        size = largest_power_of_two_dividing(lmap.shape[position])
        threads = root.threads_per_warp[d] * root.warps_per_cta[d]
        step = root.size_per_thread[d] if threads > 1 else size  # one thread along d: its offset is 0
        block = min(largest_power_of_two_dividing(constancy[position]), step, size)
        periods.append((block, lmap.shape[position] // block))
    first: dict[tuple[int, ...], int] = {}
    leaders = []
    for slot in range(lmap.num_slots):
        key = tuple(o // block % count for o, (block, count) in zip(lmap.slot_offset(slot), periods))
        leaders.append(first.setdefault(key, slot))
    return leaders


def share_equal_slots(ctx, ssa: SSAValue, value: ir.Value) -> ir.Value:
    """`value`, the lowered slots of the element-wise result `ssa`, with every slot read from its
    constancy leader (see the module's docstring); `value` itself where nothing is shared or the
    target computes a thread's slots as one SIMD vector anyway (`Target.shares_equal_slots`)."""
    if not ctx.target.shares_equal_slots or ctx.axis_info is None or ctx.scalar_lanes:
        return value
    if not isinstance(ssa.type, TensorType) or not isinstance(value.type, ir.VectorType) \
            or not 1 < value.type.count <= MAX_SHARED_SLOTS or isinstance(value, ir.Constant):
        return value
    info = ctx.axis_info.get(ssa)
    if info is None:
        return value
    return ctx.shuffle(value, constancy_leaders(ctx.layout_map(ssa.type), info.constancy))
