"""A thread's fold of a reduction, slot by slot in scalars, with a shared mask applied once.

`tl.sum(tl.where(row_ok & (cols < 768), x, 0.0), 1)`: every slot a thread folds for one row is
`select(row_ok, x_i, 0.0)` (the column part is known per slot: static_slots.py), so the fold is
`select(row_ok, x_1 + ... + x_n, 0.0 + ... + 0.0)`: one select per row instead of one per slot. LLVM does
this for a scalar chain of selects but not for a vector select read slot by slot (our element-wise ops are
vector IR), nor through the square of a layer norm's variance (`where(m, d, 0) * where(m, d, 0)`); both are
done here.

Each slot of the reduced value becomes a `Term`: a value under a guard (an i1 the fold's slots share)
with the constant the slot holds where the guard is false. Terms follow selects whose other side is a
constant, and float adds, subtracts and multiplies of guarded terms under one guard (or of a guarded term
and a constant) where the constants' result is exact in every float type; any other slot is read from the
lowered vector. Where every slot of a row has one guard, the fold combines the values and selects once;
where the guard is false it gives the constants combined in the same order, which is what the select per
slot gave. Otherwise every term is selected on its own, as before.
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


@dataclass(frozen=True)
class Term:
    """One slot: `value` where `guard` holds, else the constant `otherwise`; `guard` None: always `value`
    (then `otherwise` is None, or the slot's constant when `value` is that constant)."""
    value: ir.Value
    guard: ir.Value | None = None
    otherwise: float | None = None


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
        leaders = leaders_of(self.ctx, ssa, self.count)
        leader = leaders[slot] if leaders is not None else slot
        key = ("slot", ssa, leader)
        if key not in self.conditions:
            self.conditions[key] = self.ctx.builder.extract_element(self.ctx.get(ssa), ir.Constant(I32, leader))
        return self.conditions[key]

    # --- conditions ---------------------------------------------------------------------------
    def condition(self, ssa: SSAValue, slot: int) -> ir.Value | bool:
        """The i1 of `ssa` at `slot`: a Python bool where it is known, else one LLVM value per distinct
        condition (and/or of known parts fold away)."""
        known = self._static(ssa, slot)
        if known is not UNKNOWN:
            return bool(known)
        op = getattr(ssa, "op", None)
        name = getattr(op, "name", None)
        if name in ("arith.andi", "arith.ori") and all(self._same_layout(v) for v in op.operands):
            parts = [self.condition(v, slot) for v in op.operands]
            decides = name == "arith.ori"  # the value that decides alone
            if any(p is decides for p in parts):
                return decides
            rest = [p for p in parts if not isinstance(p, bool)]
            if len(rest) == 1:
                return rest[0]
            key = (name, id(rest[0]), id(rest[1]))
            if key not in self.conditions:
                b = self.ctx.builder
                self.conditions[key] = b.and_(*rest) if name == "arith.andi" else b.or_(*rest)
            return self.conditions[key]
        return self._slot(ssa, slot)

    # --- terms --------------------------------------------------------------------------------
    def term(self, ssa: SSAValue, slot: int) -> Term:
        key = (ssa, slot)
        if key not in self.terms:
            self.terms[key] = self._term(ssa, slot)
        return self.terms[key]

    def _plain(self, ssa: SSAValue, slot: int) -> Term:
        known = self._static(ssa, slot)
        if isinstance(known, float) and _exact(known) is not None:
            value = ir.Constant(self.ctx.llvm_type(ssa.type).element, known)
            return Term(value, None, known)
        return Term(self.ctx.builder.extract_element(self.ctx.get(ssa), ir.Constant(I32, slot)))

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
            return Term(self.materialize(self.term(op.operands[1], slot)), guard, otherwise)
        if name in _ARITHMETIC:
            a, c = self.term(op.operands[0], slot), self.term(op.operands[1], slot)
            guards = {id(t.guard): t.guard for t in (a, c) if t.guard is not None}
            if len(guards) != 1 or any(t.otherwise is None for t in (a, c)):
                return self._plain(ssa, slot)
            otherwise = _exact(_ARITHMETIC[name](a.otherwise, c.otherwise))
            if otherwise is None:
                return self._plain(ssa, slot)
            method = getattr(self.ctx.builder, _BUILDER[name])
            value = method(a.value, c.value, flags=self.ctx.contract_flags(a.value))
            return Term(value, next(iter(guards.values())), otherwise)
        return self._plain(ssa, slot)

    def materialize(self, term: Term) -> ir.Value:
        if term.guard is None:
            return term.value
        return self.ctx.builder.select(term.guard, term.value, ir.Constant(term.value.type, term.otherwise))


def fold_slots(ctx: LoweringContext, ssa: SSAValue, kind: str, groups: list[list[int]], combine) -> ir.Value | None:
    """The thread's fold of `ssa`'s slots: for each result slot j, the slots groups[0][j], groups[1][j], ...
    combined in that order (`combine` of two scalars), as a vector of one element per result slot; None
    where this does not apply (only f32/f64 sum, prod, max and min)."""
    if kind not in _CONSTANT_COMBINE or float_kind(ssa.type) not in ("f32", "f64"):
        return None
    terms = SlotTerms(ctx, ssa)
    b = ctx.builder
    width = len(groups[0])
    element = ctx.llvm_type(ssa.type).element
    out = ir.Constant(ir.VectorType(element, width), None)
    for j in range(width):
        column = [terms.term(ssa, group[j]) for group in groups]
        result = _fold_guarded(column, kind, combine)
        if result is None:
            values = [terms.materialize(t) for t in column]
            result = values[0]
            for value in values[1:]:
                result = combine(result, value)
        else:
            value, guard, otherwise = result
            result = b.select(guard, value, ir.Constant(element, otherwise))
        out = b.insert_element(out, result, ir.Constant(I32, j))
    return out


def _fold_guarded(column: list[Term], kind: str, combine):
    """(combined values, guard, combined constants) where every term has one guard or is a constant."""
    guards = {id(t.guard): t.guard for t in column if t.guard is not None}
    if len(guards) != 1 or any(t.otherwise is None for t in column):
        return None
    otherwise = column[0].otherwise
    for term in column[1:]:
        otherwise = _exact(_CONSTANT_COMBINE[kind](otherwise, term.otherwise))
        if otherwise is None:
            return None
    value = column[0].value
    for term in column[1:]:
        value = combine(value, term.value)
    return value, next(iter(guards.values())), otherwise
