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

An operand whose conversion stored it in shared memory (`dot_tf32_store.py`: K-major tf32 tiles) is read
with `ldmatrix.x4` (b16): on 16-byte rows of 4 fp32, lane 4g + t gets the fp32 at (row g, column t) of
each 8 x 4 matrix, which is a k8 fragment register; a's four per (row pair, k8 half), kept for the row
pair, b's four per (n block, k step of 16) just before the two instructions that use them. When only
one operand is stored, its tile holds the k in the registers' (t, t + 4) order. Tiles that cp.async copied
(`dot_async.py`: raw fp32) are rounded per fragment register after ldmatrix.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from ..ir.layouts import LayoutMap
from .context import F32, I16, I32, I64, LoweringContext, float_kind

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


def a_fragment_row(o, lane, warp, p: int, q: int, h: int, warps_m: int):
    """(mn, k) of the tile row this lane points ldmatrix.x4 at for a0..a3 of the k8 instruction of half h of
    row pair p, k step q: matrices {rows g, k lo 4}, {g + 8, lo}, {g, hi 4}, {g + 8, hi} (the piece's rows
    g and g + 8 are tensor rows 8 warps_m apart)."""
    matrix = o.shr(lane, 3)
    first = o.add(o.mul(o.rem(warp, warps_m), 8), o.mul(o.add(o.and_(matrix, 1), 2 * p), 8 * warps_m))
    return o.add(first, o.and_(lane, 7)), o.add(o.mul(o.shr(matrix, 1), 4), 16 * q + 8 * h)


def b_fragment_row(o, lane, warp, s: int, q: int, warps_n: int):
    """(mn, k) of the row for b0, b1 of both k8 halves of n block s, k step q: matrices at k 16q + 0, 4, 8, 12."""
    first = o.add(o.mul(o.rem(warp, warps_n), 8), s * 8 * warps_n)
    return o.add(first, o.and_(lane, 7)), o.add(o.mul(o.shr(lane, 3), 4), 16 * q)


def _fragment(ctx: LoweringContext, stored, part: int, row) -> list[ir.Value]:
    """ldmatrix.x4 (b16) from a stored tf32 tile, this lane pointing at tile row `row` (mn, k): each lane
    gets, per matrix, the fp32 at (row lane / 4, k + lane % 4) of the matrix."""
    from .dot_operands import IROps, _ldmatrix
    from .dot_tf32_tiles import tf32_offset

    b, o = ctx.builder, IROps(ctx.builder)
    offset = o.add(tf32_offset(o, stored.tile, *row), stored.parts[part])
    address = b.ptrtoint(b.gep(stored.base, [offset], source_etype=I16), I64)
    registers = _ldmatrix(ctx, address, 4, transposed=False)
    if stored.rounded:
        return registers
    return [_cvt_rna(ctx, b.bitcast(r, F32)) for r in registers]


def _lane_warp(ctx: LoweringContext):
    from .dot_operands import IROps

    return IROps(ctx.builder), ctx.target.lane_id(ctx.builder), ctx.target.warp_id(ctx.builder)


def tf32_a_stationary(a_map: LayoutMap, precision: str) -> bool:
    """Whether a warp's a fragments (8 tf32 registers per 16 x 16 piece, twice for "tf32x3") fit
    `dot_mma.A_STATIONARY_REGISTERS`: then the steps go n block by n block (`mma_steps`' a_stationary order)
    and each of b's fragments is read once per dot instead of once per row pair."""
    from .dot_mma import A_STATIONARY_REGISTERS, MMA_K

    pieces = (a_map.slots_per_dim[0] // 2) * (a_map.shape[1] // MMA_K)
    return 8 * len({i for i, _ in products(precision)}) * pieces <= A_STATIONARY_REGISTERS


def lower_tf32_mma_dot(ctx: LoweringContext, op: Operation, a_map: LayoutMap, b_map: LayoutMap, c_map: LayoutMap,
                       a_stored=None, b_stored=None) -> ir.Value:
    """The dot with mma.sync m16n8k8 tf32 instructions (one per k8 half of each m16n8k16 step, three for
    "tf32x3"); each operand from registers, or from its stored tile (`dot_tf32_store.Tf32Operand`) by
    ldmatrix: a's fragments once per row pair, b's for each instruction pair that uses them, or, both stored
    and a small enough (`tf32_a_stationary`), a's once per dot and b's once per k step of an n block."""
    from ..ir.ttg import layout_of
    from .dot_mma import mma_steps

    builder = ctx.builder
    precision = tf32_precision(op)
    assert precision is not None
    warps_m, warps_n = layout_of(op.results[0].type).warps_per_cta
    a, b, acc = (ctx.get(v) for v in op.operands)
    a_parts = tf32_parts(ctx, a, precision) if a_stored is None else None
    b_parts = tf32_parts(ctx, b, precision) if b_stored is None else None
    a_fragments: dict[tuple[int, int, int, int], list[ir.Value]] = {}

    def a_registers(step, h: int, part: int) -> list[ir.Value]:
        if a_parts is not None:
            return [a_parts[part][slot] for slot in k8_a_slots(step, h)]
        key = (step.p, step.q, h, part)
        if key not in a_fragments:
            a_fragments[key] = _fragment(ctx, a_stored, part,
                                         a_fragment_row(*_lane_warp(ctx), step.p, step.q, h, warps_m))
        return a_fragments[key]

    stationary = a_stored is not None and b_stored is not None and tf32_a_stationary(a_map, precision)
    b_loaded: dict[tuple[int, int], dict[int, list[ir.Value]]] = {}
    registers: dict[int, ir.Value] = {}
    current = None
    for step in mma_steps(a_map, b_map, c_map, a_stationary=stationary):
        if step.p != current and not stationary:  # a's fragments live for one row pair
            a_fragments.clear()
            current = step.p
        c = [registers[slot] if slot in registers else builder.extract_element(acc, ir.Constant(I32, slot))
             for slot in step.c]
        if b_parts is None and (step.s, step.q) not in b_loaded:
            for key in [key for key in b_loaded if key[1] != step.q]:  # used by every row pair of this k step
                del b_loaded[key]
            b_loaded[(step.s, step.q)] = {
                part: _fragment(ctx, b_stored, part, b_fragment_row(*_lane_warp(ctx), step.s, step.q, warps_n))
                for part in {j for _, j in products(precision)}}
        b_fragments = b_loaded.get((step.s, step.q), {})
        for h in (0, 1):
            for i, j in products(precision):
                b_registers = ([b_parts[j][slot] for slot in k8_b_slots(step, h)] if b_parts is not None
                               else b_fragments[j][2 * h:2 * h + 2])
                c = _mma_k8(ctx, a_registers(step, h, i), b_registers, c)
        registers.update(zip(step.c, c))
    out = acc
    for slot, value in registers.items():
        out = builder.insert_element(out, value, ir.Constant(I32, slot))
    return out
