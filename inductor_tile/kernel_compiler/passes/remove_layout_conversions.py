"""remove-layout-conversions: drop the `ttg.convert_layout`s that layouts can avoid.

Rounds of four steps, until nothing changes:
1. fold: `convert(x : A -> A)` is `x`; `convert(convert(x))` is one conversion of `x`;
2. forward propagation (`layout_propagation`): move a conversion's users to its source
   layout when that removes more conversions than it adds; this is how a load's
   coalesced layout spreads to the elementwise ops, reductions and loops that use it;
   when no single conversion pays, all conversions from one layout are planned together;
3. backward rematerialization (`rematerialize`): rebuild a converted value directly in
   the wanted layout when all its producers are cheap (splats, ranges, elementwise index
   math, broadcasts); where that stops at one value that a broadcast or an extension
   widens, or at the 32-bit offsets an addptr adds to rebuildable pointers, convert that
   value instead (fewer bytes) and rebuild the rest above it;
4. dead code elimination, so that producers left without users do not count as uses.
Every step keeps the IR verifying; the conversions' cost never grows (their number, each
weighted by its loops, a conversion of a row broadcast afterwards counting its share of the
broadcast's bytes: `layout_propagation.conversion_cost`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ..ir.ttg import ConvertLayoutOp, launch_shape
from .layout_constraints import functions, value_layout
from .layout_propagation import apply_plan, plan_forward
from .liveness import region_dce
from .rematerialize import MAX_DUPLICATED, Rematerializer, load_values, merge_duplicated_chains, narrowed_operand

MAX_ROUNDS = 16


def _conversions(func_op: func.FuncOp) -> list[ConvertLayoutOp]:
    return [op for op in func_op.walk() if isinstance(op, ConvertLayoutOp)]


def _erase(convert: ConvertLayoutOp) -> None:
    convert.detach()
    convert.erase()


def fold_conversions(func_op: func.FuncOp) -> bool:
    """Remove identity conversions and merge chains of conversions."""
    changed = False
    for convert in _conversions(func_op):
        inner = convert.src.owner
        if isinstance(inner, ConvertLayoutOp):
            convert.operands[0] = inner.src
            changed = True
        if value_layout(convert.src) == value_layout(convert.result):
            convert.result.replace_all_uses_with(convert.src)
            _erase(convert)
            changed = True
    return changed


class _Judges:
    """The rematerializers that plans are judged with (plain and narrowing), shared by the plans
    until one changes the IR (their answers are memoized)."""

    def __init__(self, num_threads: int, values: dict | None) -> None:
        self.num_threads, self.values = num_threads, values
        self.reset()

    def reset(self) -> None:
        self.plain = Rematerializer(self.num_threads, self.values)
        self.narrowing = Rematerializer(self.num_threads, self.values, narrowing=True)


def _try_plan(converts: list[ConvertLayoutOp], judges: _Judges, origins: dict | None) -> bool:
    if any(c.parent is None or value_layout(c.src) == value_layout(c.result) for c in converts):
        return False  # erased by an earlier plan, or folded next round
    plan = plan_forward(converts)
    if plan is None or plan.added(judges.plain, judges.narrowing) >= plan.removed:
        return False
    apply_plan(plan, judges.num_threads, judges.values, origins)
    judges.reset()
    return True


def propagate_forward(func_op: func.FuncOp, num_threads: int, values: dict | None = None,
                      origins: dict | None = None) -> bool:
    """Apply every forward-propagation plan that removes conversions: one conversion at a time,
    then, when none pays alone, all conversions from one layout together."""
    changed = False
    judges = _Judges(num_threads, values)
    for convert in _conversions(func_op):
        changed |= _try_plan([convert], judges, origins)
    if changed:
        return True
    groups: dict[object, list[ConvertLayoutOp]] = {}
    for convert in _conversions(func_op):
        groups.setdefault(value_layout(convert.src), []).append(convert)
    for group in groups.values():
        if len(group) > 1:
            changed |= _try_plan(group, judges, origins)
    return changed


def rematerialize_sources(func_op: func.FuncOp, num_threads: int, values: dict | None = None,
                          origins: dict | None = None) -> bool:
    """Replace conversions of cheaply rebuildable values by the rebuilt values."""
    changed = False
    remat = Rematerializer(num_threads, values, origins)
    for convert in _conversions(func_op):
        wanted = value_layout(convert.result)
        assert wanted is not None
        if convert.parent is None or not remat.can(convert.src, wanted):
            continue
        if remat.duplicated(convert.src, wanted, convert) > MAX_DUPLICATED:
            continue  # converting once is cheaper than computing much of the chain twice
        convert.result.replace_all_uses_with(remat.build(convert.src, wanted))
        _erase(convert)
        changed = True
    return changed


def narrow_conversions(func_op: func.FuncOp, num_threads: int, values: dict | None = None,
                       origins: dict | None = None) -> bool:
    """Move conversions above the broadcasts, extensions and addptrs that feed them: convert the
    [1, N] row (the fp16 tile, the i32 offsets) and broadcast (extend, add to the splat base pointer)
    it again in the wanted layout, when that takes one
    conversion of fewer bytes and the elements computed twice on top are no more than the 32-bit
    words it no longer moves through shared memory."""
    changed = False
    remat = Rematerializer(num_threads, values, origins, narrowing=True)
    for convert in _conversions(func_op):
        wanted = value_layout(convert.result)
        assert wanted is not None
        if convert.parent is None or value_layout(convert.src) == wanted:
            continue
        if narrowed_operand(remat, convert.src, wanted, convert) is None:
            continue
        convert.result.replace_all_uses_with(remat.build(convert.src, wanted))
        _erase(convert)
        changed = True
        remat = Rematerializer(num_threads, values, origins, narrowing=True)  # the IR changed
    return changed


@dataclass(frozen=True)
class RemoveLayoutConversionsPass(ModulePass):
    """Fold, propagate forward and rematerialize until no conversion can go."""

    name = "remove-layout-conversions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        num_warps, lanes = launch_shape(op)
        for func_op in functions(op):
            values = load_values(func_op)  # loads rebuilt keep their originals' entries' meaning
            origins: dict = {}  # rebuilt op -> original, for merge_duplicated_chains
            for _ in range(MAX_ROUNDS):
                changed = fold_conversions(func_op)
                changed |= propagate_forward(func_op, num_warps * lanes, values, origins)
                changed |= fold_conversions(func_op)
                changed |= rematerialize_sources(func_op, num_warps * lanes, values, origins)
                changed |= narrow_conversions(func_op, num_warps * lanes, values, origins)
                region_dce(func_op.body)
                if not changed:
                    break
            if merge_duplicated_chains(func_op, origins):  # last: the rounds would rebuild them again
                fold_conversions(func_op)
                region_dce(func_op.body)
