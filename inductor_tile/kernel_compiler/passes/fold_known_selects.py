"""fold-known-selects: a select inside another select's branch, on a condition that branch decides, is folded.

Inductor's index-heavy kernels (Longformer's chunked attention: pads, slices and select-scatters) nest
`where`s on a few conditions many times over: `select(c, select(d, k, select(c, x, y)), z)`. In the true
branch of the outer select `c` holds, so the inner `select(c, x, y)` is `x` there. For each select
`select(c, x, y)` this pass rewrites `x` knowing `c` and `y` knowing `not c` (an `arith.andi` condition
known true makes its operands known true; one known false operand makes it known false), and rebuilds
only the selects that changed, in front of the select being rewritten. Selects whose two sides end up the
same value become that value. Exact for every value (no arithmetic changes), so NaNs and signed zeros
are kept. Only selects of one block, on conditions of the select's own shape, take part.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from ..ir import arith_ext
from .matchers import defining_op

Facts = dict  # condition SSA value -> bool

#: how deep a rewrite follows nested selects (the chains seen are 10-20 long)
MAX_DEPTH = 32
#: rewrite steps per block at most (a bound on compile time for pathological trees)
MAX_STEPS = 50_000


def _select(value: SSAValue) -> Operation | None:
    return defining_op(value, "arith.select")


def _andi(value: SSAValue) -> Operation | None:
    return defining_op(value, "arith.andi")


def _known(condition: SSAValue, facts: Facts) -> bool | None:
    """True or False where `facts` decide `condition`, else None."""
    if condition in facts:
        return facts[condition]
    op = _andi(condition)
    if op is not None:
        parts = [_known(operand, facts) for operand in op.operands]
        if False in parts:
            return False
        if all(parts):
            return True
    return None


def _assume(condition: SSAValue, holds: bool, facts: Facts) -> Facts:
    """`facts` and `condition == holds` (a true `andi` makes its operands true)."""
    out = dict(facts)
    out[condition] = holds
    op = _andi(condition)
    if holds and op is not None:
        for operand in op.operands:
            out = _assume(operand, True, out)
    return out


class _Folder:
    def __init__(self, block: Block) -> None:
        self.block = block
        self.conditions: dict[SSAValue, frozenset] = {}  # the conditions of a value's select tree
        self.memo: dict[tuple, SSAValue] = {}
        self.steps = 0

    def conditions_of(self, value: SSAValue) -> frozenset:
        """The conditions of the selects of this block that `value` is chosen through (found without
        recursion: a `where` chain may be thousands long)."""
        pending = [value]
        while pending:
            top = pending[-1]
            if top in self.conditions:
                pending.pop()
                continue
            op = _select(top)
            if op is None or op.parent is not self.block:
                self.conditions[top] = frozenset()
                pending.pop()
                continue
            sides = [side for side in op.operands[1:] if side not in self.conditions]
            if sides:
                pending += sides
                continue
            self.conditions[top] = frozenset({op.operands[0]}) | self.conditions[op.operands[1]] \
                | self.conditions[op.operands[2]]
            pending.pop()
        return self.conditions[value]

    def rewrite(self, value: SSAValue, facts: Facts, before: Operation, depth: int = 0) -> SSAValue:
        """`value` where `facts` hold, its changed selects built in front of `before`."""
        self.steps += 1
        if depth > MAX_DEPTH or self.steps > MAX_STEPS or _select(value) is None:
            return value
        if not any(_known(c, facts) is not None for c in self.conditions_of(value)):
            return value  # nothing in its tree is decided here
        key = (value, frozenset(facts.items()))
        if key not in self.memo:
            self.memo[key] = self._rewrite(value, facts, before, depth)
        return self.memo[key]

    def _rewrite(self, value: SSAValue, facts: Facts, before: Operation, depth: int) -> SSAValue:
        condition, if_true, if_false = _select(value).operands
        known = _known(condition, facts)
        if known is not None:
            return self.rewrite(if_true if known else if_false, facts, before, depth + 1)
        new_true = self.rewrite(if_true, _assume(condition, True, facts), before, depth + 1)
        new_false = self.rewrite(if_false, _assume(condition, False, facts), before, depth + 1)
        return self.rebuilt(value, new_true, new_false, before)

    def rebuilt(self, value: SSAValue, new_true: SSAValue, new_false: SSAValue, before: Operation) -> SSAValue:
        """`value` (a select) with these sides: itself, the one side where both are the same, or a new select."""
        condition, if_true, if_false = _select(value).operands
        if new_true is if_true and new_false is if_false:
            return value
        if new_true is new_false:
            return new_true
        select = arith_ext.SelectOp(condition, new_true, new_false)
        self.block.insert_op_before(select, before)
        return select.result

    def fold(self, op: Operation) -> None:
        condition, if_true, if_false = op.operands
        new_true = self.rewrite(if_true, _assume(condition, True, {}), op)
        new_false = self.rewrite(if_false, _assume(condition, False, {}), op)
        value = self.rebuilt(op.results[0], new_true, new_false, op)
        if value is not op.results[0]:
            op.results[0].replace_all_uses_with(value)
            self.block.erase_op(op)


class FoldKnownSelectsPass(ModulePass):
    """Fold the selects nested in another select's branches whose conditions that branch decides."""

    name = "fold-known-selects"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = [block for inner in op.walk() for region in inner.regions for block in region.blocks]
        for block in blocks:
            folder = _Folder(block)
            for select in [o for o in block.ops if o.name == "arith.select"]:
                folder.fold(select)
