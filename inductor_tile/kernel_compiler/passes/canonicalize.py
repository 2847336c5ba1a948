"""canonicalize: xdsl's canonicalization (op patterns, folders, region DCE) plus tt patterns.

The tt patterns below remove shape ops that do nothing, push splats through shape ops,
and simplify pointer arithmetic and selects with a known condition. Patterns that
rebuild an op copy its discardable attributes (hints such as `tt.divisibility`).
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern

from ..ir import arith_ext, tt
from .liveness import region_dce
from .matchers import scalar_constant


class BroadcastToSameType(RewritePattern):
    """`tt.broadcast %x : T -> T` is `%x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.BroadcastOp, rewriter: PatternRewriter, /):
        if op.src.type == op.result.type:
            rewriter.replace(op, [], [op.src])


class ReshapeToSameType(RewritePattern):
    """`tt.reshape %x : T -> T` is `%x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.ReshapeOp, rewriter: PatternRewriter, /):
        if op.src.type == op.result.type:
            rewriter.replace(op, [], [op.src])


class ShapeOpOfSplat(RewritePattern):
    """broadcast / expand_dims / reshape of `tt.splat %x` is `tt.splat %x` to the new type:
    every element is still `%x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.BroadcastOp | tt.ExpandDimsOp | tt.ReshapeOp, rewriter: PatternRewriter, /):
        if isinstance(splat := op.src.owner, tt.SplatOp):
            new = tt.SplatOp(splat.src, op.result.type)
            new.attributes.update(op.attributes)  # keep hints
            rewriter.replace(op, new)


class AddPtrZero(RewritePattern):
    """`tt.addptr %p, 0` (a zero constant or a splat of one) is `%p`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.AddPtrOp, rewriter: PatternRewriter, /):
        offset = scalar_constant(op.offset)
        if isinstance(offset, IntegerAttr) and offset.value.data == 0:
            rewriter.replace(op, [], [op.ptr])


class AddPtrChain(RewritePattern):
    """`addptr(addptr(%p, %a), %b)` is `addptr(%p, %a + %b)` when %a and %b have one type,
    so that a base pointer and its offsets are one add apart."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.AddPtrOp, rewriter: PatternRewriter, /):
        inner = op.ptr.owner
        if not isinstance(inner, tt.AddPtrOp) or inner.offset.type != op.offset.type:
            return
        total = arith.AddiOp(inner.offset, op.offset)
        new = tt.AddPtrOp(inner.ptr, total.result)
        new.attributes.update(op.attributes)  # keep hints
        rewriter.replace(op, [total, new])


class SelectConstantCondition(RewritePattern):
    """`arith.select` whose condition is a constant (or a splat of one) is the chosen operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith_ext.SelectOp, rewriter: PatternRewriter, /):
        cond = scalar_constant(op.cond)
        if isinstance(cond, IntegerAttr):
            rewriter.replace(op, [], [op.lhs if cond.value.data != 0 else op.rhs])


TT_PATTERNS: list[RewritePattern] = [
    BroadcastToSameType(),
    ReshapeToSameType(),
    ShapeOpOfSplat(),
    AddPtrZero(),
    AddPtrChain(),
    SelectConstantCondition(),
]


class CanonicalizePass(ModulePass):
    """Apply xdsl's canonicalization patterns and folders together with `TT_PATTERNS`
    until nothing changes, removing dead code between walks."""

    name = "canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier(
            [CanonicalizationRewritePattern(), *TT_PATTERNS], ctx=ctx, folding_enabled=True
        )
        PatternRewriteWalker(patterns, post_walk_func=region_dce).rewrite_module(op)
