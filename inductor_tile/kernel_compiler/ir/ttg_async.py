"""Shared-memory rings and asynchronous copies: what `passes/pipeline_async_copies.py` builds (NVIDIA).

    %ring = ttg.ring_alloc : !ttg.ring<3x128x64xf16>
    ttg.async_copy %ring, %slot, %ptrs, %mask : !ttg.ring<3x128x64xf16>, i32, tensor<128x64x!tt.ptr<f16>, #blocked>, tensor<128x64xi1, #blocked>
    ttg.async_commit_group
    ttg.async_wait {pending = 1 : i32}
    %a = ttg.ring_read %ring, %slot : !ttg.ring<3x128x64xf16>, i32 -> tensor<128x64xf16, #ttg.dot_op<...>>
    %d = ttg.dot_wait %acc {pending = 1 : i32} : tensor<128x256xf32, #mma> -> tensor<128x256xf32, #mma>

- A ring is `stages` shared-memory buffers ("slots") of one tile each, alive for the whole kernel
  (the lowering places them after every other use of shared memory). How a slot stores its tile
  (padding, wgmma core matrices) is the lowering's choice, made from the layouts of the ring's
  copies and reads.
- `async_copy` starts copying the tile at `ptrs` into slot `slot` (elements whose mask is false
  become zeros); `async_commit_group` closes the group of copies this thread started since the last
  one; `async_wait` waits until at most `pending` of this thread's groups are unfinished, then
  makes every thread's finished copies visible to every thread (a CTA barrier).
- `ring_read` is the tile in slot `slot`, in a dot-operand layout: only `tt.dot` reads it, straight
  from shared memory (ldmatrix or wgmma descriptors).
- `dot_wait` is its operand, once at most `pending` asynchronous dot groups of this thread are
  unfinished: a `tt.dot` whose only user is a `dot_wait` leaves its tensor-core group in flight
  (Hopper's wgmma), so the next iteration's copies and address math overlap it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from .tt_types import expect, i32_attr, shape_of


@irdl_attr_definition
class RingType(ParametrizedAttribute, TypeAttribute):
    """`!ttg.ring<3x128x64xf16>`: `stages` shared-memory slots of one tile (a [..] tensor of elements) each."""

    name = "ttg.ring"

    tile: TensorType

    @property
    def stages(self) -> int:
        return self.tile.get_shape()[0]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.tile.get_shape()[1:])

    @property
    def element_type(self) -> Attribute:
        return self.tile.element_type

    def print_parameters(self, printer: Printer) -> None:
        dims = "x".join(str(d) for d in self.tile.get_shape())
        printer.print_string(f"<{dims}x")
        printer.print_attribute(self.tile.element_type)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute]:
        with parser.in_angle_brackets():
            dims, element = parser.parse_ranked_shape()
        return (TensorType(element, dims),)


def ring_type(stages: int, shape: tuple[int, ...], element: Attribute) -> RingType:
    return RingType(TensorType(element, (stages, *shape)))


@irdl_op_definition
class RingAllocOp(IRDLOperation):
    """A ring of shared-memory slots, alive for the whole kernel."""

    name = "ttg.ring_alloc"

    result = result_def(RingType)

    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, ty: RingType):
        super().__init__(result_types=[ty])


@irdl_op_definition
class AsyncCopyOp(IRDLOperation):
    """Start copying the tile at `ptrs` into slot `slot` of `ring`; masked-off elements become zeros."""

    name = "ttg.async_copy"

    ring = operand_def(RingType)
    slot = operand_def(AnyAttr())
    ptrs = operand_def(TensorType)
    mask = operand_def(TensorType)

    assembly_format = "$ring `,` $slot `,` $ptrs `,` $mask attr-dict `:` type($ring) `,` type($slot) `,` type($ptrs) `,` type($mask)"

    def __init__(self, ring: SSAValue, slot: SSAValue, ptrs: SSAValue, mask: SSAValue):
        super().__init__(operands=[ring, slot, ptrs, mask])

    def verify_(self) -> None:
        ring = self.ring.type
        assert isinstance(ring, RingType)
        expect(shape_of(self.ptrs.type) == ring.shape and shape_of(self.mask.type) == ring.shape,
               "ttg.async_copy: the pointers and the mask must have the ring's tile shape")


@irdl_op_definition
class AsyncCommitGroupOp(IRDLOperation):
    """Close the group of copies this thread started since the last commit."""

    name = "ttg.async_commit_group"

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class AsyncWaitOp(IRDLOperation):
    """Wait until at most `pending` of this thread's copy groups are unfinished, then a CTA barrier."""

    name = "ttg.async_wait"

    pending = prop_def(IntegerAttr)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict"

    def __init__(self, pending: int):
        super().__init__(properties={"pending": i32_attr(pending)})


@irdl_op_definition
class RingReadOp(IRDLOperation):
    """The tile in slot `slot` of `ring`, as a dot operand (read from shared memory by the dot)."""

    name = "ttg.ring_read"

    ring = operand_def(RingType)
    slot = operand_def(AnyAttr())
    result = result_def(TensorType)

    assembly_format = "$ring `,` $slot attr-dict `:` type($ring) `,` type($slot) `->` type($result)"

    def __init__(self, ring: SSAValue, slot: SSAValue, result_type: TensorType):
        super().__init__(operands=[ring, slot], result_types=[result_type])

    def verify_(self) -> None:
        ring = self.ring.type
        assert isinstance(ring, RingType)
        expect(shape_of(self.result.type) == ring.shape, "ttg.ring_read: the result must have the ring's tile shape")


@irdl_op_definition
class DotWaitOp(IRDLOperation):
    """`value` once at most `pending` asynchronous dot groups of this thread are unfinished."""

    name = "ttg.dot_wait"

    value = operand_def(TensorType)
    pending = prop_def(IntegerAttr)
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$value attr-dict `:` type($value) `->` type($result)"

    def __init__(self, value: SSAValue, pending: int):
        super().__init__(operands=[value], result_types=[value.type], properties={"pending": i32_attr(pending)})

    def verify_(self) -> None:
        expect(self.value.type == self.result.type, "ttg.dot_wait: the result must have the operand's type")


ASYNC_OPS = [RingAllocOp, AsyncCopyOp, AsyncCommitGroupOp, AsyncWaitOp, RingReadOp, DotWaitOp]
ASYNC_TYPES = [RingType]
