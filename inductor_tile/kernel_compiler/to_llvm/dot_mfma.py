"""`tt.dot` on AMD matrix cores: one `llvm.amdgcn.mfma.f32.*` call per instruction piece.

The result is in `#ttg.amd_mfma` (ir/layouts.AmdMfma) and the operands in its dot-operand
layouts, so every register an instruction reads is already in the lane that issues it.
`mfma_steps` lists the instructions of one dot as slots of the three per-thread vectors, in
the order the instruction takes its registers:

- a: the 4 k of one row (a 64-bit register pair of halves), k step s = slots 4s..4s+3 of the
  row repetition i;
- b: the 4 k of one column, slots 4s..4s+3 of column repetition j;
- c / d: 16 (32x32x8) or 4 (16x16x16) registers: register 4g + r is row repetition
  (4i + g) (32x32x8: four repetitions of 8 rows make the instruction's 32) or i, slot r within it.

The accumulator of each (i, j) piece goes through the k steps as one <16 x float> (or <4 x float>)
vector: LLVM keeps it in AGPRs/VGPRs across the chain. bf16 operands are i16 bit patterns here,
which is what the "_1k" bf16 instructions take (<4 x i16>). The host simulation in
tests/test_amd_dot_mfma.py runs these steps on the ISA's register description.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.ir import Operation

from ..ir.layouts import AmdMfma, LayoutMap
from .context import F32, I16, I32, LoweringContext, float_kind


@dataclass(frozen=True)
class MfmaStep:
    """One instruction: the slots of its a, b and c registers, in register order, and its piece."""

    a: tuple[int, ...]
    b: tuple[int, ...]
    c: tuple[int, ...]
    i: int  # row repetition of the instruction, column repetition, k step
    j: int
    s: int


def mfma_steps(mfma: AmdMfma, a_map: LayoutMap, b_map: LayoutMap, c_map: LayoutMap) -> list[MfmaStep]:
    """The instructions of a dot, pieces outer and k steps inner (each piece's chain back to back)."""
    row_groups = mfma.size // (4 * (64 // mfma.size))  # result row repetitions per instruction: 4 or 1
    pieces_m = c_map.slots_per_dim[0] // (4 * row_groups)
    pieces_n = c_map.slots_per_dim[1]
    k_steps = a_map.shape[1] // mfma.k_width
    steps = []
    for i in range(pieces_m):
        for j in range(pieces_n):
            c = tuple(c_map.slot_of_coords((4 * (row_groups * i + g) + r, j)) for g in range(row_groups)
                      for r in range(4))
            for s in range(k_steps):
                a = tuple(a_map.slot_of_coords((i, 4 * s + t)) for t in range(4))
                b = tuple(b_map.slot_of_coords((4 * s + t, j)) for t in range(4))
                steps.append(MfmaStep(a, b, c, i, j, s))
    return steps


def intrinsic_name(mfma: AmdMfma, kind: str) -> str:
    """llvm.amdgcn.mfma.f32.32x32x8f16, ...16x16x16bf16.1k (the bf16 forms of gfx90a+: 4 k per lane)."""
    shape = f"{mfma.size}x{mfma.size}x{mfma.k_width}"
    return f"llvm.amdgcn.mfma.f32.{shape}{'f16' if kind == 'f16' else 'bf16.1k'}"


def matrix_core_operands(ctx: LoweringContext, op: Operation):
    """What an fp16/bf16 dot on MFMA or WMMA starts from: the kind ("f16"/"bf16"), the 16-bit element type
    the intrinsic takes, the layout maps of a, b and the result, and a and b (as that type) and acc."""
    kind = float_kind(op.operands[0].type)
    maps = tuple(ctx.layout_map(v.type) for v in (*op.operands[:2], op.results[0]))
    a, b, acc = (ctx.get(v) for v in op.operands)
    element = ir.HalfType() if kind == "f16" and not ctx.soft_half(kind) else I16
    if a.type.element != element:  # the same 16 bits either way
        a = ctx.builder.bitcast(a, ir.VectorType(element, a.type.count))
        b = ctx.builder.bitcast(b, ir.VectorType(element, b.type.count))
    return kind, element, maps, (a, b, acc)


def assemble_pieces(builder: ir.IRBuilder, acc: ir.Value,
                    pieces: dict[tuple[int, int], tuple[tuple[int, ...], ir.Value]]) -> ir.Value:
    """The accumulator with each instruction's result registers put back at their slots."""
    out = acc
    for slots, d in pieces.values():
        for r, slot in enumerate(slots):
            out = builder.insert_element(out, builder.extract_element(d, ir.Constant(I32, r)), ir.Constant(I32, slot))
    return out


def lower_mfma_dot(ctx: LoweringContext, op: Operation) -> ir.Value:
    builder = ctx.builder
    mfma = ctx.layout_map(op.results[0].type).layout
    assert isinstance(mfma, AmdMfma)
    kind, element, (a_map, b_map, c_map), (a, b, acc) = matrix_core_operands(ctx, op)
    registers = mfma.size * mfma.size // 64
    operand_type, acc_type = ir.VectorType(element, 4), ir.VectorType(F32, registers)
    function = ctx.intrinsic(intrinsic_name(mfma, kind), acc_type,
                             [operand_type, operand_type, acc_type, I32, I32, I32])
    flags = [ir.Constant(I32, 0)] * 3  # cbsz, abid, blgp: no broadcast between blocks
    pieces: dict[tuple[int, int], tuple[tuple[int, ...], ir.Value]] = {}
    for step in mfma_steps(mfma, a_map, b_map, c_map):
        key = (step.i, step.j)
        c = pieces[key][1] if key in pieces else ctx.shuffle(acc, list(step.c))
        d = builder.call(function, [ctx.shuffle(a, list(step.a)), ctx.shuffle(b, list(step.b)), c, *flags])
        pieces[key] = (step.c, d)
    return assemble_pieces(builder, acc, pieces)
