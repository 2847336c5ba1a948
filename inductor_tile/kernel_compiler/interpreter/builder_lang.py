"""InterpreterBuilder methods for the language beyond the first subset (issue 20): element
moves (trans, flip, join, split), reductions and scans with a combine function, debug ops.

A mixin of `InterpreterBuilder` (`builder.py`); handles are torch CPU tensors.
"""

from __future__ import annotations

import torch
from torch import Tensor


class LanguageOpsInterpreter:
    # --- element moves --------------------------------------------------------
    def create_trans(self, x: Tensor, order: tuple[int, ...], ty) -> Tensor:
        return x.permute(*order).contiguous()

    def create_flip(self, x: Tensor, axis: int, ty) -> Tensor:
        return torch.flip(x, (axis,))

    def create_join(self, a: Tensor, b: Tensor, ty) -> Tensor:
        return torch.stack([a, b], dim=-1)

    def create_split(self, x: Tensor, ty) -> tuple[Tensor, Tensor]:
        return x[..., 0].contiguous(), x[..., 1].contiguous()

    # --- synchronization and debugging ---------------------------------------------
    def create_debug_barrier(self) -> None:
        return None  # one program runs at a time
