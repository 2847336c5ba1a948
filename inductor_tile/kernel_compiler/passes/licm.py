"""licm: loop-invariant code motion out of `scf.for`, xdsl's implementation.

An op moves in front of its loop when all its operands are defined outside the loop,
it has no memory effect and it is speculatable (safe to run even if the loop runs zero
times). So pure ops move, while `tt.load` (reads memory), `tt.store`, and divisions or
remainders by a non-constant divisor stay in the loop. Inner loops are handled first,
so an op can climb several loops.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.loop_invariant_code_motion import LoopInvariantCodeMotionPass as XdslLICM


class LoopInvariantCodeMotionPass(ModulePass):
    """Hoist pure, speculatable, loop-invariant ops out of scf.for loops."""

    name = "licm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        XdslLICM().apply(ctx, op)
