"""`tt.dot` on RDNA3 matrix cores: one `llvm.amdgcn.wmma.f32.16x16x16.{f16,bf16}` call per 16 x 16 x 16 piece.

The result is in `#ttg.amd_wmma` (ir/layouts.AmdWmma), the operands in its dot-operand layouts: a lane
holds 8 of the 16 k an instruction needs from it (lanes 0-15 k 0-7, lanes 16-31 k 8-15 of the same
row of a / column of b), and the instruction wants all 16 in every lane, lanes 16-31 repeating lanes
0-15. So each lane takes the other 8 from lane l ^ 16 (four 32-bit exchanges, `Target.shuffle_xor`)
and orders the two halves by k (`halves_from`). `wmma_steps` lists the instructions as slots:

- a: the lane's 8 k of row repetition i in k step s (slots 8s..8s+7 along K);
- b: the lane's 8 k of column repetition j;
- c / d: 8 registers, register v being row repetition 8i + v (rows 2v and 2v + 1 of the piece).

The host simulation in tests/test_amd_dot_wmma_sim.py runs these steps on the ISA's register description.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.ir import Operation

from ..ir.layouts import AmdWmma, LayoutMap
from .context import F32, I32, LoweringContext
from .dot_mfma import assemble_pieces, matrix_core_operands

PARTNER = 16  # lane distance between the two holders of one row (column)


@dataclass(frozen=True)
class WmmaStep:
    """One instruction: the slots of this lane's half of a and b, of c (register order), and its piece."""

    a: tuple[int, ...]
    b: tuple[int, ...]
    c: tuple[int, ...]
    i: int
    j: int
    s: int


def wmma_steps(a_map: LayoutMap, b_map: LayoutMap, c_map: LayoutMap) -> list[WmmaStep]:
    pieces_m, pieces_n = c_map.slots_per_dim[0] // 8, c_map.slots_per_dim[1]
    k_steps = a_map.shape[1] // AmdWmma.k_width
    steps = []
    for i in range(pieces_m):
        for j in range(pieces_n):
            c = tuple(c_map.slot_of_coords((8 * i + v, j)) for v in range(8))
            for s in range(k_steps):
                a = tuple(a_map.slot_of_coords((i, 8 * s + t)) for t in range(8))
                b = tuple(b_map.slot_of_coords((8 * s + t, j)) for t in range(8))
                steps.append(WmmaStep(a, b, c, i, j, s))
    return steps


def halves_from(lane: int) -> tuple[int, int]:
    """The lanes whose 8 halves become k 0-7 and k 8-15 of `lane`'s 16 (itself and its partner)."""
    partner = lane ^ PARTNER
    return (lane, partner) if lane < PARTNER else (partner, lane)


def _full_operand(ctx: LoweringContext, own: ir.Value, low_lane: ir.Value) -> ir.Value:
    """The 16 halves of an instruction operand: `own` 8 and the partner lane's, lower k first."""
    b = ctx.builder
    words = b.bitcast(own, ir.VectorType(I32, 4))
    theirs = ir.Constant(ir.VectorType(I32, 4), None)
    for w in range(4):
        index = ir.Constant(I32, w)
        theirs = b.insert_element(theirs, ctx.target.shuffle_xor(b, b.extract_element(words, index), PARTNER), index)
    other = b.bitcast(theirs, own.type)
    first, second = b.select(low_lane, own, other), b.select(low_lane, other, own)
    return b.shuffle_vector(first, second, ir.Constant(ir.VectorType(I32, 16), list(range(16))))


def intrinsic_name(kind: str) -> str:
    """The (overloaded) intrinsic: llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16 or .bf16.v8f32.v16i16."""
    return f"llvm.amdgcn.wmma.f32.16x16x16.{kind}.v8f32.{'v16f16' if kind == 'f16' else 'v16i16'}"


def lower_wmma_dot(ctx: LoweringContext, op: Operation) -> ir.Value:
    builder = ctx.builder
    kind, element, (a_map, b_map, c_map), (a, b, acc) = matrix_core_operands(ctx, op)
    operand_type, acc_type = ir.VectorType(element, 16), ir.VectorType(F32, 8)
    function = ctx.intrinsic(intrinsic_name(kind), acc_type, [operand_type, operand_type, acc_type])
    low_lane = builder.icmp_unsigned("<", ctx.target.lane_id(builder), ir.Constant(I32, PARTNER))
    pieces: dict[tuple[int, int], tuple[tuple[int, ...], ir.Value]] = {}
    for step in wmma_steps(a_map, b_map, c_map):
        key = (step.i, step.j)
        c = pieces[key][1] if key in pieces else ctx.shuffle(acc, list(step.c))
        a_full = _full_operand(ctx, ctx.shuffle(a, list(step.a)), low_lane)
        b_full = _full_operand(ctx, ctx.shuffle(b, list(step.b)), low_lane)
        pieces[key] = (step.c, builder.call(function, [a_full, b_full, c]))
    return assemble_pieces(builder, acc, pieces)
