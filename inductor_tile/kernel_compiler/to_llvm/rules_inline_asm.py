"""Lowering rule of `tt.elementwise_inline_asm`: one LLVM inline-assembly call per `pack` slots.

The one rule serves every target, since each is LLVM: the assembly text reaches the target's code
(PTX on NVIDIA, x86 on the CPU) as the user wrote it. The AMD target refuses it: its code object is
emitted by llvmlite's LLVM, which has no AMDGPU assembly parser to assemble inline assembly with (LLVM
would abort the process). A thread's slots are taken `pack` at a
time: each call gets those slots of every operand and fills them in every result. Within a call an
operand or result takes `registers(bits, pack)` values: elements narrower than 32 bits are packed
(the first in the low bits) into an integer of up to 32 bits, wider ones go one per value (the
language's `elements_per_register` rule, which also counted the constraints). With several values the
call returns a struct. Where the slots do not fill the last call (a scalar has one), its missing inputs are zeros and
its extra outputs are dropped. A pure op's calls have no side effect, so LLVM may merge or drop them;
other calls stay where they are. On a tensor, the `pack` slots of a call are `pack` consecutive elements of
the tensor (the layout passes choose such layouts: `passes/packed_asm_layouts.py`; any other is refused here).
Assembly the target cannot assemble is an error at the call, never a dead process: on the CPU, LLVM's
assembler exits the process on it, so a kernel with inline assembly gets its machine code from a child
process (`isolated_codegen.py`); ptxas runs as a child anyway; either's message then names the call
(`inline_asm_errors.py`).
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from ...language.extra.cuda import PTX_REGISTER_READS
from ...language.semantic_inline_asm import elements_per_register
from ..diagnostics.perf_warnings import op_location
from ..ir.tt_types import shape_of
from ..ir.ttg import layout_of
from ..passes.packed_asm_layouts import asm_pack, packs_consecutively
from .context import I32, LoweringContext, LoweringError, lowering


def _bits(ty: ir.Type) -> int:
    if isinstance(ty, ir.IntType):
        return ty.width
    return {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}[type(ty)]


class _Packing:
    """How one operand or result of element type `element` travels through a call of `pack` elements."""

    def __init__(self, element: ir.Type, pack: int):
        self.element = element
        self.per = elements_per_register(_bits(element), pack)
        self.count = -(-pack // self.per)  # values per call
        self.register = ir.IntType(_bits(element) * self.per) if self.per > 1 else element

    def pack(self, b: ir.IRBuilder, elements: list[ir.Value]) -> list[ir.Value]:
        """`pack` elements as `count` register values."""
        if self.per == 1:
            return elements
        out = []
        for start in range(0, len(elements), self.per):
            vector = ir.Constant(ir.VectorType(self.element, self.per), None)
            for i, e in enumerate(elements[start:start + self.per]):
                vector = b.insert_element(vector, e, ir.Constant(I32, i))
            out.append(b.bitcast(vector, self.register))
        return out

    def unpack(self, b: ir.IRBuilder, values: list[ir.Value]) -> list[ir.Value]:
        """`count` register values as their elements."""
        if self.per == 1:
            return values
        vector_type = ir.VectorType(self.element, self.per)
        out = []
        for value in values:
            vector = b.bitcast(value, vector_type)
            out.extend(b.extract_element(vector, ir.Constant(I32, i)) for i in range(self.per))
        return out


def _ir_string(text: str) -> str:
    """`text` as the inside of an LLVM IR string (llvmlite's InlineAsm prints it as given): a `"` or `\\`
    in the user's assembly (`.ascii "x"`) would end the string or start an escape there."""
    return "".join(c if " " <= c <= "~" and c not in '"\\' else "".join(f"\\{b:02X}" for b in c.encode())
                   for c in text)


def _element_type(ty: ir.Type) -> ir.Type:
    return ty.element if isinstance(ty, ir.VectorType) else ty


def _check_packed_layout(op: Operation) -> None:
    """A tensor op's `pack` slots per call must be `pack` consecutive elements (the language's promise,
    which the layout passes keep: `packed_asm_layouts`); a layout that would pad or mix them is refused."""
    shape, layout = shape_of(op.results[0].type), layout_of(op.results[0].type)
    if asm_pack(op) > 1 and layout is not None and not packs_consecutively(layout, tuple(shape), op.pack):
        where = op_location(op)
        at = f"{where[0]}:{where[1]}: " if where else ""
        raise LoweringError(f"{at}tl.inline_asm_elementwise with pack={op.pack}: the layout {layout} does not give "
                            f"each execution {op.pack} consecutive elements of the {list(shape)} tensor (a layout "
                            "pass moved the op; please report it)")


@lowering("tt.elementwise_inline_asm")
def lower_elementwise_inline_asm(ctx: LoweringContext, op: Operation) -> None:
    where = op_location(op)
    at = f"{where[0]}:{where[1]}: " if where else ""
    register_read = PTX_REGISTER_READS.get(op.asm_string.data)
    if register_read is not None and ctx.target.name != "cuda":
        raise LoweringError(f"{at}tl.extra.cuda.{register_read}() reads an NVIDIA GPU register: the {ctx.target.name} "
                            "target has none")
    if ctx.target.name == "hip":
        raise LoweringError(f"{at}tl.inline_asm_elementwise is not supported on the AMD target: llvmlite's LLVM has "
                            "no AMDGPU assembly parser to assemble inline assembly into the code object")
    b, pack = ctx.builder, op.pack
    _check_packed_layout(op)
    args = [ctx.get(v) for v in op.operands]
    result_types = [ctx.llvm_type(r.type) for r in op.results]
    ins = [_Packing(_element_type(a.type), pack) for a in args]
    outs = [_Packing(_element_type(t), pack) for t in result_types]
    returned = [p.register for p in outs for _ in range(p.count)]
    fn_type = ir.FunctionType(returned[0] if len(returned) == 1 else ir.LiteralStructType(returned),
                              [p.register for p in ins for _ in range(p.count)])
    asm, constraints, side_effect = op.asm_string.data, op.constraints.data, not op.pure.value.data
    slots = next((t.count for t in result_types if isinstance(t, ir.VectorType)), 1)

    def element(value: ir.Value, index: int, packing: _Packing) -> ir.Value:
        if index >= slots:  # past the last slot: a zero the result of which is dropped
            return ir.Constant(packing.element, 0)
        if isinstance(value.type, ir.VectorType):
            return b.extract_element(value, ir.Constant(I32, index))
        return value

    results: list[list[ir.Value]] = [[] for _ in outs]
    for first in range(0, slots, pack):
        operands = [v for a, p in zip(args, ins) for v in p.pack(b, [element(a, first + i, p) for i in range(pack)])]
        call = b.asm(fn_type, _ir_string(asm), _ir_string(constraints), operands, side_effect)
        values = [call] if len(returned) == 1 else [b.extract_value(call, i) for i in range(len(returned))]
        for k, p in enumerate(outs):
            results[k].extend(p.unpack(b, values[:p.count]))
            values = values[p.count:]
    for result, ty, elements in zip(op.results, result_types, results):
        if not isinstance(ty, ir.VectorType):
            ctx.set(result, elements[0])
            continue
        vector = ir.Constant(ty, ir.Undefined)
        for index in range(slots):
            vector = b.insert_element(vector, elements[index], ir.Constant(I32, index))
        ctx.set(result, vector)
