"""The builtin functions of the tile language (`tl.load`, `tl.sum`, `tl.exp`, ...).

Each unwraps its compile-time arguments and hands the work to the active semantic;
none of them builds IR or computes values itself. Names and signatures follow Triton.
"""

from __future__ import annotations

import builtins as _py
from typing import Any, Sequence

from . import dtypes as T
from .core import builtin, constexpr, current_semantic, tensor
from .dtypes import dtype


def _c(x: Any) -> Any:
    """The Python value of a compile-time argument."""
    return x.value if isinstance(x, constexpr) else x


def _shape(args: Sequence[Any]) -> tuple[int, ...]:
    """Accept both f(x, (a, b)) and f(x, a, b), as Triton does."""
    if len(args) == 1 and isinstance(_c(args[0]), (list, tuple)):
        args = _c(args[0])
    return tuple(int(_c(a)) for a in args)


# ===------------------------------------------------------------------------===
# Program ids and creation
# ===------------------------------------------------------------------------===
@builtin
def program_id(axis: Any) -> tensor:
    """This program's index along grid axis 0, 1 or 2 (int32)."""
    return current_semantic().program_id(_c(axis))


@builtin
def num_programs(axis: Any) -> tensor:
    """The number of programs along grid axis 0, 1 or 2 (int32)."""
    return current_semantic().num_programs(_c(axis))


@builtin
def arange(start: Any, end: Any) -> tensor:
    """int32 block [start, end); both compile-time integers, end - start a power of two."""
    return current_semantic().arange(_c(start), _c(end))


@builtin
def full(shape: Any, value: Any, dtype: Any) -> tensor:
    """A block of `shape` filled with `value` converted to `dtype`."""
    return current_semantic().full(_shape([shape]), _c(value), _c(dtype))


@builtin
def zeros(shape: Any, dtype: Any) -> tensor:
    """A block of `shape` filled with zeros of `dtype`."""
    return current_semantic().full(_shape([shape]), 0, _c(dtype))


@builtin
def zeros_like(x: tensor) -> tensor:
    return current_semantic().full(x.type.shape, 0, x.dtype)


def cdiv(a: Any, b: Any) -> Any:
    """Ceiling division: (a + b - 1) // b. Usable in kernels and, on ints, in host code."""
    a_value, b_value = _c(a), _c(b)
    if isinstance(a_value, int) and isinstance(b_value, int):
        result = (a_value + b_value - 1) // b_value
        return constexpr(result) if isinstance(a, constexpr) or isinstance(b, constexpr) else result
    return (a + b - 1) // b


cdiv.__tile_builtin__ = True  # type: ignore[attr-defined]


# ===------------------------------------------------------------------------===
# Memory
# ===------------------------------------------------------------------------===
@builtin
def load(pointer: Any, mask: Any = None, other: Any = None, boundary_check: Any = (), padding_option: Any = "",
         cache_modifier: Any = "", eviction_policy: Any = "", volatile: Any = False) -> tensor:
    """Load from a pointer or a block of pointers; lanes where `mask` is false give `other`.

    `cache_modifier` ("", ".ca", ".cg", ".cs", ".cv"), `eviction_policy` ("", "evict_first", "evict_last")
    and `volatile` are hints to the caches, used where the target has such controls (NVIDIA's
    `ld.global.cg`, `L1::evict_first`, ...) and ignored elsewhere (and on block pointers); they never
    change the values loaded.
    """
    from .block_pointer import block_pointer

    semantic = current_semantic()
    hints = semantic.cache_hints("tl.load", cache_modifier, eviction_policy, volatile)
    if isinstance(_c(pointer), block_pointer):
        return semantic.load_block(_c(pointer), _c(boundary_check), _c(padding_option))
    return semantic.load(pointer, _c(mask), _c(other), hints)


@builtin
def store(pointer: Any, value: Any, mask: Any = None, boundary_check: Any = (), cache_modifier: Any = "",
          eviction_policy: Any = "") -> None:
    """Store `value` (broadcast and converted to the pointee type) where `mask` is true.

    `cache_modifier` ("", ".wb", ".cg", ".cs", ".wt") and `eviction_policy` are hints, as `load`'s."""
    from .block_pointer import block_pointer

    semantic = current_semantic()
    hints = semantic.cache_hints("tl.store", cache_modifier, eviction_policy)
    if isinstance(_c(pointer), block_pointer):
        return semantic.store_block(_c(pointer), _c(value), _c(boundary_check))
    semantic.store(pointer, _c(value), _c(mask), hints)


def _atomic_rmw(op: str, effect: str):
    @builtin
    def fn(pointer: Any, val: Any, mask: Any = None, sem: Any = None, scope: Any = None) -> tensor:
        return current_semantic().atomic_rmw(op, pointer, _c(val), _c(mask), _c(sem), _c(scope))

    fn.__name__ = fn.__qualname__ = f"atomic_{op}"
    fn.__doc__ = (f"Atomically {effect} at each pointer where `mask` is true, each element once; returns the "
                  "old values (0 where masked off). `sem`: relaxed|acquire|release|acq_rel (default), "
                  "`scope`: cta|gpu (default)|sys.")
    return fn


atomic_add = _atomic_rmw("add", "add `val`")
atomic_max = _atomic_rmw("max", "take the maximum with `val` (floats: NaN wins)")
atomic_min = _atomic_rmw("min", "take the minimum with `val` (floats: NaN wins)")
atomic_and = _atomic_rmw("and", "and `val` in (integers)")
atomic_or = _atomic_rmw("or", "or `val` in (integers)")
atomic_xor = _atomic_rmw("xor", "xor `val` in (integers)")
atomic_xchg = _atomic_rmw("xchg", "store `val`")


@builtin
def atomic_cas(pointer: Any, cmp: Any, val: Any, sem: Any = None, scope: Any = None) -> tensor:
    """Atomically: where the pointed-to element equals `cmp` bit for bit, replace it by `val`. Returns the old values."""
    return current_semantic().atomic_cas(pointer, _c(cmp), _c(val), _c(sem), _c(scope))


# ===------------------------------------------------------------------------===
# Shapes
# ===------------------------------------------------------------------------===
@builtin
def broadcast_to(x: Any, *shape: Any) -> tensor:
    return current_semantic().broadcast_to_shape(current_semantic().to_tensor(x), _shape(shape))


@builtin
def broadcast(a: Any, b: Any) -> tuple[tensor, tensor]:
    semantic = current_semantic()
    return semantic.broadcast_pair(semantic.to_tensor(a), semantic.to_tensor(b))


@builtin
def reshape(x: Any, *shape: Any, can_reorder: Any = False) -> tensor:
    return current_semantic().reshape(current_semantic().to_tensor(x), _shape(shape))


@builtin
def view(x: Any, *shape: Any) -> tensor:
    return current_semantic().reshape(current_semantic().to_tensor(x), _shape(shape))


@builtin
def expand_dims(x: Any, axis: Any) -> tensor:
    semantic = current_semantic()
    x = semantic.to_tensor(x)
    axes = _c(axis)
    if not isinstance(axes, (list, tuple)):
        return semantic.expand_dims(x, int(_c(axes)))
    # several axes: positions in the result (negative ones count from its end), inserted in increasing order
    rank = (len(x.type.shape) if x.type.is_block() else 0) + len(axes)
    positions = sorted(int(_c(a)) + rank if int(_c(a)) < 0 else int(_c(a)) for a in axes)
    if len(set(positions)) != len(positions):
        raise ValueError(f"tl.expand_dims: duplicate axes, normalized axes = {positions}")
    for a in positions:
        x = semantic.expand_dims(x, a)
    return x


# ===------------------------------------------------------------------------===
# Elementwise
# ===------------------------------------------------------------------------===
@builtin
def where(condition: Any, x: Any, y: Any) -> tensor:
    """Elementwise `condition ? x : y` with broadcasting and promotion of x and y."""
    return current_semantic().where(_c(condition), _c(x), _c(y))


@builtin
def minimum(x: Any, y: Any, propagate_nan: Any = None) -> tensor:
    """Elementwise min. Floats, as Triton: a NaN operand gives the other one (both NaN: NaN), unless
    propagate_nan=tl.PropagateNan.ALL, which gives NaN if either is."""
    return current_semantic().minimum(_c(x), _c(y), propagate_nan=_propagates_nan(propagate_nan))


@builtin
def maximum(x: Any, y: Any, propagate_nan: Any = None) -> tensor:
    """Elementwise max; NaN as in tl.minimum."""
    return current_semantic().maximum(_c(x), _c(y), propagate_nan=_propagates_nan(propagate_nan))


def _propagates_nan(policy: Any) -> bool:
    """tl.PropagateNan.ALL (0xFFFF) propagates NaN; NONE (0) and None do not."""
    policy = _c(policy)
    return bool(getattr(policy, "value", policy))


@builtin
def fma(x: Any, y: Any, z: Any) -> tensor:
    return current_semantic().fma(_c(x), _c(y), _c(z))


@builtin
def umulhi(x: Any, y: Any) -> tensor:
    """The most significant half of the 2N-bit product of N-bit integers x and y, read as unsigned."""
    return current_semantic().umulhi(_c(x), _c(y))


@builtin
def abs(x: Any) -> tensor:
    return current_semantic().abs(_c(x))


def _float_math(op: str, name: str):
    @builtin
    def fn(x: Any) -> tensor:
        return current_semantic().float_math(op, _c(x), name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} of a floating-point value (fp16/bf16 computed in fp32)."
    return fn


exp = _float_math("exp", "exp")
exp2 = _float_math("exp2", "exp2")
log = _float_math("log", "log")
log2 = _float_math("log2", "log2")
sqrt = _float_math("sqrt", "sqrt")
sqrt_rn = _float_math("sqrt", "sqrt_rn")
rsqrt = _float_math("rsqrt", "rsqrt")
sin = _float_math("sin", "sin")
cos = _float_math("cos", "cos")
erf = _float_math("erf", "erf")
floor = _float_math("floor", "floor")
ceil = _float_math("ceil", "ceil")


@builtin
def sigmoid(x: Any) -> tensor:
    """1 / (1 + exp(-x)), computed in fp32 for fp16/bf16 inputs."""
    semantic = current_semantic()
    x = semantic.to_tensor(_c(x))
    wide = semantic.cast(x, T.float32) if (x.dtype.is_fp16() or x.dtype.is_bf16()) else x
    e = semantic.float_math("exp", semantic.minus(wide), "sigmoid")
    out = semantic.truediv(1.0, semantic.add(1.0, e))
    return semantic.cast(out, x.dtype)


@builtin
def div_rn(x: Any, y: Any) -> tensor:
    """x / y correctly rounded (plain `/` may be approximated on GPUs, as in Triton)."""
    return current_semantic().truediv(_c(x), _c(y), rounding="rn")


# ===------------------------------------------------------------------------===
# Reductions
# ===------------------------------------------------------------------------===
def _reduce(x: Any, axis: Any, kind: str, keep_dims: Any, result_dtype: dtype | None = None) -> tensor:
    semantic = current_semantic()
    x = semantic.to_tensor(x)
    axis, keep_dims = _c(axis), bool(_c(keep_dims))
    if axis is None and keep_dims and x.type.is_block():
        rank = len(x.type.shape)
        out = semantic.reduce(x, None, kind, result_dtype=result_dtype)
        return semantic.reshape(out, (1,) * rank)
    return semantic.reduce(x, axis, kind, keep_dims=keep_dims, result_dtype=result_dtype)


@builtin
def sum(input: Any, axis: Any = None, keep_dims: Any = False, dtype: Any = None) -> tensor:
    """Sum along `axis` (all elements if None). Integers narrower than 32 bits sum in int32."""
    semantic = current_semantic()
    x = semantic.to_tensor(input)
    out_dtype = _c(dtype) or semantic.sum_dtype(x)
    return _reduce(x, axis, "sum", keep_dims, out_dtype)


@builtin
def xor_sum(input: Any, axis: Any = None, keep_dims: Any = False) -> tensor:
    """Bitwise xor of the integers along `axis` (all elements if None), in their own type."""
    return _reduce(input, axis, "xor_sum", keep_dims)


@builtin
def max(input: Any, axis: Any = None, return_indices: Any = False, return_indices_tie_break_left: Any = True,
        keep_dims: Any = False) -> Any:
    """Maximum along `axis`; with return_indices=True also the (first) index of it."""
    values = _reduce(input, axis, "max", keep_dims)
    if _c(return_indices):
        return values, _reduce(input, axis, "argmax", keep_dims)
    return values


@builtin
def min(input: Any, axis: Any = None, return_indices: Any = False, return_indices_tie_break_left: Any = True,
        keep_dims: Any = False) -> Any:
    """Minimum along `axis`; with return_indices=True also the (first) index of it."""
    values = _reduce(input, axis, "min", keep_dims)
    if _c(return_indices):
        return values, _reduce(input, axis, "argmin", keep_dims)
    return values


@builtin
def argmax(input: Any, axis: Any, tie_break_left: Any = True, keep_dims: Any = False) -> tensor:
    """int32 index of the first maximum along `axis`."""
    if not _c(tie_break_left):
        raise TypeError("tl.argmax: only tie_break_left=True is supported")
    return _reduce(input, axis, "argmax", keep_dims)


@builtin
def argmin(input: Any, axis: Any, tie_break_left: Any = True, keep_dims: Any = False) -> tensor:
    """int32 index of the first minimum along `axis`."""
    if not _c(tie_break_left):
        raise TypeError("tl.argmin: only tie_break_left=True is supported")
    return _reduce(input, axis, "argmin", keep_dims)


# ===------------------------------------------------------------------------===
# Hints
# ===------------------------------------------------------------------------===
@builtin
def multiple_of(input: Any, values: Any) -> tensor:
    """Promise that every element of `input` is a multiple of `values` (per dimension)."""
    return current_semantic().hint(input, "divisibility", values)


@builtin
def max_contiguous(input: Any, values: Any) -> tensor:
    """Promise that `input` holds runs of `values` consecutive integers (per dimension)."""
    return current_semantic().hint(input, "contiguity", values)


class StaticAssertionError(AssertionError):
    """A `tl.static_assert` failed (the compiler reports it as a `CompileTimeAssertionFailure`)."""


@builtin
def static_assert(condition: Any, message: Any = "") -> None:
    """Fail compilation (or interpretation) unless the compile-time `condition` holds."""
    if not _c(condition):
        raise StaticAssertionError(f"static_assert failed: {_c(message)}")


@builtin
def static_print(*values: Any) -> None:
    """Print compile-time values (and tile types) while the kernel is compiled."""
    _py.print(*[_c(v) for v in values])


# ===------------------------------------------------------------------------===
# Loops
# ===------------------------------------------------------------------------===
class range:
    """`for i in tl.range(start, end, step)`: a loop the compiler keeps as a loop.

    `loop_unroll_factor=N` (N >= 2) repeats the body N times per iteration of the compiled loop (and runs the
    remaining iterations in a second loop); `num_stages` and other tuning hints are accepted and ignored.
    """

    def __init__(self, arg1: Any, arg2: Any = None, step: Any = None, num_stages: Any = None,
                 loop_unroll_factor: Any = None, **hints: Any):
        self.loop_unroll_factor = loop_unroll_factor
        if arg2 is None:
            self.start, self.end = constexpr(0), arg1
        else:
            self.start, self.end = arg1, arg2
        self.step = constexpr(1) if step is None else step

    def __iter__(self):
        # The interpreter runs loops as Python loops (tile scalars convert through __index__); the loop
        # variable is a scalar tile, as compiled: int32, or int64 if a bound is int64 or needs 64 bits
        bounds = (self.start, self.end, self.step)
        numbers = _py.range(*(_c(b).__index__() for b in bounds))
        wide = _py.any(isinstance(b, tensor) and b.dtype == T.int64 for b in bounds) or \
            _py.any(not -2**31 <= v < 2**31 for v in (numbers.start, numbers.stop, numbers.step))
        semantic = current_semantic()
        index = T.int64 if wide else T.int32
        return (semantic.cast(semantic.to_tensor(i), index) for i in numbers)


class static_range(range):
    """`for i in tl.static_range(...)`: a loop fully unrolled at compile time (constexpr bounds)."""

    def __iter__(self):  # the loop variable is a compile-time number
        return iter(_py.range(_c(self.start).__index__(), _c(self.end).__index__(), _c(self.step).__index__()))
