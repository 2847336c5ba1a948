"""Slots of a thread that hold equal values, from the axis-info constancy.

A thread's slots often hold runs of one value: `cols < 768` over a thread's 8 consecutive
columns, a row mask broadcast along the columns, `x // 8` over 8 consecutive x. Slots that
wrap around a dimension smaller than the layout hold copies of one element. `constancy_leaders`
names, for each slot, the first slot proven to hold the same value in every thread;
`share_equal_slots` makes a lowered value read each slot from its leader, so that only the
leaders' lanes stay used and LLVM drops the computation of the others (one compare per run
instead of one per slot). The gathers of `rules_memory` share addresses the same way, and `mask_bits`
the bits of a load's or store's mask.
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
    (`rep * cta_tile + within`, `within` below size_per_thread), `t` the thread's, a multiple of
    size_per_thread below cta_tile. With `block` a power of two dividing the constancy and the size, the run
    of the element is `((offset + t) // block) % (size // block)`. A block within size_per_thread divides
    `t`: the run is `(offset // block + t // block) % (size // block)`, and slots whose
    `(offset // block) % (size // block)` agree lie in one aligned run of equal values in every thread. A
    larger block is a multiple of size_per_thread, so `within + t` crosses no multiple of it: the run is
    `((rep * cta_tile) // block + t // block) % (size // block)`, and the slots of one repetition share
    it, or those of block // cta_tile repetitions where the block spans the CTA tile (a thread's rows 4
    apart, one row per warp, under a constancy of 16: 4 rows). Slots that wrap around a small dimension
    hold the same element, any constancy. Where one thread spans the dimension (the CPU), `t` is 0. A value
    constant along a whole dimension (a broadcast row mask) is one run there, whatever the layout."""
    root = lmap.root
    periods = []  # per kept dimension: (block, runs in the dimension, cta_tile when blocks span threads)
    for position, d in enumerate(lmap.kept):
        if constancy[position] >= lmap.shape[position]:  # one value along the whole dimension
            periods.append((lmap.shape[position], 1, 0))
            continue
        size = largest_power_of_two_dividing(lmap.shape[position])
        block = min(largest_power_of_two_dividing(constancy[position]), size)
        threads = root.threads_per_warp[d] * root.warps_per_cta[d]
        spans_threads = threads > 1 and block > root.size_per_thread[d]
        periods.append((block, lmap.shape[position] // block, root.cta_tile(d) if spans_threads else 0))
    first: dict[tuple[int, ...], int] = {}
    leaders = []
    for slot in range(lmap.num_slots):
        key = tuple((o - o % cta if cta else o) // block % count
                    for o, (block, count, cta) in zip(lmap.slot_offset(slot), periods))
        leaders.append(first.setdefault(key, slot))
    return leaders


def leaders_of(ctx, ssa: SSAValue, count: int) -> list[int] | None:
    """`constancy_leaders` of the element-wise result `ssa` lowered to `count` slots, or None where slots are not
    shared (the target computes SIMD vectors, nothing is known, too many slots)."""
    if not ctx.target.shares_equal_slots or ctx.axis_info is None or ctx.scalar_lanes:
        return None
    if not isinstance(ssa.type, TensorType) or not 1 < count <= MAX_SHARED_SLOTS:
        return None
    info = ctx.axis_info.get(ssa)
    return None if info is None else constancy_leaders(ctx.layout_map(ssa.type), info.constancy)


def splat_operands(ctx, ssa: SSAValue, operands: list[ir.Value]) -> list[ir.Value] | None:
    """The operands of compare `ssa` broadcast from the first slot where all of a thread's slots share the
    result (None elsewhere): LLVM then sees `x < 64` and `x >= 64` (a cat's two halves) as one condition and
    its inverse and folds the selects between them, which it does not through shuffles of their results.
    Other runs keep the shuffle of the result: LLVM's known bits of each slot fold the compares of slots
    masked off in every thread, which a shuffle of the operands hides."""
    vectors = [v for v in operands if isinstance(v.type, ir.VectorType)]
    leaders = leaders_of(ctx, ssa, vectors[0].type.count) if vectors else None
    if leaders is None or set(leaders) != {0}:
        return None
    return [ctx.shuffle(v, leaders) if isinstance(v.type, ir.VectorType) else v for v in operands]


def share_equal_slots(ctx, ssa: SSAValue, value: ir.Value) -> ir.Value:
    """`value`, the lowered slots of the element-wise result `ssa`, with every slot read from its
    constancy leader (see the module's docstring); `value` itself where nothing is shared or the
    target computes a thread's slots as one SIMD vector anyway (`Target.shares_equal_slots`)."""
    if not isinstance(value.type, ir.VectorType) or isinstance(value, ir.Constant):
        return value
    leaders = leaders_of(ctx, ssa, value.type.count)
    return value if leaders is None else ctx.shuffle(value, leaders)
