"""The one new type of the `tt` dialect, `!tt.ptr<T>`, and helpers on tensor types.

Shared by the op definitions (`tt.py`, `tt_memory.py`, `arith_ext.py`) and the passes.
In TTGIR tensors carry a layout as their encoding; the helpers that derive one type from
another (`like`, `pointee_type`, `mask_type`) keep it, so the verifiers work on both IRs.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, NoneAttr, TensorType, i32
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


@irdl_attr_definition
class PointerType(ParametrizedAttribute, TypeAttribute):
    """A pointer into global memory: `!tt.ptr<f32>`."""

    name = "tt.ptr"

    pointee: Attribute

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.pointee)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute]:
        with parser.in_angle_brackets():
            pointee = parser.parse_type()
        return (pointee,)


# --- shape helpers shared by the verifiers and the passes ---------------------


def shape_of(ty: Attribute) -> tuple[int, ...]:
    """The static shape of a tensor type, () for a scalar type."""
    return tuple(ty.get_shape()) if isinstance(ty, TensorType) else ()


def element_of(ty: Attribute) -> Attribute:
    """The element type of a tensor type, the type itself for a scalar."""
    return ty.element_type if isinstance(ty, TensorType) else ty


def with_shape(elem: Attribute, shape: tuple[int, ...], encoding: Attribute | None = None) -> Attribute:
    """`elem` itself for shape (), else `tensor<shape x elem>` (with `encoding`, a TTGIR layout, if given)."""
    if not shape:
        return elem
    return TensorType(elem, shape, encoding) if encoding is not None else TensorType(elem, shape)


def encoding_of_type(ty: Attribute) -> Attribute | None:
    """The encoding (TTGIR layout) of a tensor type; None for scalars and TTIR tensors."""
    if isinstance(ty, TensorType) and ty.encoding != NoneAttr():
        return ty.encoding
    return None


def like(ref: Attribute, elem: Attribute) -> Attribute:
    """A type with the shape and encoding of `ref` and element type `elem` (a scalar for a scalar `ref`)."""
    return with_shape(elem, shape_of(ref), encoding_of_type(ref))


def i32_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i32)


def expect(cond: bool, message: str) -> None:
    if not cond:
        raise VerifyException(message)


def numel(shape: tuple[int, ...]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count
