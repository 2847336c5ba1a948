"""Moving a tile between threads through shared memory (GPU targets).

Every thread writes its slots at their element's linear index, a barrier, then every
thread reads the slots its new layout gives it. Threads holding copies of an element
write the same value to the same place, which is harmless. A barrier before the writes
lets the buffer be reused by the next exchange.

The buffer has one padding element after every row (the last dimension of the result's
shape): in a transpose, the lanes of a warp that write one column would otherwise all hit
the same shared-memory bank.
"""

from __future__ import annotations

from llvmlite import ir

from ..ir.layouts import LayoutMap
from . import context as _context
from .context import I1, I8, I32, LoweringContext, byte_size
from .rules_tensor import index_vectors


def linear_indices(ctx: LoweringContext, lmap: LayoutMap, shape: tuple[int, ...]) -> ir.Value:
    """i32 vector: the row-major linear index (over `shape`) of each of this thread's slots."""
    per_dim = index_vectors(ctx, lmap)
    b = ctx.builder
    linear = None
    for index, size in zip(per_dim, shape):
        linear = index if linear is None else b.add(b.mul(linear, _splat(index, size)), index)
    return linear


def _in_a_loop(ctx: LoweringContext, count: int) -> bool:
    """Long slot vectors of the CPU move element by element in a loop: one extract/insert per element
    made LLVM's code generation slow (Triton's test_gather: a 16384-element gather timed out)."""
    return ctx.single_thread and count > _context.MAX_REGISTER_SHUFFLE


def _splat(like: ir.Value, value: int) -> ir.Constant:
    return ir.Constant(like.type, [value] * like.type.count)


def store_slots(ctx: LoweringContext, base: ir.Value, value: ir.Value, offsets: ir.Value) -> None:
    """Store every element of `value` at element offset `offsets[i]` of the shared buffer `base`."""
    b = ctx.builder
    element = value.type.element
    memory = I8 if element == I1 else element
    if _in_a_loop(ctx, value.type.count):
        values, places, zero = ctx.vector_to_stack(value, 4), ctx.vector_to_stack(offsets, 5), ir.Constant(I32, 0)

        def store(i: ir.Value) -> None:
            pointer = b.gep(base, [b.load(b.gep(places, [zero, i], inbounds=True))], source_etype=memory)
            b.store(b.load(b.gep(values, [zero, i], inbounds=True)), pointer)

        ctx.counted_loop(value.type.count, store)
        return
    for i in range(value.type.count):
        index = ir.Constant(I32, i)
        item = b.extract_element(value, index)
        if element == I1:
            item = b.zext(item, I8)
        pointer = b.gep(base, [b.extract_element(offsets, index)], source_etype=memory)
        b.store(item, pointer)


def load_slots(ctx: LoweringContext, base: ir.Value, offsets: ir.Value, element: ir.Type) -> ir.Value:
    b = ctx.builder
    memory = I8 if element == I1 else element
    if _in_a_loop(ctx, offsets.type.count):
        places, zero = ctx.vector_to_stack(offsets, 2), ir.Constant(I32, 0)
        loaded = ctx.stack_array(memory, offsets.type.count, 3)

        def load(i: ir.Value) -> None:
            pointer = b.gep(base, [b.load(b.gep(places, [zero, i], inbounds=True))], source_etype=memory)
            b.store(b.load(pointer, typ=memory), b.gep(loaded, [zero, i], inbounds=True))

        ctx.counted_loop(offsets.type.count, load)
        return ctx.vector_from_stack(loaded, element)
    out = ir.Constant(ir.VectorType(element, offsets.type.count), None)
    for i in range(offsets.type.count):
        index = ir.Constant(I32, i)
        pointer = b.gep(base, [b.extract_element(offsets, index)], source_etype=memory)
        item = b.load(pointer, typ=memory)
        if element == I1:
            item = b.icmp_unsigned("!=", item, ir.Constant(I8, 0))
        out = b.insert_element(out, item, index)
    return out


def exchange(ctx: LoweringContext, value: ir.Value, src: LayoutMap, dst: LayoutMap,
             src_shape: tuple[int, ...], dst_shape: tuple[int, ...]) -> ir.Value:
    """Redistribute a tile from layout `src` to layout `dst`; elements keep their row-major
    linear index (so this also implements reshape)."""
    b = ctx.builder
    element = value.type.element
    numel = 1
    for d in dst_shape:
        numel *= d
    row = dst_shape[-1] if dst_shape else 1
    padded = numel + numel // row
    ctx.shared_bytes = max(ctx.shared_bytes, padded * byte_size(I8 if element == I1 else element))
    base = ctx.target.shared_memory(ctx.module, b, padded)
    ctx.target.barrier(b)
    store_slots(ctx, base, value, _padded(ctx, linear_indices(ctx, src, src_shape), row))
    ctx.target.barrier(b)
    return load_slots(ctx, base, _padded(ctx, linear_indices(ctx, dst, dst_shape), row), element)


def _padded(ctx: LoweringContext, linear: ir.Value, row: int) -> ir.Value:
    """Buffer offsets of row-major linear indices: one padding element after every `row`."""
    if row <= 1:
        return linear
    b = ctx.builder
    if row & (row - 1) == 0:
        rows = b.lshr(linear, _splat(linear, row.bit_length() - 1))
    else:
        rows = b.udiv(linear, _splat(linear, row))
    return b.add(linear, rows)
