"""Small matchers shared by the rewrite patterns: recognising constants and splats."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ..ir import tt

ScalarConstant = IntegerAttr | FloatAttr


def scalar_constant(value: SSAValue) -> ScalarConstant | None:
    """The attribute of a scalar `arith.constant`, or of the constant a `tt.splat` repeats."""
    op = value.owner
    if isinstance(op, tt.SplatOp):
        op = op.src.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr | FloatAttr):
        return op.value
    return None


def defining_op(value: SSAValue, name: str) -> Operation | None:
    """The op defining `value` when it is a `name` op (e.g. "arith.andi"), else None."""
    op = value.owner
    return op if isinstance(op, Operation) and op.name == name else None


def materialize(attr: ScalarConstant, ty: Attribute) -> list[Operation]:
    """Ops producing `attr` with type `ty`: one constant, plus a splat when `ty` is a tensor."""
    const = arith.ConstantOp(attr)
    if not isinstance(ty, TensorType):
        return [const]
    return [const, tt.SplatOp(const.result, ty)]
