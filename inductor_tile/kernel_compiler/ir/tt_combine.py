"""Reductions and scans with a combine region: `tt.generic_reduce` and `tt.scan`.

Both take N tensors of one shape and a region whose block has 2N scalar arguments (the
first N: one group of values, the last N: another) and ends with `tt.combine.return` of N
scalars, their combination. The region is isolated from the values around it.

    %r = "tt.generic_reduce"(%x) <{axis = 1 : i32}> ({
    ^bb0(%a : f32, %b : f32):
      %s = arith.addf %a, %b : f32
      "tt.combine.return"(%s) : (f32) -> ()
    }) : (tensor<16x32xf32>) -> tensor<16xf32>

- generic_reduce: each result has the operands' shape without `axis` (a scalar for 1-D
  operands); the combine is taken as associative and commutative, as in Triton (the
  order in which elements meet is the lowering's choice);
- scan: inclusive prefix combination along `axis`, results of the operands' shape; the
  combine needs only be associative: element i is combine(...combine(x[0], x[1])..., x[i])
  in that order (`reverse`: from the last element down).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I32, BoolAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsolatedFromAbove, IsTerminator, Pure, RecursiveMemoryEffect

from .tt_types import element_of, expect, i32_attr, shape_of


class _CombineOp(IRDLOperation):
    srcs = var_operand_def(TensorType)
    outs = var_result_def()
    axis = prop_def(IntegerAttr[I32])
    combine = region_def("single_block")

    traits = traits_def(RecursiveMemoryEffect(), IsolatedFromAbove())

    def _verify_common(self) -> None:
        shapes = {shape_of(v.type) for v in self.srcs}
        expect(len(self.srcs) > 0 and len(shapes) == 1, f"{self.name}: operands must be tensors of one shape")
        rank = len(shapes.pop())
        expect(0 <= self.axis.value.data < rank, f"{self.name}: axis out of range")
        expect(len(self.outs) == len(self.srcs), f"{self.name}: one result per operand")
        block = self.combine.block
        elements = [element_of(v.type) for v in self.srcs]
        expect([a.type for a in block.args] == elements * 2,
               f"{self.name}: the combine block takes the operands' element types twice")
        terminator = block.last_op
        expect(isinstance(terminator, CombineReturnOp)
               and [v.type for v in terminator.operands] == elements,
               f"{self.name}: the combine block returns one value per operand, of its element type")


@irdl_op_definition
class GenericReduceOp(_CombineOp):
    """Reduce along `axis` with the combine region."""

    name = "tt.generic_reduce"

    def __init__(self, srcs: Sequence[SSAValue], axis: int, body: Block, result_types: Sequence[Attribute]):
        super().__init__(operands=[list(srcs)], result_types=[list(result_types)],
                         properties={"axis": i32_attr(axis)}, regions=[Region(body)])

    def verify_(self) -> None:
        self._verify_common()
        axis, shape = self.axis.value.data, shape_of(self.srcs[0].type)
        for src, out in zip(self.srcs, self.outs):
            expect(element_of(out.type) == element_of(src.type) and shape_of(out.type) == shape[:axis] + shape[axis + 1:],
                   "tt.generic_reduce: a result has its operand's shape without `axis`")


@irdl_op_definition
class ScanOp(_CombineOp):
    """Inclusive scan along `axis` with the combine region (from the end if `reverse`)."""

    name = "tt.scan"

    reverse = prop_def(BoolAttr)

    def __init__(self, srcs: Sequence[SSAValue], axis: int, reverse: bool, body: Block,
                 result_types: Sequence[Attribute]):
        super().__init__(operands=[list(srcs)], result_types=[list(result_types)],
                         properties={"axis": i32_attr(axis), "reverse": BoolAttr.from_bool(reverse)},
                         regions=[Region(body)])

    def verify_(self) -> None:
        self._verify_common()
        for src, out in zip(self.srcs, self.outs):
            expect(element_of(out.type) == element_of(src.type) and shape_of(out.type) == shape_of(src.type),
                   "tt.scan: a result has its operand's type")


@irdl_op_definition
class CombineReturnOp(IRDLOperation):
    """The end of a combine region: the combined values."""

    name = "tt.combine.return"

    values = var_operand_def()

    traits = traits_def(IsTerminator(), Pure(), HasParent(GenericReduceOp, ScanOp))

    def __init__(self, values: Sequence[SSAValue]):
        super().__init__(operands=[list(values)])


COMBINE_OPS = [GenericReduceOp, ScanOp, CombineReturnOp]
