"""Builtins beyond the first subset (issue 20): element moves, clamp, hints, barriers.

Names and signatures follow Triton. The typing rules are in `semantic_lang.py`; the
tensor methods Triton offers for them (`x.T`, `x.trans()`, `x.permute()`, `x.split()`,
...) are attached to `tensor` at the end of this file.
"""

from __future__ import annotations

from typing import Any

from .core import builtin, constexpr, current_semantic, tensor


def _c(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


def _dims(dims: tuple) -> tuple:
    """Accept f(x, (1, 0)) and f(x, 1, 0), as Triton does."""
    if len(dims) == 1 and isinstance(_c(dims[0]), (list, tuple)):
        return tuple(_c(dims[0]))
    return tuple(_c(d) for d in dims)


class PropagateNan:
    """Triton's NaN policy of minimum/maximum/clamp: NONE (the default) gives the other operand where one
    is NaN, ALL gives NaN."""

    NONE = 0
    ALL = 0xFFFF


# ===------------------------------------------------------------------------===
# Element moves
# ===------------------------------------------------------------------------===
@builtin
def permute(input: Any, *dims: Any) -> tensor:
    """The block with its dims permuted: result dim i is input dim dims[i]."""
    return current_semantic().permute(input, _dims(dims))


@builtin
def trans(input: Any, *dims: Any) -> tensor:
    """Permute dims (as tl.permute); with none given, swap the two dims of a 2-D block."""
    return current_semantic().trans(input, _dims(dims))


@builtin
def flip(x: Any, dim: Any = None) -> tensor:
    """The block reversed along `dim` (the last dim if None)."""
    return current_semantic().flip(x, _c(dim))


@builtin
def join(a: Any, b: Any) -> tensor:
    """a and b (broadcast to one shape S) stacked along a new minor dim: shape S + [2]."""
    return current_semantic().join(_c(a), _c(b))


@builtin
def split(a: Any) -> tuple[tensor, tensor]:
    """The inverse of join: a block whose last dim is 2 as two blocks without it."""
    return current_semantic().split(_c(a))


@builtin
def interleave(a: Any, b: Any) -> tensor:
    """a and b interleaved along their last dim: [a0, b0, a1, b1, ...]."""
    return current_semantic().interleave(_c(a), _c(b))


@builtin
def cat(input: Any, other: Any, can_reorder: Any = False) -> tensor:
    """input and other concatenated along dim 0 (kept in order whatever can_reorder says)."""
    return current_semantic().cat(_c(input), _c(other))


@builtin
def ravel(x: Any, can_reorder: Any = False) -> tensor:
    """The block as 1-D, row-major."""
    semantic = current_semantic()
    x = semantic.to_tensor(x)
    return semantic.reshape(x, (x.numel.value,)) if x.type.is_block() else x


@builtin
def gather(src: Any, index: Any, axis: Any) -> tensor:
    """out[c] = src[c with c[axis] replaced by index[c]] (torch.gather); index has src's shape except along axis."""
    return current_semantic().gather(_c(src), _c(index), _c(axis))


@builtin
def sort(x: Any, dim: Any = None, descending: Any = False) -> tensor:
    """x sorted along `dim` (the last if None; a power-of-two length); NaN sorts last."""
    return current_semantic().sort(_c(x), _c(dim), bool(_c(descending)))


@builtin
def topk(input: Any, k: Any, dim: Any = None) -> tensor:
    """The `k` largest elements of `input` along `dim` (the last if None), largest first; k a power of two."""
    return current_semantic().topk(_c(input), _c(k), _c(dim))


@builtin
def histogram(input: Any, num_bins: Any, mask: Any = None) -> tensor:
    """int32 counts of the values 0..num_bins-1 in the 1-D integer block `input` (where `mask` holds)."""
    return current_semantic().histogram(_c(input), _c(num_bins), _c(mask))


# ===------------------------------------------------------------------------===
# Elementwise
# ===------------------------------------------------------------------------===
@builtin
def inline_asm_elementwise(asm: Any, constraints: Any, args: Any, dtype: Any, is_pure: Any, pack: Any) -> Any:
    """The LLVM inline assembly `asm` run on every element of the broadcast `args` (`$0`.. are the results,
    then the arguments; `constraints` as LLVM writes them): a block of `dtype`, or a tuple of blocks when
    `dtype` is a tuple. `is_pure` lets the compiler merge or drop it; `pack`: elements per execution of the
    assembly (narrow ones packed into 32-bit registers, e.g. four int8 as one `r` operand)."""
    return current_semantic().inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack)


@builtin
def clamp(x: Any, min: Any, max: Any, propagate_nan: Any = PropagateNan.NONE) -> tensor:
    """x limited to [min, max] elementwise (after promotion); undefined when min > max. A NaN x gives `min`
    unless propagate_nan=tl.PropagateNan.ALL."""
    policy = _c(propagate_nan)
    return current_semantic().clamp(_c(x), _c(min), _c(max), getattr(policy, "value", policy) == PropagateNan.ALL)


@builtin
def cast(input: Any, dtype: Any, fp_downcast_rounding: Any = None, bitcast: Any = False) -> tensor:
    """`input` converted to `dtype` (bit-reinterpreted with bitcast=True); as `input.to(dtype)`."""
    return current_semantic().to_tensor(_c(input)).to(_c(dtype), fp_downcast_rounding=_c(fp_downcast_rounding),
                                                      bitcast=_c(bitcast))


@builtin
def swizzle2d(i: Any, j: Any, size_i: Any, size_j: Any, size_g: Any) -> tuple:
    """Triton's grouped ordering of a size_i x size_j grid: row-major within groups of size_g rows."""
    semantic = current_semantic()
    i, j, size_i, size_j, size_g = (_c(v) for v in (i, j, size_i, size_j, size_g))
    ij = semantic.add(semantic.mul(i, size_j), j)
    size_gj = semantic.mul(size_g, size_j)
    group = semantic.floordiv(ij, size_gj)
    first_row = semantic.mul(group, size_g)
    rows = semantic.minimum(semantic.sub(size_i, first_row), size_g)  # the last group may have fewer rows
    within = semantic.mod(ij, size_gj)  # the position inside the group, column-major over its rows
    new_i = semantic.add(first_row, semantic.mod(within, rows))
    new_j = semantic.floordiv(within, rows)
    return new_i, new_j


@builtin
def assume(cond: Any) -> None:
    """Promise that `cond` holds; LLVM may simplify the code using it. Never checked: a false promise makes
    the kernel's behaviour undefined. A scalar condition becomes `llvm.intr.assume`; a block's is dropped."""
    current_semantic().assume(_c(cond))


@builtin
def fdiv(x: Any, y: Any, ieee_rounding: Any = False) -> tensor:
    """x / y; correctly rounded with ieee_rounding=True (as tl.div_rn)."""
    return current_semantic().truediv(_c(x), _c(y), rounding="rn" if _c(ieee_rounding) else "")


# ===------------------------------------------------------------------------===
# Hints and synchronization
# ===------------------------------------------------------------------------===
@builtin
def max_constancy(input: Any, values: Any) -> tensor:
    """Promise that `input` holds runs of `values` equal elements (per dimension)."""
    return current_semantic().hint(input, "constancy", values)


@builtin
def device_assert(cond: Any, msg: Any = "", mask: Any = None) -> None:
    """Check `cond` (a scalar or block) at run time in debug mode only (TILE_DEBUG=1 or @jit(debug=True)):
    a failure reports the kernel's file and line and the program id (CPU: an error raised after the
    launch; NVIDIA: the CUDA device assertion, which ends the context)."""
    current_semantic().device_assert(_c(cond), str(_c(msg)), _c(mask))


@builtin
def device_print(prefix: Any, *args: Any, hex: Any = False) -> None:
    """Print every element of each argument after the label `prefix`, with the program id and the element's
    index, when the kernel runs; `hex=True` prints integers in hexadecimal."""
    current_semantic().device_print(str(_c(prefix)), [_c(a) for a in args], bool(_c(hex)))


@builtin
def debug_barrier() -> None:
    """Wait until every thread of the program gets here (GPU: a CTA barrier; no-op on the CPU)."""
    current_semantic().debug_barrier()


# ===------------------------------------------------------------------------===
# Reductions and scans with a combine function
# ===------------------------------------------------------------------------===
@builtin
def reduce(input: Any, axis: Any, combine_fn: Any, keep_dims: Any = False) -> Any:
    """Fold `input` (a block or a tuple of blocks) along `axis` (all elements if None) with the
    @jit function `combine_fn(a..., b...) -> (c...)`, taken as associative and commutative."""
    return current_semantic().reduce_with(input, _c(axis), _c(combine_fn), bool(_c(keep_dims)))


@builtin
def associative_scan(input: Any, axis: Any, combine_fn: Any, reverse: Any = False) -> Any:
    """Inclusive scan of `input` (a block or a tuple of blocks) along `axis` with the associative
    @jit function `combine_fn(a..., b...) -> (c...)`; element i combines elements 0..i in order
    (i..n-1 from the end with reverse=True)."""
    return current_semantic().scan_with(input, _c(axis), _c(combine_fn), bool(_c(reverse)))


def _add(a, b):
    return a + b


def _mul(a, b):
    return a * b


def _scan_arith(input: Any, axis: Any, reverse: Any, dtype: Any, op) -> tensor:
    semantic = current_semantic()
    x = semantic.to_tensor(_c(input))
    wide = semantic.scan_sum_dtype(x, dtype)
    if wide is not None:
        x = semantic.cast(x, wide)
    return semantic.scan_with(x, _c(axis), op, bool(_c(reverse)))


@builtin
def cumsum(input: Any, axis: Any = 0, reverse: Any = False, dtype: Any = None) -> tensor:
    """Inclusive prefix sums along `axis`. Integers narrower than 32 bits sum in (u)int32, bf16 in fp32."""
    return _scan_arith(input, axis, reverse, dtype, _add)


@builtin
def cumprod(input: Any, axis: Any = 0, reverse: Any = False, dtype: Any = None) -> tensor:
    """Inclusive prefix products along `axis` (types as tl.cumsum)."""
    return _scan_arith(input, axis, reverse, dtype, _mul)


# ===------------------------------------------------------------------------===
# Block pointers
# ===------------------------------------------------------------------------===
@builtin
def make_block_ptr(base: Any, shape: Any, strides: Any, offsets: Any, block_shape: Any, order: Any) -> Any:
    """A pointer to the [block_shape] block at `offsets` of the strided tensor at `base` (for tl.load/tl.store
    with boundary_check and padding_option, and tl.advance)."""
    return current_semantic().make_block_ptr(_c(base), _c(shape), _c(strides), _c(offsets), _c(block_shape),
                                             _c(order))


@builtin
def advance(base: Any, offsets: Any) -> Any:
    """The block pointer moved by `offsets` elements per dimension."""
    return current_semantic().advance(_c(base), _c(offsets))


# ===------------------------------------------------------------------------===
# Tensor methods (Triton's tensor member functions)
# ===------------------------------------------------------------------------===
def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


for _fn in (permute, trans, flip, split, ravel, reduce, associative_scan, cumsum, cumprod, sort, histogram, cast):
    setattr(tensor, _fn.__name__, _method(_fn))


def _more_methods() -> None:
    """The other builtins Triton also offers as tensor methods (x.view(...), x.max(...), x.exp(), ...)."""
    from . import builtins as b

    for name in ("view", "max", "min", "argmax", "argmin", "xor_sum", "abs", "exp", "exp2", "log", "log2", "cos",
                 "sin", "sqrt", "rsqrt", "sigmoid", "floor", "ceil", "erf", "split", "broadcast_to"):
        if not hasattr(tensor, name) or name in ("abs",):
            setattr(tensor, name, _method(getattr(b, name)))


_more_methods()
tensor.T = property(lambda self: trans(self))  # type: ignore[attr-defined]
