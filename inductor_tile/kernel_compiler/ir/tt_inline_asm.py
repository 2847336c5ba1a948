"""`tt.elementwise_inline_asm`: the user's assembly run on each element (tl.inline_asm_elementwise).

    %y = tt.elementwise_inline_asm "shl.b32 $0, $1, 3;" {constraints = "=r,r", packed_element = 1 : i32,
         pure = true} %x : tensor<256xi32> -> tensor<256xi32>

The operands (already broadcast to one shape) and the results share a shape; each result has the
element type the user named. `asm_string` and `constraints` are LLVM inline-assembly text (`$0`.. are
the results, then the operands). `packed_element` elements go through one execution of the assembly
(narrow ones packed into 32-bit registers). A `pure` op has no effect, so CSE merges two
identical ones and DCE drops an unused one; otherwise it counts as reading and writing memory and stays.
Layouts: elementwise (every tensor operand and result in one layout).
"""

from __future__ import annotations

from xdsl.dialects.builtin import I32, BoolAttr, IntegerAttr, StringAttr, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind

from .tt_types import expect, shape_of


class InlineAsmEffects(MemoryEffect):
    """None when the user declared the assembly pure; else reads and writes (no pass moves or drops it)."""

    @classmethod
    def get_effects(cls, op: Operation) -> frozenset[EffectInstance]:
        if op.pure.value.data:  # type: ignore[attr-defined]
            return frozenset()
        return frozenset((EffectInstance(MemoryEffectKind.READ), EffectInstance(MemoryEffectKind.WRITE)))


@irdl_op_definition
class ElementwiseInlineAsmOp(IRDLOperation):
    """Results[i][c] = the assembly applied to (operands[0][c], operands[1][c], ...) for every element c."""

    name = "tt.elementwise_inline_asm"

    asm_string = prop_def(StringAttr)
    constraints = prop_def(StringAttr)
    pure = prop_def(BoolAttr)
    packed_element = prop_def(IntegerAttr[I32])
    args = var_operand_def(AnyAttr())
    result = var_result_def(AnyAttr())

    traits = traits_def(InlineAsmEffects())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$asm_string attr-dict ($args^ `:` type($args))? `->` type($result)"

    def __init__(self, asm: str, constraints: str, args: list[SSAValue], result_types: list[Attribute],
                 pure: bool, pack: int):
        super().__init__(operands=[args], result_types=[result_types],
                         properties={"asm_string": StringAttr(asm), "constraints": StringAttr(constraints),
                                     "pure": BoolAttr.from_bool(pure),
                                     "packed_element": IntegerAttr(pack, i32)})

    @property
    def pack(self) -> int:
        return self.packed_element.value.data

    def verify_(self) -> None:
        expect(len(self.results) >= 1, "tt.elementwise_inline_asm: at least one result")
        expect(self.pack >= 1, "tt.elementwise_inline_asm: packed_element must be at least 1")
        shapes = {shape_of(v.type) for v in (*self.args, *self.results)}
        expect(len(shapes) == 1, "tt.elementwise_inline_asm: operands and results must have one shape")


INLINE_ASM_OPS = [ElementwiseInlineAsmOp]
