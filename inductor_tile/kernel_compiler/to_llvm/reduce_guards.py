"""A thread's fold of a reduction, slot by slot in scalars, with a shared mask applied once.

`tl.sum(tl.where(row_ok & (cols < 768), x, 0.0), 1)`: every slot a thread folds for one row is
`select(row_ok, x_i, 0.0)` (the column part is known per slot: static_slots.py), so the fold is
`select(row_ok, x_1 + ... + x_n, 0.0 + ... + 0.0)`: one select per row instead of one per slot. LLVM does
this for a scalar chain of selects but not for a vector select read slot by slot (our element-wise ops are
vector IR), nor through the square of a layer norm's variance (`where(m, d, 0) * where(m, d, 0)`); both are
done here.

Each slot of the reduced value becomes a `Term`: a value under a guard (i1 conjuncts, those of `and`s not
known per slot) with the constant the slot holds where the guard is false. Terms follow selects whose other
side is a constant, and float adds, subtracts and
multiplies of terms under one guard (or of a guarded term and a constant) where the constants' result is
exact in every float type; any other slot is read from the lowered vector. The conjuncts every slot of a
row's fold has are applied once, to the fold, where at least two slots have no other (a column mask known
in some reps only keeps its selects in the others); where they are false the fold gives the slots'
constants combined in the same order, which is what a select per slot gave. Otherwise every term is
selected on its own, as before. A reduced value that is also used elsewhere (attention's masked scores feed
the row maximum and the exponentials) is folded from its lowered vector: its selects exist anyway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from .constancy import leaders_of
from .context import I32, LoweringContext, float_kind
from .static_slots import UNKNOWN, TileEvaluator, static_slot_values


def _maximum(a: float, b: float) -> float:
    """llvm.maximum of two non-NaN constants (+0.0 above -0.0)."""
    return a if a > b or (a == b and math.copysign(1.0, a) > 0) else b


def _minimum(a: float, b: float) -> float:
    """llvm.minimum of two non-NaN constants (-0.0 below +0.0)."""
    return a if a < b or (a == b and math.copysign(1.0, a) < 0) else b


#: reductions whose fold over a guard's false side is computed here from the constants
_CONSTANT_COMBINE = {"sum": lambda a, b: a + b, "prod": lambda a, b: a * b, "max": _maximum, "min": _minimum}
_ARITHMETIC = {"arith.addf": lambda a, b: a + b, "arith.subf": lambda a, b: a - b, "arith.mulf": lambda a, b: a * b}
_BUILDER = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul"}


Guard = tuple  # the i1 LLVM values (conjuncts) that must all hold, in the order they were found


@dataclass(frozen=True)
class Term:
    """One slot: `value` where every conjunct of `guard` holds, else the constant `otherwise`; `guard` empty:
    always `value` (then `otherwise` is None, or the slot's constant when `value` is that constant)."""
    value: ir.Value
    guard: Guard = ()
    otherwise: float | None = None


def _ids(guard: Guard) -> frozenset[int]:
    return frozenset(id(v) for v in guard)


def _exact(value: float) -> float | None:
    """`value` where every float type holds it exactly (zeros, infinities, small integers), else None."""
    if math.isnan(value):
        return None
    if math.isinf(value) or (value == int(value) and abs(value) <= 2048):
        return value
    return None


class SlotTerms:
    """The terms of one lowered value's slots (and of the values it is computed from)."""

    def __init__(self, ctx: LoweringContext, root: SSAValue) -> None:
        self.ctx = ctx
        self.lmap = ctx.layout_map(root.type)
        self.count = self.lmap.num_slots
        self.static: dict[SSAValue, list] = {}
        self.evaluator = TileEvaluator()
        self.terms: dict[tuple[SSAValue, int], Term] = {}
        self.leaders: dict[SSAValue, list[int] | None] = {}
        self.conditions: dict[tuple, ir.Value | bool] = {}
        self.root = root

    # --- what is known without looking at data ------------------------------------------------
    def _static(self, ssa: SSAValue, slot: int):
        if ssa not in self.static:
            self.static[ssa] = static_slot_values(self.lmap, ssa, self.evaluator)
        return self.static[ssa][slot]

    def _same_layout(self, ssa: SSAValue) -> bool:
        return isinstance(ssa.type, TensorType) and ssa.type.encoding == self.root.type.encoding \
            and ssa.type.get_shape() == self.root.type.get_shape()

    def _slot(self, ssa: SSAValue, slot: int) -> ir.Value:
        """Slot `slot` of the lowered `ssa`, read from its constancy leader (equal slots read one register)."""
        if ssa not in self.leaders:
            self.leaders[ssa] = leaders_of(self.ctx, ssa, self.count)
        leaders = self.leaders[ssa]
        leader = leaders[slot] if leaders is not None else slot
        key = ("slot", ssa, leader)
        if key not in self.conditions:
            self.conditions[key] = self.ctx.builder.extract_element(self.ctx.get(ssa), ir.Constant(I32, leader))
        return self.conditions[key]

    # --- conditions ---------------------------------------------------------------------------
    def condition(self, ssa: SSAValue, slot: int) -> Guard | bool:
        """The i1 of `ssa` at `slot`: a Python bool where it is known, else its conjuncts (the unknown
        operands of `and`s, known ones left out); one LLVM value per distinct conjunct."""
        known = self._static(ssa, slot)
        if known is not UNKNOWN:
            return bool(known)
        op = getattr(ssa, "op", None)
        if getattr(op, "name", None) == "arith.andi" and all(self._same_layout(v) for v in op.operands):
            parts = [self.condition(v, slot) for v in op.operands]
            if any(p is False for p in parts):
                return False
            conjuncts: list[ir.Value] = []
            for part in parts:
                if part is not True:
                    conjuncts += [v for v in part if id(v) not in _ids(tuple(conjuncts))]
            return tuple(conjuncts) if conjuncts else True
        return (self._slot(ssa, slot),)

    def all_of(self, guard: Guard) -> ir.Value:
        """The `and` of a guard's conjuncts (one LLVM value per distinct set)."""
        value = guard[0]
        for i in range(1, len(guard)):
            key = ("and",) + tuple(id(v) for v in guard[:i + 1])
            if key not in self.conditions:
                self.conditions[key] = self.ctx.builder.and_(value, guard[i])
            value = self.conditions[key]
        return value

    # --- terms --------------------------------------------------------------------------------
    def term(self, ssa: SSAValue, slot: int) -> Term:
        key = (ssa, slot)
        if key not in self.terms:
            self.terms[key] = self._term(ssa, slot)
        return self.terms[key]

    def slot(self, ssa: SSAValue, slot: int) -> ir.Value:
        """Slot `slot` of the lowered `ssa`, as the element-wise lowering computed it."""
        return self.ctx.builder.extract_element(self.ctx.get(ssa), ir.Constant(I32, slot))

    def _plain(self, ssa: SSAValue, slot: int) -> Term:
        known = self._static(ssa, slot)
        if isinstance(known, float) and _exact(known) is not None:
            value = ir.Constant(self.ctx.llvm_type(ssa.type).element, known)
            return Term(value, (), known)
        return Term(self.slot(ssa, slot))

    def _term(self, ssa: SSAValue, slot: int) -> Term:
        op = getattr(ssa, "op", None)
        name = getattr(op, "name", None)
        if float_kind(ssa.type) not in ("f32", "f64") or self._static(ssa, slot) is not UNKNOWN \
                or not all(self._same_layout(v) for v in getattr(op, "operands", ())):
            return self._plain(ssa, slot)
        if name == "arith.select":
            guard = self.condition(op.operands[0], slot)
            if isinstance(guard, bool):
                return self.term(op.operands[1 if guard else 2], slot)
            otherwise = self._static(op.operands[2], slot)
            if not isinstance(otherwise, float) or _exact(otherwise) is None:
                return self._plain(ssa, slot)
            # where(a, where(b, x, k), k) stays select(b, x, k) under a: a is what the row's slots share
            return Term(self.materialize(self.term(op.operands[1], slot)), guard, otherwise)
        if name in _ARITHMETIC:
            a, c = self.term(op.operands[0], slot), self.term(op.operands[1], slot)
            guards = {_ids(t.guard): t.guard for t in (a, c) if t.guard}
            if len(guards) != 1 or any(t.otherwise is None for t in (a, c)):
                return self._plain(ssa, slot)
            otherwise = _exact(_ARITHMETIC[name](a.otherwise, c.otherwise))
            if otherwise is None:
                return self._plain(ssa, slot)
            method = getattr(self.ctx.builder, _BUILDER[name])
            value = method(a.value, c.value, flags=self.ctx.contract_flags(a.value))
            return Term(value, next(iter(guards.values())), otherwise)
        return self._plain(ssa, slot)

    def materialize(self, term: Term, leave_out: frozenset[int] = frozenset()) -> ir.Value:
        """The term's value, selected by the conjuncts of its guard but those in `leave_out` (ids)."""
        guard = tuple(v for v in term.guard if id(v) not in leave_out)
        if not guard:
            return term.value
        return self.ctx.builder.select(self.all_of(guard), term.value, ir.Constant(term.value.type, term.otherwise))


def fold_slots(ctx: LoweringContext, ssa: SSAValue, kind: str, groups: list[list[int]], combine) -> ir.Value | None:
    """The thread's fold of `ssa`'s slots: for each result slot j, the slots groups[0][j], groups[1][j], ...
    combined in that order (`combine` of two scalars), as a vector of one element per result slot; None
    where this does not apply (only f32/f64 sum, prod, max and min)."""
    if kind not in _CONSTANT_COMBINE or float_kind(ssa.type) not in ("f32", "f64"):
        return None
    terms = SlotTerms(ctx, ssa)
    # a value used beside the reduction is lowered as a vector anyway: folding its slots adds no select, where
    # terms would repeat its selects (attention's masked scores feed the row maximum and the exponentials)
    shared = sum(1 for _ in ssa.uses) > 1
    b = ctx.builder
    width = len(groups[0])
    element = ctx.llvm_type(ssa.type).element
    out = ir.Constant(ir.VectorType(element, width), None)
    for j in range(width):
        if shared:
            values, common = [terms.slot(ssa, group[j]) for group in groups], ()
        else:
            column = [terms.term(ssa, group[j]) for group in groups]
            common = _common_guard(column, kind)
            values = [terms.materialize(t, _ids(common)) for t in column]
        result = values[0]
        for value in values[1:]:
            result = combine(result, value)
        if common:
            result = b.select(terms.all_of(common), result, ir.Constant(element, _fold_constants(column, kind)))
        out = b.insert_element(out, result, ir.Constant(I32, j))
    return out


def _common_guard(column: list[Term], kind: str) -> Guard:
    """The conjuncts every term's guard has, where every term has a constant side whose fold is exact: where
    one of them is false, every term is its constant. Empty where that does not hold, or where fewer than two
    terms have no other conjuncts (their selects are what one select of the fold saves)."""
    if any(t.otherwise is None for t in column) or _fold_constants(column, kind) is None:
        return ()
    guarded = [t.guard for t in column if t.guard]  # constant terms (value == otherwise) go with any guard
    if not guarded:
        return ()
    common = _ids(guarded[0])
    for guard in guarded[1:]:
        common &= _ids(guard)
    if sum(1 for guard in guarded if _ids(guard) == common) < 2:
        return ()  # a select per term either way: one more for the fold saves nothing
    return tuple(v for v in guarded[0] if id(v) in common)


def _fold_constants(column: list[Term], kind: str) -> float | None:
    """The reduction of the terms' constants in order, where each step is exact."""
    otherwise = column[0].otherwise
    for term in column[1:]:
        otherwise = _exact(_CONSTANT_COMBINE[kind](otherwise, term.otherwise))
        if otherwise is None:
            return None
    return otherwise
