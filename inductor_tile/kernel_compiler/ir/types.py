"""Language types (`inductor_tile.language.dtypes`) to xdsl IR types.

Integers are signless in the IR, as in MLIR: signedness lives in the ops
(`divsi`/`divui`, `extsi`/`extui`, ...), so `int8` and `uint8` both map to `i8`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType, TensorType
from xdsl.ir import Attribute

from inductor_tile.language.dtypes import block_type, dtype, pointer_type

from .tt_types import PointerType

_FLOAT_TYPES: dict[str, Attribute] = {
    "fp16": Float16Type(),
    "bf16": BFloat16Type(),
    "fp32": Float32Type(),
    "fp64": Float64Type(),
}


#: IR types already made: xdsl verifies each attribute it constructs (a tensor type took ~0.1 ms, and the
#: front end asks for one per value), while attributes are immutable and a kernel uses a handful of types
_MADE: dict[dtype | block_type, Attribute] = {}


def to_ir_type(ty: dtype | block_type) -> Attribute:
    """`int32` -> i32, `uint8` -> i8, `float16` -> f16, `pointer_type(float32)` -> !tt.ptr<f32>,
    `block_type(float32, (64, 128))` -> tensor<64x128xf32>."""
    try:
        made = _MADE.get(ty)
    except TypeError:  # a block_type built with a list shape: not hashable
        return _make_ir_type(ty)
    if made is None:
        made = _MADE[ty] = _make_ir_type(ty)
    return made


def _make_ir_type(ty: dtype | block_type) -> Attribute:
    if isinstance(ty, block_type):
        return TensorType(to_ir_type(ty.element_ty), ty.shape)
    if isinstance(ty, pointer_type):
        return PointerType(to_ir_type(ty.element_ty))
    if ty.is_int():
        return IntegerType(ty.int_bitwidth)
    if ty.name in _FLOAT_TYPES:
        return _FLOAT_TYPES[ty.name]
    raise TypeError(f"no IR type for {ty!r}")


def wrap_int(value: int, width: int) -> int:
    """`value` modulo 2**width, as the signed two's-complement number (i1: 0 or -1)."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value
