"""`tt.dot` on NVIDIA tensor cores: one `mma.sync.aligned.m16n8k16` per 16 x 8 x 16 piece.

The operands are in the dot-operand layouts of the `#ttg.nvidia_mma` result (see
`ir/dot_layouts.py`), so every register an instruction needs is already in the thread
that issues it: for the piece at row pair p, column repetition s and k step q,
  a: rows 2p, 2p+1 (repetitions of g) x k slots 4q..4q+3 (2t, 2t+1, 2t+8, 2t+9), as four
     32-bit pairs {row g, k lo}, {row g+8, k lo}, {row g, k hi}, {row g+8, k hi};
  b: k slots 4q..4q+3 of column g, as two pairs {k lo}, {k hi};
  c/d: row g columns 2t, 2t+1, then row g+8.
Two halves are packed per 32-bit register, the lower k in the low bits. An operand whose
conversion left it in shared memory (`dot_operands.SharedOperand`) is read here instead, one
ldmatrix per fragment just before the instructions that use it (b again for every row pair),
so that only a few fragments are live at a time. When a warp's a fragments are few (at most
`A_STATIONARY_REGISTERS` registers), a is loaded once and kept, and the pieces are ordered so that
each b fragment is loaded once per dot (`mma_steps(a_stationary=True)`): 128 x 128 x 32 on 4 warps
then takes 20 ldmatrix.x4 per warp instead of 36.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.ir import Operation

from ..ir.dot_layouts import MMA_K
from ..ir.layouts import LayoutMap
from .context import F32, I16, I32, LoweringContext, float_kind
from .dot_tf32 import lower_tf32_mma_dot
from .dot_tf32_store import Tf32Operand
from .dot_wgmma import WgmmaOperand, lower_wgmma_dot, wgmma_dot
from .dot_wgmma_tf32 import lower_tf32_wgmma_dot

_TYPES = {"f16": "f16", "bf16": "bf16"}


def _pack(ctx: LoweringContext, vector: ir.Value, slots: tuple[int, int]) -> ir.Value:
    """Two 16-bit elements of `vector` as one i32, the first in the low half."""
    return ctx.builder.bitcast(ctx.shuffle(vector, list(slots)), I32)


@dataclass(frozen=True)
class MmaStep:
    """One instruction's registers, as slots: c (4, also where d goes), a (4 pairs), b (2 pairs)."""

    c: tuple[int, ...]
    a: tuple[tuple[int, int], ...]
    b: tuple[tuple[int, int], ...]
    p: int = 0  # row pair, n block and k step of the piece
    s: int = 0
    q: int = 0


#: the most a registers (32-bit) a warp keeps loaded for the whole dot when its operands come from
#: shared memory: then b is read once per dot, not once per row pair
A_STATIONARY_REGISTERS = 32


def mma_steps(a_map: LayoutMap, b_map: LayoutMap, c_map: LayoutMap, a_stationary: bool = False) -> list[MmaStep]:
    """The instructions of a dot in program order, accumulating into c. By default row pairs are
    outermost and k steps innermost; `a_stationary` puts pairs of n blocks outermost, then k steps,
    then row pairs, so that each b fragment is used by every row pair right after it is loaded
    (and a, loaded once, stays in registers)."""
    rows, col_reps = c_map.slots_per_dim[0], c_map.slots_per_dim[1] // 2
    k_steps = a_map.shape[1] // MMA_K

    def step(p: int, s: int, q: int) -> MmaStep:
        c = tuple(c_map.slot_of_coords((2 * p + r, 2 * s + j)) for r in (0, 1) for j in (0, 1))
        a = tuple(tuple(a_map.slot_of_coords((2 * p + r, 4 * q + 2 * h + j)) for j in (0, 1))
                  for h in (0, 1) for r in (0, 1))
        b = tuple(tuple(b_map.slot_of_coords((4 * q + 2 * h + j, s)) for j in (0, 1)) for h in (0, 1))
        return MmaStep(c, a, b, p, s, q)  # type: ignore[arg-type]

    if not a_stationary:
        return [step(p, s, q) for p in range(rows // 2) for s in range(col_reps) for q in range(k_steps)]
    per_load = 2 if col_reps >= 2 else 1
    return [step(p, s, q) for s0 in range(0, col_reps, per_load) for q in range(k_steps)
            for p in range(rows // 2) for s in range(s0, min(s0 + per_load, col_reps))]


def a_stationary(a_map: LayoutMap) -> bool:
    """Whether the a fragments of one warp (4 registers per 16 x 16 piece) fit the a-stationary budget."""
    pieces = (a_map.slots_per_dim[0] // 2) * (a_map.shape[1] // MMA_K)
    return 4 * pieces <= A_STATIONARY_REGISTERS


def b_load_of(step: MmaStep, per_load: int) -> tuple[int, int]:
    """(first n block of the ldmatrix.trans that holds step's b registers, index of the first of them):
    a load of `per_load` blocks gives registers (k lo, k hi) per block."""
    s0 = step.s - step.s % per_load
    return s0, 2 * (step.s - s0)


def _mma(ctx: LoweringContext, kind: str, a: list[ir.Value], b: list[ir.Value], c: list[ir.Value]) -> list[ir.Value]:
    ty = _TYPES[kind]
    text = (f"mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32 "
            "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};")
    constraints = "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3"
    result = ir.LiteralStructType([F32] * 4)
    asm = ir.InlineAsm(ir.FunctionType(result, [I32] * 6 + [F32] * 4), text, constraints)
    out = ctx.builder.call(asm, a + b + c)
    return [ctx.builder.extract_value(out, i) for i in range(4)]


def lower_mma_dot(ctx: LoweringContext, op: Operation) -> ir.Value:
    builder = ctx.builder
    kind = float_kind(op.operands[0].type)
    a_map, b_map, c_map = (ctx.layout_map(v.type) for v in (*op.operands[:2], op.results[0]))
    if kind == "f32":  # tf32 tensor cores
        shared = ctx.__dict__.get("shared_operands", {})
        a_shared, b_shared = shared.pop(op.operands[0], None), shared.pop(op.operands[1], None)
        if isinstance(b_shared, Tf32Operand) and wgmma_dot(op):  # a from its tile or from registers
            return lower_tf32_wgmma_dot(ctx, op, a_shared, b_shared)
        return lower_tf32_mma_dot(ctx, op, a_map, b_map, c_map, a_shared, b_shared)
    a, b, acc = (ctx.get(v) for v in op.operands)
    if not ctx.soft_half(kind):  # native halves: the same bits as i16
        a = builder.bitcast(a, ir.VectorType(I16, a.type.count))
        b = builder.bitcast(b, ir.VectorType(I16, b.type.count))
    shared = ctx.__dict__.get("shared_operands", {})
    a_shared, b_shared = shared.pop(op.operands[0], None), shared.pop(op.operands[1], None)
    if isinstance(b_shared, WgmmaOperand):  # a from its wgmma tile, or from registers
        if isinstance(a_shared, WgmmaOperand):
            return lower_wgmma_dot(ctx, op, a_shared, b_shared)
        pieces = {(t.p, t.q): t for t in mma_steps(a_map, b_map, c_map) if t.s == 0}
        return lower_wgmma_dot(ctx, op, lambda i, q: [_pack(ctx, a, pair) for pair in pieces[(i, q)].a], b_shared)
    col_reps = b_map.slots_per_dim[1]
    per_load = 2 if col_reps >= 2 else 1
    fragments: dict[tuple, list[ir.Value]] = {}  # ldmatrix results still in use

    def a_registers(step: MmaStep) -> list[ir.Value]:
        if a_shared is None:
            return [_pack(ctx, a, pair) for pair in step.a]
        key = ("a", step.p, step.q)
        if key not in fragments:
            fragments[key] = a_shared.a_registers(ctx, step.p, step.q)
        return fragments[key]

    def b_registers(step: MmaStep) -> list[ir.Value]:
        if b_shared is None:
            return [_pack(ctx, b, pair) for pair in step.b]
        s0, first = b_load_of(step, per_load)
        key = ("b", step.q, s0)
        if key not in fragments:  # reloaded for every row pair: registers are scarcer than ldmatrix
            fragments[key] = b_shared.b_registers(ctx, step.q, s0, per_load)
        return fragments[key][first:first + 2]

    stationary = a_shared is not None and b_shared is not None and a_stationary(a_map)
    registers: dict[int, ir.Value] = {}  # accumulator slot -> its current value
    current = None
    for step in mma_steps(a_map, b_map, c_map, stationary):
        # fragments live while their row pair (default order) or their n blocks (a stationary) last
        group = b_load_of(step, per_load)[0] if stationary else step.p
        if group != current:
            for key in [k for k in fragments if k[0] == ("b" if stationary else k[0])]:
                del fragments[key]
            current = group
        c = [registers[slot] if slot in registers else builder.extract_element(acc, ir.Constant(I32, slot))
             for slot in step.c]
        registers.update(zip(step.c, _mma(ctx, kind, a_registers(step), b_registers(step), c)))
    out = acc
    for slot, value in registers.items():
        out = builder.insert_element(out, value, ir.Constant(I32, slot))
    return out
