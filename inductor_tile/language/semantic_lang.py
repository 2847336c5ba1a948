"""Typing rules for the language beyond the first subset (issue 20), mixed into `Semantic`:
element moves (permute, flip, join, split and what is built from them), clamp, reductions
and scans with a user's combine function (tl.reduce, tl.associative_scan, cumsum, cumprod).

Rules follow Triton's: join broadcasts its operands to one shape and adds a minor dim of
2; split takes it off again; interleave is join then reshape; cat concatenates along
dim 0 (Triton only promises some order: this one is the natural one).
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Sequence

from . import dtypes as T
from .core import constexpr, tensor
from .dtypes import block_type, dtype


def _unwrap(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


_WARNED: dict = {}  # the warnings registry of kernel lines (each warning once per line, as Python's default)


def _caller_location() -> tuple[str, int] | None:
    """The first stack frame outside this package: the kernel line the interpreter is running."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else None


class LanguageSemantic:
    """Mixed into `Semantic` (uses its builder, to_tensor, reshape, broadcast_pair, ...)."""

    # ===--------------------------------------------------------------------===
    # Element moves
    # ===--------------------------------------------------------------------===
    def _block(self, x: Any, name: str) -> tensor:
        from .semantic import TileValueError

        x = self.to_tensor(x)
        if not x.type.is_block():
            raise TileValueError(f"{name} needs a block, got a scalar of type {x.dtype}")
        return x

    def _axis(self, axis: Any, rank: int, name: str) -> int:
        from .semantic import TileValueError

        axis = _unwrap(axis)
        if not isinstance(axis, int) or not -rank <= axis < rank:
            raise TileValueError(f"{name}: axis {axis!r} is out of range for a block of rank {rank}")
        return axis % rank

    def permute(self, x: Any, dims: Sequence[Any], name: str = "tl.permute") -> tensor:
        from .semantic import TileValueError

        x = self._block(x, name)
        rank = len(x.type.shape)
        order = tuple(int(_unwrap(d)) for d in dims)
        if sorted(order) != list(range(rank)):
            raise TileValueError(f"{name}: dims {list(order)} are not a permutation of 0..{rank - 1}")
        if order == tuple(range(rank)):
            return x
        ty = block_type(x.dtype, tuple(x.type.shape[d] for d in order))
        return tensor(self.builder.create_trans(x.handle, order, ty), ty)

    def trans(self, x: Any, dims: Sequence[Any]) -> tensor:
        """tl.trans: with no dims, a 2-D block's two dims swap (Triton's default)."""
        from .semantic import TileValueError

        x = self._block(x, "tl.trans")
        if not dims:
            if len(x.type.shape) != 2:
                raise TileValueError(f"tl.trans without dims needs a 2-D block, got shape {list(x.type.shape)}")
            dims = (1, 0)
        return self.permute(x, dims, "tl.trans")

    def flip(self, x: Any, dim: Any) -> tensor:
        x = self._block(x, "tl.flip")
        rank = len(x.type.shape)
        axis = rank - 1 if _unwrap(dim) is None else self._axis(dim, rank, "tl.flip")
        if x.type.shape[axis] == 1:
            return x
        return tensor(self.builder.create_flip(x.handle, axis, x.type), x.type)

    def join(self, a: Any, b: Any) -> tensor:
        from .semantic import TileTypeError

        a, b = self.to_tensor(a), self.to_tensor(b)
        if a.dtype != b.dtype:
            raise TileTypeError(f"tl.join needs operands of one dtype, got {a.dtype} and {b.dtype}")
        a, b = self.broadcast_pair(a, b)
        if not a.type.is_block():  # two scalars: a block of 2
            a, b = self.broadcast_to_shape(a, (1,)), self.broadcast_to_shape(b, (1,))
            return self.reshape(self.join(a, b), (2,))
        ty = block_type(a.dtype, a.type.shape + (2,))
        return tensor(self.builder.create_join(a.handle, b.handle, ty), ty)

    def split(self, x: Any) -> tuple[tensor, tensor]:
        from .semantic import TileValueError

        x = self._block(x, "tl.split")
        shape = x.type.shape
        if shape[-1] != 2:
            raise TileValueError(f"tl.split needs a last dimension of 2, got shape {list(shape)}")
        if len(shape) == 1:  # a block of 2: two scalars
            lo, hi = self.split(self.reshape(x, (1, 2)))
            return self.reduce(lo, 0, "sum"), self.reduce(hi, 0, "sum")
        ty = block_type(x.dtype, shape[:-1])
        lo, hi = self.builder.create_split(x.handle, ty)
        return tensor(lo, ty), tensor(hi, ty)

    def interleave(self, a: Any, b: Any) -> tensor:
        joined = self.join(a, b)
        shape = joined.type.shape
        if len(shape) == 1:
            return joined
        return self.reshape(joined, shape[:-2] + (2 * shape[-2],))

    def cat(self, a: Any, b: Any) -> tensor:
        """Concatenation along dim 0 (operands broadcast to one shape)."""
        joined = self.join(self._block(a, "tl.cat"), self._block(b, "tl.cat"))
        rank = len(joined.type.shape) - 1
        stacked = self.permute(joined, (rank,) + tuple(range(rank)), "tl.cat")
        shape = joined.type.shape[:-1]
        return self.reshape(stacked, (2 * shape[0],) + shape[1:])

    def gather(self, src: Any, index: Any, axis: Any) -> tensor:
        """torch.gather: out[c] = src[c with c[axis] = index[c]]; index has src's shape except along axis."""
        from .semantic import TileTypeError, TileValueError

        src, index = self._block(src, "tl.gather"), self._block(index, "tl.gather")
        rank = len(src.type.shape)
        axis = self._axis(axis, rank, "tl.gather")
        if not index.dtype.is_int() or index.dtype.is_int1():
            raise TileTypeError(f"tl.gather needs integer indices, got {index.dtype}")
        if len(index.type.shape) != rank or any(
                s != i for d, (s, i) in enumerate(zip(src.type.shape, index.type.shape)) if d != axis):
            raise TileValueError(f"tl.gather: index shape {list(index.type.shape)} must match source shape "
                                 f"{list(src.type.shape)} except along axis {axis}")
        ty = block_type(src.dtype, index.type.shape)
        return tensor(self.builder.create_gather(src.handle, index.handle, axis, ty), ty)

    def sort(self, x: Any, dim: Any, descending: bool) -> tensor:
        """x sorted along `dim` (the last if None; a power-of-two length) by a bitonic network (tt.sort).
        NaN sorts as the largest value, as in torch.sort."""
        from .semantic import TileTypeError, TileValueError

        x = self._block(x, "tl.sort")
        rank = len(x.type.shape)
        axis = rank - 1 if _unwrap(dim) is None else self._axis(dim, rank, "tl.sort")
        n = x.type.shape[axis]
        if n & (n - 1):
            raise TileValueError(f"tl.sort: the sorted dimension must be a power of two, got {n}")
        if x.dtype.is_ptr():
            raise TileTypeError("tl.sort cannot sort pointers")
        if n == 1:
            return x
        handle = self.builder.create_sort(x.handle, axis, bool(descending), x.dtype.is_int_unsigned(), x.type)
        return tensor(handle, x.type)

    def topk(self, x: Any, k: Any, dim: Any) -> tensor:
        """The k largest elements of x along `dim` (the last if None), largest first: x sorted in descending
        order (NaN counts as the largest, as in torch.topk), its first k positions gathered."""
        from .semantic import TileValueError

        x = self._block(x, "tl.topk")
        rank = len(x.type.shape)
        axis = rank - 1 if _unwrap(dim) is None else self._axis(dim, rank, "tl.topk")
        n, k = x.type.shape[axis], int(_unwrap(k))
        if k < 1 or k > n or k & (k - 1):
            raise TileValueError(f"tl.topk: k must be a power of two from 1 to the dimension's length {n}, got {k}")
        ordered = self.sort(x, axis, True)
        if k == n:
            return ordered
        positions = self.arange(0, k)
        for d in range(rank):
            if d != axis:
                positions = self.expand_dims(positions, d)
        shape = [k if d == axis else size for d, size in enumerate(x.type.shape)]
        return self.gather(ordered, self.broadcast_to_shape(positions, shape), axis)

    def histogram(self, x: Any, num_bins: int, mask: Any = None) -> tensor:
        """int32 counts of the values 0..num_bins-1 in the 1-D block x (others are not counted)."""
        from .semantic import TileTypeError

        x = self._block(x, "tl.histogram")
        if len(x.type.shape) != 1 or not x.dtype.is_int():
            raise TileTypeError(f"tl.histogram needs a 1-D block of integers, got {x.type}")
        bins = self.validate_shape((int(num_bins),), "tl.histogram num_bins")
        mask_t = None
        if _unwrap(mask) is not None:
            mask_t = self.broadcast_to_shape(self.cast(mask, T.int1), x.type.shape)
        ty = block_type(T.int32, bins)
        mask_handle = None if mask_t is None else mask_t.handle
        return tensor(self.builder.create_histogram(x.handle, mask_handle, x.dtype.is_int_unsigned(), ty), ty)

    # ===--------------------------------------------------------------------===
    # Elementwise
    # ===--------------------------------------------------------------------===
    def clamp(self, x: Any, lo: Any, hi: Any, propagate_nan: bool = False) -> tensor:
        """min(max(x, lo), hi) after promotion. A NaN x gives `lo` (as fmax/fmin would) unless propagate_nan."""
        x = self.to_tensor(x)
        if x.dtype.is_floating() and not propagate_nan:
            x = self.where(self.compare("ne", x, x), lo, x)
        return self.minimum(self.maximum(x, lo), hi)

    # ===--------------------------------------------------------------------===
    # Synchronization
    # ===--------------------------------------------------------------------===
    def cast_rounded(self, x: Any, dst: dtype, rounding: Any) -> tensor:
        """`x.to(dst, fp_downcast_rounding=rounding)`: a narrowing float conversion rounded to nearest even
        ("rtne", the default) or toward zero ("rtz"); other conversions take no rounding mode (Triton's rule).
        Toward zero is the nearest-even result stepped back by one unit in the last place where it landed
        farther from zero than `x` (an overflow to infinity becomes the largest finite value)."""
        from .semantic import TileValueError

        x, rounding = self.to_tensor(x), _unwrap(rounding)
        if rounding is None:
            return self.cast(x, dst)
        src = x.dtype
        if not (src.is_floating() and dst.is_floating() and dst.primitive_bitwidth < src.primitive_bitwidth):
            raise TileValueError(f"fp_downcast_rounding applies to narrowing float conversions only, not {src} to "
                                 f"{dst}")
        if rounding not in ("rtne", "rtz"):
            raise TileValueError(f"fp_downcast_rounding must be 'rtne' or 'rtz', got {rounding!r}")
        nearest = self.cast(x, dst)
        if rounding == "rtne":
            return nearest
        bits_type = {16: T.int16, 32: T.int32}[dst.primitive_bitwidth]
        farther = self.compare("gt", self.abs(self.cast(nearest, src)), self.abs(x))  # false for NaN
        stepped = self.cast(self.sub(self.cast(nearest, bits_type, bitcast=True), 1), dst, bitcast=True)
        return self.where(farther, stepped, nearest)

    def debug_barrier(self) -> None:
        self.builder.create_debug_barrier()

    # set by the front end (and the interpreter) for each kernel: debug mode, and the kernel's
    # file and line being built (what a device assertion reports)
    debug: bool = False
    location: tuple[str, int] | None = None

    def assume(self, condition: Any) -> None:
        """`tl.assume`: a compile-time condition must be true; a scalar tile becomes a promise to LLVM; a
        block's promise is dropped (keeping it would cost the reduction it promises about)."""
        if not isinstance(condition, tensor):
            if not condition:
                from .semantic import TileValueError

                raise TileValueError(f"tl.assume of a compile-time condition that is false ({condition!r})")
            return
        if condition.type.is_block():
            return
        self.builder.create_assume(self.cast(condition, T.int1).handle)

    def warn(self, message: str) -> None:
        """A UserWarning at the kernel line being built (or run, in the interpreter)."""
        location = self.location or _caller_location()
        if location is None:
            warnings.warn(message, UserWarning, stacklevel=2)
        else:
            warnings.warn_explicit(message, UserWarning, location[0], location[1], registry=_WARNED)

    def device_assert(self, condition: Any, message: str, mask: Any = None) -> None:
        """Only in debug mode (TILE_DEBUG=1 or @jit(debug=True)); `mask`: where to check."""
        if not self.debug:
            return
        ok = self.cast(condition, T.int1)
        if _unwrap(mask) is not None:
            ok = self.or_(ok, self.logical_not(mask))
        location = self.location or _caller_location()
        where = f"{location[0]}:{location[1]}: " if location else ""
        text = f"{where}device assertion failed: {message}" if message else f"{where}device assertion failed"
        self.builder.create_assert(ok.handle, text)

    def device_print(self, prefix: str, values: Sequence[Any], hex: bool = False) -> None:
        """Lines `pid (x, y, z) idx (i, j) <label>: <value>` (Triton's format): the label is `prefix` without
        its trailing colon and spaces; with several values each says `(operand n)`."""
        tensors = [self.to_tensor(v) for v in values]
        label = prefix.strip()
        if tensors and label.endswith(":"):
            label = label[:-1].rstrip()
        self.builder.create_print([t.handle for t in tensors], label, [t.type for t in tensors], hex)

    # ===--------------------------------------------------------------------===
    # Reductions and scans with a combine function
    # ===--------------------------------------------------------------------===
    def _combine_inputs(self, inputs: Any, name: str) -> tuple[list[tensor], bool]:
        """The operands as a list of blocks of one shape, and whether they came as a tuple."""
        from .semantic import TileValueError

        is_tuple = isinstance(_unwrap(inputs), (tuple, list))
        xs = [self._block(x, name) for x in (_unwrap(inputs) if is_tuple else [inputs])]
        if len({x.type.shape for x in xs}) != 1:
            raise TileValueError(f"{name}: the inputs have different shapes {[list(x.type.shape) for x in xs]}")
        return xs, is_tuple

    def _combine_callback(self, combine_fn: Any, n: int, element_types: list[dtype], name: str):
        """What the builders call with 2N handles (and their language types): the user's combine
        function on them, its N results converted to the operands' element types."""
        from .semantic import TileTypeError

        def combine(handles: list, types: list) -> list:
            args = [tensor(h, t) for h, t in zip(handles, types)]
            results = combine_fn(*args)
            results = list(results) if isinstance(results, (tuple, list)) else [results]
            if len(results) != n:
                raise TileTypeError(f"{name}: the combine function returned {len(results)} value(s), expected {n}")
            out = []
            for value, ty, like in zip(results, element_types, args):
                value = self.cast(self.to_tensor(value), ty)
                if like.type.is_block() and not value.type.is_block():
                    value = self.broadcast_to_shape(value, like.type.shape)
                if value.type.is_block() != like.type.is_block() or \
                        value.type.is_block() and value.type.shape != like.type.shape:
                    raise TileTypeError(f"{name}: the combine function must return values shaped as its arguments "
                                        f"({like.type}), got {value.type}")
                out.append(value.handle)
            return out

        return combine

    def reduce_with(self, inputs: Any, axis: Any, combine_fn: Any, keep_dims: bool = False) -> Any:
        """tl.reduce: `combine_fn` (associative and commutative) folds the elements along `axis`
        (all of them if None); a tuple of inputs gives a tuple of results."""
        xs, is_tuple = self._combine_inputs(inputs, "tl.reduce")
        shape = xs[0].type.shape
        axis = _unwrap(axis)
        if axis is None:
            xs = [self.reshape(x, (x.type.numel,)) for x in xs]
            axis_ = 0
        else:
            axis_ = self._axis(axis, len(shape), "tl.reduce")
        reduced = xs[0].type.shape[:axis_] + xs[0].type.shape[axis_ + 1:]
        types = [x.dtype for x in xs]
        result_types = [block_type(t, reduced) if reduced else t for t in types]
        callback = self._combine_callback(combine_fn, len(xs), types, "tl.reduce")
        handles = self.builder.create_generic_reduce([x.handle for x in xs], axis_, callback, types, result_types)
        outs = [tensor(h, t) for h, t in zip(handles, result_types)]
        if keep_dims:
            if axis is None:
                outs = [self.reshape(self.broadcast_to_shape(o, (1,)), (1,) * len(shape)) for o in outs]
            else:
                outs = [self.expand_dims(o, axis_) for o in outs]
        return tuple(outs) if is_tuple else outs[0]

    def scan_with(self, inputs: Any, axis: Any, combine_fn: Any, reverse: bool = False) -> Any:
        """tl.associative_scan: inclusive scan along `axis` with `combine_fn` (associative; the
        order of operands is kept: combine(earlier, later))."""
        xs, is_tuple = self._combine_inputs(inputs, "tl.associative_scan")
        axis_ = self._axis(axis, len(xs[0].type.shape), "tl.associative_scan")
        types = [x.dtype for x in xs]
        callback = self._combine_callback(combine_fn, len(xs), types, "tl.associative_scan")
        handles = self.builder.create_scan([x.handle for x in xs], axis_, bool(reverse), callback, types,
                                           [x.type for x in xs])
        outs = [tensor(h, x.type) for h, x in zip(handles, xs)]
        return tuple(outs) if is_tuple else outs[0]

    @staticmethod
    def scan_sum_dtype(x: tensor, dtype_: Any) -> dtype | None:
        """Triton's cumsum/cumprod types: integers narrower than 32 bits accumulate in (u)int32,
        bf16 in fp32; an explicit dtype wins."""
        dtype_ = _unwrap(dtype_)
        if dtype_ is not None:
            return dtype_
        if x.dtype.is_int() and x.dtype.int_bitwidth < 32:
            return T.uint32 if x.dtype.is_int_unsigned() else T.int32
        if x.dtype.is_bf16():
            return T.float32
        return None
