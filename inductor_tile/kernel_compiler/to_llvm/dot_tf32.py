"""fp32 `tt.dot` with `input_precision` "tf32" or "tf32x3": operand rounding, and NVIDIA's tf32 tensor cores.

Rounding (the interpreter's rule, `interpreter/dot_precision.py`): "tf32" rounds each operand to tf32 (10
mantissa bits) to nearest, ties away from zero; "tf32x3" splits it into big = tf32(x) and small =
tf32(x - big) and sums small * big + big * small + big * big; "ieee" keeps fp32. The FMA paths round
with integer operations (`round_to_tf32`, any target; "tf32x3" computes in fp32 there, more precise
than three products); the tensor-core paths convert with `cvt.rna.tf32.f32`.

`mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32` (sm_80+) reads a as {row g, k t}, {row g+8, k t},
{row g, k t+4}, {row g+8, k t+4} and b as {k t, column g}, {k t+4, column g} (lane 4g + t). The
operand layouts of `#ttg.nvidia_mma` are the 16-bit ones (`ir/dot_layouts.py`): per 16-wide k step a
lane holds k = 2t, 2t+1 (low half) and 2t+8, 2t+9 (high half) of a's rows and b's columns. Each half is
one k8 instruction whose k index t stands for k = 2t and t+4 for 2t+1: a relabelling of k that a and b
share, so the sum is the same. The accumulator fragment is the m16n8k16 one.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from ..ir.layouts import LayoutMap
from .context import F32, I32, LoweringContext, float_kind

TF32_DROPPED_BITS = 13


def tf32_precision(op: Operation) -> str | None:
    """"tf32" or "tf32x3" for a dot of fp32 operands that may round them, else None."""
    precision = op.input_precision.data
    if float_kind(op.operands[0].type) != "f32" or precision not in ("tf32", "tf32x3"):
        return None
    return precision


def round_to_tf32(ctx: LoweringContext, value: ir.Value) -> ir.Value:
    """fp32 elements rounded to tf32 (still fp32): to nearest, ties away from zero, in integer operations;
    NaN and infinities pass unchanged."""
    b = ctx.builder
    ints = ir.VectorType(I32, value.type.count)
    bits = b.bitcast(value, ints)
    half = ir.Constant(ints, [1 << (TF32_DROPPED_BITS - 1)] * value.type.count)
    keep = ir.Constant(ints, [-(1 << TF32_DROPPED_BITS)] * value.type.count)
    rounded = b.bitcast(b.and_(b.add(bits, half), keep), value.type)
    exponent = ir.Constant(ints, [0x7F800000] * value.type.count)
    finite = b.icmp_unsigned("!=", b.and_(bits, exponent), exponent)
    return b.select(finite, rounded, value)


def _cvt_rna(ctx: LoweringContext, value: ir.Value) -> ir.Value:
    asm = ir.InlineAsm(ir.FunctionType(I32, [F32]), "cvt.rna.tf32.f32 $0, $1;", "=r,f")
    return ctx.builder.call(asm, [value])


def tf32_parts(ctx: LoweringContext, value: ir.Value, precision: str) -> list[list[ir.Value]]:
    """Per slot of the fp32 vector `value`, its tf32 registers: [big] ("tf32") or [big, small] ("tf32x3")."""
    b = ctx.builder
    parts: list[list[ir.Value]] = [[], []]
    for slot in range(value.type.count):
        x = b.extract_element(value, ir.Constant(I32, slot))
        big = _cvt_rna(ctx, x)
        parts[0].append(big)
        if precision == "tf32x3":
            parts[1].append(_cvt_rna(ctx, b.fsub(x, b.bitcast(big, F32))))
    return parts if precision == "tf32x3" else parts[:1]


def products(precision: str) -> list[tuple[int, int]]:
    """The (a part, b part) of each tensor-core product, in issue order (0: big, 1: small)."""
    return [(1, 0), (0, 1), (0, 0)] if precision == "tf32x3" else [(0, 0)]


def _mma_k8(ctx: LoweringContext, a: list[ir.Value], b: list[ir.Value], c: list[ir.Value]) -> list[ir.Value]:
    text = ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
            "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};")
    asm = ir.InlineAsm(ir.FunctionType(ir.LiteralStructType([F32] * 4), [I32] * 6 + [F32] * 4), text,
                       "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3")
    out = ctx.builder.call(asm, a + b + c)
    return [ctx.builder.extract_value(out, i) for i in range(4)]


def k8_a_slots(step, h: int) -> list[int]:
    """a's slots of the k8 instruction for half h of an m16n8k16 step: {g, t}, {g+8, t}, {g, t+4}, {g+8, t+4}."""
    return [step.a[2 * h][0], step.a[2 * h + 1][0], step.a[2 * h][1], step.a[2 * h + 1][1]]


def k8_b_slots(step, h: int) -> list[int]:
    return [step.b[h][0], step.b[h][1]]


def lower_tf32_mma_dot(ctx: LoweringContext, op: Operation, a_map: LayoutMap, b_map: LayoutMap,
                       c_map: LayoutMap) -> ir.Value:
    """The dot with mma.sync m16n8k8 tf32 instructions (one per k8 half of each m16n8k16 step, three for
    "tf32x3"), operands from registers."""
    from .dot_mma import mma_steps

    builder = ctx.builder
    precision = tf32_precision(op)
    assert precision is not None
    a, b, acc = (ctx.get(v) for v in op.operands)
    a_parts, b_parts = tf32_parts(ctx, a, precision), tf32_parts(ctx, b, precision)
    registers: dict[int, ir.Value] = {}
    for step in mma_steps(a_map, b_map, c_map):
        c = [registers[slot] if slot in registers else builder.extract_element(acc, ir.Constant(I32, slot))
             for slot in step.c]
        for h in (0, 1):
            for i, j in products(precision):
                c = _mma_k8(ctx, [a_parts[i][s] for s in k8_a_slots(step, h)],
                            [b_parts[j][s] for s in k8_b_slots(step, h)], c)
        registers.update(zip(step.c, c))
    out = acc
    for slot, value in registers.items():
        out = builder.insert_element(out, value, ir.Constant(I32, slot))
    return out
