"""TTIRBuilder methods for the language beyond the first subset (issue 20): element moves
(trans, flip, join, split), reductions and scans with a combine region, debug ops.

A mixin of `TTIRBuilder` (`ir_builder.py`), kept apart so the additions stay in one file.
"""

from __future__ import annotations

from xdsl.ir import Block, SSAValue
from xdsl.rewriter import InsertPoint

from .ir import tt_combine, tt_debug, tt_inline_asm, tt_permute
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

    def create_histogram(self, x: SSAValue, mask: SSAValue | None, unsigned: bool, ty) -> SSAValue:
        return self._value(tt_permute.HistogramOp(x, mask, unsigned, to_ir_type(ty)))

    def create_sort(self, x: SSAValue, axis: int, descending: bool, unsigned: bool, ty) -> SSAValue:
        return self._value(tt_permute.SortOp(x, axis, descending, unsigned, to_ir_type(ty)))

    def create_gather(self, src: SSAValue, indices: SSAValue, axis: int, ty) -> SSAValue:
        return self._value(tt_permute.GatherOp(src, indices, axis, to_ir_type(ty)))

    # --- the user's assembly ---------------------------------------------------------
    def create_inline_asm(self, asm: str, constraints: str, args: list[SSAValue], types: list, is_pure: bool,
                          pack: int) -> list[SSAValue]:
        op = tt_inline_asm.ElementwiseInlineAsmOp(asm, constraints, args, [to_ir_type(t) for t in types], is_pure, pack)
        return list(self._insert(op).results)

    # --- synchronization and debugging ---------------------------------------------
    def create_debug_barrier(self) -> None:
        self._insert(tt_debug.DebugBarrierOp())

    def create_assert(self, condition: SSAValue, message: str) -> None:
        self._insert(tt_debug.AssertOp(condition, message))

    def create_assume(self, condition: SSAValue) -> None:
        self._insert(tt_debug.AssumeOp(condition))

    def create_print(self, values: list[SSAValue], prefix: str, types: list, hex: bool = False) -> None:
        signed = [not (t.scalar.is_int_unsigned() or t.scalar.is_bool()) for t in types]
        self._insert(tt_debug.PrintOp(values, prefix, hex, signed))

    # --- reductions and scans with a combine function ----------------------------------
    def _combine_block(self, element_types: list, combine) -> Block:
        """The combine region's block: 2N scalar arguments, `combine(handles, types)` built inside it."""
        block = Block(arg_types=[to_ir_type(t) for t in element_types * 2])
        saved = self.insertion_point
        self.insertion_point = InsertPoint.at_end(block)
        try:
            outs = combine(list(block.args), list(element_types) * 2)
            self._insert(tt_combine.CombineReturnOp(outs))
        finally:
            self.insertion_point = saved
        return block

    def create_generic_reduce(self, xs: list[SSAValue], axis: int, combine, element_types: list,
                              result_types: list) -> list[SSAValue]:
        block = self._combine_block(element_types, combine)
        op = tt_combine.GenericReduceOp(xs, axis, block, [to_ir_type(t) for t in result_types])
        return list(self._insert(op).results)

    def create_scan(self, xs: list[SSAValue], axis: int, reverse: bool, combine, element_types: list,
                    result_types: list) -> list[SSAValue]:
        block = self._combine_block(element_types, combine)
        op = tt_combine.ScanOp(xs, axis, reverse, block, [to_ir_type(t) for t in result_types])
        return list(self._insert(op).results)
