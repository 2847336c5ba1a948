"""Dot operands into the AMD matrix-core layouts (MFMA, WMMA): `ttg.convert_layout` to the dot-operand layout
of `#ttg.amd_mfma` / `#ttg.amd_wmma` through LDS with vector accesses.

The generic exchange (`shared.py`) moves one element per LDS instruction. An MFMA (WMMA) operand lane holds 4
(8) consecutive k of one row of a or column of b, the first a multiple of 4 (8) (`operand_runs`), so here the
tile is stored k-major: a as its rows, b as its columns (transposed), each `K + pad` elements long with `pad`
keeping every run aligned, and each run is read back as one vector (ds_read_b64 / ds_load_b128). A source
layout with runs along k (a row-major tile loaded 16 bytes at a time) is stored by runs too; otherwise one
element per store, as before.
"""

from __future__ import annotations

import itertools

from llvmlite import ir

from ..ir.dot_layouts import DotOperand
from ..ir.layouts import AmdMatrixCoreLayout, Blocked, LayoutMap
from .context import I32, LoweringContext, byte_size
from .rules_tensor import index_vectors
from .shared import store_slots

MAX_VECTOR_BYTES = 16


def applies(src: LayoutMap, dst: LayoutMap) -> bool:
    layout = dst.layout
    return (isinstance(layout, DotOperand) and isinstance(layout.parent, AmdMatrixCoreLayout)
            and isinstance(src.layout, Blocked) and len(dst.shape) == 2 and src.shape == dst.shape)


def _k_dim(lmap: LayoutMap) -> int:
    return 1 if lmap.layout.op_idx == 0 else 0


def operand_runs(lmap: LayoutMap) -> list[list[int]]:
    """Groups of slots of a dot-operand layout holding consecutive k of one row (a) or column (b), in every thread."""
    k_dim = _k_dim(lmap)
    run = lmap.root.size_per_thread[k_dim]
    groups = []
    for coords in itertools.product(*(range(n) for n in lmap.slots_per_dim)):
        if coords[k_dim] % run == 0:
            groups.append([lmap.slot_of_coords(tuple(c if d != k_dim else c + j for d, c in enumerate(coords)))
                           for j in range(run)])
    return groups


def store_run(src: LayoutMap, k_dim: int, element_bytes: int) -> int:
    """Consecutive slots of the source holding consecutive k (1 when its fastest dimension is not k)."""
    root = src.root
    if root.order[0] != k_dim:
        return 1
    run = min(root.size_per_thread[k_dim], MAX_VECTOR_BYTES // element_bytes, src.shape[k_dim])
    while run > 1 and (root.size_per_thread[k_dim] % run or src.shape[k_dim] % run):
        run //= 2
    return run


def _offsets(ctx: LoweringContext, lmap: LayoutMap, k_dim: int, stride: int) -> ir.Value:
    """LDS element offsets of every slot: (row of a / column of b) * stride + k."""
    b = ctx.builder
    indices = index_vectors(ctx, lmap)
    outer, k = indices[1 - k_dim], indices[k_dim]
    return b.add(b.mul(outer, ir.Constant(outer.type, [stride] * lmap.num_slots)), k)


def operand_exchange(ctx: LoweringContext, value: ir.Value, src: LayoutMap, dst: LayoutMap) -> ir.Value:
    b = ctx.builder
    element = value.type.element
    size = byte_size(element)
    k_dim = _k_dim(dst)
    load_run = dst.root.size_per_thread[k_dim]
    run = store_run(src, k_dim, size)
    pad = max(load_run, run)
    stride = dst.shape[k_dim] + pad
    ctx.shared_bytes = max(ctx.shared_bytes, dst.shape[1 - k_dim] * stride * size)
    base = ctx.target.shared_memory(ctx.module, b, dst.shape[1 - k_dim] * stride * size)
    ctx.target.barrier(b)
    offsets = _offsets(ctx, src, k_dim, stride)
    if run == 1:
        store_slots(ctx, base, value, offsets)
    else:
        for first in range(0, src.num_slots, run):
            pointer = b.gep(base, [b.extract_element(offsets, ir.Constant(I32, first))], source_etype=element)
            b.store(ctx.shuffle(value, list(range(first, first + run))), pointer, align=run * size)
    ctx.target.barrier(b)
    offsets = _offsets(ctx, dst, k_dim, stride)
    out = ir.Constant(ir.VectorType(element, dst.num_slots), None)
    for group in operand_runs(dst):
        pointer = b.gep(base, [b.extract_element(offsets, ir.Constant(I32, group[0]))], source_etype=element)
        loaded = b.load(pointer, typ=ir.VectorType(element, len(group)), align=len(group) * size)
        for j, slot in enumerate(group):
            out = b.insert_element(out, b.extract_element(loaded, ir.Constant(I32, j)), ir.Constant(I32, slot))
    return out
