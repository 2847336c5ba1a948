"""A dot's accumulator leaving the mma layout (NVIDIA): `ttg.convert_layout` from `#ttg.nvidia_mma` to a
blocked layout (the epilogue's stores, attention's softmax rows) through shared memory with vector
accesses.

The generic exchange (`shared.py`) moves one element per instruction through rows padded by one
element. Here each thread stores its runs of consecutive columns as one vector (the mma layout holds
column pairs: `st.shared.v2` for fp32, one 32-bit store per fp16 pair) and loads its runs of the new
layout likewise (up to 16 bytes: `ld.shared.v4`). Element (r, c) lies at r * (columns + padding) + c;
the padding (a multiple of both runs, so that every vector stays aligned) is the one with the fewest bank
conflicts for warp 0's first store and first load (`choose_padding`; the accesses of a phase, 128 bytes of
them, should touch each bank once): for fp32 from the mma layout, rows 8 floats apart in the banks, so
that the four rows of a half-warp's 8-byte stores meet in none.
"""

from __future__ import annotations

from llvmlite import ir

from ..ir.dot_layouts import NvidiaMma
from ..ir.layouts import Blocked, LayoutMap
from .context import I32, LoweringContext, byte_size
from .rules_tensor import index_vectors

MAX_VECTOR_BYTES = 16


def run_of(lmap: LayoutMap, element_bytes: int) -> int:
    """Consecutive slots of a thread along the last dimension accessed as one vector."""
    root = lmap.root
    if len(lmap.shape) != root.rank or root.order[0] != root.rank - 1:
        return 1
    run = min(root.size_per_thread[-1], MAX_VECTOR_BYTES // element_bytes, lmap.shape[-1])
    return run if run & (run - 1) == 0 else 1


def applies(src: LayoutMap, dst: LayoutMap, element_bytes: int) -> bool:
    """Whether this lowering takes a conversion: a 2-D mma accumulator of 2- or 4-byte elements to a
    blocked layout of the same shape, whose columns the runs divide."""
    if not (isinstance(src.layout, NvidiaMma) and isinstance(dst.layout, Blocked) and len(src.shape) == 2
            and src.shape == dst.shape and element_bytes in (2, 4)):
        return False
    step = max(run_of(src, element_bytes), run_of(dst, element_bytes))
    return src.shape[-1] % step == 0


def _phase_cost(addresses: list[int], width: int) -> int:
    """Shared-memory wavefronts of one warp's accesses of `width` bytes at these byte addresses: per phase
    (128 bytes of accesses), the most distinct 4-byte words any bank serves."""
    per_phase = 128 // width
    cost = 0
    for start in range(0, len(addresses), per_phase):
        banks: dict[int, set[int]] = {}
        for address in addresses[start:start + per_phase]:
            for word in range(address // 4, (address + width) // 4):
                banks.setdefault(word % 32, set()).add(word)
        cost += max(len(words) for words in banks.values())
    return cost


def access_cost(lmap: LayoutMap, stride: int, element_bytes: int) -> int:
    """Wavefronts of warp 0's first vector access (store or load) of `lmap` with rows `stride` elements apart."""
    width = run_of(lmap, element_bytes) * element_bytes
    addresses = []
    for lane in range(32):
        row, col = lmap.index(0, lane, 0)
        addresses.append((row * stride + col) * element_bytes)
    return _phase_cost(addresses, max(width, 4))


def choose_padding(src: LayoutMap, dst: LayoutMap, element_bytes: int) -> int:
    """The padding (elements after each row, up to 128 bytes) with the fewest conflicts; the smallest among equals."""
    step = max(run_of(src, element_bytes), run_of(dst, element_bytes), 16 // element_bytes)
    best, best_cost = 0, None
    for padding in range(0, 128 // element_bytes + 1, step):
        stride = src.shape[-1] + padding
        cost = access_cost(src, stride, element_bytes) + access_cost(dst, stride, element_bytes)
        if best_cost is None or cost < best_cost:
            best, best_cost = padding, cost
    return best


def constant_deltas(lmap: LayoutMap, stride: int, run: int, num_warps: int) -> dict[int, int | None]:
    """Per run (by its first slot), its element offset (row * stride + column) less the first run's when that
    is the same in every thread, else None (an index that wraps around a small dimension)."""
    def offset(slot: int, lane: int, warp: int) -> int:
        row, col = lmap.index(slot, lane, warp)
        return row * stride + col

    threads = [(lane, warp) for lane in range(32) for warp in range(num_warps)]
    deltas: dict[int, int | None] = {}
    for first in range(0, lmap.num_slots, run):
        seen = {offset(first, *t) - offset(0, *t) for t in threads}
        deltas[first] = seen.pop() if len(seen) == 1 else None
    return deltas


def _move(ctx: LoweringContext, base: ir.Value, value: ir.Value | None, lmap: LayoutMap, stride: int,
          element: ir.Type) -> ir.Value | None:
    """Store `value` (or load, when None) by runs of `lmap` at row * stride + column: runs a constant distance
    from the thread's first one address it plus that constant (one address register and immediate offsets,
    instead of an address per run next to the accumulators)."""
    b = ctx.builder
    rows, cols = index_vectors(ctx, lmap)
    run = run_of(lmap, byte_size(element))
    deltas = constant_deltas(lmap, stride, run, ctx.num_warps)
    out = ir.Constant(ir.VectorType(element, lmap.num_slots), None) if value is None else None
    first_pointer = None
    for first in range(0, lmap.num_slots, run):
        slot = ir.Constant(I32, first)
        if deltas[first] is not None and first_pointer is not None:
            pointer = b.gep(first_pointer, [ir.Constant(I32, deltas[first])], source_etype=element)
        else:
            offset = b.add(b.mul(b.extract_element(rows, slot), ir.Constant(I32, stride)),
                           b.extract_element(cols, slot))
            pointer = b.gep(base, [offset], source_etype=element)
            first_pointer = pointer if first == 0 else first_pointer
        slots = list(range(first, first + run))
        align = run * byte_size(element)
        if value is not None:
            b.store(ctx.shuffle(value, slots) if run > 1 else b.extract_element(value, slot), pointer, align=align)
            continue
        if run == 1:
            out = b.insert_element(out, b.load(pointer, typ=element, align=align), slot)
            continue
        loaded = b.load(pointer, typ=ir.VectorType(element, run), align=align)
        for j, s in enumerate(slots):
            out = b.insert_element(out, b.extract_element(loaded, ir.Constant(I32, j)), ir.Constant(I32, s))
    return out


def mma_exchange(ctx: LoweringContext, value: ir.Value, src: LayoutMap, dst: LayoutMap) -> ir.Value:
    """`value` (layout `src`, an mma accumulator) in layout `dst`, through padded rows of shared memory."""
    b = ctx.builder
    element = value.type.element
    size = byte_size(element)
    rows, cols = src.shape
    stride = cols + choose_padding(src, dst, size)
    ctx.shared_bytes = max(ctx.shared_bytes, rows * stride * size)
    base = ctx.target.shared_memory(ctx.module, b, rows * stride * size)
    ctx.target.barrier(b)
    _move(ctx, base, value, src, stride, element)
    ctx.target.barrier(b)
    out = _move(ctx, base, None, dst, stride, element)
    assert out is not None
    return out
