"""Forward layout propagation: drop a conversion by moving its users to the source layout.

For `%y = ttg.convert_layout %x : A -> B`, the plan retypes `%y` to A (so the conversion
disappears) and follows the change through `%y`'s users, as `layout_constraints` says:
- an elementwise op moves to A entirely: its results change, and its other tensor
  operands are needed in A (free when they change too, are already in A, or can be
  rematerialized; otherwise a conversion); a packed inline asm only to a layout that gives
  each execution consecutive elements (`packed_asm_layouts`), else it keeps its layout;
- broadcast keeps the layout, expand_dims of a slice takes the slice's parent, a
  reduction's result becomes a slice of the new layout;
- a loop-carried value changes all around its scf.for (init needed in A, block argument,
  yield, result); an scf.if result changes with every branch's yield;
- a ttg.convert_layout user is unaffected, and vanishes if it converted to A anyway;
- anything else (loads, stores and atomics keep their coalesced layout, reshapes, ...) keeps the
  old layout through a new conversion.
The plan is applied only when it removes more conversions than it adds, each weighted by
LOOP_WEIGHT per enclosing loop (a conversion moved out of a loop is a gain) and, for a
conversion of a row that is broadcast after it (or will be, once narrow_conversions moves it
above the broadcast), by its share of the broadcast's bytes; so repeated application
terminates. Conflicting demands (one value needed in two layouts) drop it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects import scf
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from ..ir import tt
from ..ir.layouts import Layout, Slice
from ..ir.tt_memory import MEMORY_OPS
from ..ir.tt_types import numel, shape_of
from ..ir.ttg import ConvertLayoutOp, convert_to
from .layout_constraints import is_elementwise, is_tensor, retype, value_layout
from .packed_asm_layouts import layout_accepted
from .rematerialize import Rematerializer, narrowed_operand, tile_bytes

Use = tuple[Operation, int, Layout]  # (op, operand index, layout the operand must have)
LOOP_WEIGHT = 8


def weight(op: Operation) -> int:
    """The cost of a conversion placed just before `op`: LOOP_WEIGHT per enclosing loop."""
    depth, parent = 0, op.parent_op()
    while parent is not None:
        depth += isinstance(parent, scf.ForOp | scf.WhileOp)
        parent = parent.parent_op()
    return LOOP_WEIGHT**depth


def conversion_cost(convert: ConvertLayoutOp) -> float:
    """`weight(convert)`, scaled down for a conversion that only feeds broadcasts (as
    narrow_conversions leaves them) by the share of the broadcast value's bytes it moves: a [1, N] row
    broadcast to [8, N] costs 1/8, as much as the plans that narrow it count for it. (Conversions are
    otherwise counted whatever their element type: an fp16 tile's costs as much as an fp32 tile's.)"""
    users = [use.operation for use in convert.result.uses]
    widened = [op.results[0] for op in users if isinstance(op, tt.BroadcastOp)]
    if users and len(widened) == len(users):
        return weight(convert) * tile_bytes(convert.result) / max(tile_bytes(value) for value in widened)
    return weight(convert)


class _Conflict(Exception):
    """A value would need two layouts at once."""


@dataclass
class Plan:
    """The values to retype, and the operands that must then be (re)converted."""

    layouts: dict[SSAValue, Layout] = field(default_factory=dict)
    op_layouts: dict[Operation, Layout] = field(default_factory=dict)
    needs: list[Use] = field(default_factory=list)  # operands wanted in a layout (maybe satisfied)
    keeps: list[Use] = field(default_factory=list)  # uses that keep the old layout via a conversion
    removed: float = 0  # cost (`conversion_cost`) of the conversions that go away

    def added(self, remat: Rematerializer, narrowing: Rematerializer | None = None) -> float:
        """The weight of the conversions the plan would insert, less that of the conversions it
        leaves without users: an operand converted from the wanted layout is read at its source,
        and a conversion all of whose users are moved there dies (a reduction whose loads all
        were converted to the default layout moves to theirs in one plan, as under Triton).
        An operand that is a conversion used only by the plan's ops costs nothing: the new
        conversion folds with it into one (a norm's weight row converted to the default layout
        is converted to the loads' layout instead). With a `narrowing` rematerializer, an operand
        that narrow_conversions will convert before a broadcast counts the share of the bytes that
        conversion moves (a [1, N] row broadcast to [8, N]: 1/8; one narrowed before an extension
        only, as one conversion)."""
        count = sum(weight(op) for op, _, _ in self.keeps)
        wanted = {(op, index): layout for op, index, layout in self.needs}
        dying: set[Operation] = set()
        converted: list[tuple[SSAValue, Layout, Operation]] = []
        for op, index, layout in self.needs:
            value = op.operands[index]
            if self.layouts.get(value, value_layout(value)) == layout:
                continue
            source = value.owner
            only_here = value not in self.layouts and all(
                wanted.get((use.operation, use.index)) == layout for use in value.uses)
            if value not in self.layouts and remat.can(value, layout):
                if isinstance(source, ConvertLayoutOp) and value_layout(source.src) == layout and only_here:
                    dying.add(source)
                continue
            if isinstance(source, ConvertLayoutOp) and only_here:
                continue  # the conversion is retargeted (folded with the new one): still one
            converted.append((value, layout, op))
        freed = sum(conversion_cost(convert) for convert in dying)
        added = count + sum(weight(op) for _, _, op in converted) - freed
        if narrowing is None or added < self.removed:
            return added  # pays without narrowing: no need to look further
        return count + sum(weight(op) * self._share(value, layout, op, narrowing)
                           for value, layout, op in converted) - freed

    def _share(self, value: SSAValue, layout: Layout, user: Operation, narrowing: Rematerializer | None) -> float:
        """The bytes a conversion of `value` to `layout` moves once narrowed, over its own (1: not
        narrowed; values the plan retypes are not narrowed)."""
        if narrowing is None or value in self.layouts:
            return 1.0
        narrow = narrowed_operand(narrowing, value, layout, user)
        if narrow is None or narrow in self.layouts or numel(shape_of(narrow.type)) == numel(shape_of(value.type)):
            return 1.0
        return tile_bytes(narrow) / tile_bytes(value)


class _Planner:
    def __init__(self, converts: list[ConvertLayoutOp]):
        self.converts = converts
        self.plan = Plan(removed=sum(conversion_cost(convert) for convert in converts))
        self.worklist: list[SSAValue] = []

    def run(self) -> Plan:
        for convert in self.converts:
            source = value_layout(convert.src)
            assert source is not None
            self._change(convert.result, source)
        self._drain()
        while self._widen_loops():
            self._drain()
        return self.plan

    def _change(self, value: SSAValue, layout: Layout) -> None:
        if value in self.plan.layouts:
            if self.plan.layouts[value] != layout:
                raise _Conflict()
            return
        if value_layout(value) == layout:
            return
        self.plan.layouts[value] = layout
        self.worklist.append(value)

    def _drain(self) -> None:
        while self.worklist:
            value = self.worklist.pop()
            for use in list(value.uses):
                self._visit(use.operation, use.index, value)

    def _visit(self, op: Operation, index: int, value: SSAValue) -> None:
        new, old = self.plan.layouts[value], value_layout(value)
        assert old is not None
        if op in self.converts:
            return
        if isinstance(op, ConvertLayoutOp):
            if value_layout(op.result) == new:
                self.plan.removed += conversion_cost(op)
        elif isinstance(op, MEMORY_OPS):
            self.plan.keeps.append((op, index, old))
        elif is_elementwise(op) and layout_accepted(op, new):
            self._move_op(op, new)
        elif isinstance(op, tt.BroadcastOp):
            self._change(op.result, new)
        elif isinstance(op, tt.ExpandDimsOp) and isinstance(new, Slice) and new.dim == op.axis.value.data:
            self._change(op.result, new.parent)
        elif isinstance(op, tt.ReduceOp):
            if is_tensor(op.result):
                self._change(op.result, Slice(op.axis.value.data, new))
        elif isinstance(op, scf.YieldOp) and isinstance(parent := op.parent_op(), scf.ForOp):
            self._change_loop_carried(parent, index, new)
        elif isinstance(op, scf.YieldOp) and isinstance(parent := op.parent_op(), scf.IfOp):
            self._change(parent.results[index], new)
            for other in _yields(parent):
                self.plan.needs.append((other, index, new))
        elif isinstance(op, scf.ForOp) and index >= 3:
            self._change_loop_carried(op, index - 3, new)
        else:
            self.plan.keeps.append((op, index, old))

    def _move_op(self, op: Operation, layout: Layout) -> None:
        if op in self.plan.op_layouts:
            if self.plan.op_layouts[op] != layout:
                raise _Conflict()
            return
        self.plan.op_layouts[op] = layout
        for result in op.results:
            if is_tensor(result):
                self._change(result, layout)
        for index, operand in enumerate(op.operands):
            if is_tensor(operand):
                self.plan.needs.append((op, index, layout))

    def _change_loop_carried(self, loop: scf.ForOp, index: int, layout: Layout) -> None:
        body = loop.body.block
        self._change(body.args[index + 1], layout)
        self._change(loop.results[index], layout)
        self.plan.needs.append((loop, 3 + index, layout))
        yield_op = body.last_op
        assert isinstance(yield_op, scf.YieldOp)
        self.plan.needs.append((yield_op, index, layout))

    def _widen_loops(self) -> bool:
        """Loop-carried values needed in the new layout change all around their loop
        (instead of being converted on every iteration)."""
        widened = False
        for op, index, layout in list(self.plan.needs):
            value = op.operands[index]
            if value in self.plan.layouts or value_layout(value) == layout:
                continue
            loop = _loop_of_carried(value)
            if loop is not None:
                position = value.index - 1 if isinstance(value, BlockArgument) else value.index  # type: ignore[attr-defined]
                self._change_loop_carried(loop, position, layout)
                widened = True
        return widened


def _yields(op: scf.IfOp) -> list[Operation]:
    return [b.last_op for r in op.regions for b in r.blocks if isinstance(b.last_op, scf.YieldOp)]


def _loop_of_carried(value: SSAValue) -> scf.ForOp | None:
    """The scf.for whose iteration argument (not the induction variable) or result `value` is."""
    if isinstance(value, BlockArgument) and value.index > 0:
        parent = value.block.parent_op() if isinstance(value.block, Block) else None
        return parent if isinstance(parent, scf.ForOp) else None
    owner = value.owner
    return owner if isinstance(owner, scf.ForOp) else None


def plan_forward(converts: list[ConvertLayoutOp]) -> Plan | None:
    """The plan that moves the users of `converts` to their source layouts at once, or None on a
    conflict. Several conversions from one layout planned together remove what none removes
    alone: the loads of a row reduction all converted to the default layout, whose arithmetic
    meets the reduction's result (computed in the loads' layout) only after the sum."""
    try:
        return _Planner(converts).run()
    except _Conflict:
        return None


def apply_plan(plan: Plan, num_threads: int = 0, values: dict[Operation, int] | None = None,
               origins: dict[Operation, Operation] | None = None) -> None:
    """Retype the planned values, then convert or rebuild the operands that need it
    (`num_threads`, `values` and `origins` as for `Rematerializer`)."""
    for value, layout in plan.layouts.items():
        retype(value, layout)
    for op, index, layout in plan.keeps:
        _convert_operand(op, index, layout)
    remat = Rematerializer(num_threads, values, origins)
    for op, index, layout in plan.needs:
        value = op.operands[index]
        if value_layout(value) == layout:
            continue
        if remat.can(value, layout):
            op.operands[index] = remat.build(value, layout)
        else:
            _convert_operand(op, index, layout)


def _convert_operand(op: Operation, index: int, layout: Layout) -> None:
    convert = convert_to(op.operands[index], layout)
    block = op.parent_block()
    assert block is not None
    block.insert_op_before(convert, op)
    op.operands[index] = convert.result
