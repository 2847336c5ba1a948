"""The tile language: `import inductor_tile.language as tl`.

A Triton-compatible subset: a Triton kernel that only uses these names ports by
changing its imports.
"""

from .builtins import (
    abs, arange, argmax, argmin, broadcast, broadcast_to, cdiv, ceil, cos, div_rn, erf, exp, exp2, expand_dims,
    floor, fma, full, load, log, log2, max, max_contiguous, maximum, min, minimum, multiple_of, num_programs,
    program_id, range, reshape, rsqrt, sigmoid, sin, sqrt, sqrt_rn, static_assert, static_print, static_range,
    store, sum, view, where, zeros, zeros_like,
    atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min, atomic_or, atomic_xchg, atomic_xor,
)
from .core import const, constexpr, tensor
from . import extra
from .dtypes import (
    bfloat16, block_type, dtype, float16, float32, float64, int1, int8, int16, int32, int64, pointer_type,
    uint8, uint16, uint32, uint64, void,
)

__all__ = [
    "abs", "arange", "argmax", "argmin", "bfloat16", "block_type", "broadcast", "broadcast_to", "cdiv", "ceil",
    "const", "constexpr", "cos", "div_rn", "dtype", "erf", "exp", "exp2", "expand_dims", "extra", "float16", "float32", "float64",
    "floor", "fma", "full", "int1", "int8", "int16", "int32", "int64", "load", "log", "log2", "max",
    "max_contiguous", "maximum", "min", "minimum", "multiple_of", "num_programs", "pointer_type", "program_id",
    "range", "reshape", "rsqrt", "sigmoid", "sin", "sqrt", "sqrt_rn", "static_assert", "static_print",
    "static_range", "store", "sum", "tensor", "uint8", "uint16", "uint32", "uint64", "view", "void", "where",
    "zeros", "zeros_like",
    "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg", "atomic_xor",
]

# Philox random numbers (written in the tile language) and the integer primitive they need
from .builtins import umulhi
from .random import (
    pair_uniform_to_normal, philox_impl, rand, rand4x, randint, randint4x, randn, randn4x, uint_to_uniform_float,
)

__all__ += [
    "pair_uniform_to_normal", "philox_impl", "rand", "rand4x", "randint", "randint4x", "randn", "randn4x",
    "uint_to_uniform_float", "umulhi",
]

# reductions added with prod (which lives in extra.reductions: not Triton API)
from .builtins import xor_sum

__all__ += ["xor_sum"]

# issue 20: element moves, clamp, hints, barriers, the tl.math namespace
from . import math
from .builtins_lang import (
    PropagateNan, associative_scan, cat, clamp, cumprod, cumsum, debug_barrier, fdiv, flip, interleave, join,
    max_constancy, permute, ravel, reduce, split, trans, gather, sort, topk, histogram, device_assert, device_print,
    make_block_ptr, advance, cast, swizzle2d, assume,
)
from .dtypes import pointer_type as _pointer_type

pi32_t = _pointer_type(int32)

__all__ += [
    "PropagateNan", "associative_scan", "cat", "clamp", "cumprod", "cumsum", "debug_barrier", "fdiv", "flip",
    "interleave", "join", "math", "max_constancy", "permute", "ravel", "reduce", "split", "trans", "gather", "sort", "topk",
    "histogram", "device_assert", "device_print", "make_block_ptr", "advance", "cast",
    "swizzle2d", "assume", "pi32_t",
]
# tensor descriptors (lowered like block pointers: masked tiles of pointers)
from .tensor_descriptor import load_tensor_descriptor, make_tensor_descriptor, store_tensor_descriptor, tensor_descriptor

tensor_descriptor_base = tensor_descriptor  # Triton's base class of descriptors: here there is one kind

__all__ += ["load_tensor_descriptor", "make_tensor_descriptor", "store_tensor_descriptor", "tensor_descriptor",
            "tensor_descriptor_base"]
# matrix products
from .dot import dot

__all__ += ["dot"]
# the user's assembly per element
from .builtins_lang import inline_asm_elementwise

__all__ += ["inline_asm_elementwise"]
