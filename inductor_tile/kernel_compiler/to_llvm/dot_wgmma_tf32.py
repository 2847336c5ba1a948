"""fp32 `tt.dot` ("tf32", "tf32x3") on Hopper: `wgmma.mma_async.m64nNk8.f32.tf32.tf32`, b (and a when its
conversion is stored for the dot) in shared memory.

The PTX ISA allows tf32 operands in shared memory in K-major layouts only (no transpose bits), so the
tiles are stored K-major whatever the load's layout: no-swizzle core matrices of 8 rows (mn) x 16 bytes
(4 consecutive k), padded against bank conflicts (`dot_tf32_tiles.py`). One k8 instruction reads two
core matrices along K (LBO apart), the 8-row groups SBO apart. a's rows are permuted as for 16-bit
operands (`dot_wgmma.wgmma_row`), so the accumulator is the mma layout's, as there.

When a is not stored for the dot (its conversion comes before b's and something else lies between:
attention's p, a tile loaded before b), a comes from registers: this warp's m16n8k8 fragments of
`dot_tf32.py`, whose k index t stands for k = 2t and t+4 for 2t+1 within each 8; b's tile then holds
those k in that order (`dot_tf32_tiles.register_a_k`), so the hardware pairs them as the registers do.

The conversions store the tiles (`dot_tf32_store.py`). The dot issues, per k8 step, one instruction per
part product (small * big, big * small, big * big for "tf32x3"), then commits and waits.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from .context import I32, LoweringContext
from .dot_tf32 import products, tf32_parts, tf32_precision
from .dot_tf32_store import Tf32Operand
from .dot_wgmma import (WGMMA_M, Descriptors, _side_effect, accumulator_blocks, left_in_flight, warpgroup_index,
                         warpgroups, wgmma, with_accumulators, zero_accumulator)

TF32_K = 8  # k of one instruction


def _register_a(ctx: LoweringContext, op: Operation):
    """(instruction i, k8 step, part) -> this warp's four a registers (the m16n8k8 fragment)."""
    from .dot_mma import mma_steps
    from .dot_tf32 import k8_a_slots

    a_map, b_map, c_map = (ctx.layout_map(v.type) for v in (*op.operands[:2], op.results[0]))
    parts = tf32_parts(ctx, ctx.get(op.operands[0]), tf32_precision(op))
    pieces = {(t.p, t.q): t for t in mma_steps(a_map, b_map, c_map) if t.s == 0}
    return lambda i, step, part: [parts[part][s] for s in k8_a_slots(pieces[(i, step // 2)], step % 2)]


def lower_tf32_wgmma_dot(ctx: LoweringContext, op: Operation, a: Tf32Operand | None, b: Tf32Operand) -> ir.Value:
    """`a`: its stored tiles, or None: from registers."""
    builder = ctx.builder
    k_size = op.operands[0].type.get_shape()[1]
    n_size = op.operands[1].type.get_shape()[1]
    groups = warpgroups(op)
    blocks, registers = accumulator_blocks(ctx, op)
    a_registers = _register_a(ctx, op) if a is None else None
    b_descriptors = Descriptors(ctx, b.base, b.tile)
    if a is not None:  # this warpgroup's rows of a start at 64 wg
        group_offset = None
        if groups > 1:
            group_offset = builder.mul(warpgroup_index(ctx), ir.Constant(I32, (WGMMA_M // 8) * a.tile.sbo))
        a_descriptors = Descriptors(ctx, a.base, a.tile, group_offset)
    instruction = f"wgmma.mma_async.sync.aligned.m64n{n_size}k8.f32.tf32.tf32"
    zero = zero_accumulator(op)
    _side_effect(ctx, "wgmma.fence.sync.aligned;")
    for q in range(k_size // TF32_K):
        for step, (a_part, b_part) in enumerate(products(tf32_precision(op))):
            accumulate = not (zero and q == 0 and step == 0)
            b_desc = b_descriptors.at(b.parts[b_part] + (TF32_K * q // 4) * b.tile.lbo)
            for i in range(len(blocks)):
                if a is None:
                    registers[i] = wgmma(ctx, instruction, a_registers(i, q, a_part), b_desc, "1, 1", registers[i],
                                         accumulate)
                    continue
                k_offset = (TF32_K * q // 4) * a.tile.lbo
                a_desc = a_descriptors.at(a.parts[a_part] + (WGMMA_M * groups * i // 8) * a.tile.sbo + k_offset)
                registers[i] = wgmma(ctx, instruction, a_desc, b_desc, "1, 1", registers[i], accumulate)
    _side_effect(ctx, "wgmma.commit_group.sync.aligned;")
    return with_accumulators(ctx, ctx.get(op.operands[2]), blocks, registers, wait=not left_in_flight(op))
