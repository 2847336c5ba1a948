"""TTIRBuilder methods for the language beyond the first subset (issue 20): element moves
(trans, flip, join, split), reductions and scans with a combine region, debug ops.

A mixin of `TTIRBuilder` (`ir_builder.py`), kept apart so the additions stay in one file.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from .ir import tt_debug, tt_permute
from .ir.types import to_ir_type


class LanguageOpsBuilder:
    """Mixed into TTIRBuilder: uses its `_value` / `_insert` and insertion point."""

    # --- element moves --------------------------------------------------------
    def create_trans(self, x: SSAValue, order: tuple[int, ...], ty) -> SSAValue:
        return self._value(tt_permute.TransOp(x, order, to_ir_type(ty)))

    def create_flip(self, x: SSAValue, axis: int, ty) -> SSAValue:
        return self._value(tt_permute.FlipOp(x, axis, to_ir_type(ty)))

    def create_join(self, a: SSAValue, b: SSAValue, ty) -> SSAValue:
        return self._value(tt_permute.JoinOp(a, b, to_ir_type(ty)))

    def create_split(self, x: SSAValue, ty) -> tuple[SSAValue, SSAValue]:
        op = self._insert(tt_permute.SplitOp(x, to_ir_type(ty)))
        return op.results[0], op.results[1]

    # --- synchronization and debugging ---------------------------------------------
    def create_debug_barrier(self) -> None:
        self._insert(tt_debug.DebugBarrierOp())
