"""Tensor descriptors: `tl.make_tensor_descriptor`, `desc.load` / `desc.store` / `desc.atomic_*` /
`desc.gather` / `desc.scatter`, and kernels taking a host `TensorDescriptor`
(`inductor_tile.tools.tensor_descriptor`).

A descriptor names a strided tensor in global memory (base pointer, shape, strides; the last stride
is 1) and the [block_shape] of the blocks moved through it. Triton moves those blocks with the
tensor memory accelerator; here, as for block pointers (block_pointer.py, whose address and mask
code this reuses), an access becomes a tile of pointers `base + sum_d (offsets[d] + arange(block[d]))
* strides[d]`, masked to 0 <= index < shape[d]: elements outside the tensor read as zero (NaN with
padding_option="nan") and are not written. Every target handles that, and the usual coalescing
applies. A dimension whose offset and extent are known at compile time to lie inside the tensor
gets no mask. In loops and branches a descriptor travels as its tensors (`flatten`).
"""

from __future__ import annotations

from typing import Any, Sequence

from . import dtypes as T
from .block_pointer import block_pointer
from .core import builtin, constexpr, current_semantic, tensor
from .dtypes import block_type

MAX_RANK = 5
PADDINGS = ("zero", "nan")


def _unwrap(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


def _known_int(x: Any) -> int | None:
    """The value of a compile-time integer (a literal or a constexpr), else None."""
    x = _unwrap(x)
    return x if isinstance(x, int) and not isinstance(x, bool) else None


class tensor_descriptor:
    """What tl.make_tensor_descriptor returns, and what a host TensorDescriptor argument is in a kernel
    (Triton's `tl.tensor_descriptor`)."""

    def __init__(self, base: tensor, shape: Sequence[tensor], strides: Sequence[tensor], block_shape: Sequence[int],
                 padding: str = "zero", known_shape: Sequence[int | None] | None = None):
        self.base = base
        self.shape, self.strides = tuple(shape), tuple(strides)  # int32/int64 scalars; int64 scalars
        self.block_shape = [int(b) for b in block_shape]  # a list, as Triton's (`desc.block_shape == [BM, BN]`)
        self.padding = padding
        # extents known at compile time (None: known at run time only); they let in-bounds blocks skip masks
        self.known_shape = tuple(known_shape) if known_shape is not None else (None,) * len(self.block_shape)

    @property
    def dtype(self) -> T.dtype:
        """The element type."""
        return self.base.dtype.element_ty

    @property
    def block_type(self) -> block_type:
        return block_type(self.dtype, self.block_shape)

    def flatten(self) -> list[tensor]:
        """The tensors a loop or branch carries."""
        return [self.base, *self.shape, *self.strides]

    def rebuild(self, tensors: Sequence[tensor]) -> "tensor_descriptor":
        """The descriptor made of `tensors` (a loop's or branch's results): its extents are no longer known."""
        rank = len(self.block_shape)
        tensors = list(tensors)
        return tensor_descriptor(tensors[0], tensors[1:1 + rank], tensors[1 + rank:1 + 2 * rank], self.block_shape,
                                 self.padding)

    def __repr__(self) -> str:
        return f"tensor_descriptor<{self.dtype}{self.block_shape}>"

    # --- Triton's methods ----------------------------------------------------------
    @builtin
    def load(self, offsets: Sequence[Any]) -> tensor:
        """The [block_shape] block at `offsets` (elements outside the tensor: zero, or NaN with padding "nan")."""
        return current_semantic().descriptor_load(self, offsets)

    @builtin
    def store(self, offsets: Sequence[Any], value: Any) -> None:
        """Write `value` (of the block's shape, converted to the element type) at `offsets`; elements outside
        the tensor are not written."""
        current_semantic().descriptor_store(self, offsets, value)

    @builtin
    def gather(self, *args: Any) -> tensor:
        """Rows `x_offsets` (a 1-D tile), columns `y_offset + arange(block_shape[1])` of a 2-D descriptor
        whose block is one row: a [len(x_offsets), block_shape[1]] tile (outside the tensor: padding)."""
        return current_semantic().descriptor_gather(self, *args)

    @builtin
    def scatter(self, value: Any, *args: Any) -> None:
        """Write `value` to rows `x_offsets`, columns `y_offset + arange(block_shape[1])` (as gather)."""
        current_semantic().descriptor_scatter(self, value, *args)


def _atomic_method(op: str):
    @builtin
    def method(self: tensor_descriptor, offsets: Sequence[Any], value: Any) -> None:
        current_semantic().descriptor_atomic(op, self, offsets, value)

    method.__name__ = method.__qualname__ = f"atomic_{op}"
    method.__doc__ = (f"Atomically {op} `value` into the block at `offsets` (elements outside the tensor are "
                      "left alone); returns nothing, as Triton's.")
    return method


for _op in ("add", "min", "max", "and", "or", "xor"):
    setattr(tensor_descriptor, f"atomic_{_op}", _atomic_method(_op))

#: element types Triton's descriptor atomics take (hardware reductions); anything else is refused as there
_ATOMIC_DTYPES = {
    "add": (T.uint32, T.int32, T.uint64, T.float32, T.float16, T.bfloat16),
    "min": (T.uint32, T.int32, T.uint64, T.int64, T.float16, T.bfloat16),
    "max": (T.uint32, T.int32, T.uint64, T.int64, T.float16, T.bfloat16),
    "and": (T.uint32, T.int32, T.uint64, T.int64),
    "or": (T.uint32, T.int32, T.uint64, T.int64),
    "xor": (T.uint32, T.int32, T.uint64, T.int64),
}


class TensorDescriptorSemantic:
    """Mixed into `Semantic`: the rules of tensor descriptors (errors as Triton's, in our words)."""

    def make_tensor_descriptor(self, base: Any, shape: Sequence[Any], strides: Sequence[Any],
                               block_shape: Sequence[Any], padding_option: Any = "zero") -> tensor_descriptor:
        from .semantic import TileTypeError, TileValueError

        what = "tl.make_tensor_descriptor"
        base = self.to_tensor(base)
        if not base.dtype.is_ptr() or base.type.is_block():
            raise TileTypeError(f"{what}: base must be a scalar pointer, got {base.type}")
        shape, strides, block = (list(_unwrap(v)) for v in (shape, strides, block_shape))
        rank = len(shape)
        if not 1 <= rank <= MAX_RANK:
            raise TileValueError(f"{what}: a descriptor has 1 to {MAX_RANK} dimensions, got {rank}")
        if len(strides) != rank or len(block) != rank:
            raise TileValueError(f"{what}: shape, strides and block_shape need one entry per dimension "
                                 f"({len(shape)}, {len(strides)} and {len(block)} given)")
        if any(_known_int(d) is None for d in block):
            raise TileTypeError(f"{what}: block_shape must be compile-time integers (tl.constexpr), got {block}")
        block = [_known_int(d) for d in block]
        self.validate_shape(block, f"{what} block_shape")
        element = base.dtype.element_ty
        row_bytes = block[-1] * element.itemsize
        if row_bytes < 16:  # Triton's rule (a TMA row is at least 16 bytes), and the words its tests look for
            raise TileValueError(f"{what}: Descriptor block shape must have at least 16 bytes in its last "
                                 f"dimension, got {block[-1]} x {element} = {row_bytes} bytes")
        last_stride = _known_int(strides[-1])
        if last_stride is None and self.concrete and isinstance(strides[-1], tensor):  # the interpreter knows it
            last_stride = int(self.to_python(strides[-1]))
        if last_stride != 1:
            raise TileValueError(f"{what}: the last dimension must be contiguous (its stride the constant 1), "
                                 f"got {_unwrap(strides[-1])!r}")
        padding = self._descriptor_padding(padding_option, element, what)
        for name, values in (("shape", shape), ("strides", strides)):
            for v in values:
                v = self.to_tensor(v)
                if v.type.is_block() or not v.dtype.is_int():
                    raise TileTypeError(f"{what}: {name} entries must be integer scalars, got {v.type}")
        # extents in int32 as Triton's, unless they are 64-bit already (never truncated); strides in int64
        shape_t = [self.cast(t, T.int64 if t.dtype.int_bitwidth == 64 else T.int32)
                   for t in (self.to_tensor(v) for v in shape)]
        strides_t = [self.cast(self.to_tensor(v), T.int64) for v in strides]
        return tensor_descriptor(base, shape_t, strides_t, block, padding, [_known_int(v) for v in shape])

    @staticmethod
    def _descriptor_padding(padding_option: Any, element: T.dtype, what: str) -> str:
        from .semantic import TileValueError

        padding = _unwrap(padding_option) or "zero"
        if padding not in PADDINGS:
            raise TileValueError(f"{what}: padding_option must be 'zero' or 'nan', got {padding!r}")
        if padding == "nan" and not element.is_floating():
            raise TileValueError(f"{what}: padding_option='nan' needs floating-point elements, got {element}")
        return padding

    # --- accesses --------------------------------------------------------------------
    def _descriptor_window(self, desc: Any, offsets: Sequence[Any], what: str) -> tuple[block_pointer, list[int]]:
        """The block pointer of the block at `offsets`, and the dimensions that need a bounds check."""
        from .semantic import TileTypeError, TileValueError

        if not isinstance(desc, tensor_descriptor):
            raise TileTypeError(f"{what} needs a tensor descriptor (tl.make_tensor_descriptor or a host "
                                f"TensorDescriptor argument), got {type(desc).__name__}")
        offsets = list(_unwrap(offsets))
        rank = len(desc.block_shape)
        if len(offsets) != rank:
            raise TileValueError(f"{what}: {len(offsets)} offsets for a descriptor of rank {rank}")
        offsets_t = []
        for v in offsets:
            t = self.to_tensor(v)
            if t.type.is_block() or not t.dtype.is_int():
                raise TileTypeError(f"{what}: offsets must be integer scalars, got {t.type}")
            offsets_t.append(t)
        checked = [d for d in range(rank) if not _inside(_known_int(offsets[d]), desc.block_shape[d],
                                                          desc.known_shape[d])]
        shape64 = [self.cast(s, T.int64) for s in desc.shape]
        ptr = block_pointer(desc.base, shape64, list(desc.strides), offsets_t, tuple(desc.block_shape),
                            tuple(reversed(range(rank))))
        return ptr, checked

    def descriptor_load(self, desc: Any, offsets: Sequence[Any]) -> tensor:
        ptr, checked = self._descriptor_window(desc, offsets, "tensor_descriptor.load")
        return self.load_block(ptr, checked, desc.padding)

    def _descriptor_value(self, desc: tensor_descriptor, value: Any, what: str) -> tensor:
        from .semantic import TileValueError

        value = self.to_tensor(value)
        if not value.type.is_block() or list(value.type.shape) != desc.block_shape:
            shape = list(value.type.shape) if value.type.is_block() else "a scalar"
            raise TileValueError(f"{what}: the value must have the block's shape {desc.block_shape}, got {shape}")
        return self.cast(value, desc.dtype)

    def descriptor_store(self, desc: Any, offsets: Sequence[Any], value: Any) -> None:
        ptr, checked = self._descriptor_window(desc, offsets, "tensor_descriptor.store")
        self.store_block(ptr, self._descriptor_value(desc, value, "tensor_descriptor.store"), checked)

    def descriptor_atomic(self, op: str, desc: Any, offsets: Sequence[Any], value: Any) -> None:
        from .semantic import TileTypeError

        what = f"tensor_descriptor.atomic_{op}"
        ptr, checked = self._descriptor_window(desc, offsets, what)
        if desc.dtype not in _ATOMIC_DTYPES[op]:
            raise TileTypeError(f"{what}: elements of {desc.dtype} are not supported (Triton's descriptor atomics "
                                f"take {', '.join(str(d) for d in _ATOMIC_DTYPES[op])})")
        value = self._descriptor_value(desc, value, what)
        pointers, mask = self._block_addresses(ptr, checked, what)
        self.atomic_rmw(op, pointers, value, mask)

    def _gathered_addresses(self, desc: Any, x_offsets: Any, y_offset: Any, what: str):
        """(pointers, mask) of rows `x_offsets` and columns `y_offset + arange(block_shape[1])`."""
        from .semantic import TileTypeError, TileValueError

        if not isinstance(desc, tensor_descriptor):
            raise TileTypeError(f"{what} needs a tensor descriptor, got {type(desc).__name__}")
        if len(desc.block_shape) != 2 or desc.block_shape[0] != 1:
            raise TileValueError(f"{what}: the descriptor must be 2-D with a block of one row, got block_shape "
                                 f"{desc.block_shape}")
        rows, column = self.to_tensor(x_offsets), self.to_tensor(y_offset)
        if not rows.type.is_block() or len(rows.type.shape) != 1 or not rows.dtype.is_int():
            raise TileTypeError(f"{what}: x_offsets must be a 1-D integer tile, got {rows.type}")
        if column.type.is_block() or not column.dtype.is_int():
            raise TileTypeError(f"{what}: y_offset must be an integer scalar, got {column.type}")
        if rows.type.shape[0] < 8:  # Triton's minimum (hardware gathers move 8 rows at least): kept for portability
            raise TileValueError(f"{what}: at least 8 rows, got {rows.type.shape[0]}")
        min_columns = 32 // desc.dtype.primitive_bitwidth * 8
        if desc.block_shape[1] < min_columns:
            raise TileValueError(f"{what}: a block of {desc.dtype} needs at least {min_columns} columns, got "
                                 f"{desc.block_shape[1]}")
        row = self.cast(self.expand_dims(rows, 1), T.int64)
        col = self.cast(self.expand_dims(self.add(self.arange(0, desc.block_shape[1]), column), 0), T.int64)
        pointers = self.add(desc.base, self.add(self.mul(row, desc.strides[0]), self.mul(col, desc.strides[1])))
        inside_rows = self.and_(self.compare("ge", row, 0), self.compare("lt", row, self.cast(desc.shape[0], T.int64)))
        inside_cols = self.and_(self.compare("ge", col, 0), self.compare("lt", col, self.cast(desc.shape[1], T.int64)))
        shape = (rows.type.shape[0], desc.block_shape[1])
        mask = self.broadcast_to_shape(self.and_(inside_rows, inside_cols), shape)
        return self.broadcast_to_shape(pointers, shape), mask

    def descriptor_gather(self, desc: Any, *args: Any) -> tensor:
        from .semantic import TileValueError

        if len(args) != 2:
            raise TileValueError(f"tensor_descriptor.gather takes (x_offsets, y_offset), got {len(args)} arguments")
        pointers, mask = self._gathered_addresses(desc, args[0], args[1], "tensor_descriptor.gather")
        return self.load(pointers, mask, float("nan") if desc.padding == "nan" else 0)

    def descriptor_scatter(self, desc: Any, value: Any, *args: Any) -> None:
        from .semantic import TileValueError

        what = "tensor_descriptor.scatter"
        if len(args) != 2:
            raise TileValueError(f"{what} takes (value, x_offsets, y_offset), got {len(args) + 1} arguments")
        pointers, mask = self._gathered_addresses(desc, args[0], args[1], what)
        value = self.to_tensor(value)
        if not value.type.is_block() or tuple(value.type.shape) != tuple(pointers.type.shape):
            raise TileValueError(f"{what}: the value must have shape {list(pointers.type.shape)}")
        self.store(pointers, value, mask)


def _inside(offset: int | None, size: int, extent: int | None) -> bool:
    """Whether the block [offset, offset + size) lies inside [0, extent), as far as is known now."""
    return offset is not None and extent is not None and 0 <= offset and offset + size <= extent


# ===------------------------------------------------------------------------===
# Builtins
# ===------------------------------------------------------------------------===
@builtin
def make_tensor_descriptor(base: Any, shape: Any, strides: Any, block_shape: Any, padding_option: Any = "zero"
                           ) -> tensor_descriptor:
    """A descriptor of the strided tensor at `base` (its `shape`, its `strides`: the last must be 1) for
    blocks of `block_shape` (compile-time powers of two): `desc.load(offsets)`, `desc.store(offsets, v)`."""
    return current_semantic().make_tensor_descriptor(base, shape, strides, block_shape, padding_option)


@builtin
def load_tensor_descriptor(desc: Any, offsets: Any) -> tensor:
    """`desc.load(offsets)`."""
    return current_semantic().descriptor_load(_unwrap(desc), offsets)


@builtin
def store_tensor_descriptor(desc: Any, offsets: Any, value: Any) -> None:
    """`desc.store(offsets, value)`."""
    current_semantic().descriptor_store(_unwrap(desc), offsets, value)
