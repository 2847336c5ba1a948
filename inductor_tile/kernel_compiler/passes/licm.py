"""licm: loop-invariant code motion out of `scf.for` (xdsl's implementation) and `scf.while`.

An op moves in front of its loop when all its operands are defined outside the loop,
it has no memory effect and it is speculatable (safe to run even if the loop body runs
zero times). So pure ops move, while `tt.load` (reads memory), `tt.store`, and divisions or
remainders by a non-constant divisor stay in the loop. Inner loops are handled first,
so an op can climb several loops. An scf.while's condition region and body are both
searched (the same rule: the condition region runs at least once, the body maybe never).
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern,
                                   op_type_rewrite_pattern)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.loop_invariant_code_motion import LoopInvariantCodeMotion
from xdsl.transforms.loop_invariant_code_motion import _move_loop_invariant_code as hoist_from_region


class WhileInvariantCodeMotion(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter) -> None:
        for region in (op.before_region, op.after_region):
            hoist_from_region(region, Builder(InsertPoint.before(op)))


class LoopInvariantCodeMotionPass(ModulePass):
    """Hoist pure, speculatable, loop-invariant ops out of scf.for and scf.while loops."""

    name = "licm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier([LoopInvariantCodeMotion(), WhileInvariantCodeMotion()])
        PatternRewriteWalker(patterns, apply_recursively=False, walk_regions_first=True).rewrite_module(op)
