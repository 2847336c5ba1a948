"""Lowering of the element-moving ops: tt.trans, tt.flip, tt.join, tt.split, tt.gather, tt.sort.

Each op says, for a result element at coordinates `c`, where its value lives in a buffer
that holds the operands one after the other, row-major (`source_of(c)`). The same
function serves both ways of moving data:
- one thread holds the whole tile (the CPU): evaluated on Python ints per result slot, it
  gives one static `shufflevector`;
- GPU targets: evaluated on i32 vectors (this thread's result coordinates, `Lanes`), it
  gives the shared-memory offsets each thread reads after every thread has stored its
  operand slots.
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir
from xdsl.ir import Operation

from ..ir.layouts import LayoutMap
from ..ir.tt_types import numel as _numel
from .context import I1, I8, I32, LoweringContext, LoweringError, byte_size, float_kind, lowering
from .rules_tensor import index_vectors, same_thread_permutation


class Lanes:
    """An i32 vector (one entry per slot) with the integer arithmetic `source_of` functions use."""

    def __init__(self, builder: ir.IRBuilder, value: ir.Value):
        self.builder, self.value = builder, value

    def _lift(self, other) -> ir.Value:
        if isinstance(other, Lanes):
            return other.value
        count = self.value.type.count
        return ir.Constant(self.value.type, [int(other)] * count)

    def __add__(self, other) -> "Lanes":
        return Lanes(self.builder, self.builder.add(self.value, self._lift(other)))

    __radd__ = __add__

    def __mul__(self, other) -> "Lanes":
        return Lanes(self.builder, self.builder.mul(self.value, self._lift(other)))

    __rmul__ = __mul__

    def __sub__(self, other) -> "Lanes":
        return Lanes(self.builder, self.builder.sub(self.value, self._lift(other)))

    def __rsub__(self, other) -> "Lanes":
        return Lanes(self.builder, self.builder.sub(self._lift(other), self.value))


def linear(coords, shape: tuple[int, ...]):
    """Row-major linear index of `coords` (ints or Lanes) in `shape`."""
    out = coords[0]
    for c, s in zip(coords[1:], shape[1:]):
        out = out * s + c
    return out


SourceOf = Callable[[list], object]


def move_elements(ctx: LoweringContext, sources: list[tuple[ir.Value, LayoutMap]], dst: LayoutMap,
                  source_of: SourceOf) -> ir.Value:
    """The result slots of layout `dst`: slot with coordinates c takes buffer element `source_of(c)`, where the
    buffer is the sources' elements, source k from offset k * numel(source 0), each row-major."""
    numel = _numel(sources[0][1].shape)
    if ctx.single_thread:
        where: dict[int, int] = {}
        for k, (value, lmap) in enumerate(sources):
            for s in range(lmap.num_slots):
                where.setdefault(k * numel + linear(lmap.index(s), lmap.shape), k * value.type.count + s)
        perm = []
        for s in range(dst.num_slots):
            key = source_of(list(dst.index(s)))
            if key not in where:
                raise LoweringError(f"no slot holds buffer element {key}")
            perm.append(where[key])
        if len(sources) == 1:
            return ctx.shuffle(sources[0][0], perm)
        first, second = sources[0][0], sources[1][0]
        if first.type != second.type:
            raise LoweringError("operands of an element move hold different slot counts")
        mask = ir.Constant(ir.VectorType(I32, len(perm)), perm)
        return ctx.builder.shuffle_vector(first, second, mask)
    return _through_shared_memory(ctx, sources, dst, source_of, numel)


def _through_shared_memory(ctx: LoweringContext, sources, dst: LayoutMap, source_of: SourceOf, numel: int) -> ir.Value:
    from .shared import linear_indices, load_slots, store_slots

    b = ctx.builder
    element = sources[0][0].type.element
    total = numel * len(sources)
    ctx.shared_bytes = max(ctx.shared_bytes, total * byte_size(I8 if element == I1 else element))
    base = ctx.target.shared_memory(ctx.module, b, total)
    ctx.target.barrier(b)
    for k, (value, lmap) in enumerate(sources):
        offsets = linear_indices(ctx, lmap, lmap.shape)
        if k:
            offsets = b.add(offsets, ir.Constant(offsets.type, [k * numel] * offsets.type.count))
        store_slots(ctx, base, value, offsets)
    ctx.target.barrier(b)
    coords = [Lanes(b, v) for v in index_vectors(ctx, dst)]
    offsets = source_of(coords)
    return load_slots(ctx, base, offsets.value, element)


def _operand(ctx: LoweringContext, op: Operation, index: int = 0) -> tuple[ir.Value, LayoutMap]:
    value = op.operands[index]
    return ctx.get(value), ctx.layout_map(value.type)


@lowering("tt.trans")
def lower_trans(ctx: LoweringContext, op: Operation) -> None:
    value, src = _operand(ctx, op)
    order = op.permutation
    inverse = [order.index(d) for d in range(len(order))]  # operand dim d is result dim inverse[d]
    dst = ctx.layout_map(op.results[0].type)
    ctx.set(op.results[0], move_elements(ctx, [(value, src)], dst,
                                         lambda c: linear([c[inverse[d]] for d in range(len(order))], src.shape)))


@lowering("tt.flip")
def lower_flip(ctx: LoweringContext, op: Operation) -> None:
    value, src = _operand(ctx, op)
    axis = op.axis.value.data
    size = src.shape[axis]
    dst = ctx.layout_map(op.results[0].type)

    def source_of(c):
        c = list(c)
        c[axis] = (size - 1) - c[axis]
        return linear(c, src.shape)

    ctx.set(op.results[0], move_elements(ctx, [(value, src)], dst, source_of))


@lowering("tt.join")
def lower_join(ctx: LoweringContext, op: Operation) -> None:
    first, second = _operand(ctx, op, 0), _operand(ctx, op, 1)
    shape = first[1].shape
    dst = ctx.layout_map(op.results[0].type)
    numel = _numel(shape)
    ctx.set(op.results[0], move_elements(ctx, [first, second], dst,
                                         lambda c: c[-1] * numel + linear(c[:-1], shape)))


@lowering("tt.split")
def lower_split(ctx: LoweringContext, op: Operation) -> None:
    value, src = _operand(ctx, op)
    for k, result in enumerate(op.results):
        dst = ctx.layout_map(result.type)
        ctx.set(result, move_elements(ctx, [(value, src)], dst, lambda c, k=k: linear(list(c) + [k], src.shape)))



def to_layout(ctx: LoweringContext, value: ir.Value, src: LayoutMap, dst: LayoutMap) -> ir.Value:
    """`value` (slots of layout `src`) in layout `dst`, same shape."""
    if src.layout == dst.layout:
        return value
    if ctx.single_thread:
        return ctx.shuffle(value, same_thread_permutation(src, dst, lambda idx: idx))
    from .shared import exchange

    return exchange(ctx, value, src, dst, src.shape, dst.shape)


def scratch_buffer(ctx: LoweringContext, element: ir.Type, count: int) -> ir.Value:
    """A buffer of `count` elements every thread of the program can read: shared memory on GPUs (the
    caller puts barriers around its use), a stack array in the entry block on the CPU."""
    memory = I8 if element == I1 else element
    if not ctx.single_thread:
        ctx.shared_bytes = max(ctx.shared_bytes, count * byte_size(memory))
        return ctx.target.shared_memory(ctx.module, ctx.builder, count)
    with ctx.builder.goto_entry_block():  # one allocation, however many times a loop runs this
        array = ctx.builder.alloca(ir.ArrayType(memory, count))
        return ctx.builder.bitcast(array, memory.as_pointer())


@lowering("tt.gather")
def lower_gather(ctx: LoweringContext, op: Operation) -> None:
    """Every thread stores its source slots in a scratch buffer at their row-major index, then reads
    each result element at the index its coordinates and its gather index give."""
    from .shared import linear_indices, load_slots, store_slots

    b = ctx.builder
    source, src_map = _operand(ctx, op, 0)
    indices, idx_map = _operand(ctx, op, 1)
    dst = ctx.layout_map(op.results[0].type)
    indices = to_layout(ctx, indices, idx_map, dst)
    axis = op.axis.value.data
    size = src_map.shape[axis]
    width = indices.type.element.width
    if width > 32:
        indices = b.trunc(b.select(b.icmp_unsigned("<", indices, ir.Constant(indices.type, [size] * dst.num_slots)),
                                   indices, ir.Constant(indices.type, [0] * dst.num_slots)), ir.VectorType(I32, dst.num_slots))
    elif width < 32:
        indices = b.sext(indices, ir.VectorType(I32, dst.num_slots))
    in_range = b.icmp_unsigned("<", indices, ir.Constant(indices.type, [size] * dst.num_slots))
    indices = b.select(in_range, indices, ir.Constant(indices.type, [0] * dst.num_slots))
    coords = [Lanes(b, v) for v in index_vectors(ctx, dst)]
    coords[axis] = Lanes(b, indices)
    element = source.type.element
    base = scratch_buffer(ctx, element, _numel(src_map.shape))
    if not ctx.single_thread:
        ctx.target.barrier(b)
    store_slots(ctx, base, source, linear_indices(ctx, src_map, src_map.shape))
    if not ctx.single_thread:
        ctx.target.barrier(b)
    ctx.set(op.results[0], load_slots(ctx, base, linear(coords, src_map.shape).value, element))


# ===------------------------------------------------------------------------===
# tt.sort: a bitonic network
# ===------------------------------------------------------------------------===
def _sorts_after(ctx: LoweringContext, a: ir.Value, b: ir.Value, is_float: bool, unsigned: bool) -> ir.Value:
    """a > b elementwise; NaN after every number."""
    bld = ctx.builder
    if not is_float:
        return (bld.icmp_unsigned if unsigned else bld.icmp_signed)(">", a, b)
    greater = bld.fcmp_ordered(">", a, b)
    a_nan, b_nan = bld.fcmp_unordered("uno", a, a), bld.fcmp_unordered("uno", b, b)
    return bld.or_(greater, bld.and_(a_nan, bld.not_(b_nan)))


def _partner_in_registers(ctx: LoweringContext, value: ir.Value, indices: list[tuple[int, ...]], axis: int,
                          j: int) -> ir.Value:
    """Each slot gets the element whose coordinate along `axis` differs in bit j (all in this thread);
    `indices`: the tensor index of each slot."""
    where: dict[tuple[int, ...], int] = {}
    for s, index in enumerate(indices):
        where.setdefault(index, s)
    perm = []
    for index in indices:
        partner = list(index)
        partner[axis] ^= j
        perm.append(where[tuple(partner)])
    return ctx.shuffle(value, perm)


@lowering("tt.sort")
def lower_sort(ctx: LoweringContext, op: Operation) -> None:
    """Bitonic sort along the axis: for k = 2, 4, .., n and j = k/2, .., 1, element i meets i ^ j; the lower
    index of the pair keeps the smaller value where bit k of i is clear (the larger elsewhere; for k = n,
    everywhere: ascending), `descending` flipping it. Partners come by a static shuffle when the axis is
    within each thread (the CPU), else through shared memory. Half types compare in f32."""
    from . import half
    from .shared import linear_indices, load_slots, store_slots

    b = ctx.builder
    value, src = _operand(ctx, op)
    dst = ctx.layout_map(op.results[0].type)
    value = to_layout(ctx, value, src, dst)
    axis = op.axis.value.data
    n = dst.shape[axis]
    descending, unsigned = bool(op.descending.value.data), bool(op.unsigned.value.data)
    kind = float_kind(op.results[0].type)
    soft = ctx.soft_half(kind)
    if soft:
        value = half.half_to_f32(b, value, kind)
    in_thread = ctx.single_thread or (dst.root.threads_per_warp[dst.kept[axis]] == 1
                                      and dst.root.warps_per_cta[dst.kept[axis]] == 1)
    position = index_vectors(ctx, dst)[axis]
    count = dst.num_slots
    vec = position.type
    linear = None if in_thread else linear_indices(ctx, dst, dst.shape)
    stride = _numel(dst.shape[axis + 1:])
    base = None if in_thread else scratch_buffer(ctx, value.type.element, _numel(dst.shape))
    slot_indices = [dst.index(s) for s in range(count)] if in_thread else []

    def constant(v: int) -> ir.Constant:
        return ir.Constant(vec, [v] * count)

    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:
            lower = b.icmp_unsigned("==", b.and_(position, constant(j)), constant(0))
            ascending = b.icmp_unsigned("==", b.and_(position, constant(k)), constant(0))
            if descending:
                ascending = b.not_(ascending)
            if in_thread:
                partner = _partner_in_registers(ctx, value, slot_indices, axis, j)
            else:
                ctx.target.barrier(b)
                store_slots(ctx, base, value, linear)
                ctx.target.barrier(b)
                offset = b.select(lower, constant(j * stride), constant(-j * stride))
                partner = load_slots(ctx, base, b.add(linear, offset), value.type.element)
            after = _sorts_after(ctx, value, partner, kind is not None, unsigned)
            smaller, larger = b.select(after, partner, value), b.select(after, value, partner)
            keep_smaller = b.icmp_unsigned("==", b.zext(lower, vec), b.zext(ascending, vec))
            value = b.select(keep_smaller, smaller, larger)
            j //= 2
        k *= 2
    if soft:
        value = half.f32_to_half(b, value, kind)
    ctx.set(op.results[0], value)


# ===------------------------------------------------------------------------===
# tt.histogram
# ===------------------------------------------------------------------------===
@lowering("tt.histogram")
def lower_histogram(ctx: LoweringContext, op: Operation) -> None:
    """Counts in a buffer of num_bins + 1 i32 (the last one takes what is not counted): each element held
    by its canonical owner (not a wrapped copy) adds one at its bin, an atomic add to shared memory on GPUs;
    then each result slot reads its bin."""
    from .rules_tensor import thread_offsets
    from .shared import load_slots

    b = ctx.builder
    value, src = _operand(ctx, op, 0)
    dst = ctx.layout_map(op.results[0].type)
    bins = dst.shape[0]
    n = src.num_slots
    vec = ir.VectorType(I32, n)
    # canonical owners: the slot's index before wrapping around the block's size
    unwrapped = b.add(ir.Constant(vec, [src.slot_offset(s)[0] for s in range(n)]),
                      ctx.splat(thread_offsets(ctx, src)[0], n))
    counted = b.icmp_unsigned("<", unwrapped, ir.Constant(vec, [src.shape[0]] * n))
    if len(op.operands) > 1:
        mask, mask_map = _operand(ctx, op, 1)
        counted = b.and_(counted, to_layout(ctx, mask, mask_map, src))
    wide = ir.VectorType(ir.IntType(64), n)
    width = value.type.element.width
    values = value if width == 64 else (b.zext if op.unsigned.value.data else b.sext)(value, wide)
    in_range = b.icmp_unsigned("<", values, ir.Constant(wide, [bins] * n))  # negatives are huge unsigned
    bin_index = b.select(b.and_(counted, in_range), b.trunc(values, vec), ir.Constant(vec, [bins] * n))
    if ctx.single_thread:  # a loop over the elements (straight-line code for 1024 of them compiled slowly)
        with b.goto_entry_block():
            array = b.alloca(ir.ArrayType(I32, bins + 1))
            staged = b.alloca(vec)
        b.store(ir.Constant(ir.ArrayType(I32, bins + 1), None), array)
        b.store(bin_index, staged)
        base, bin_of = b.bitcast(array, I32.as_pointer()), b.bitcast(staged, I32.as_pointer())
        before = b.block
        loop, done = ctx.function.append_basic_block("histogram_loop"), ctx.function.append_basic_block("histogram_done")
        b.branch(loop)
        b.position_at_end(loop)
        i = b.phi(I32)
        i.add_incoming(ir.Constant(I32, 0), before)
        slot = b.gep(base, [b.load(b.gep(bin_of, [i], source_etype=I32), typ=I32)], source_etype=I32)
        b.store(b.add(b.load(slot, typ=I32), ir.Constant(I32, 1)), slot)
        following = b.add(i, ir.Constant(I32, 1))
        i.add_incoming(following, loop)
        b.cbranch(b.icmp_unsigned("<", following, ir.Constant(I32, n)), loop, done)
        b.position_at_end(done)
    else:
        threads = ctx.target.warp_size * ctx.num_warps
        ctx.shared_bytes = max(ctx.shared_bytes, 4 * (bins + 1))
        base = ctx.target.shared_memory(ctx.module, b, bins + 1)
        tid = b.add(b.mul(ctx.target.warp_id(b), ir.Constant(I32, ctx.target.warp_size)), ctx.target.lane_id(b))
        ctx.target.barrier(b)
        for start in range(0, bins + 1, threads):
            at = b.add(tid, ir.Constant(I32, start))
            with b.if_then(b.icmp_unsigned("<", at, ir.Constant(I32, bins + 1))):
                b.store(ir.Constant(I32, 0), b.gep(base, [at], source_etype=I32))
        ctx.target.barrier(b)
        for s in range(n):
            slot = b.gep(base, [b.extract_element(bin_index, ir.Constant(I32, s))], source_etype=I32)
            b.atomic_rmw("add", slot, ir.Constant(I32, 1), "monotonic")
        ctx.target.barrier(b)
    (indices,) = index_vectors(ctx, dst)
    ctx.set(op.results[0], load_slots(ctx, base, indices, I32))
