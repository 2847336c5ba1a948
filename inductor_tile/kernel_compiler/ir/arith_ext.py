"""The `arith` dialect as TTIR uses it: xdsl's arith with tile-capable replacements.

xdsl 0.74's arith is scalar-only in places where tile kernels need tensors:
- `arith.cmpi` / `arith.cmpf` always produce a scalar `i1` (even for tensor operands);
- `arith.select` only accepts a scalar `i1` condition;
- the int<->float casts and `extsi`/`extui`/`trunci` only accept scalar integers;
- there is no `arith.remf`; `remui` has unknown side effects and `remsi` claims to be
  speculatable (it is undefined for a zero divisor, so LICM must not hoist it).

This file defines MLIR-compatible replacements under the same op names (same text), and
`Arith`, the dialect to load instead of `xdsl.dialects.arith.Arith`. All other arith ops
are xdsl's own classes.
"""

from __future__ import annotations

from typing import ClassVar, Self

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, IntegerAttr, IntegerType, i1, i64
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import AnyAttr, IRDLOperation, VarConstraint, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoMemoryEffect, Pure
from xdsl.utils.exceptions import VerifyException

from .tt_types import element_of, expect, like, shape_of

# --- comparisons and select ------------------------------------------------------


class _CmpOp(IRDLOperation):
    """Base of cmpi/cmpf: `arith.cmpX pred, %a, %b : T`; the result is i1 shaped (and laid out) like T."""

    PREDICATES: ClassVar[list[str]]
    ELEMENT: ClassVar[type[Attribute]]
    T: ClassVar = VarConstraint("T", AnyAttr())
    predicate = prop_def(IntegerAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(AnyAttr())

    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue, rhs: SSAValue, predicate: str):
        expect(predicate in self.PREDICATES, f"{self.name}: unknown predicate {predicate!r}")
        props = {"predicate": IntegerAttr(self.PREDICATES.index(predicate), i64)}
        super().__init__(operands=[lhs, rhs], result_types=[like(lhs.type, i1)], properties=props)

    @property
    def predicate_name(self) -> str:
        return self.PREDICATES[self.predicate.value.data]

    def verify_(self) -> None:
        expect(0 <= self.predicate.value.data < len(self.PREDICATES), f"{self.name}: bad predicate")
        if not isinstance(element_of(self.lhs.type), self.ELEMENT):  # the message prints the type: only if needed
            raise VerifyException(f"{self.name}: bad operand type {self.lhs.type}")
        expect(self.result.type == like(self.lhs.type, i1), f"{self.name}: result must be i1-like")

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        predicate = parser.parse_identifier()
        parser.parse_punctuation(",")
        lhs = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        rhs = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        op = cls(parser.resolve_operand(lhs, ty), parser.resolve_operand(rhs, ty), predicate)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.predicate_name}, ")
        printer.print_operand(self.lhs)
        printer.print_string(", ")
        printer.print_operand(self.rhs)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.lhs.type)


@irdl_op_definition
class CmpiOp(_CmpOp):
    """Integer comparison, elementwise on tensors."""

    name = "arith.cmpi"
    PREDICATES: ClassVar[list[str]] = arith.CMPI_COMPARISON_OPERATIONS
    ELEMENT: ClassVar[type[Attribute]] = IntegerType


@irdl_op_definition
class CmpfOp(_CmpOp):
    """Float comparison, elementwise on tensors (`u` predicates are unordered, not unsigned)."""

    name = "arith.cmpf"
    PREDICATES: ClassVar[list[str]] = arith.CMPF_COMPARISON_OPERATIONS
    ELEMENT: ClassVar[type[Attribute]] = AnyFloat


@irdl_op_definition
class SelectOp(IRDLOperation):
    """`cond ? lhs : rhs`, elementwise when `cond` is a tensor of i1. Written
    `arith.select %c, %a, %b : T` for a scalar condition, `: condT, T` otherwise."""

    name = "arith.select"

    T: ClassVar = VarConstraint("T", AnyAttr())
    cond = operand_def(AnyAttr())
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())

    def __init__(self, cond: SSAValue, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[cond, lhs, rhs], result_types=[lhs.type])

    def verify_(self) -> None:
        cond = self.cond.type
        expect(element_of(cond) == i1, "arith.select: condition must be i1 or a tensor of i1")
        expect(cond == i1 or shape_of(cond) == shape_of(self.result.type), "arith.select: condition shape differs")
        expect(cond == i1 or cond == like(self.result.type, i1), "arith.select: condition layout differs")

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        operands = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        expect(len(operands) == 3, "arith.select expects three operands")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        cond_type: Attribute = i1
        ty = parser.parse_type()
        if parser.parse_optional_punctuation(","):
            cond_type, ty = ty, parser.parse_type()
        cond, lhs, rhs = parser.resolve_operands(operands, [cond_type, ty, ty], parser.pos)
        op = cls(cond, lhs, rhs)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        if self.cond.type != i1:
            printer.print_attribute(self.cond.type)
            printer.print_string(", ")
        printer.print_attribute(self.result.type)


# --- casts ------------------------------------------------------------------------


class _ElementwiseCastOp(IRDLOperation):
    """Base of the int/float casts: same shape and layout; the element kinds are the subclass's
    SOURCE and RESULT, its widths are checked by `verify_widths`."""

    SOURCE: ClassVar
    RESULT: ClassVar

    input = operand_def(AnyAttr())
    result = result_def(AnyAttr())

    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    def verify_(self) -> None:
        src, dst = element_of(self.input.type), element_of(self.result.type)
        expect(shape_of(self.input.type) == shape_of(self.result.type), f"{self.name}: shapes differ")
        expect(like(self.input.type, dst) == self.result.type, f"{self.name}: layouts differ")
        expect(isinstance(src, self.SOURCE), f"{self.name}: bad operand type")
        expect(isinstance(dst, self.RESULT), f"{self.name}: bad result type")
        self.verify_widths(src, dst)

    def verify_widths(self, src: Attribute, dst: Attribute) -> None:
        """Any widths: the int<->float casts."""


class _FloatToIntOp(_ElementwiseCastOp):
    SOURCE: ClassVar = AnyFloat
    RESULT: ClassVar = IntegerType


class _IntToFloatOp(_ElementwiseCastOp):
    SOURCE: ClassVar = IntegerType
    RESULT: ClassVar = AnyFloat


class _IntResizeOp(_ElementwiseCastOp):
    """An integer to a strictly wider one (WIDER) or a strictly narrower one."""

    SOURCE: ClassVar = IntegerType
    RESULT: ClassVar = IntegerType
    WIDER: ClassVar[bool] = True

    def verify_widths(self, src: Attribute, dst: Attribute) -> None:
        assert isinstance(src, IntegerType) and isinstance(dst, IntegerType)
        wider = dst.width.data > src.width.data
        expect(wider == self.WIDER and dst != src, f"{self.name}: result must be {'wider' if self.WIDER else 'narrower'}")


@irdl_op_definition
class FPToSIOp(_FloatToIntOp):
    """Float to signed integer, rounding toward zero."""

    name = "arith.fptosi"


@irdl_op_definition
class FPToUIOp(_FloatToIntOp):
    """Float to unsigned integer, rounding toward zero."""

    name = "arith.fptoui"


@irdl_op_definition
class SIToFPOp(_IntToFloatOp):
    """Signed integer to float."""

    name = "arith.sitofp"


@irdl_op_definition
class UIToFPOp(_IntToFloatOp):
    """Unsigned integer to float."""

    name = "arith.uitofp"


@irdl_op_definition
class ExtSIOp(_IntResizeOp):
    """Sign-extend an integer to a wider one."""

    name = "arith.extsi"


@irdl_op_definition
class ExtUIOp(_IntResizeOp):
    """Zero-extend an integer to a wider one."""

    name = "arith.extui"


@irdl_op_definition
class TruncIOp(_IntResizeOp):
    """Keep the low bits of an integer."""

    name = "arith.trunci"
    WIDER: ClassVar[bool] = False


# --- remainders -------------------------------------------------------------------


@irdl_op_definition
class RemFOp(arith.FloatingPointLikeBinaryOperation):
    """Float remainder with the sign of the dividend (C's fmod)."""

    name = "arith.remf"
    traits = traits_def(Pure())


@irdl_op_definition
class RemSIOp(arith.SignlessIntegerBinaryOperation):
    """Signed remainder, truncating (C's %). No memory effect, but never speculated:
    a zero divisor is undefined behaviour."""

    name = "arith.remsi"
    traits = traits_def(NoMemoryEffect())


@irdl_op_definition
class RemUIOp(arith.SignlessIntegerBinaryOperation):
    """Unsigned remainder. No memory effect, never speculated (zero divisor)."""

    name = "arith.remui"
    traits = traits_def(NoMemoryEffect())


REPLACEMENTS: list[type[IRDLOperation]] = [
    CmpiOp,
    CmpfOp,
    SelectOp,
    FPToSIOp,
    FPToUIOp,
    SIToFPOp,
    UIToFPOp,
    ExtSIOp,
    ExtUIOp,
    TruncIOp,
    RemFOp,
    RemSIOp,
    RemUIOp,
]
_REPLACED = {op.name for op in REPLACEMENTS}

Arith = Dialect(
    "arith",
    [op for op in arith.Arith.operations if op.name not in _REPLACED] + REPLACEMENTS,
    list(arith.Arith.attributes),
    [arith.ArithConstantMaterializationInterface()],
)
