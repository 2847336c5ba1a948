"""InterpreterBuilder methods for the language beyond the first subset (issue 20): element
moves (trans, flip, join, split), reductions and scans with a combine function, debug ops.

A mixin of `InterpreterBuilder` (`builder.py`); handles are torch CPU tensors.
"""

from __future__ import annotations

import itertools

import torch
from torch import Tensor

from ...language.dtypes import block_type


def _print_text(element, ty, hex: bool) -> str:
    """One element as the compiled kernels' printf writes it."""
    if ty.is_floating():
        return f"{element:f}"
    if ty.is_ptr() or hex:
        bits = 64 if ty.is_ptr() else ty.primitive_bitwidth
        return f"0x{int(element) & ((1 << bits) - 1):0{0 if ty.is_ptr() else max(2, bits // 4)}x}"
    if ty.is_int_unsigned():
        return str(int(element) & ((1 << ty.primitive_bitwidth) - 1))
    return str(int(element))


class LanguageOpsInterpreter:
    # --- the user's assembly ---------------------------------------------------------
    def create_inline_asm(self, asm, constraints, args, types, is_pure, pack):
        from ...language.semantic import TileValueError
        from ...language.semantic_lang import _caller_location

        location = _caller_location()
        where = f"{location[0]}:{location[1]}: " if location else ""
        raise TileValueError(f"{where}tl.inline_asm_elementwise cannot run in the interpreter (TILE_INTERPRET=1): "
                             f"it has no CPU to run the assembly {asm!r} on; compile the kernel instead")

    # --- element moves --------------------------------------------------------
    def create_trans(self, x: Tensor, order: tuple[int, ...], ty) -> Tensor:
        return x.permute(*order).contiguous()

    def create_flip(self, x: Tensor, axis: int, ty) -> Tensor:
        return torch.flip(x, (axis,))

    def create_join(self, a: Tensor, b: Tensor, ty) -> Tensor:
        return torch.stack([a, b], dim=-1)

    def create_split(self, x: Tensor, ty) -> tuple[Tensor, Tensor]:
        return x[..., 0].contiguous(), x[..., 1].contiguous()

    def create_histogram(self, x: Tensor, mask: Tensor | None, unsigned: bool, ty) -> Tensor:
        from .builder import _int_key

        values = _int_key(x)
        bins = ty.shape[0]
        keep = (values >= 0) & (values < bins)
        if mask is not None:
            keep &= mask
        return torch.bincount(values[keep], minlength=bins).to(torch.int32)

    def create_sort(self, x: Tensor, axis: int, descending: bool, unsigned: bool, ty) -> Tensor:
        """torch.sort's order (NaN after every number); integers by their value in their own type."""
        from .builder import _int_key

        keys = x if x.dtype.is_floating_point else _int_key(x)
        order = torch.sort(keys, dim=axis, descending=descending, stable=True).indices
        return torch.gather(x, axis, order)

    def create_gather(self, src: Tensor, indices: Tensor, axis: int, ty) -> Tensor:
        """Out-of-range indices read element 0 along the axis (the compiled targets do the same)."""
        index = indices.to(torch.int64)
        index = torch.where((index >= 0) & (index < src.shape[axis]), index, 0)
        return torch.gather(src, axis, index)

    # --- synchronization and debugging ---------------------------------------------
    def create_debug_barrier(self) -> None:
        return None  # one program runs at a time

    def create_assume(self, condition: Tensor) -> None:
        return None  # a promise to the optimizer, not checked (as in the compiled kernels)

    def create_assert(self, condition: Tensor, message: str) -> None:
        if not bool(condition.all()):
            from ..runtime.device_assert import DeviceAssertionError

            raise DeviceAssertionError(f"{message} (program id {tuple(self.program_id)})")

    def create_print(self, values: list[Tensor], prefix: str, types: list, hex: bool = False) -> None:
        """The compiled kernels' lines (to_llvm/rules_debug.py): `pid (x, y, z) idx (i, j) <label>: <value>`."""
        pid = "pid ({}, {}, {})".format(*(list(self.program_id) + [0, 0, 0])[:3])
        if not values:
            print(f"{pid} {prefix}")
            return
        for n, (value, ty) in enumerate(zip(values, types)):
            head = (f" {prefix}" if prefix else "") + ":" + (f" (operand {n})" if len(values) > 1 else "")
            shape = tuple(value.shape)
            widths = [len(str(size - 1)) for size in shape]
            for index, element in zip(itertools.product(*(range(size) for size in shape)), value.reshape(-1).tolist()):
                where = ", ".join(f"{i:{w}d}" for i, w in zip(index, widths))
                print(f"{pid} idx ({where}){head} {_print_text(element, ty.scalar, hex)}")

    # --- reductions and scans with a combine function ----------------------------------
    # `combine(handles, types)` runs the user's combine function on two groups of N values.
    def create_generic_reduce(self, xs: list[Tensor], axis: int, combine, element_types: list,
                              result_types: list) -> list[Tensor]:
        """A tree: neighbours first (pairs 2i, 2i+1), so the combine sees elements in order."""
        while xs[0].shape[axis] > 1:
            evens = [x.unfold(axis, 2, 2).select(-1, 0) for x in xs]
            odds = [x.unfold(axis, 2, 2).select(-1, 1) for x in xs]
            types = [block_type(t, tuple(e.shape)) for t, e in zip(element_types, evens)]
            xs = list(combine([e.contiguous() for e in evens] + [o.contiguous() for o in odds], types * 2))
        return [x.squeeze(axis) if x.dim() > 1 else x.reshape(()) for x in xs]

    def create_scan(self, xs: list[Tensor], axis: int, reverse: bool, combine, element_types: list,
                    result_types: list) -> list[Tensor]:
        """Element by element along `axis`: acc = combine(acc, x[i])."""
        size = xs[0].shape[axis]
        order = range(size - 1, -1, -1) if reverse else range(size)
        outs = [torch.empty_like(x) for x in xs]
        acc = None
        for i in order:
            current = [x.select(axis, i) for x in xs]
            if acc is None:
                acc = current
            else:
                shape = tuple(current[0].shape)
                types = [block_type(t, shape) if shape else t for t in element_types]
                acc = list(combine(acc + current, types * 2))
            for out, value in zip(outs, acc):
                out.select(axis, i).copy_(value)
        return outs
