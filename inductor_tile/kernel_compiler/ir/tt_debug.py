"""Debugging and synchronization ops of the `tt` dialect, and the promise `llvm.intr.assume`.

    tt.debug_barrier
    tt.assert %ok {message = "kernel.py:12: x must be positive"} : tensor<128xi1>
    tt.print %x {prefix = "x: "} : tensor<128xf32>

`tt.debug_barrier` makes every thread of a program wait for the others (a CTA barrier on
GPUs; nothing on the CPU, where one thread runs a program). `tt.assert` reports a failed
device assertion (tl.device_assert, compiled in only in debug mode), `tt.print` prints
values (tl.device_print). All three have effects, so no pass moves or removes them.

    llvm.intr.assume %ok : i1

is `tl.assume(cond)`: a promise that `cond` holds, which LLVM may use to simplify the code around it
(named as in Triton's TTIR, where it is the LLVM dialect's op). Like LLVM's own intrinsic it counts as
having an effect, so that no pass drops it for having no results.
"""

from __future__ import annotations

from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, StringAttr, i1, i32
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    var_operand_def,
)

from .tt_types import element_of, expect


@irdl_op_definition
class DebugBarrierOp(IRDLOperation):
    """All threads of the program reach this point before any goes on."""

    name = "tt.debug_barrier"

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class AssumeOp(IRDLOperation):
    """The program promises that the i1 scalar `condition` is true here (never checked)."""

    name = "llvm.intr.assume"

    condition = operand_def(i1)

    assembly_format = "$condition attr-dict `:` type($condition)"

    def __init__(self, condition: SSAValue):
        super().__init__(operands=[condition])


DEBUG_OPS = [DebugBarrierOp, AssumeOp]


@irdl_op_definition
class AssertOp(IRDLOperation):
    """Where `condition` (an i1 scalar or tensor) is false anywhere, report `message` (which names the
    kernel's file and line) with the program id. Only debug builds contain it."""

    name = "tt.assert"

    condition = operand_def(AnyAttr())
    message = prop_def(StringAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$condition attr-dict `:` type($condition)"

    def __init__(self, condition: SSAValue, message: str):
        super().__init__(operands=[condition], properties={"message": StringAttr(message)})

    def verify_(self) -> None:
        expect(element_of(self.condition.type) == i1, "tt.assert: the condition must be i1")


@irdl_op_definition
class PrintOp(IRDLOperation):
    """Print the values (each element of each, with the program id and its index) after the label `prefix`;
    `hex`: integers in hexadecimal; `is_signed`: per value, whether its integers are signed (IR integers are
    signless, so the language type says how to print them)."""

    name = "tt.print"

    values = var_operand_def(AnyAttr())
    prefix = prop_def(StringAttr)
    hex = prop_def(BoolAttr)
    is_signed = prop_def(DenseArrayBase)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$values attr-dict `:` type($values)"

    def __init__(self, values: list[SSAValue], prefix: str, hex: bool = False, is_signed: list[bool] | None = None):
        signed = [1] * len(values) if is_signed is None else [int(s) for s in is_signed]
        super().__init__(operands=[values], properties={"prefix": StringAttr(prefix), "hex": BoolAttr.from_bool(hex),
                                                        "is_signed": DenseArrayBase.from_list(i32, signed)})


DEBUG_OPS.extend([AssertOp, PrintOp])
