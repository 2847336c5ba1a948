"""cse: common subexpression elimination, xdsl's driver restricted to effect-free ops.

xdsl's CSE also merges two identical read-only ops when no write separates them; we
keep every `tt.load` (another program may write the same memory between two loads of
one kernel, and Triton users expect one load per `tl.load`). Pure ops (arith, math,
tt shape ops, addptr, ...) are merged as usual, and stores are never touched.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, is_side_effect_free
from xdsl.transforms.common_subexpression_elimination import CSEDriver
from xdsl.transforms.dead_code_elimination import is_trivially_dead


class EffectFreeCSEDriver(CSEDriver):
    """xdsl's CSE driver that only looks for duplicates of side-effect-free ops."""

    def _simplify_operation(self, op: Operation) -> None:
        if is_side_effect_free(op) or op.has_trait(IsTerminator):
            super()._simplify_operation(op)
        elif is_trivially_dead(op):
            self._mark_erasure(op)


class CommonSubexpressionEliminationPass(ModulePass):
    """Replace each side-effect-free op by an identical earlier one that dominates it."""

    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        EffectFreeCSEDriver().simplify(op)
