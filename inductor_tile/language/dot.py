"""`tl.dot`: the matrix product of two tiles, with Triton's typing rules.

    acc = tl.dot(a, b, acc)          # [M, K] @ [K, N] + [M, N]; rank-3 operands multiply batch by batch

Operand and result types (a and b share an element type):
    fp16 x fp16 -> fp32 (or fp16 with out_dtype=tl.float16)
    bf16 x bf16 -> fp32
    fp32 x fp32 -> fp32; input_precision "tf32" (the default; allow_tf32=False means "ieee"): the inputs
                   rounded to tf32 (10 mantissa bits, nearest, ties away) on every target, NVIDIA
                   tensor cores on GPUs; "tf32x3": three tf32 products, about fp32's precision (the
                   CPU computes it in fp32); "ieee": fp32 FMAs
    fp64 x fp64 -> fp64
    int8 x int8 -> int32
M, N and K must be at least 16 (the smallest tensor-core tile). Without `acc` the product
starts from zeros; with it, `acc` must have the result's shape and type.
"""

from __future__ import annotations

from typing import Any

from . import dtypes as T
from .builder import DOT_INPUT_PRECISIONS
from .core import builtin, constexpr, current_semantic, tensor
from .dtypes import block_type, dtype
from .semantic import Semantic, TileTypeError, TileValueError

MIN_DOT_SIZE = 16


def _c(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


def dot_result_dtype(operand: dtype, out_dtype: dtype) -> dtype:
    """The accumulator type of a product of `operand` elements, given the requested `out_dtype`."""
    if operand.is_int():
        if operand.name != "int8":
            raise TileTypeError(f"tl.dot supports int8 integer operands only, got {operand}")
        return T.int32
    if operand.is_fp64():
        return T.float64
    if out_dtype.is_bf16():
        raise TileTypeError("tl.dot: out_dtype=tl.bfloat16 is not supported; use tl.float32 (or tl.float16) "
                            "and convert the result with .to(tl.bfloat16)")
    if operand.is_fp16() and out_dtype.is_fp16():
        return T.float16
    if not (operand.is_fp16() or operand.is_bf16() or operand.is_fp32()):
        raise TileTypeError(f"tl.dot does not support {operand} operands")
    return T.float32


def dot_input_precision(input_precision: Any, allow_tf32: Any) -> str:
    """The input precision from tl.dot's two ways of saying it (Triton's default: tf32)."""
    if input_precision is not None and allow_tf32 is not None:
        raise TileValueError("tl.dot: give input_precision or allow_tf32, not both")
    if input_precision is None:
        return "ieee" if allow_tf32 is False else "tf32"
    if not isinstance(input_precision, str) or input_precision.lower() not in DOT_INPUT_PRECISIONS:
        raise TileValueError(f"tl.dot: input_precision must be one of {', '.join(DOT_INPUT_PRECISIONS)}, "
                             f"got {input_precision!r}")
    return input_precision.lower()


def dot_rule(sem: Semantic, a: Any, b: Any, acc: Any, input_precision: str, out_dtype: dtype) -> tensor:
    """Check and type `a @ b + acc`, then build it."""
    a, b = sem.to_tensor(a), sem.to_tensor(b)
    if not (a.type.is_block() and b.type.is_block()):
        raise TileTypeError("tl.dot needs two blocks, got a scalar")
    a_shape, b_shape = a.type.shape, b.type.shape
    if len(a_shape) != len(b_shape) or len(a_shape) not in (2, 3):
        raise TileValueError(f"tl.dot needs two 2-D (or two 3-D batched) blocks, got shapes {list(a_shape)} and "
                             f"{list(b_shape)}")
    if a_shape[-1] != b_shape[-2]:
        raise TileValueError(f"tl.dot: the inner dimensions differ: {list(a_shape)} @ {list(b_shape)}")
    if a_shape[:-2] != b_shape[:-2]:
        raise TileValueError(f"tl.dot: the batch dimensions differ: {list(a_shape)} @ {list(b_shape)}")
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    if min(m, n, k) < MIN_DOT_SIZE:
        raise TileValueError(f"tl.dot needs M, N and K of at least {MIN_DOT_SIZE}, got M={m}, N={n}, K={k}")
    if a.dtype != b.dtype:
        raise TileTypeError(f"tl.dot: both operands must have one element type, got {a.dtype} and {b.dtype}")
    if not isinstance(out_dtype, dtype):
        raise TileTypeError(f"tl.dot: out_dtype must be a tile dtype such as tl.float32, got {out_dtype!r}")
    result = block_type(dot_result_dtype(a.dtype, out_dtype), a_shape[:-1] + (n,))
    if _c(acc) is None:
        acc_t = sem.full(result.shape, 0, result.element_ty)
    else:
        acc_t = sem.to_tensor(acc)
        if acc_t.type.shape != result.shape or acc_t.dtype != result.element_ty:
            raise TileTypeError(f"tl.dot: acc must be a {list(result.shape)} block of {result.element_ty} for "
                                f"{a.dtype} operands, got {acc_t.type}")
    handle = sem.builder.create_dot(a.handle, b.handle, acc_t.handle, input_precision, result)
    return tensor(handle, result)


@builtin
def dot(input: Any, other: Any, acc: Any = None, input_precision: Any = None, allow_tf32: Any = None,
        max_num_imprecise_acc: Any = None, out_dtype: Any = T.float32) -> tensor:
    """The matrix product `input @ other (+ acc)`; see the module docstring for types.
    `max_num_imprecise_acc` (an fp8 tensor-core knob in Triton) is accepted and ignored."""
    precision = dot_input_precision(_c(input_precision), _c(allow_tf32))
    return dot_rule(current_semantic(), input, other, _c(acc), precision, _c(out_dtype))
