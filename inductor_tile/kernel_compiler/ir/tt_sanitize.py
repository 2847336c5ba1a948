"""The ops the sanitizer adds to TTIR (passes/sanitize.py):

    %addr = tt.ptr_to_int %ptrs : tensor<128x!tt.ptr<f32>> -> tensor<128xi64>
    tt.sanitizer_report %bad, %offsets, %record {arg = 0 : i32, kind = "load", loc = "k.py:12:9", site = 0 : i32}
        : tensor<128xi1>, tensor<128xi64>, !tt.ptr<i64>

`tt.ptr_to_int` gives the byte address of each pointer. `tt.sanitizer_report` records the first
violation: where `bad` holds in some lane, the thread that gets there first writes
(site + 1, program id x, y, z, the smallest `value` among its bad lanes) into the int64 error
record at `record` (runtime/sanitizer.py reads it after the launch). `value` is, for an access,
each pointer's element offset from the argument `arg` (its byte address when `arg` is -1), for
a division by zero each element's index in the tile. `kind`, `loc` (the kernel
line) and `arg` (the pointer argument the address belongs to, -1 if unknown) describe the site
for the report; they do not change the code.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I32, IntegerAttr, StringAttr, i1, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from .tt_types import PointerType, element_of, encoding_of_type, expect, i32_attr, like, shape_of


@irdl_op_definition
class PtrToIntOp(IRDLOperation):
    """The byte address of each pointer, as i64."""

    name = "tt.ptr_to_int"

    src = operand_def(AnyAttr())
    result = result_def(AnyAttr())

    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue):
        super().__init__(operands=[src], result_types=[like(src.type, i64)])

    def verify_(self) -> None:
        expect(isinstance(element_of(self.src.type), PointerType), "tt.ptr_to_int: operand must be pointer(s)")
        expect(self.result.type == like(self.src.type, i64), "tt.ptr_to_int: result must be i64 of the operand's shape")


@irdl_op_definition
class SanitizerReportOp(IRDLOperation):
    """Record a violation where `bad` holds (see the module docstring). Has effects: never removed."""

    name = "tt.sanitizer_report"

    bad = operand_def(AnyAttr())
    value = operand_def(AnyAttr())
    record = operand_def(AnyAttr())
    site = prop_def(IntegerAttr[I32])
    kind = prop_def(StringAttr)
    loc = prop_def(StringAttr)
    arg = prop_def(IntegerAttr[I32])

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$bad `,` $value `,` $record attr-dict `:` type($bad) `,` type($value) `,` type($record)"

    def __init__(self, bad: SSAValue, value: SSAValue, record: SSAValue, site: int, kind: str, loc: str, arg: int):
        super().__init__(operands=[bad, value, record],
                         properties={"site": i32_attr(site), "kind": StringAttr(kind), "loc": StringAttr(loc),
                                     "arg": i32_attr(arg)})

    def verify_(self) -> None:
        expect(element_of(self.bad.type) == i1, "tt.sanitizer_report: `bad` must be i1")
        expect(element_of(self.value.type) == i64, "tt.sanitizer_report: `value` must be i64")
        expect(shape_of(self.bad.type) == shape_of(self.value.type), "tt.sanitizer_report: operand shapes differ")
        expect(encoding_of_type(self.bad.type) == encoding_of_type(self.value.type),
               "tt.sanitizer_report: operand layouts differ")
        expect(self.record.type == PointerType(i64), "tt.sanitizer_report: the record must be a !tt.ptr<i64>")


SANITIZE_OPS = [PtrToIntOp, SanitizerReportOp]
