"""Lowering rules of tt.load, tt.store and the atomics.

A thread's slots are split into runs of consecutive slots that sit at consecutive
addresses (from the axis-info analysis and the layout's order); each run is one vector
access through the target, and a tile with no contiguity is gathered/scattered. i1 values
live in memory as bytes. On targets with one predicate per access, each access's predicate is
built from the mask's factors next to it (`mask_bits.MaskBits`).

Atomics are one instruction per element where the target has it (NVIDIA: a predicated
`atom`/`red`, see `Target.atomic_rmw`), else one LLVM `atomicrmw`/`cmpxchg` branched around
where the mask is false. Where a layout gives several threads (or slots) copies of one element, only
its owner (the copy that did not wrap around, see `_owned_slots`) does the atomic, and
the owners share the old values with the copies through shared memory when they are
used. Half types without native arithmetic update through a compare-and-swap loop.
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from ..ir.layouts import Blocked, LayoutMap
from ..ir.tt_memory import NO_HINTS, AccessHints, access_hints
from . import half
from .compact_constants import SplatConstant
from .constancy import MAX_SHARED_SLOTS, constancy_leaders, largest_power_of_two_dividing
from .mask_bits import MaskBits
from .context import I1, I8, I32, LoweringContext, byte_size, float_kind, guarded, intrinsic_suffix, lowering


def run_length(ctx: LoweringContext, ptr: SSAValue, mask: SSAValue | None, element: ir.Type) -> tuple[int, int]:
    """(slots per contiguous run, byte alignment of each run's first address) for a tensor of pointers.

    A run is consecutive slots along the layout's fastest dimension that are consecutive in memory
    (axis-info contiguity), aligned to their own size where the target needs that, and, on targets
    without per-element masks, equally masked (mask constancy). 1 means gather/scatter.
    """
    info = ctx.axis_info.get(ptr) if ctx.axis_info else None
    mask_info = ctx.axis_info.get(mask) if ctx.axis_info and mask is not None else None
    return access_run(ctx.layout_map(ptr.type), info, mask is not None, mask_info, ctx.target, ctx.single_thread,
                      byte_size(element))


def access_run(lmap: LayoutMap, info, masked: bool, mask_info, target, single_thread: bool,
               size: int) -> tuple[int, int]:
    """`run_length` from the layout map and axis infos (None: nothing known) of an access of
    `size`-byte elements; the performance warnings explain what this returns."""
    root = lmap.root
    fastest = root.order[0]
    if info is None or fastest not in lmap.kept:
        return 1, size
    dim = lmap.kept.index(fastest)
    slots_along = lmap.slots_per_dim[fastest]
    per_thread_run = slots_along if single_thread else root.size_per_thread[fastest]
    run = min(info.contiguity[dim], slots_along, per_thread_run, max(1, target.max_vector_bytes // size))
    alignment = largest_power_of_two_dividing(info.divisibility[dim])
    if not target.per_element_masks:
        run = min(run, max(1, alignment // size))  # vector accesses must be aligned to their size
        if masked:
            run = min(run, mask_info.constancy[dim] if mask_info else 1)
    run = 1 << (max(run, 1).bit_length() - 1)  # a power of two that divides the slot count
    return run, max(size, min(alignment, run * size))


def _gather(ctx: LoweringContext, ptr: SSAValue, mask_ssa: SSAValue | None, addresses: ir.Value,
            mask: ir.Value | None, other: ir.Value, hints: AccessHints = NO_HINTS) -> ir.Value:
    """A gather on GPU targets that loads each element once per thread: slots that axis info proves
    to share their address and mask bit (a broadcast operand, `x[i // 1024]`), with an `other` that
    is one constant, get the value of the group's first slot; the mask bits come from its factors
    (`MaskBits`)."""
    bits = _mask_bits(ctx, mask_ssa, mask)
    leaders = _load_leaders(ctx, ptr, mask_ssa, addresses, other)
    unique = sorted(set(leaders)) if leaders is not None else list(range(addresses.type.count))
    if bits is not None:
        mask = bits.vector(unique)
    elif mask is not None:
        mask = ctx.shuffle(mask, unique)
    loaded = ctx.target.gather(ctx.builder, ctx.shuffle(addresses, unique), mask, ctx.shuffle(other, unique), hints)
    return loaded if leaders is None else ctx.shuffle(loaded, [unique.index(leader) for leader in leaders])


def _load_leaders(ctx: LoweringContext, ptr: SSAValue, mask_ssa: SSAValue | None, addresses: ir.Value,
                  other: ir.Value) -> list[int] | None:
    """Per slot of a gather, the first slot that loads the same element under the same mask bit on GPU targets
    (`constancy_leaders` of the address and mask constancy), where some slots share and `other` is one
    constant; else None."""
    info = ctx.axis_info.get(ptr) if ctx.axis_info else None
    if info is None or ctx.target.per_element_masks or addresses.type.count > MAX_SHARED_SLOTS \
            or not _one_constant(other):
        return None
    constancy = list(info.constancy)
    mask_info = ctx.axis_info.get(mask_ssa) if mask_ssa is not None else None
    if mask_ssa is not None:
        constancy = [min(largest_power_of_two_dividing(a), largest_power_of_two_dividing(m))
                     for a, m in zip(constancy, mask_info.constancy if mask_info else [1] * len(constancy))]
    leaders = constancy_leaders(ctx.layout_map(ptr.type), constancy)
    return None if len(set(leaders)) == len(leaders) else leaders


def _one_constant(value: ir.Value) -> bool:
    """Whether `value` is a vector constant whose elements are all the same."""
    if isinstance(value, SplatConstant):
        return True
    return isinstance(value, ir.Constant) and len({c.get_reference() for c in value.constant}) == 1


def _mask_bits(ctx: LoweringContext, mask_ssa: SSAValue | None, mask: ir.Value | None) -> MaskBits | None:
    """The per-slot bits of a tensor mask on targets with one predicate per access; None without a mask or
    where the target masks each element of a vector access (the CPU: the vector mask as it is)."""
    if mask is None or ctx.target.per_element_masks or not isinstance(mask.type, ir.VectorType):
        return None
    return MaskBits(ctx, mask_ssa, mask)


def _run_mask(ctx: LoweringContext, mask: ir.Value | None, bits: MaskBits | None, start: int,
              run: int) -> ir.Value | None:
    """The mask of the vector access of slots start..start+run-1: its first slot's bit where the target takes one
    predicate per access (`run_length` keeps a run within one mask constancy run), else the run's lanes."""
    if bits is not None:
        return bits.bit(start)
    return _split(ctx, mask, start, run) if mask is not None else None


def _scatter(ctx: LoweringContext, addresses: ir.Value, value: ir.Value, mask: ir.Value | None,
             bits: MaskBits | None, owned: ir.Value | None, hints: AccessHints) -> None:
    """Store each slot where its mask bit (and its `owned` bit, when given) holds. With `bits`, slot by slot, each
    predicate combined next to its store."""
    b = ctx.builder
    if bits is None:
        if owned is not None:
            mask = owned if mask is None else b.and_(mask, owned)
        ctx.target.scatter(b, addresses, value, mask, hints)
        return
    for slot in range(value.type.count):
        bit = bits.bit(slot)
        if owned is not None:
            bit = b.and_(bit, b.extract_element(owned, ir.Constant(I32, slot)))
        one = b.insert_element(ir.Constant(ir.VectorType(I1, 1), None), bit, ir.Constant(I32, 0))
        ctx.target.scatter(b, _split(ctx, addresses, slot, 1), _split(ctx, value, slot, 1), one, hints)


def _split(ctx: LoweringContext, vector: ir.Value, start: int, length: int) -> ir.Value:
    return ctx.shuffle(vector, list(range(start, start + length)))


def _concat(ctx: LoweringContext, parts: list[ir.Value]) -> ir.Value:
    """Concatenate equally sized vectors (power-of-two count) with a tree of shuffles."""
    while len(parts) > 1:
        joined = []
        for a, b in zip(parts[0::2], parts[1::2]):
            n = a.type.count
            mask = ir.Constant(ir.VectorType(I32, 2 * n), list(range(2 * n)))
            joined.append(ctx.builder.shuffle_vector(a, b, mask))
        parts = joined
    return parts[0]


@lowering("tt.load")
def lower_load(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    ptr_ssa, mask_ssa, other_ssa = op.ptr, op.mask, op.other
    hints = access_hints(op)
    result_type = op.results[0].type
    element_ir = ctx.memory_type(result_type.element_type if isinstance(result_type, TensorType) else result_type)
    is_bool = ctx.scalar_type(result_type.element_type if isinstance(result_type, TensorType) else result_type) == I1
    addresses = ctx.get(ptr_ssa)
    mask = ctx.get(mask_ssa) if mask_ssa is not None else None
    other = ctx.get(other_ssa) if other_ssa is not None else None
    if not isinstance(result_type, TensorType):
        value = _scalar_load(ctx, addresses, mask, other, element_ir, is_bool, hints)
        ctx.set(op.results[0], value)
        return
    n = addresses.type.count
    vec_type = ir.VectorType(element_ir, n)
    if other is None:
        other_mem = ir.Constant(vec_type, [0] * n) if isinstance(element_ir, ir.IntType) else ir.Constant(vec_type, [0.0] * n)
    elif is_bool:
        other_mem = b.zext(other, vec_type)
    else:
        other_mem = other
    run, alignment = run_length(ctx, ptr_ssa, mask_ssa, element_ir)
    if run == 1:
        loaded = _gather(ctx, ptr_ssa, mask_ssa, addresses, mask, other_mem, hints)
    else:
        parts = []
        bits = _mask_bits(ctx, mask_ssa, mask)
        for start in range(0, n, run):
            address = b.extract_element(addresses, ir.Constant(I32, start))
            part_mask = _run_mask(ctx, mask, bits, start, run)
            parts.append(ctx.target.load_contiguous(b, address, part_mask, _split(ctx, other_mem, start, run), alignment,
                                                    hints))
        loaded = _concat(ctx, parts)
    if is_bool:
        loaded = b.icmp_unsigned("!=", loaded, ir.Constant(vec_type, [0] * n))
    ctx.set(op.results[0], loaded)


def _scalar_load(ctx: LoweringContext, address: ir.Value, mask: ir.Value | None, other: ir.Value | None,
                 element: ir.Type, is_bool: bool, hints: AccessHints) -> ir.Value:
    """A scalar load: the target's (NVIDIA: one predicated load), else a branch around it when masked."""
    b = ctx.builder
    other_mem = (b.zext(other, element) if is_bool else other) if other is not None else _zero(element)
    loaded = ctx.target.load_scalar(b, address, mask, other_mem, hints) if mask is not None or hints else None
    if loaded is not None:
        return b.icmp_unsigned("!=", loaded, ir.Constant(I8, 0)) if is_bool else loaded
    pointer = _global_pointer(ctx, address)

    def load() -> ir.Value:
        loaded = b.load(pointer, typ=element)
        return b.icmp_unsigned("!=", loaded, ir.Constant(I8, 0)) if is_bool else loaded

    fallback = other if other is not None else ir.Constant(I1 if is_bool else element, 0)
    return guarded(b, mask, load, fallback)


@lowering("tt.store")
def lower_store(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    ptr_ssa, value_ssa, mask_ssa = op.ptr, op.value, op.mask
    hints = access_hints(op)
    value_type = value_ssa.type
    scalar_ty = value_type.element_type if isinstance(value_type, TensorType) else value_type
    element_ir = ctx.memory_type(scalar_ty)
    is_bool = ctx.scalar_type(scalar_ty) == I1
    addresses, value = ctx.get(ptr_ssa), ctx.get(value_ssa)
    mask = ctx.get(mask_ssa) if mask_ssa is not None else None
    if is_bool:
        value = b.zext(value, ir.VectorType(I8, value.type.count) if isinstance(value.type, ir.VectorType) else I8)
    # One thread writes each element: a copy stored by a thread that loaded the old value late would
    # overwrite the new one (a kernel that loads, changes and stores one address: Triton's
    # test_load_store_same_ptr)
    if not isinstance(value_type, TensorType):
        if not ctx.single_thread:
            first = _is_first_thread(ctx)
            mask = first if mask is None else b.and_(mask, first)
        if (mask is not None or hints) and ctx.target.store_scalar(b, addresses, value, mask, hints):
            return
        pointer = _global_pointer(ctx, addresses)
        if mask is None:
            b.store(value, pointer)
        else:
            with b.if_then(mask):
                b.store(value, pointer)
        return
    owned = None if ctx.single_thread else _owned_slots(ctx, ctx.layout_map(ptr_ssa.type))
    bits = _mask_bits(ctx, mask_ssa, mask)
    if owned is not None:  # elements with copies in other threads: the owner stores, one slot at a time
        _scatter(ctx, addresses, value, mask, bits, owned, hints)
        return
    n = addresses.type.count
    run, alignment = run_length(ctx, ptr_ssa, mask_ssa, element_ir)
    if run == 1:
        _scatter(ctx, addresses, value, mask, bits, None, hints)
        return
    for start in range(0, n, run):
        address = b.extract_element(addresses, ir.Constant(I32, start))
        ctx.target.store_contiguous(b, address, _split(ctx, value, start, run), _run_mask(ctx, mask, bits, start, run),
                                    alignment, hints)


# ===------------------------------------------------------------------------===
# Atomics
# ===------------------------------------------------------------------------===
_LLVM_RMW = {"add": "add", "fadd": "fadd", "max": "max", "min": "min", "umax": "umax", "umin": "umin",
             "fmax": "fmaximum", "fmin": "fminimum", "and": "and", "or": "or", "xor": "xor", "xchg": "xchg"}
_LLVM_ORDERING = {"relaxed": "monotonic", "acquire": "acquire", "release": "release", "acq_rel": "acq_rel"}
# a failed compare-and-swap only reads: it keeps the acquire part of the ordering
_FAILURE_ORDERING = {"monotonic": "monotonic", "acquire": "acquire", "release": "monotonic", "acq_rel": "acquire"}
#: tiles with up to this many slots per thread get straight-line code; larger ones a loop over the slots
UNROLL_SLOTS = 16

SlotFn = Callable[[ir.Value], ir.Value]  # slot index (i32) -> the old value of that slot's element


@lowering("tt.atomic_rmw")
def lower_atomic_rmw(ctx: LoweringContext, op: Operation) -> None:
    value = ctx.get(op.value)
    mask = ctx.get(op.mask) if op.mask is not None else None
    ordering = _ordering(ctx, op)
    kind, fkind = op.kind.data, float_kind(op.value.type)
    soft = ctx.soft_half(fkind) and kind != "xchg"
    used = _has_uses(op.results[0])

    def update(condition: ir.Value | None, address: ir.Value, item: ir.Value) -> ir.Value:
        if not soft:
            old = ctx.target.atomic_rmw(ctx.builder, kind, op.sem.data, op.scope.data, address, item, condition, used)
            if old is not None:
                return old

        def branched() -> ir.Value:
            pointer = _global_pointer(ctx, address)
            if soft:
                return _compare_and_swap_loop(ctx, pointer, item.type, _soft_half_combine(ctx, kind, fkind, item),
                                              ordering)
            return ctx.builder.atomic_rmw(_LLVM_RMW[kind], pointer, item, ordering)

        return guarded(ctx.builder, condition, branched, _zero(item.type))

    width = 1 if soft else _atomic_vector_width(ctx, op, kind, value.type)
    _lower_atomic(ctx, op, [ctx.get(op.ptr), value], mask, update, width)


def _atomic_vector_width(ctx: LoweringContext, op: Operation, kind: str, ty: ir.Type) -> int:
    """How many of a thread's consecutive slots one instruction updates: a run of consecutive, aligned
    and equally masked addresses (as a vector load's), at most what the target's instruction takes."""
    if not isinstance(ty, ir.VectorType):
        return 1
    limit = ctx.target.atomic_vector_width(kind, ty.element)
    if limit == 1:
        return 1
    run, alignment = run_length(ctx, op.ptr, op.mask, ty.element)
    width = min(run, limit)
    while width > 1 and alignment < width * byte_size(ty.element):
        width //= 2
    return width


@lowering("tt.atomic_cas")
def lower_atomic_cas(ctx: LoweringContext, op: Operation) -> None:
    ordering = _ordering(ctx, op)
    b = ctx.builder

    def swap(condition: ir.Value | None, address: ir.Value, expected: ir.Value, item: ir.Value) -> ir.Value:
        old = ctx.target.atomic_cas(b, op.sem.data, op.scope.data, address, expected, item, condition)
        if old is not None:
            return old

        def branched() -> ir.Value:
            as_int = _same_size_int(item.type)
            expected_bits, item_bits = b.bitcast(expected, as_int), b.bitcast(item, as_int)
            pair = b.cmpxchg(_global_pointer(ctx, address), expected_bits, item_bits, ordering,
                             _failure_ordering(ordering))
            return b.bitcast(b.extract_value(pair, 0), item.type)

        return guarded(b, condition, branched, _zero(item.type))

    _lower_atomic(ctx, op, [ctx.get(op.ptr), ctx.get(op.cmp), ctx.get(op.value)], None, swap)


def _ordering(ctx: LoweringContext, op: Operation) -> str:
    """LLVM's text for the op's scope and memory ordering, e.g. `syncscope("device") acq_rel`."""
    ordering = _LLVM_ORDERING[op.sem.data]
    scope = ctx.target.atomic_sync_scopes.get(op.scope.data, "")
    return f'syncscope("{scope}") {ordering}' if scope else ordering


def _failure_ordering(ordering: str) -> str:
    return _FAILURE_ORDERING[ordering.split()[-1]]


def _global_pointer(ctx: LoweringContext, address: ir.Value) -> ir.Value:
    return ctx.builder.inttoptr(address, ir.PointerType(addrspace=ctx.target.global_address_space))


def _same_size_int(ty: ir.Type) -> ir.IntType:
    return ty if isinstance(ty, ir.IntType) else ir.IntType(8 * byte_size(ty))


def _zero(ty: ir.Type) -> ir.Constant:
    return ir.Constant(ty, 0 if isinstance(ty, ir.IntType) else 0.0)


def _soft_half_combine(ctx: LoweringContext, kind: str, fkind: str, item: ir.Value) -> Callable[[ir.Value], ir.Value]:
    """old i16 bits -> new i16 bits for fadd/fmax/fmin on a half type kept as bits (computed in f32)."""
    b = ctx.builder
    wide_item = half.half_to_f32(b, item, fkind)

    def combine(old: ir.Value) -> ir.Value:
        wide_old = half.half_to_f32(b, old, fkind)
        if kind == "fadd":
            return half.f32_to_half(b, b.fadd(wide_old, wide_item), fkind)
        name = {"fmax": "maximum", "fmin": "minimum"}[kind]
        fn = ctx.intrinsic(f"llvm.{name}.{intrinsic_suffix(wide_old.type)}", wide_old.type, [wide_old.type] * 2)
        return half.f32_to_half(b, b.call(fn, [wide_old, wide_item]), fkind)

    return combine


def _compare_and_swap_loop(ctx: LoweringContext, pointer: ir.Value, ty: ir.Type,
                           combine: Callable[[ir.Value], ir.Value], ordering: str) -> ir.Value:
    """Atomically `*pointer = combine(*pointer)` by retrying a compare-and-swap; returns the old value."""
    b = ctx.builder
    first = b.load_atomic(pointer, "monotonic", byte_size(ty), typ=ty)
    entry = b.block
    loop, done = b.append_basic_block("atomic.retry"), b.append_basic_block("atomic.done")
    b.branch(loop)
    b.position_at_end(loop)
    old = b.phi(ty)
    old.add_incoming(first, entry)
    pair = b.cmpxchg(pointer, old, combine(old), ordering, _failure_ordering(ordering))
    seen = b.extract_value(pair, 0)
    old.add_incoming(seen, b.block)
    b.cbranch(b.extract_value(pair, 1), done, loop)
    b.position_at_end(done)
    return seen


def _lower_atomic(ctx: LoweringContext, op: Operation, operands: list[ir.Value], mask: ir.Value | None,
                  update: Callable[..., ir.Value], width: int = 1) -> None:
    """Run `update(condition, address, *element operands)` once per element of the tile (or for the
    scalar), the i1 `condition` (None: always) true where `mask` holds in the element's owner thread;
    `update` returns the old value (0 where the condition is false). Set the op's result to the old values.
    With `width` > 1 (and no copies of an element in other threads), `update` gets vectors of `width`
    consecutive slots, which `_atomic_vector_width` found to be consecutive addresses, equally masked."""
    result = op.results[0]
    if not isinstance(result.type, TensorType):
        ctx.set(result, _scalar_atomic(ctx, operands, mask, update, used=_has_uses(result)))
        return
    lmap = ctx.layout_map(result.type)
    owned = _owned_slots(ctx, lmap)
    active = owned if mask is None else (mask if owned is None else ctx.builder.and_(mask, owned))
    element = operands[-1].type.element
    if width > 1 and owned is None and lmap.num_slots <= UNROLL_SLOTS:
        parts = []
        for start in range(0, lmap.num_slots, width):
            index = ir.Constant(I32, start)
            condition = ctx.builder.extract_element(active, index) if active is not None else None
            address = ctx.builder.extract_element(operands[0], index)
            parts.append(update(condition, address, *[_split(ctx, v, start, width) for v in operands[1:]]))
        ctx.set(result, _concat(ctx, parts))
        return

    def slot(index: ir.Value) -> ir.Value:
        items = [ctx.builder.extract_element(v, index) for v in operands]
        condition = ctx.builder.extract_element(active, index) if active is not None else None
        return update(condition, *items)

    old = _for_each_slot(ctx, lmap.num_slots, element, slot)
    if owned is not None and _has_uses(result):
        old = _share_with_copies(ctx, old, lmap, owned)
    ctx.set(result, old)


def _has_uses(value: SSAValue) -> bool:
    return any(True for _ in value.uses)


def _for_each_slot(ctx: LoweringContext, count: int, element: ir.Type, slot: SlotFn) -> ir.Value:
    """The vector of `slot(i)` for every slot i: straight-line for few slots, else a loop."""
    b = ctx.builder
    vector = ir.VectorType(element, count)
    out: ir.Value = ir.Constant(vector, None)
    if count <= UNROLL_SLOTS:
        for i in range(count):
            index = ir.Constant(I32, i)
            out = b.insert_element(out, slot(index), index)
        return out
    entry = b.block
    loop, done = b.append_basic_block("atomic.slot"), b.append_basic_block("atomic.slots_done")
    b.branch(loop)
    b.position_at_end(loop)
    index, partial = b.phi(I32), b.phi(vector)
    index.add_incoming(ir.Constant(I32, 0), entry)
    partial.add_incoming(out, entry)
    filled = b.insert_element(partial, slot(index), index)
    following = b.add(index, ir.Constant(I32, 1))
    index.add_incoming(following, b.block)
    partial.add_incoming(filled, b.block)
    b.cbranch(b.icmp_unsigned("<", following, ir.Constant(I32, count)), loop, done)
    b.position_at_end(done)
    return filled


def _scalar_atomic(ctx: LoweringContext, operands: list[ir.Value], mask: ir.Value | None,
                   update: Callable[..., ir.Value], used: bool) -> ir.Value:
    """A scalar atomic is done by the first thread only; it shares the old value if it is used."""
    b = ctx.builder
    first = None if ctx.single_thread else _is_first_thread(ctx)
    condition = mask if first is None else (first if mask is None else b.and_(mask, first))
    old = update(condition, *operands)
    if first is None or not used:
        return old
    base = _exchange_buffer(ctx, byte_size(old.type))
    with b.if_then(first):
        b.store(old, base)
    ctx.target.barrier(b)
    return b.load(base, typ=old.type)


def _is_first_thread(ctx: LoweringContext) -> ir.Value:
    b = ctx.builder
    lane, warp = ctx.target.lane_id(b), ctx.target.warp_id(b)
    zero = ir.Constant(I32, 0)
    return b.and_(b.icmp_unsigned("==", lane, zero), b.icmp_unsigned("==", warp, zero))


def _exchange_buffer(ctx: LoweringContext, num_bytes: int) -> ir.Value:
    """The shared-memory buffer, once every thread is done with its previous use."""
    ctx.shared_bytes = max(ctx.shared_bytes, num_bytes)
    base = ctx.target.shared_memory(ctx.module, ctx.builder, num_bytes)
    ctx.target.barrier(ctx.builder)
    return base


def _share_with_copies(ctx: LoweringContext, value: ir.Value, lmap: LayoutMap, owned: ir.Value) -> ir.Value:
    """Every thread's slots get the value its element's owner computed (through shared memory). Slots
    that do not own their element store to one spare element past the tile, never read: no branch."""
    from .shared import linear_indices, load_slots

    b = ctx.builder
    element = value.type.element
    numel = 1
    for size in lmap.shape:
        numel *= size
    base = _exchange_buffer(ctx, (numel + 1) * byte_size(element))
    offsets = linear_indices(ctx, lmap, lmap.shape)
    spare = ir.Constant(offsets.type.element, numel)
    for i in range(value.type.count):
        index = ir.Constant(I32, i)
        offset = b.select(b.extract_element(owned, index), b.extract_element(offsets, index), spare)
        b.store(b.extract_element(value, index), b.gep(base, [offset], source_etype=element))
    ctx.target.barrier(b)
    return load_slots(ctx, base, offsets, element)


def _owned_slots(ctx: LoweringContext, lmap: LayoutMap) -> ir.Value | None:
    """i1 vector: the slots whose element this thread owns; None when it owns all of them.

    Along each kept dimension a slot's index before wrapping around the tile
    (`slot_offset + thread_offset`) is distinct for every (thread, slot) holding a copy, so
    exactly one copy has it below the dimension's size: the owner. Along a dimension that a
    slice layout removed, every thread coordinate holds the same elements: coordinate 0 owns."""
    b = ctx.builder
    root = lmap.root
    lane_c, warp_c = _thread_coords(ctx, root)
    shared_conditions = [b.icmp_unsigned("==", coord[d], ir.Constant(I32, 0))
                         for d in range(root.rank) if d not in lmap.kept for coord in (lane_c, warp_c) if d in coord]
    flags: list[ir.Value | bool] = []
    for s in range(lmap.num_slots):
        conditions, owned = list(shared_conditions), True
        for position, (d, start) in enumerate(zip(lmap.kept, lmap.slot_offset(s))):
            room = lmap.shape[position] - start  # thread offsets below this hold the element unwrapped
            if room <= 0:
                owned = False
            elif _largest_thread_offset(root, d) >= room:
                offset = _thread_offset(b, root, d, lane_c, warp_c)
                conditions.append(b.icmp_unsigned("<", offset, ir.Constant(I32, room)))
        flags.append(owned and _all(b, conditions))
    if all(flag is True for flag in flags):
        return None
    vector = ir.VectorType(I1, len(flags))
    if all(isinstance(flag, bool) for flag in flags):
        return ir.Constant(vector, [int(flag) for flag in flags])
    out: ir.Value = ir.Constant(vector, None)
    for i, flag in enumerate(flags):
        item = ir.Constant(I1, int(flag)) if isinstance(flag, bool) else flag
        out = b.insert_element(out, item, ir.Constant(I32, i))
    return out


def _all(b: ir.IRBuilder, conditions: list[ir.Value]) -> ir.Value | bool:
    if not conditions:
        return True
    out = conditions[0]
    for c in conditions[1:]:
        out = b.and_(out, c)
    return out


def _thread_offset(b: ir.IRBuilder, root: Blocked, d: int, lane_c: dict[int, ir.Value],
                   warp_c: dict[int, ir.Value]) -> ir.Value:
    """This thread's part of its slots' index along root dimension `d` (`LayoutMap.thread_offset`)."""
    spt, tpw = root.size_per_thread[d], root.threads_per_warp[d]
    offset: ir.Value = ir.Constant(I32, 0)
    if d in lane_c:
        offset = b.mul(lane_c[d], ir.Constant(I32, spt))
    if d in warp_c:
        offset = b.add(offset, b.mul(warp_c[d], ir.Constant(I32, spt * tpw)))
    return offset


def _largest_thread_offset(root: Blocked, d: int) -> int:
    spt, tpw, wpc = root.size_per_thread[d], root.threads_per_warp[d], root.warps_per_cta[d]
    return (tpw - 1) * spt + (wpc - 1) * spt * tpw


def _thread_coords(ctx: LoweringContext, root: Blocked) -> tuple[dict[int, ir.Value], dict[int, ir.Value]]:
    """This thread's lane and warp coordinate along each root dimension that spreads lanes
    (resp. warps); dimensions with one lane (warp) are left out."""
    lane_c: dict[int, ir.Value] = {}
    warp_c: dict[int, ir.Value] = {}
    if ctx.single_thread:
        return lane_c, warp_c
    b = ctx.builder
    lane, warp = ctx.target.lane_id(b), ctx.target.warp_id(b)
    lane_stride = warp_stride = 1
    for d in root.order:
        tpw, wpc = root.threads_per_warp[d], root.warps_per_cta[d]
        if tpw > 1:
            lane_c[d] = b.urem(b.udiv(lane, ir.Constant(I32, lane_stride)), ir.Constant(I32, tpw))
        if wpc > 1:
            warp_c[d] = b.urem(b.udiv(warp, ir.Constant(I32, warp_stride)), ir.Constant(I32, wpc))
        lane_stride *= tpw
        warp_stride *= wpc
    return lane_c, warp_c
