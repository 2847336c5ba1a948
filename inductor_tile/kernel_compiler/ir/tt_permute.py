"""Element-moving ops of the `tt` dialect: `tt.trans`, `tt.flip`, `tt.join`, `tt.split`.

Each result element is one operand element; which one is fixed at compile time:

    %t = tt.trans %x {order = array<i32: 1, 0>} : tensor<16x32xf32> -> tensor<32x16xf32>
    %f = tt.flip %x {axis = 1 : i32} : tensor<16x32xf32> -> tensor<16x32xf32>
    %j = tt.join %a, %b : tensor<16xf32>, tensor<16xf32> -> tensor<16x2xf32>
    %lo, %hi = tt.split %j : tensor<16x2xf32> -> tensor<16xf32>

- trans: result dim i is operand dim order[i] (`result[i0, i1] = x[i_order^-1...]`);
- flip: element i along `axis` comes from size-1-i;
- join: a new minor dim of size 2, [..., 0] from the first operand, [..., 1] from the second;
- split: the inverse of join (the operand's last dim must be 2).
Layouts: any (the lowering moves data between threads as needed).
"""

from __future__ import annotations

from xdsl.dialects.builtin import I32, BoolAttr, DenseArrayBase, IntegerAttr, IntegerType, TensorType, i32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (IRDLOperation, irdl_op_definition, operand_def, opt_operand_def, prop_def, result_def, traits_def,
                       var_result_def)
from xdsl.traits import Pure

from .pure_op_bases import PureOpWithProperties, PureTensorMapOp
from .tt_types import element_of, expect, i32_attr, shape_of


@irdl_op_definition
class TransOp(PureTensorMapOp):
    """The operand with its dims permuted: result dim i is operand dim order[i]."""

    name = "tt.trans"

    order = prop_def(DenseArrayBase)

    def __init__(self, src: SSAValue, order: tuple[int, ...], result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type],
                         properties={"order": DenseArrayBase.from_list(i32, list(order))})

    @property
    def permutation(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.order.get_values())

    def verify_(self) -> None:
        order, src = self.permutation, shape_of(self.src.type)
        expect(sorted(order) == list(range(len(src))), f"tt.trans: order {list(order)} is not a permutation")
        expect(shape_of(self.result.type) == tuple(src[d] for d in order), "tt.trans: result shape does not match order")
        expect(element_of(self.src.type) == element_of(self.result.type), "tt.trans: element types differ")


@irdl_op_definition
class FlipOp(PureTensorMapOp):
    """The operand reversed along `axis`."""

    name = "tt.flip"

    axis = prop_def(IntegerAttr[I32])

    def __init__(self, src: SSAValue, axis: int, result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type], properties={"axis": i32_attr(axis)})

    def verify_(self) -> None:
        expect(shape_of(self.src.type) == shape_of(self.result.type), "tt.flip: shapes differ")
        expect(0 <= self.axis.value.data < len(shape_of(self.src.type)), "tt.flip: axis out of range")


@irdl_op_definition
class JoinOp(IRDLOperation):
    """Two tensors of one shape S stacked along a new minor dim: shape S + [2]."""

    name = "tt.join"

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        a, b = shape_of(self.lhs.type), shape_of(self.rhs.type)
        expect(a == b, "tt.join: operand shapes differ")
        expect(shape_of(self.result.type) == a + (2,), "tt.join: result shape must be the operands' + [2]")


@irdl_op_definition
class SplitOp(IRDLOperation):
    """The inverse of tt.join: a tensor of shape S + [2] as two tensors of shape S."""

    name = "tt.split"

    src = operand_def(TensorType)
    outs = var_result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($outs)"

    def __init__(self, src: SSAValue, result_type: Attribute):
        super().__init__(operands=[src], result_types=[[result_type, result_type]])

    def verify_(self) -> None:
        src = shape_of(self.src.type)
        expect(len(self.outs) == 2, "tt.split: two results")
        expect(len(src) >= 2 and src[-1] == 2, "tt.split: the operand's last dim must be 2 (and rank >= 2)")
        for out in self.outs:
            expect(shape_of(out.type) == src[:-1], "tt.split: results have the operand's shape without the last dim")


PERMUTE_OPS = [TransOp, FlipOp, JoinOp, SplitOp]


@irdl_op_definition
class GatherOp(PureOpWithProperties):
    """result[c] = src[c with c[axis] replaced by indices[c]] (torch.gather): the indices have the
    source's rank and shape except along `axis`; indices out of range give an unspecified element."""

    name = "tt.gather"

    src = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I32])
    result = result_def(TensorType)

    assembly_format = "$src `[` $indices `]` attr-dict `:` type($src) `,` type($indices) `->` type($result)"

    def __init__(self, src: SSAValue, indices: SSAValue, axis: int, result_type: Attribute):
        super().__init__(operands=[src, indices], result_types=[result_type], properties={"axis": i32_attr(axis)})

    def verify_(self) -> None:
        src, idx, axis = shape_of(self.src.type), shape_of(self.indices.type), self.axis.value.data
        expect(len(src) == len(idx) and 0 <= axis < len(src), "tt.gather: indices must have the source's rank")
        expect(all(s == i for d, (s, i) in enumerate(zip(src, idx)) if d != axis),
               "tt.gather: indices must have the source's shape except along axis")
        expect(shape_of(self.result.type) == idx and element_of(self.result.type) == element_of(self.src.type),
               "tt.gather: the result has the indices' shape and the source's element type")


PERMUTE_OPS.append(GatherOp)


@irdl_op_definition
class SortOp(PureTensorMapOp):
    """The operand sorted along `axis` (ascending unless `descending`); integers compare unsigned with
    `unsigned`, floats put NaN after every number."""

    name = "tt.sort"

    axis = prop_def(IntegerAttr[I32])
    descending = prop_def(BoolAttr)
    unsigned = prop_def(BoolAttr)

    def __init__(self, src: SSAValue, axis: int, descending: bool, unsigned: bool, result_type: Attribute):
        props = {"axis": i32_attr(axis), "descending": BoolAttr.from_bool(descending),
                 "unsigned": BoolAttr.from_bool(unsigned)}
        super().__init__(operands=[src], result_types=[result_type], properties=props)

    def verify_(self) -> None:
        shape = shape_of(self.src.type)
        expect(shape_of(self.result.type) == shape, "tt.sort: shapes differ")
        expect(0 <= self.axis.value.data < len(shape), "tt.sort: axis out of range")
        size = shape[self.axis.value.data]
        expect(size & (size - 1) == 0, "tt.sort: the sorted dimension must be a power of two")


PERMUTE_OPS.append(SortOp)


@irdl_op_definition
class HistogramOp(PureOpWithProperties):
    """result[b] = how many elements of the 1-D integer operand (read as unsigned with `unsigned`) equal b,
    where the optional mask holds, for b in [0, num_bins); i32 counts."""

    name = "tt.histogram"

    src = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    unsigned = prop_def(BoolAttr)
    result = result_def(TensorType)

    assembly_format = "$src (`mask` $mask^)? attr-dict `:` type($src) (`,` type($mask)^)? `->` type($result)"

    def __init__(self, src: SSAValue, mask: SSAValue | None, unsigned: bool, result_type: Attribute):
        super().__init__(operands=[src, [mask] if mask is not None else []], result_types=[result_type],
                         properties={"unsigned": BoolAttr.from_bool(unsigned)})

    def verify_(self) -> None:
        expect(len(shape_of(self.src.type)) == 1 and len(shape_of(self.result.type)) == 1,
               "tt.histogram: a 1-D operand and result")
        expect(isinstance(element_of(self.src.type), IntegerType) and element_of(self.result.type) == i32,
               "tt.histogram: integer operand, i32 counts")


PERMUTE_OPS.append(HistogramOp)
