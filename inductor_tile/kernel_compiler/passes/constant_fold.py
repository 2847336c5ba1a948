"""constant-fold: evaluate arith/math ops whose operands are all known constants.

An operand is known when it is a scalar `arith.constant` or a `tt.splat` of one. The
result becomes an `arith.constant` (plus a `tt.splat` for tensor results), so tiles of
constants never become dense attributes. Semantics live in `const_eval.py`.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp, i1
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from ..ir import arith_ext
from ..ir.tt_types import element_of
from . import const_eval as ev
from .matchers import ScalarConstant, materialize, scalar_constant


def _int_binary(op: Operation, args: list[ScalarConstant]) -> ScalarConstant | None:
    ty = element_of(op.results[0].type)
    assert isinstance(ty, IntegerType)
    value = ev.INT_BINARY[op.name](args[0].value.data, args[1].value.data, ty.width.data)
    return None if value is None else ev.make_int(value, ty)


def _float_binary(op: Operation, args: list[ScalarConstant]) -> ScalarConstant | None:
    value = ev.FLOAT_BINARY[op.name](args[0].value.data, args[1].value.data)
    return ev.make_float(value, element_of(op.results[0].type))


def _float_unary(op: Operation, args: list[ScalarConstant]) -> ScalarConstant | None:
    return ev.make_float(ev.FLOAT_UNARY[op.name](args[0].value.data), element_of(op.results[0].type))


def _fma(op: Operation, args: list[ScalarConstant]) -> ScalarConstant | None:
    ty = element_of(op.results[0].type)
    value = ev.fma(*(x.value.data for x in args), ty)
    return None if value is None else ev.make_float(value, ty)


def _absi(op: Operation, args: list[ScalarConstant]) -> ScalarConstant | None:
    return ev.make_int(abs(args[0].value.data), element_of(op.results[0].type))


def _cmpi(op: Operation, args: list[ScalarConstant]) -> ScalarConstant | None:
    assert isinstance(op, arith_ext.CmpiOp)
    width = element_of(op.lhs.type).width.data
    return _bool(ev.CMPI[op.predicate_name](args[0].value.data, args[1].value.data, width))


def _cmpf(op: Operation, args: list[ScalarConstant]) -> ScalarConstant | None:
    assert isinstance(op, arith_ext.CmpfOp)
    return _bool(ev.cmpf(op.predicate_name, args[0].value.data, args[1].value.data))


def _cast(op: Operation, args: list[ScalarConstant]) -> ScalarConstant | None:
    src, dst = element_of(op.operands[0].type), element_of(op.results[0].type)
    return ev.CASTS[op.name](args[0], src, dst)


def _select(op: Operation, args: list[ScalarConstant]) -> ScalarConstant | None:
    cond, lhs, rhs = args
    return lhs if cond.value.data != 0 else rhs


def _bool(value: bool) -> IntegerAttr:
    return IntegerAttr(-1 if value else 0, i1)


EVALUATORS = (
    {name: _int_binary for name in ev.INT_BINARY}
    | {name: _float_binary for name in ev.FLOAT_BINARY}
    | {name: _float_unary for name in ev.FLOAT_UNARY}
    | {name: _cast for name in ev.CASTS}
    | {"math.fma": _fma, "math.absi": _absi, "arith.cmpi": _cmpi, "arith.cmpf": _cmpf, "arith.select": _select}
)


class FoldConstantOperands(RewritePattern):
    """Replace an op from `EVALUATORS` whose operands are all constants by its value."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        evaluate = EVALUATORS.get(op.name)
        if evaluate is None:
            return
        args = [scalar_constant(operand) for operand in op.operands]
        if any(arg is None for arg in args):
            return
        result = evaluate(op, args)
        if result is None:
            return
        result_type: Attribute = op.results[0].type
        assert isinstance(result, IntegerAttr | FloatAttr)
        rewriter.replace(op, materialize(result, result_type))


class ConstantFoldPass(ModulePass):
    """Fold constant arith/math ops to constants, repeatedly, so chains fold completely.
    Leaves the now-unused constants for `dce`/`canonicalize` to remove."""

    name = "constant-fold"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldConstantOperands()).rewrite_module(op)
