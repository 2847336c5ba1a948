"""fp32 operands of tf32 tensor-core dots stored in shared memory by their conversions.

A conversion into a tf32 dot's operand layout that only the dot reads (`dot_operands.deferred_dot`) rounds
its operand with `cvt.rna.tf32.f32` ("tf32x3": also the tf32 rounding of what is left, in a second tile)
and stores it K-major (`dot_tf32_tiles.py`) between two barriers (wgmma: the second after a proxy fence);
a thread's run of four k starting at a multiple of 4 is one 16-byte store. It leaves a `Tf32Operand`:
wgmma reads the tiles through descriptors (`dot_wgmma_tf32.py`), mma.sync with ldmatrix (`dot_tf32.py`).
Tiles of one dot: a's parts, then b's, each 128-byte aligned (`tf32_regions`). For wgmma a's rows are
in wgmma's order (`dot_wgmma.wgmma_row`). When only one operand is stored, the other comes from
registers in the mma operand layout, whose k pairs (2t, 2t+1) the k8 instructions read as (t, t+4): the
stored tile then holds its k in that order (`dot_tf32_tiles.register_a_k`).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.ir import Operation

from .context import F32, I16, I32, LoweringContext
from .dot_tf32 import tf32_parts, tf32_precision
from .dot_tf32_tiles import CORE_UNITS, choose_tile, k_run, store_place
from .dot_wgmma import SlotAddress, WgmmaTile, _stored_for, fence_async_shared, warpgroups, wgmma_dot


@dataclass
class Tf32Operand:
    """An fp32 operand stored as tf32 tiles for a dot."""

    base: ir.Value | SlotAddress  # a pointer, or a ring's slot read by wgmma (dot_async.py)
    tile: WgmmaTile
    parts: list[int]  # offsets of the big (and small) tiles, 16-bit units
    permuted: bool  # k relabelled for an operand in registers
    rounded: bool = True  # already tf32 (a conversion's store); False: raw fp32 (a cp.async ring's slot)


@dataclass(frozen=True)
class Tf32Regions:
    tiles: tuple[WgmmaTile | None, WgmmaTile | None]  # a's and b's (None: in registers)
    parts: tuple[list[int], list[int]]
    permuted: bool
    groups: int  # warpgroups of a wgmma dot, 0 for mma.sync
    bytes: int


def tf32_regions(ctx: LoweringContext, dot: Operation) -> Tf32Regions:
    """Where the stored operands of `dot` go. Each tile's padding follows the layout its conversion stores
    from (`dot_tf32_tiles.choose_tile`)."""
    groups = warpgroups(dot) if wgmma_dot(dot) else 0
    stored = [_stored_for(dot, i) for i in (0, 1)]
    permuted = not all(stored)
    tiles = tuple(choose_tile(ctx.layout_map(dot.operands[i].owner.operands[0].type), i, groups, permuted)
                  if stored[i] else None for i in (0, 1))
    count = 2 if tf32_precision(dot) == "tf32x3" else 1
    parts, end = [], 0
    for tile in tiles:
        parts.append([end + part * tile.elements for part in range(count)] if tile is not None else [])
        if tile is not None:
            end += -(-count * tile.elements // CORE_UNITS) * CORE_UNITS  # 128-byte aligned
    return Tf32Regions(tiles, (parts[0], parts[1]), permuted, groups, 2 * end)  # type: ignore[arg-type]


def tf32_conversion(ctx: LoweringContext, op: Operation) -> ir.Value | None:
    """The conversion of an fp32 operand that only its tf32 dot reads, lowered to its stores; None for others."""
    from .dot_operands import deferred_dot, mma_operand

    layout, dot = mma_operand(op), deferred_dot(op)
    if layout is None or dot is None or tf32_precision(dot) is None:
        return None
    return _store(ctx, op, dot, layout.op_idx)


def _store(ctx: LoweringContext, op: Operation, dot: Operation, op_idx: int) -> ir.Value:
    from .dot_operands import IROps
    from .rules_tensor import index_vectors

    b, o = ctx.builder, IROps(ctx.builder)
    src_map, dst_map = ctx.layout_map(op.operands[0].type), ctx.layout_map(op.results[0].type)
    regions = tf32_regions(ctx, dot)
    tile, offsets = regions.tiles[op_idx], regions.parts[op_idx]
    assert tile is not None
    ctx.shared_bytes = max(ctx.shared_bytes, regions.bytes)
    base = ctx.target.shared_memory(ctx.module, b, regions.bytes)
    parts = tf32_parts(ctx, ctx.get(op.operands[0]), tf32_precision(dot))
    rows, cols = index_vectors(ctx, src_map)
    run = 1 if regions.permuted else k_run(src_map, op_idx)
    ctx.target.barrier(b)
    for first in range(0, src_map.num_slots, run):
        slot = ir.Constant(I32, first)
        row, col = b.extract_element(rows, slot), b.extract_element(cols, slot)
        where = store_place(o, tile, op_idx, row, col, regions.groups, regions.permuted)
        for part, offset in zip(parts, offsets):
            pointer = b.gep(base, [b.add(where, ir.Constant(I32, offset))], source_etype=I16)
            if run == 1:
                b.store(part[first], pointer, align=4)
                continue
            vector = ir.Constant(ir.VectorType(I32, run), None)
            for j in range(run):
                vector = b.insert_element(vector, part[first + j], ir.Constant(I32, j))
            b.store(vector, pointer, align=16)
    if regions.groups:
        fence_async_shared(ctx)
    ctx.target.barrier(b)
    stored = Tf32Operand(base, tile, offsets, regions.permuted)
    ctx.__dict__.setdefault("shared_operands", {})[op.results[0]] = stored
    return ir.Constant(ir.VectorType(F32, dst_map.num_slots), None)  # read by the dot only
