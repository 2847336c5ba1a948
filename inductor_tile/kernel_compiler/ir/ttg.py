"""The `ttg` dialect: TTGIR, the GPU form of TTIR in which every tile has a layout.

A TTGIR tensor is a builtin tensor whose `encoding` is a layout attribute from
`layouts.py` (`#ttg.blocked<...>` or `#ttg.slice<...>`); scalars have none. The op of
this file is the layout change itself (the shared-memory rings of pipelined loops are in
`ttg_async.py`):

    %y = ttg.convert_layout %x : tensor<128xf32, #ttg.blocked<...>> -> tensor<128xf32, #ttg.blocked<...>>

It moves no data in the IR's semantics (every element keeps its value); the lowering
decides how (register shuffle, warp shuffle or shared memory). The passes read the
launch shape from two module attributes, written by `convert-to-ttgir`:
`ttg.num-warps = 4 : i32` and `ttg.threads-per-warp = 32 : i32`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure

from .dot_layouts import DOT_ENCODINGS, DotOperandEncodingAttr, NvidiaMmaEncodingAttr
from .layouts import (AmdMfmaEncodingAttr, AmdWmmaEncodingAttr, BlockedEncodingAttr, Layout, LayoutData,
                      SliceEncodingAttr, encoding_of, layout_of_encoding)
from .tt_types import expect, i32_attr
from .ttg_async import ASYNC_OPS, ASYNC_TYPES

NUM_WARPS_ATTR = "ttg.num-warps"
THREADS_PER_WARP_ATTR = "ttg.threads-per-warp"


@irdl_op_definition
class ConvertLayoutOp(IRDLOperation):
    """The same tensor in another layout: same shape and element type, new encoding."""

    name = "ttg.convert_layout"

    src = operand_def(TensorType)
    result = result_def(TensorType)

    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def __init__(self, src: SSAValue, result_type: Attribute):
        super().__init__(operands=[src], result_types=[result_type])

    def verify_(self) -> None:
        src, dst = self.src.type, self.result.type
        assert isinstance(src, TensorType) and isinstance(dst, TensorType)
        expect(src.get_shape() == dst.get_shape(), "ttg.convert_layout: operand and result shapes differ")
        expect(src.element_type == dst.element_type, "ttg.convert_layout: operand and result element types differ")


# --- layouts on types ---------------------------------------------------------------


def layout_of(ty: Attribute) -> Layout | None:
    """The layout of a TTGIR tensor type; None for scalars and tensors without one."""
    encodings = (BlockedEncodingAttr, SliceEncodingAttr, AmdMfmaEncodingAttr, AmdWmmaEncodingAttr, *DOT_ENCODINGS)
    if isinstance(ty, TensorType) and isinstance(ty.encoding, encodings):
        return layout_of_encoding(ty.encoding)
    return None


# made and verified once per (type, layout): remove-layout-conversions asks ~10^4 times over the small models'
# 155 NVIDIA kernels (with encoding_of's table: that pass 0.95 -> 0.69 CPU s; the same IR)
_WITH_LAYOUT: dict[tuple[TensorType, Layout], TensorType] = {}
MAX_WITH_LAYOUT = 8192  # the table starts over beyond this many


def with_layout(ty: TensorType, layout: Layout) -> TensorType:
    """`ty` with its encoding replaced by `layout`."""
    key = (ty, layout)
    try:
        out = _WITH_LAYOUT.get(key)
    except TypeError:  # a layout built with lists: unhashable, made each time
        return TensorType(ty.element_type, ty.get_shape(), encoding_of(layout))
    if out is None:
        if len(_WITH_LAYOUT) >= MAX_WITH_LAYOUT:
            _WITH_LAYOUT.clear()
        out = _WITH_LAYOUT[key] = TensorType(ty.element_type, ty.get_shape(), encoding_of(layout))
    return out


def convert_to(value: SSAValue, layout: Layout) -> ConvertLayoutOp:
    """A (not yet inserted) `ttg.convert_layout` of `value` to `layout`."""
    assert isinstance(value.type, TensorType)
    return ConvertLayoutOp(value, with_layout(value.type, layout))


# --- module attributes ----------------------------------------------------------------


def set_launch_shape(module: ModuleOp, num_warps: int, threads_per_warp: int) -> None:
    """Record the launch shape on the module (`ttg.num-warps`, `ttg.threads-per-warp`)."""
    module.attributes[NUM_WARPS_ATTR] = i32_attr(num_warps)
    module.attributes[THREADS_PER_WARP_ATTR] = i32_attr(threads_per_warp)


def launch_shape(module: ModuleOp) -> tuple[int, int]:
    """(num_warps, threads_per_warp) of a TTGIR module; TTIR modules have no launch shape."""
    warps, lanes = module.attributes.get(NUM_WARPS_ATTR), module.attributes.get(THREADS_PER_WARP_ATTR)
    expect(
        isinstance(warps, IntegerAttr) and isinstance(lanes, IntegerAttr),
        f"not a TTGIR module: {NUM_WARPS_ATTR} and {THREADS_PER_WARP_ATTR} are missing (run convert-to-ttgir)",
    )
    assert isinstance(warps, IntegerAttr) and isinstance(lanes, IntegerAttr)
    return warps.value.data, lanes.value.data


TTG = Dialect(
    "ttg",
    [ConvertLayoutOp, *ASYNC_OPS],
    [BlockedEncodingAttr, SliceEncodingAttr, LayoutData, NvidiaMmaEncodingAttr, DotOperandEncodingAttr,
     AmdMfmaEncodingAttr, AmdWmmaEncodingAttr, *ASYNC_TYPES],
)
