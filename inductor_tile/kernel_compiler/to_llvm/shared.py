"""Moving a tile between threads through shared memory (GPU targets).

`exchange` (layout conversions, reshapes): every thread stores its slots, a barrier, then every thread
loads the slots its new layout gives it. `shared_plan.py` decides where each element lies and how many
elements each access moves (up to 16 bytes: `st.shared.v4.b32`, on each side independently), with padding
against bank conflicts; a thread holding copies of an element stores and loads it once (threads holding
copies write the same value to the same place, which is harmless). A barrier before the stores lets the
buffer be reused by the next exchange.

`store_slots`/`load_slots` move one element per access at given offsets (the scans' and gathers' scratch
buffers); `store_run`/`load_run` move a thread's whole slot vector to or from consecutive elements in accesses
of up to 16 bytes (the reductions' partial results across warps).
"""

from __future__ import annotations

from llvmlite import ir

from ..ir.dot_layouts import DotOperand
from ..ir.layouts import LayoutMap
from . import context as _context
from .context import I1, I8, I32, LoweringContext, byte_size
from .rules_tensor import index_vectors, thread_offsets
from .shared_plan import SharedPlan, plan_exchange, strides


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


def store_run(ctx: LoweringContext, base: ir.Value, value: ir.Value, start: ir.Value) -> None:
    """Store the elements of `value` at element offsets start, start + 1, ... of `base`, in accesses of up
    to 16 bytes (`start` times the element size must be a multiple of the vector's size up to 16 bytes)."""
    count = value.type.count
    run = _run_length(value.type.element, count)
    if run == 1 or _in_a_loop(ctx, count):
        store_slots(ctx, base, value, ctx.builder.add(ctx.splat(start, count), ir.Constant(ir.VectorType(I32, count),
                                                                           list(range(count)))))
        return
    b = ctx.builder
    size = byte_size(value.type.element)
    first = b.gep(base, [start], source_etype=value.type.element)
    for offset in range(0, count, run):
        pointer = b.gep(first, [ir.Constant(I32, offset)], source_etype=value.type.element) if offset else first
        b.store(_as_words(b, _slots(ctx, value, offset, run)), pointer, align=run * size)


def load_run(ctx: LoweringContext, base: ir.Value, start: ir.Value, element: ir.Type, count: int) -> ir.Value:
    """The `count` elements at element offsets start, start + 1, ... of `base` (see `store_run`)."""
    run = _run_length(element, count)
    b = ctx.builder
    if run == 1 or _in_a_loop(ctx, count):
        offsets = b.add(ctx.splat(start, count), ir.Constant(ir.VectorType(I32, count), list(range(count))))
        return load_slots(ctx, base, offsets, element)
    size = byte_size(element)
    first = b.gep(base, [start], source_etype=element)
    pieces = []
    for offset in range(0, count, run):
        pointer = b.gep(first, [ir.Constant(I32, offset)], source_etype=element) if offset else first
        words = b.load(pointer, typ=_word_type(element, run), align=run * size)
        pieces.append(b.bitcast(words, ir.VectorType(element, run)) if words.type != ir.VectorType(element, run)
                      else words)
    out = pieces[0]
    while len(pieces) > 1:  # concatenate the runs pairwise (shufflevector needs equal lengths)
        pieces = [b.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(I32, 2 * lo.type.count),
                                                      list(range(2 * lo.type.count))))
                  for lo, hi in zip(pieces[0::2], pieces[1::2])]
        out = pieces[0]
    return out


def thread_group(ctx: LoweringContext, lmap: LayoutMap, positions) -> tuple[ir.Value, int]:
    """(this thread's group, the number of groups): threads of one group hold the same elements along the
    dimensions `positions` of `lmap` (each thread's slots in the same order), threads of different groups
    different ones. Along each such dimension a thread's first slot lies at its lane and warp offset, a
    multiple of size_per_thread, wrapped by the dimension's size where that is smaller than the tile."""
    b = ctx.builder
    root = lmap.root
    offsets = thread_offsets(ctx, lmap)
    group, groups = ir.Constant(I32, 0), 1
    for position in positions:
        d, size = lmap.kept[position], lmap.shape[position]
        spt = root.size_per_thread[d]
        tile = spt * root.threads_per_warp[d] * root.warps_per_cta[d]
        along = max(1, min(size, tile) // spt)
        if along == 1:
            continue
        coord = b.udiv(b.urem(offsets[position], ir.Constant(I32, size)), ir.Constant(I32, spt))
        group = b.add(b.mul(group, ir.Constant(I32, along)), coord)
        groups *= along
    return group, groups


def _run_length(element: ir.Type, count: int) -> int:
    """How many elements one access moves: up to 16 bytes, a power of two dividing `count` (1 for i1)."""
    if element == I1:
        return 1
    run = 1
    while run * 2 <= count and count % (run * 2) == 0 and (run * 2) * byte_size(element) <= 16:
        run *= 2
    return run


def exchange(ctx: LoweringContext, value: ir.Value, src: LayoutMap, dst: LayoutMap,
             src_shape: tuple[int, ...], dst_shape: tuple[int, ...]) -> ir.Value:
    """Redistribute a tile from layout `src` to layout `dst`; elements keep their row-major
    linear index (so this also implements reshape). Where they lie in shared memory and how many
    elements each access moves: `shared_plan.plan_exchange`."""
    if ctx.target.name == "hip" and isinstance(dst.layout, DotOperand):
        return _exchange_one_by_one(ctx, value, src, dst, src_shape, dst_shape)
    b = ctx.builder
    element = value.type.element
    memory = I8 if element == I1 else element
    size = byte_size(memory)
    plan = plan_exchange(src.layout, dst.layout, tuple(src_shape), tuple(dst_shape), size, ctx.target.warp_size,
                         ctx.num_warps)
    ctx.shared_bytes = max(ctx.shared_bytes, plan.elements * size)
    base = ctx.target.shared_memory(ctx.module, b, plan.elements * size)
    ctx.target.barrier(b)
    address = _addresses(ctx, base, memory, _places(ctx, src, src_shape, plan.store_order, plan), plan.store_constants)
    for first in plan.store_firsts:
        piece = _slots(ctx, value, first, plan.store_run)
        if element == I1:
            piece = b.zext(piece, _like(piece, I8))
        b.store(_as_words(b, piece), address(first), align=plan.store_run * size)
    ctx.target.barrier(b)
    address = _addresses(ctx, base, memory, _places(ctx, dst, dst_shape, plan.load_order, plan), plan.load_constants)
    run = plan.load_run
    pieces: dict[int, ir.Value] = {}
    for first in sorted(set(plan.load_sources)):
        pointer = address(first)
        words = b.load(pointer, typ=_word_type(memory, run), align=run * size)
        piece = b.bitcast(words, _vector_or_scalar(memory, run)) if words.type != _vector_or_scalar(memory, run) \
            else words
        if element == I1:
            piece = b.icmp_unsigned("!=", piece, ir.Constant(piece.type, None))
        pieces[first] = piece
    out = ir.Constant(ir.VectorType(element, dst.num_slots), None)
    for group, source in enumerate(plan.load_sources):
        for j in range(run):
            item = pieces[source] if run == 1 else b.extract_element(pieces[source], ir.Constant(I32, j))
            out = b.insert_element(out, item, ir.Constant(I32, group * run + j))
    return out


def _exchange_one_by_one(ctx: LoweringContext, value: ir.Value, src: LayoutMap, dst: LayoutMap,
                         src_shape: tuple[int, ...], dst_shape: tuple[int, ...]) -> ir.Value:
    """One element per access, one padding element after every row. Kept for the operands of AMD's FMA
    dots: there, 16-byte loads let the scheduler bring every operand in at once (gfx1100, bf16 64x64x32
    over 4 waves: 884 bytes of scratch, none this way)."""
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
    store_slots(ctx, base, value, _row_padded(ctx, linear_indices(ctx, src, src_shape), row))
    ctx.target.barrier(b)
    return load_slots(ctx, base, _row_padded(ctx, linear_indices(ctx, dst, dst_shape), row), element)


def _row_padded(ctx: LoweringContext, linear: ir.Value, row: int) -> ir.Value:
    """Buffer offsets of row-major linear indices: one padding element after every `row`."""
    if row <= 1:
        return linear
    b = ctx.builder
    if row & (row - 1) == 0:
        rows = b.lshr(linear, _splat(linear, row.bit_length() - 1))
    else:
        rows = b.udiv(linear, _splat(linear, row))
    return b.add(linear, rows)


_padded = _row_padded  # the name dot_mfma_epilogue.py imports (renamed when shared_plan.py came)


def _addresses(ctx: LoweringContext, base: ir.Value, memory: ir.Type, places: ir.Value,
               constants: tuple[int, ...] | None):
    """slot -> the shared-memory pointer of its place: slot 0's pointer plus a constant where the plan has
    constants (ptxas folds them into the instructions), else each slot's own place."""
    b = ctx.builder
    if constants is None:
        return lambda slot: b.gep(base, [b.extract_element(places, ir.Constant(I32, slot))], source_etype=memory)
    start = b.gep(base, [b.extract_element(places, ir.Constant(I32, 0))], source_etype=memory)
    return lambda slot: b.gep(start, [ir.Constant(I32, constants[slot])], source_etype=memory) if constants[slot] \
        else start


def _slots(ctx: LoweringContext, value: ir.Value, first: int, run: int) -> ir.Value:
    """Slots first .. first + run - 1 of `value`: a vector, or a scalar for a run of one."""
    if run == 1:
        return ctx.builder.extract_element(value, ir.Constant(I32, first))
    return ctx.shuffle(value, list(range(first, first + run)))


def _vector_or_scalar(element: ir.Type, count: int) -> ir.Type:
    return element if count == 1 else ir.VectorType(element, count)


def _like(value: ir.Value, element: ir.Type) -> ir.Type:
    return ir.VectorType(element, value.type.count) if isinstance(value.type, ir.VectorType) else element


def _word_type(element: ir.Type, count: int) -> ir.Type:
    """The type one access moves `count` elements as: 32-bit words from 4 bytes on (`st.shared.v4.b32`),
    else one integer, or the element itself."""
    total = count * byte_size(element)
    if count == 1:
        return element
    if total >= 8:
        return ir.VectorType(I32, total // 4)
    return ir.IntType(8 * total)


def _as_words(builder: ir.IRBuilder, piece: ir.Value) -> ir.Value:
    if not isinstance(piece.type, ir.VectorType):
        return piece
    return builder.bitcast(piece, _word_type(piece.type.element, piece.type.count))


def _places(ctx: LoweringContext, lmap: LayoutMap, shape: tuple[int, ...], order: tuple[int, ...],
            plan: SharedPlan) -> ir.Value:
    """i32 vector: the buffer offset (in elements) of each of this thread's slots under `plan`."""
    b = ctx.builder
    place = None
    for index, stride in zip(index_vectors(ctx, lmap), strides(tuple(shape), order)):
        term = index if stride == 1 else b.mul(index, _splat(index, stride))
        place = term if place is None else b.add(place, term)
    if place is None:
        return ir.Constant(ir.VectorType(I32, lmap.num_slots), [0] * lmap.num_slots)
    if plan.pad:
        if plan.interval & (plan.interval - 1) == 0:
            rows = b.lshr(place, _splat(place, plan.interval.bit_length() - 1))
        else:
            rows = b.udiv(place, _splat(place, plan.interval))
        place = b.add(place, b.mul(rows, _splat(place, plan.pad)))
    return place
