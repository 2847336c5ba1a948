"""A dot's accumulator leaving the AMD matrix-core layouts: `ttg.convert_layout` from `#ttg.amd_mfma` or
`#ttg.amd_wmma` to a blocked layout through LDS, one chunk of rows (or of columns) at a time.

The generic exchange (`shared.py`) puts the whole tile in LDS at once: a 128 x 128 fp32 accumulator
with its row padding takes 66 KB, more than the 64 KiB of a gfx942 workgroup. Here the tile goes
through in chunks of at most `CHUNK_BYTES` (rows padded by one element as there, a barrier between
chunks so the buffer is reused). A chunk is a whole number of both layouts' tiles along the chunked
dimension (sizePerThread * threadsPerWarp * warpsPerCTA), so the slots of each chunk are known at
compile time: a slot's index there is its repetition's first index plus a thread part smaller than
the tile. Rows are chunked when both layouts allow it, else columns (16x16x16 with 8 waves along M
has one row tile of 128).
"""

from __future__ import annotations

import math

from llvmlite import ir

from ..ir.layouts import AmdMatrixCoreLayout, Blocked, LayoutMap
from .context import I32, LoweringContext, byte_size
from .rules_tensor import index_vectors
from .shared import _padded, load_slots, store_slots

#: the most LDS one chunk of an accumulator takes (half of gfx942's 64 KiB: the operands' exchanges
#: and a second workgroup per CU keep room)
CHUNK_BYTES = 32 * 1024


def _chunk_bytes(shape: tuple[int, int], dim: int, size: int, element_bytes: int) -> int:
    rows, cols = (size, shape[1]) if dim == 0 else (shape[0], size)
    return rows * (cols + 1) * element_bytes


def chunking(src: LayoutMap, dst: LayoutMap, element_bytes: int) -> tuple[int, int] | None:
    """(dimension, elements along it per chunk): rows if chunks of rows fit `CHUNK_BYTES`, else the
    dimension with the smaller chunks; None where the whole tile fits `CHUNK_BYTES` or neither
    dimension splits into whole tiles of both layouts."""
    shape = src.shape
    if _chunk_bytes(shape, 0, shape[0], element_bytes) <= CHUNK_BYTES:
        return None
    best = None
    for dim in (0, 1):
        tile = math.lcm(src.root.cta_tile(dim), dst.root.cta_tile(dim))
        size = shape[dim]
        if size % tile:
            continue
        while _chunk_bytes(shape, dim, size, element_bytes) > CHUNK_BYTES and size % 2 == 0 and (size // 2) % tile == 0:
            size //= 2
        if size == shape[dim]:
            continue
        if _chunk_bytes(shape, dim, size, element_bytes) <= CHUNK_BYTES:
            return dim, size
        if best is None or _chunk_bytes(shape, dim, size, element_bytes) < _chunk_bytes(shape, *best, element_bytes):
            best = (dim, size)
    return best


def applies(src: LayoutMap, dst: LayoutMap, element_bytes: int) -> bool:
    """Whether this lowering takes a conversion: a 2-D MFMA/WMMA accumulator too large for one exchange."""
    return (isinstance(src.layout, AmdMatrixCoreLayout) and isinstance(dst.layout, Blocked) and len(src.shape) == 2
            and src.shape == dst.shape and chunking(src, dst, element_bytes) is not None)


def _chunk_slots(lmap: LayoutMap, dim: int, size: int, chunk: int) -> list[int]:
    return [slot for slot in range(lmap.num_slots) if lmap.slot_offset(slot)[dim] // size == chunk]


def _offsets(ctx: LoweringContext, lmap: LayoutMap, slots: list[int], dim: int, first: int, width: int) -> ir.Value:
    """LDS element offsets of `slots` in a chunk starting at `first` along `dim`, rows of `width` (padded)."""
    b = ctx.builder
    rows, cols = (ctx.shuffle(v, slots) for v in index_vectors(ctx, lmap))
    like = ir.VectorType(I32, len(slots))
    if dim == 0:
        rows = b.sub(rows, ir.Constant(like, [first] * len(slots)))
    else:
        cols = b.sub(cols, ir.Constant(like, [first] * len(slots)))
    return _padded(ctx, b.add(b.mul(rows, ir.Constant(like, [width] * len(slots))), cols), width)


def chunked_exchange(ctx: LoweringContext, value: ir.Value, src: LayoutMap, dst: LayoutMap) -> ir.Value:
    b = ctx.builder
    element = value.type.element
    plan = chunking(src, dst, byte_size(element))
    assert plan is not None
    dim, size = plan
    width = src.shape[1] if dim == 0 else size
    ctx.shared_bytes = max(ctx.shared_bytes, _chunk_bytes(src.shape, dim, size, byte_size(element)))
    base = ctx.target.shared_memory(ctx.module, b, _chunk_bytes(src.shape, dim, size, 1))
    out = ir.Constant(ir.VectorType(element, dst.num_slots), None)
    for chunk in range(src.shape[dim] // size):
        stored, loaded = _chunk_slots(src, dim, size, chunk), _chunk_slots(dst, dim, size, chunk)
        ctx.target.barrier(b)
        store_slots(ctx, base, ctx.shuffle(value, stored), _offsets(ctx, src, stored, dim, chunk * size, width))
        ctx.target.barrier(b)
        items = load_slots(ctx, base, _offsets(ctx, dst, loaded, dim, chunk * size, width), element)
        for i, slot in enumerate(loaded):
            out = b.insert_element(out, b.extract_element(items, ir.Constant(I32, i)), ir.Constant(I32, slot))
    return out
