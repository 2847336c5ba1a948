"""Block pointers: `tl.make_block_ptr`, `tl.advance`, and loads and stores through them.

A block pointer describes a [block_shape] window of a strided tensor: its base pointer,
shape and strides (int64) and the window's offsets (int32). It exists only in the front
end: a load or store through it becomes an ordinary tile of pointers
`base + sum_d (offsets[d] + arange(block_shape[d])) * strides[d]`, with a mask for the
dims named in `boundary_check` (0 <= index < shape), so every target handles it and the
usual coalescing applies. In loops and branches it travels as its tensors (`flatten`).
"""

from __future__ import annotations

from typing import Any, Sequence

from . import dtypes as T
from .core import constexpr, tensor


def _unwrap(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


class block_pointer:
    """What tl.make_block_ptr returns (Triton's pointer to a block)."""

    def __init__(self, base: tensor, shape: list[tensor], strides: list[tensor], offsets: list[tensor],
                 block_shape: tuple[int, ...], order: tuple[int, ...]):
        self.base, self.shape, self.strides, self.offsets = base, shape, strides, offsets
        self.block_shape, self.order = block_shape, order

    @property
    def dtype(self):
        return self.base.dtype

    @property
    def type(self):
        return self.base.type

    def flatten(self) -> list[tensor]:
        """The tensors a loop or branch carries."""
        return [self.base, *self.shape, *self.strides, *self.offsets]

    def rebuild(self, tensors: Sequence[tensor]) -> "block_pointer":
        rank = len(self.block_shape)
        tensors = list(tensors)
        return block_pointer(tensors[0], tensors[1:1 + rank], tensors[1 + rank:1 + 2 * rank],
                             tensors[1 + 2 * rank:1 + 3 * rank], self.block_shape, self.order)

    def __repr__(self) -> str:
        return f"block_pointer({self.base.dtype}, block_shape={list(self.block_shape)})"


class BlockPointerSemantic:
    """Mixed into `Semantic`: the rules of block pointers."""

    def make_block_ptr(self, base: Any, shape: Sequence[Any], strides: Sequence[Any], offsets: Sequence[Any],
                       block_shape: Sequence[Any], order: Sequence[Any]) -> block_pointer:
        from .semantic import TileTypeError, TileValueError

        base = self.to_tensor(base)
        if not base.dtype.is_ptr() or base.type.is_block():
            raise TileTypeError(f"tl.make_block_ptr: base must be a scalar pointer, got {base.type}")
        block = tuple(int(_unwrap(d)) for d in _unwrap(block_shape))
        rank = len(block)
        lists = [list(_unwrap(v)) for v in (shape, strides, offsets, order)]
        if any(len(v) != rank for v in lists):
            raise TileValueError("tl.make_block_ptr: shape, strides, offsets, block_shape and order need one entry "
                                 f"per dimension ({rank})")
        self.validate_shape(block, "tl.make_block_ptr block_shape")
        order_ = tuple(int(_unwrap(d)) for d in lists[3])
        if sorted(order_) != list(range(rank)):
            raise TileValueError(f"tl.make_block_ptr: order {list(order_)} is not a permutation")
        shape_t = [self.cast(self.to_tensor(v), T.int64) for v in lists[0]]
        strides_t = [self.cast(self.to_tensor(v), T.int64) for v in lists[1]]
        offsets_t = [self.cast(self.to_tensor(v), T.int32) for v in lists[2]]
        return block_pointer(base, shape_t, strides_t, offsets_t, block, order_)

    def advance(self, ptr: Any, offsets: Sequence[Any]) -> block_pointer:
        from .semantic import TileTypeError, TileValueError

        if not isinstance(ptr, block_pointer):
            raise TileTypeError("tl.advance needs a block pointer (from tl.make_block_ptr)")
        offsets = list(_unwrap(offsets))
        if len(offsets) != len(ptr.block_shape):
            raise TileValueError(f"tl.advance: {len(offsets)} offsets for a block of rank {len(ptr.block_shape)}")
        moved = [self.add(old, self.cast(self.to_tensor(d), T.int32)) for old, d in zip(ptr.offsets, offsets)]
        return block_pointer(ptr.base, ptr.shape, ptr.strides, moved, ptr.block_shape, ptr.order)

    def _block_addresses(self, ptr: block_pointer, boundary_check: Sequence[Any], what: str):
        """(tile of pointers, mask or None) of the block."""
        from .semantic import TileValueError

        rank = len(ptr.block_shape)
        checked = sorted({int(_unwrap(d)) % rank if -rank <= int(_unwrap(d)) < rank else -1
                          for d in (_unwrap(boundary_check) or ())})
        if -1 in checked:
            raise TileValueError(f"{what}: boundary_check dims must be in 0..{rank - 1}")
        pointers, mask = ptr.base, None
        for d, size in enumerate(ptr.block_shape):
            index = self.add(self.arange(0, size), ptr.offsets[d])
            for _ in range(d):
                index = self.expand_dims(index, 0)
            for _ in range(rank - d - 1):
                index = self.expand_dims(index, -1)
            pointers = self.add(pointers, self.mul(self.cast(index, T.int64), ptr.strides[d]))
            if d in checked:
                inside = self.and_(self.compare("ge", index, 0), self.compare("lt", self.cast(index, T.int64),
                                                                              ptr.shape[d]))
                mask = inside if mask is None else self.and_(mask, inside)
        pointers = self.broadcast_to_shape(pointers, ptr.block_shape)
        return pointers, mask

    def load_block(self, ptr: block_pointer, boundary_check: Sequence[Any], padding_option: Any) -> tensor:
        from .semantic import TileValueError

        padding = _unwrap(padding_option) or ""
        if padding not in ("", "zero", "nan"):
            raise TileValueError(f"tl.load: padding_option must be 'zero' or 'nan', got {padding!r}")
        pointers, mask = self._block_addresses(ptr, boundary_check, "tl.load")
        if mask is None:
            return self.load(pointers)
        if padding == "nan" and not ptr.dtype.element_ty.is_floating():
            raise TileValueError("tl.load: padding_option='nan' needs floating-point elements")
        return self.load(pointers, mask, float("nan") if padding == "nan" else 0)

    def store_block(self, ptr: block_pointer, value: Any, boundary_check: Sequence[Any]) -> None:
        from .semantic import TileValueError

        value = self.to_tensor(value)
        if value.type.is_block() and tuple(value.type.shape) != ptr.block_shape:
            raise TileValueError(f"tl.store: value of shape {list(value.type.shape)} through a block pointer of "
                                 f"block_shape {list(ptr.block_shape)}")
        pointers, mask = self._block_addresses(ptr, boundary_check, "tl.store")
        self.store(pointers, value, mask)
