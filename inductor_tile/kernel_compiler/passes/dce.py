"""dce: dead code elimination by liveness (passes/liveness.py, the rule of xdsl's region DCE).

An op is removed when its results are unused and it has no effect beyond reading
memory: pure ops and unused `tt.load`s go, `tt.store`, terminators and functions stay.
Ops whose only users are dead (also across scf regions) go too.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from .liveness import region_dce


class DeadCodeEliminationPass(ModulePass):
    """Remove ops that have no observable effect."""

    name = "dce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        region_dce(op.body)
