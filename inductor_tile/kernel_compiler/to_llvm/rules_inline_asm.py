"""Lowering rule of `tt.elementwise_inline_asm`: one LLVM inline-assembly call per slot.

The one rule serves every target, since each is LLVM: the assembly text reaches the target's code
(PTX on NVIDIA, AMDGCN, x86 on the CPU) as the user wrote it. A thread's slot i of every operand is
passed to the call made for slot i; its results (one value, or a struct of them for several) fill slot i
of each result. A pure op's calls have no side effect, so LLVM may merge or drop them; other calls stay
where they are.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from .context import I32, LoweringContext, LoweringError, lowering


def _slot(builder: ir.IRBuilder, value: ir.Value, index: int) -> ir.Value:
    if isinstance(value.type, ir.VectorType):
        return builder.extract_element(value, ir.Constant(I32, index))
    return value


@lowering("tt.elementwise_inline_asm")
def lower_elementwise_inline_asm(ctx: LoweringContext, op: Operation) -> None:
    if op.pack != 1:
        raise LoweringError(f"tt.elementwise_inline_asm: packed_element = {op.pack} is not supported (only 1)")
    b = ctx.builder
    args = [ctx.get(v) for v in op.operands]
    result_types = [ctx.llvm_type(r.type) for r in op.results]
    element_types = [t.element if isinstance(t, ir.VectorType) else t for t in result_types]
    slots = next((t.count for t in result_types if isinstance(t, ir.VectorType)), None)
    returned = element_types[0] if len(element_types) == 1 else ir.LiteralStructType(element_types)
    arg_types = [a.type.element if isinstance(a.type, ir.VectorType) else a.type for a in args]
    fn_type = ir.FunctionType(returned, arg_types)
    asm, constraints = op.asm_string.data, op.constraints.data
    side_effect = not op.pure.value.data

    def call(index: int) -> list[ir.Value]:
        value = b.asm(fn_type, asm, constraints, [_slot(b, a, index) for a in args], side_effect)
        if len(element_types) == 1:
            return [value]
        return [b.extract_value(value, i) for i in range(len(element_types))]

    if slots is None:  # scalars
        for result, value in zip(op.results, call(0)):
            ctx.set(result, value)
        return
    outs = [ir.Constant(t, ir.Undefined) for t in result_types]
    for index in range(slots):
        for k, value in enumerate(call(index)):
            outs[k] = b.insert_element(outs[k], value, ir.Constant(I32, index))
    for result, value in zip(op.results, outs):
        ctx.set(result, value)
