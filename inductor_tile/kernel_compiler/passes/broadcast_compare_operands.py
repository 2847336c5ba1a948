"""broadcast-compare-operands: `broadcast(cmp(a, b))` becomes `cmp(broadcast(a), broadcast(b))`.

For the CPU target only. A mask such as `xmask & rmask` is the `and` of two compares
broadcast from [XBLOCK, 1] and [1, RBLOCK]; on the CPU a tile is one LLVM vector and x86
has no cheap way to shuffle `<N x i1>`: LLVM built a [8, 128] layernorm's mask byte by
byte (960 `vpinsrb` of the kernel's 5333 instructions). Broadcasting the compared integers
instead costs one broadcast per 8 or 16 lanes and a full-width compare, whose result is a
mask register the masked loads take as it is. GPUs keep the compare on the small shape: a
broadcast there is only a register read by several slots.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from ..ir import arith_ext, tt
from ..ir.tt_types import element_of, like


class BroadcastOfCompare(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tt.BroadcastOp, rewriter: PatternRewriter, /):
        compare = op.src.owner
        if not isinstance(compare, arith_ext.CmpiOp | arith_ext.CmpfOp):
            return
        operand_type = like(op.result.type, element_of(compare.lhs.type))
        lhs = tt.BroadcastOp(compare.lhs, operand_type)
        rhs = tt.BroadcastOp(compare.rhs, operand_type)
        wide = type(compare)(lhs.result, rhs.result, compare.predicate_name)
        wide.attributes.update(compare.attributes)
        rewriter.replace(op, [lhs, rhs, wide])
        if not compare.result.uses:
            rewriter.erase(compare)


class BroadcastCompareOperandsPass(ModulePass):
    """Move every broadcast of a compare's result onto the compare's operands."""

    name = "broadcast-compare-operands"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(BroadcastOfCompare()).rewrite_module(op)
