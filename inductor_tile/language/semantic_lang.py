"""Typing rules for the language beyond the first subset (issue 20), mixed into `Semantic`:
element moves (permute, flip, join, split and what is built from them), clamp.

Rules follow Triton's: join broadcasts its operands to one shape and adds a minor dim of
2; split takes it off again; interleave is join then reshape; cat concatenates along
dim 0 (Triton only promises some order: this one is the natural one).
"""

from __future__ import annotations

from typing import Any, Sequence

from .core import constexpr, tensor
from .dtypes import block_type


def _unwrap(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


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

    # ===--------------------------------------------------------------------===
    # Elementwise
    # ===--------------------------------------------------------------------===
    def clamp(self, x: Any, lo: Any, hi: Any) -> tensor:
        """min(max(x, lo), hi) after promotion; NaN propagates (as tl.maximum/minimum here)."""
        return self.minimum(self.maximum(x, lo), hi)

    # ===--------------------------------------------------------------------===
    # Synchronization
    # ===--------------------------------------------------------------------===
    def debug_barrier(self) -> None:
        self.builder.create_debug_barrier()
