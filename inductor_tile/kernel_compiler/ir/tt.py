"""The `tt` dialect: the tile-level ops of TTIR that builtin/arith/math/scf/func lack.

Tiles are builtin ranked tensors (`tensor<64x128xf16>`, `tensor<128x!tt.ptr<f32>>`);
the only new type is the global-memory pointer `!tt.ptr<f32>`. Every op below is a
small typed class; shape rules that a type constraint cannot express go in `verify_`.

Integer attributes (`axis`, `start`, `end`) are properties written in the attribute
dictionary, MLIR style: `tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>`.
The pointer type is in `tt_types.py`, loads and stores in `tt_memory.py`; this file ends
with the dialect's op list.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I32, IntegerAttr, IntegerType, StringAttr, TensorType, i32
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from .tt_dot import DotOp
from .tt_memory import AtomicCASOp, AtomicRMWOp, LoadOp, StoreOp
from .tt_permute import PERMUTE_OPS
from .tt_debug import DEBUG_OPS
from .tt_sanitize import SANITIZE_OPS
from .tt_combine import COMBINE_OPS
from .tt_inline_asm import INLINE_ASM_OPS
from .layouts import SliceEncodingAttr
from .tt_types import PointerType, element_of, encoding_of_type, expect, i32_attr, numel, shape_of, with_shape

REDUCE_KINDS = ("sum", "max", "min", "argmax", "argmin", "umax", "umin", "argumax", "argumin", "prod", "xor_sum")


# --- program ids ----------------------------------------------------------------


class _GridQueryOp(IRDLOperation):
    """Base of the grid queries: an i32 scalar indexed by `axis` in 0..2."""

    axis = prop_def(IntegerAttr[I32])
    result = result_def(IntegerType(32))

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, axis: int):
        super().__init__(properties={"axis": i32_attr(axis)}, result_types=[i32])

    def verify_(self) -> None:
        expect(0 <= self.axis.value.data <= 2, f"{self.name}: axis must be 0, 1 or 2")


@irdl_op_definition
class GetProgramIdOp(_GridQueryOp):
    """This program's index along grid axis `axis`."""

    name = "tt.get_program_id"


@irdl_op_definition
class GetNumProgramsOp(_GridQueryOp):
    """The number of programs along grid axis `axis`."""

    name = "tt.get_num_programs"


@irdl_op_definition
class MakeRangeOp(IRDLOperation):
    """The 1-D i32 tensor [start, end)."""

    name = "tt.make_range"

    start = prop_def(IntegerAttr[I32])
    end = prop_def(IntegerAttr[I32])
    result = result_def(TensorType)

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, start: int, end: int):
        props = {"end": i32_attr(end), "start": i32_attr(start)}  # MLIR prints them sorted
        super().__init__(properties=props, result_types=[TensorType(i32, [end - start])])

    def verify_(self) -> None:
        length = self.end.value.data - self.start.value.data
        expect(length > 0, "tt.make_range: end must be greater than start")
        expect(
            element_of(self.result.type) == i32 and shape_of(self.result.type) == (length,),
            f"tt.make_range: result must be tensor<{length}xi32>",
        )


# --- shape manipulation -----------------------------------------------------------


class _ShapeOp(IRDLOperation):
    """Base of the unary shape ops: `tt.<op> %x : srcType -> resultType`, same element type."""

    src = operand_def(AnyAttr())
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, result_type: Attribute, properties: dict | None = None):
        super().__init__(operands=[src], result_types=[result_type], properties=properties or {})

    def verify_(self) -> None:
        expect(
            element_of(self.src.type) == element_of(self.result.type),
            f"{self.name}: operand and result element types differ",
        )


@irdl_op_definition
class SplatOp(_ShapeOp):
    """A scalar repeated into every element of a tensor."""

    name = "tt.splat"

    def verify_(self) -> None:
        super().verify_()
        expect(not isinstance(self.src.type, TensorType), "tt.splat: operand must be a scalar")


@irdl_op_definition
class BroadcastOp(_ShapeOp):
    """Size-1 dimensions stretched to the result shape; ranks are equal."""

    name = "tt.broadcast"

    def verify_(self) -> None:
        super().verify_()
        src, dst = shape_of(self.src.type), shape_of(self.result.type)
        expect(len(src) == len(dst) and len(src) > 0, "tt.broadcast: operand and result ranks differ")
        for s, d in zip(src, dst):
            expect(s in (1, d), f"tt.broadcast: cannot broadcast shape {list(src)} to {list(dst)}")
        expect(
            encoding_of_type(self.src.type) == encoding_of_type(self.result.type),
            "tt.broadcast: operand and result layouts differ",
        )


@irdl_op_definition
class ExpandDimsOp(_ShapeOp):
    """A size-1 dimension inserted at `axis`."""

    name = "tt.expand_dims"

    axis = prop_def(IntegerAttr[I32])
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, src: SSAValue, axis: int, result_type: Attribute):
        super().__init__(src, result_type, {"axis": i32_attr(axis)})

    def verify_(self) -> None:
        super().verify_()
        src, axis = list(shape_of(self.src.type)), self.axis.value.data
        expect(0 <= axis <= len(src), f"tt.expand_dims: axis {axis} out of range")
        expected = tuple(src[:axis] + [1] + src[axis:])
        expect(shape_of(self.result.type) == expected, f"tt.expand_dims: result shape must be {list(expected)}")
        if (parent := encoding_of_type(self.result.type)) is not None:
            expect(
                encoding_of_type(self.src.type) == SliceEncodingAttr.get(axis, parent),
                f"tt.expand_dims: operand layout must be the result's layout sliced at dim {axis}",
            )


@irdl_op_definition
class ReshapeOp(_ShapeOp):
    """The same elements, row-major, in a new shape with the same element count."""

    name = "tt.reshape"

    def verify_(self) -> None:
        super().verify_()
        src, dst = shape_of(self.src.type), shape_of(self.result.type)
        expect(numel(src) == numel(dst), "tt.reshape: element counts differ")


# --- pointers ---------------------------------------------------------------------


@irdl_op_definition
class AddPtrOp(IRDLOperation):
    """Pointer(s) advanced by an integer number of elements; same shape as the offset."""

    name = "tt.addptr"

    T: ClassVar = VarConstraint("T", AnyAttr())
    ptr = operand_def(T)
    offset = operand_def(AnyAttr())
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = "$ptr `,` $offset attr-dict `:` type($result) `,` type($offset)"

    def __init__(self, ptr: SSAValue, offset: SSAValue):
        super().__init__(operands=[ptr, offset], result_types=[ptr.type])

    def verify_(self) -> None:
        expect(isinstance(element_of(self.ptr.type), PointerType), "tt.addptr: first operand must be pointers")
        expect(isinstance(element_of(self.offset.type), IntegerType), "tt.addptr: offset must be integers")
        expect(shape_of(self.ptr.type) == shape_of(self.offset.type), "tt.addptr: pointer and offset shapes differ")
        expect(
            encoding_of_type(self.ptr.type) == encoding_of_type(self.offset.type),
            "tt.addptr: pointer and offset layouts differ",
        )


class _CastOp(IRDLOperation):
    """Base of the tt casts: `tt.<op> %x : srcType -> resultType`, same shape."""

    src = operand_def(AnyAttr())
    result = result_def(AnyAttr())

    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type])

    def verify_(self) -> None:
        expect(shape_of(self.src.type) == shape_of(self.result.type), f"{self.name}: shapes differ")
        expect(encoding_of_type(self.src.type) == encoding_of_type(self.result.type), f"{self.name}: layouts differ")


@irdl_op_definition
class BitcastOp(_CastOp):
    """Reinterpret pointers as pointers to another element type."""

    name = "tt.bitcast"

    def verify_(self) -> None:
        super().verify_()
        expect(
            isinstance(element_of(self.src.type), PointerType)
            and isinstance(element_of(self.result.type), PointerType),
            "tt.bitcast: operand and result must be pointers",
        )


@irdl_op_definition
class IntToPtrOp(_CastOp):
    """An i64 address as a pointer (used for null pointers)."""

    name = "tt.int_to_ptr"

    def verify_(self) -> None:
        super().verify_()
        expect(element_of(self.src.type) == IntegerType(64), "tt.int_to_ptr: operand must be i64")
        expect(isinstance(element_of(self.result.type), PointerType), "tt.int_to_ptr: result must be pointers")


# --- integer arithmetic ---------------------------------------------------------------


@irdl_op_definition
class MulhiUIOp(IRDLOperation):
    """The high half of the unsigned double-width product of two integers (`tl.umulhi`)."""

    name = "tt.mulhiui"

    T: ClassVar = VarConstraint("T", AnyAttr())
    x = operand_def(T)
    y = operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = "$x `,` $y attr-dict `:` type($result)"

    def __init__(self, x: SSAValue, y: SSAValue):
        super().__init__(operands=[x, y], result_types=[x.type])

    def verify_(self) -> None:
        expect(isinstance(element_of(self.x.type), IntegerType), "tt.mulhiui: operands must be integers")


# --- reductions -------------------------------------------------------------------


@irdl_op_definition
class ReduceOp(IRDLOperation):
    """Reduce along `axis` with `kind` (sum|prod|xor_sum|max|min|argmax|argmin; umax|umin|argumax|argumin
    for unsigned integers). argmax/argmin give i32 indices of the first extreme element; a 1-D
    operand reduces to a scalar."""

    name = "tt.reduce"

    src = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I32])
    kind = prop_def(StringAttr)
    result = result_def(AnyAttr())

    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, axis: int, kind: str, result_type: Attribute):
        props = {"axis": i32_attr(axis), "kind": StringAttr(kind)}
        super().__init__(operands=[src], result_types=[result_type], properties=props)

    def verify_(self) -> None:
        kind, axis, src = self.kind.data, self.axis.value.data, list(shape_of(self.src.type))
        expect(kind in REDUCE_KINDS, f"tt.reduce: unknown kind {kind!r}")
        expect(0 <= axis < len(src), f"tt.reduce: axis {axis} out of range for rank {len(src)}")
        elem = i32 if kind.startswith("arg") else element_of(self.src.type)
        expected = with_shape(elem, tuple(src[:axis] + src[axis + 1 :]))
        result = self.result.type
        expect(
            element_of(result) == elem and shape_of(result) == shape_of(expected),
            f"tt.reduce: result type must be {expected}",
        )
        # In TTGIR the result's layout is the operand's, sliced at `axis`.
        if (parent := encoding_of_type(self.src.type)) is not None and isinstance(result, TensorType):
            expect(
                encoding_of_type(result) == SliceEncodingAttr.get(axis, parent),
                f"tt.reduce: result layout must be the operand's layout sliced at dim {axis}",
            )


TT = Dialect(
    "tt",
    [
        # Program ids
        GetProgramIdOp,
        GetNumProgramsOp,
        MakeRangeOp,
        # Shapes
        SplatOp,
        BroadcastOp,
        ExpandDimsOp,
        ReshapeOp,
        # Pointers and memory
        AddPtrOp,
        BitcastOp,
        IntToPtrOp,
        LoadOp,
        StoreOp,
        AtomicRMWOp,
        AtomicCASOp,
        # Integer arithmetic
        MulhiUIOp,
        # Reductions
        ReduceOp,
        # Element moves (trans, flip, join, split)
        *PERMUTE_OPS,
        # Debugging and synchronization
        *DEBUG_OPS,
        # Reductions and scans with a combine region
        *COMBINE_OPS,
        # Matrix products
        DotOp,
        # The user's assembly per element (tl.inline_asm_elementwise)
        *INLINE_ASM_OPS,
        # Sanitizer checks (passes/sanitize.py)
        *SANITIZE_OPS,
    ],
    [PointerType],
)
