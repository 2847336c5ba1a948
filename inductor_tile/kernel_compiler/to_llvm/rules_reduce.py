"""Lowering of tt.reduce: within a thread by halving, then across lanes and warps.

Within a thread on the CPU, the slots along the reduced axis are combined by a tree: each step
splits them into a lower and an upper half (two shuffles) and combines the halves
elementwise, so a reduction of n slots takes log2(n) vector steps. What remains is
ordered like the result's slice layout. On GPUs a thread folds its slots one after another, leaving out
slots that hold the reduction's neutral value in every thread (`tl.where(cols < 768, x, 0.0)` in a
1024-wide tile: static_slots.py); float sums, products, maxima and minima fold in scalars, applying a
mask the slots share once (`reduce_guards.py`). Across lanes the target's xor-shuffle butterfly
combines threads; across warps, shared memory: each thread stores its partial results in
accesses of up to 16 bytes and loads every warp's the same way, or, where that would hold many
partials at once, threads of one warp combine them one each (`reduce_warp_tree.py`); later reductions
of the same axis and tile type cross warps with the first (one scratch, one set of barriers:
`reduce_partners.py`). argmax/argmin carry indices alongside the values and keep the first
index on ties; NaN counts as the extreme value.
fp16/bf16 accumulate in f32 on targets without native half arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from llvmlite import ir
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from . import half, reduce_guards, reduce_partners, reduce_warp_tree
from .context import I32, LoweringContext, LoweringError, byte_size, element_of, float_kind, intrinsic_suffix, lowering
from .rules_tensor import index_vectors
from .static_slots import neutral_groups, static_slot_values

Combine = Callable[[ir.Value, ir.Value], ir.Value]


def _binary_intrinsic(ctx: LoweringContext, name: str) -> Combine:
    def combine(a: ir.Value, b: ir.Value) -> ir.Value:
        fn = ctx.intrinsic(f"llvm.{name}.{intrinsic_suffix(a.type)}", a.type, [a.type, a.type])
        return ctx.builder.call(fn, [a, b])

    return combine


def _combiner(ctx: LoweringContext, kind: str, is_float: bool) -> Combine:
    b = ctx.builder
    if kind == "sum":
        # a sum of products becomes an FMA chain where the target allows (LoweringContext.contract_flags)
        return (lambda x, y: b.fadd(x, y, flags=ctx.contract_flags(x))) if is_float else (lambda x, y: b.add(x, y))
    if kind == "prod":
        return (lambda x, y: b.fmul(x, y, flags=ctx.contract_flags(x))) if is_float else (lambda x, y: b.mul(x, y))
    if kind == "xor_sum":
        return lambda x, y: b.xor(x, y)
    table = {("max", True): "maximum", ("min", True): "minimum", ("max", False): "smax", ("min", False): "smin",
             ("umax", False): "umax", ("umin", False): "umin"}
    return _binary_intrinsic(ctx, table[(kind, is_float)])


def _halves(ctx: LoweringContext, vector: ir.Value, slots_per_dim: list[int], slot_dims: list[int], axis: int):
    """Split slots by their coordinate along `axis` into (lower half, upper half), keeping slot order."""
    count = slots_per_dim[axis]
    lower, upper = [], []
    total = vector.type.count
    for slot in range(total):
        coords, rest = [0] * len(slots_per_dim), slot
        for d in reversed(slot_dims):
            coords[d] = rest % slots_per_dim[d]
            rest //= slots_per_dim[d]
        (lower if coords[axis] < count // 2 else upper).append(slot)
    return ctx.shuffle(vector, lower), ctx.shuffle(vector, upper)


def _tree_within_thread(ctx: LoweringContext, vectors: list[ir.Value], slots_per_dim: list[int],
                        slot_dims: list[int], axis: int, combine) -> list[ir.Value]:
    """Halve the slots along `axis` log2(n) times: few, wide vector steps (one thread holds a large tile)."""
    slots_per_dim = list(slots_per_dim)
    while slots_per_dim[axis] > 1:
        halves = [_halves(ctx, v, slots_per_dim, slot_dims, axis) for v in vectors]
        vectors = combine([lo for lo, _ in halves], [hi for _, hi in halves])
        slots_per_dim[axis] //= 2
    return vectors


def _axis_groups(count: int, slots_per_dim: list[int], slot_dims: list[int], axis: int) -> list[list[int]]:
    """The slots (of `count` in all) with each coordinate along `axis`, in slot order."""
    groups: list[list[int]] = [[] for _ in range(slots_per_dim[axis])]
    for slot in range(count):
        coords, rest = [0] * len(slots_per_dim), slot
        for d in reversed(slot_dims):
            coords[d] = rest % slots_per_dim[d]
            rest //= slots_per_dim[d]
        groups[coords[axis]].append(slot)
    return groups


def _chain_within_thread(ctx: LoweringContext, vectors: list[ir.Value], slots_per_dim: list[int],
                         slot_dims: list[int], axis: int, combine, skip: frozenset[int] = frozenset()) -> list[ir.Value]:
    """Fold the slots along `axis` one after another: the fewest live registers (GPU threads hold few slots).
    The coordinates in `skip` (slots that change nothing, `_neutral_coordinates`) are left out."""
    groups = _kept_groups(vectors[0].type.count, slots_per_dim, slot_dims, axis, skip)
    result = [ctx.shuffle(v, groups[0]) for v in vectors]
    for group in groups[1:]:
        result = combine(result, [ctx.shuffle(v, group) for v in vectors])
    return result


def _kept_groups(count: int, slots_per_dim: list[int], slot_dims: list[int], axis: int,
                 skip: frozenset[int]) -> list[list[int]]:
    """The slots of each coordinate along `axis` but those in `skip`."""
    return [group for k, group in enumerate(_axis_groups(count, slots_per_dim, slot_dims, axis)) if k not in skip]


def _neutral_coordinates(lmap, operand, slots_per_dim: list[int], axis: int, kind: str, element) -> frozenset[int]:
    """Coordinates along `axis` (of the first slots_per_dim[axis]) whose slots change nothing in the reduction."""
    groups = _axis_groups(lmap.num_slots, list(lmap.slots_per_dim), lmap.slot_dims, axis)[:slots_per_dim[axis]]
    return neutral_groups(static_slot_values(lmap, operand), groups, kind, element)


def _arg_combiner(ctx: LoweringContext, kind: str, is_float: bool, unsigned: bool):
    """Combine (value, index) pairs, keeping the extreme value and the first index on ties."""
    b = ctx.builder

    def combine(a: tuple[ir.Value, ir.Value], c: tuple[ir.Value, ir.Value]) -> tuple[ir.Value, ir.Value]:
        (av, ai), (cv, ci) = a, c
        if is_float:
            better = b.fcmp_ordered(">" if kind == "argmax" else "<", cv, av)
            equal = b.fcmp_ordered("==", cv, av)
            c_nan, a_nan = b.fcmp_unordered("uno", cv, cv), b.fcmp_unordered("uno", av, av)
            better = b.or_(better, b.and_(c_nan, b.not_(a_nan)))
            equal = b.or_(equal, b.and_(c_nan, a_nan))
        else:
            compare = b.icmp_unsigned if unsigned else b.icmp_signed
            better = compare(">" if kind == "argmax" else "<", cv, av)
            equal = b.icmp_signed("==", cv, av)
        take_c = b.or_(better, b.and_(equal, b.icmp_signed("<", ci, ai)))
        return b.select(take_c, cv, av), b.select(take_c, ci, ai)

    return combine


@dataclass
class _Partial:
    """A reduction combined within each thread and across lanes; what is left is across warps."""
    op: Operation
    vectors: list[ir.Value]
    combine: Callable[[list[ir.Value], list[ir.Value]], list[ir.Value]]
    finish: Callable[[list[ir.Value]], ir.Value]  # the op's result from the fully combined vectors
    unique_warps: int  # warps holding distinct data along the axis


@lowering("tt.reduce")
def lower_reduce(ctx: LoweringContext, op: Operation) -> None:
    ready = ctx.paired_results.pop(op, None)  # reduced across warps together with an earlier reduction
    if ready is not None:
        ctx.set(op.results[0], ready)
        return
    first = _within_warps(ctx, op)
    if first.unique_warps <= 1:
        ctx.set(op.results[0], first.finish(first.vectors))
        return
    partials = [first] + [_within_warps(ctx, other) for other in reduce_partners.partners(ctx, op)]
    lmap = ctx.layout_map(op.operands[0].type)
    root_axis = lmap.kept[op.axis.value.data]
    sizes = [len(p.vectors) for p in partials]

    def combine(a: list[ir.Value], c: list[ir.Value]) -> list[ir.Value]:
        out, at = [], 0
        for partial, n in zip(partials, sizes):
            out += partial.combine(a[at:at + n], c[at:at + n])
            at += n
        return out

    vectors = _across_warps(ctx, op, [v for p in partials for v in p.vectors], lmap.root, root_axis,
                            first.unique_warps, _warp_stride(lmap.root, root_axis), combine)
    at = 0
    for partial, n in zip(partials, sizes):
        result = partial.finish(vectors[at:at + n])
        at += n
        if partial.op is op:
            ctx.set(op.results[0], result)
        else:
            ctx.paired_results[partial.op] = result


def _within_warps(ctx: LoweringContext, op: Operation) -> _Partial:
    kind = op.kind.data
    axis = op.axis.value.data
    src_type: TensorType = op.operands[0].type
    lmap = ctx.layout_map(src_type)
    root_axis = lmap.kept[axis]
    value = ctx.get(op.operands[0])
    fkind = float_kind(src_type)
    soft_half = ctx.soft_half(fkind)
    if soft_half:
        value = half.half_to_f32(ctx.builder, value, fkind)
    is_float = fkind is not None
    unsigned = kind in ("umax", "umin", "argumax", "argumin")
    base_kind = {"argumax": "argmax", "argumin": "argmin"}.get(kind, kind)
    slots_per_dim = list(lmap.slots_per_dim)
    slot_dims = lmap.slot_dims
    vectors = [value]
    if base_kind in ("argmax", "argmin"):
        vectors.append(index_vectors(ctx, lmap)[axis])
    # a thread holding more slots than the axis has elements holds copies: keep one of each
    while slots_per_dim[root_axis] > lmap.root_shape[root_axis]:
        vectors = [_halves(ctx, v, slots_per_dim, slot_dims, root_axis)[0] for v in vectors]
        slots_per_dim[root_axis] //= 2

    copies = slots_per_dim != list(lmap.slots_per_dim)
    if base_kind in ("argmax", "argmin"):
        pair_combine = _arg_combiner(ctx, base_kind, is_float, unsigned)

        def combine(a: list[ir.Value], c: list[ir.Value]) -> list[ir.Value]:
            return list(pair_combine((a[0], a[1]), (c[0], c[1])))
    else:
        value_combine = _combiner(ctx, base_kind, is_float)

        def combine(a: list[ir.Value], c: list[ir.Value]) -> list[ir.Value]:
            return [value_combine(a[0], c[0])]

    if ctx.single_thread:
        vectors = _tree_within_thread(ctx, vectors, slots_per_dim, slot_dims, root_axis, combine)
    else:
        skip = _neutral_coordinates(lmap, op.operands[0], slots_per_dim, root_axis, kind, element_of(src_type))
        folded = None
        # in scalars, with a mask the slots share applied once (reduce_guards.py)
        if not copies and not soft_half and len(vectors) == 1:
            groups = _kept_groups(value.type.count, slots_per_dim, slot_dims, root_axis, skip)
            folded = reduce_guards.fold_slots(ctx, op.operands[0], base_kind, groups, value_combine)
        if folded is not None:
            vectors = [folded]
        else:
            vectors = _chain_within_thread(ctx, vectors, slots_per_dim, slot_dims, root_axis, combine, skip)
    vectors, unique_warps = _across_lanes(ctx, lmap, root_axis, vectors, combine)

    def finish(vectors: list[ir.Value]) -> ir.Value:
        if base_kind in ("argmax", "argmin"):
            result = vectors[1]
        else:
            result = half.f32_to_half(ctx.builder, vectors[0], fkind) if soft_half else vectors[0]
        if not isinstance(op.results[0].type, TensorType):
            result = ctx.builder.extract_element(result, ir.Constant(I32, 0))
        return result

    return _Partial(op, vectors, combine, finish, unique_warps)


def _across_lanes(ctx: LoweringContext, lmap, root_axis: int, vectors: list[ir.Value],
                  combine) -> tuple[list[ir.Value], int]:
    """Combine partial results held by different lanes (butterfly shuffles); also the number of warps
    holding distinct data along the axis. Only lanes and warps holding distinct data take part; the
    others hold copies."""
    root = lmap.root
    size = lmap.root_shape[root_axis]
    spt, tpw, wpc = root.size_per_thread[root_axis], root.threads_per_warp[root_axis], root.warps_per_cta[root_axis]
    unique_lanes = min(tpw, max(1, size // spt))
    unique_warps = min(wpc, max(1, size // (spt * tpw)))
    lane_stride = 1
    for d in root.order:
        if d == root_axis:
            break
        lane_stride *= root.threads_per_warp[d]
    offset = unique_lanes // 2
    while offset >= 1:
        mask = offset * lane_stride
        partners = [ctx.map_elements(v, lambda x, m=mask: ctx.target.shuffle_xor(ctx.builder, x, m)) for v in vectors]
        vectors = combine(vectors, partners)
        offset //= 2
    return vectors, unique_warps


def _across_threads(ctx: LoweringContext, op: Operation, lmap, root_axis: int, vectors: list[ir.Value],
                    combine) -> list[ir.Value]:
    """Combine partial results held by different lanes and warps (one reduction: rules_combine's, whose
    combine may give different bits in another order: no warp tree, whose lanes all store their result)."""
    vectors, unique_warps = _across_lanes(ctx, lmap, root_axis, vectors, combine)
    if unique_warps > 1:
        vectors = _across_warps(ctx, op, vectors, lmap.root, root_axis, unique_warps,
                                _warp_stride(lmap.root, root_axis), combine, commutative=False)
    return vectors


def _warp_stride(root, root_axis: int) -> int:
    """How far apart the warp ids of neighbours along the axis are."""
    stride = 1
    for d in root.order:
        if d == root_axis:
            break
        stride *= root.warps_per_cta[d]
    return stride


def _scalar_across_warps(ctx: LoweringContext, op: Operation, vectors: list[ir.Value], root, root_axis: int,
                         unique_warps: int, warp_stride: int, combine) -> list[ir.Value]:
    """A full reduction: lane 0 of each warp stores the warp's partial, then every warp loads all partials
    (one per lane) and finishes with a butterfly. One value per thread in flight keeps registers low."""
    b = ctx.builder
    target = ctx.target
    warp = target.warp_id(b)
    lane = target.lane_id(b)
    warp_coord = b.urem(b.udiv(warp, ir.Constant(I32, warp_stride)), ir.Constant(I32, root.warps_per_cta[root_axis]))
    own = b.urem(warp_coord, ir.Constant(I32, unique_warps))
    starts, offset = [], 0
    for v in vectors:
        starts.append(offset)
        offset += -(-unique_warps * byte_size(v.type.element) // 16) * 16
    at, wait = reduce_partners.scratch_place(ctx, op, offset)
    base = b.gep(target.shared_memory(ctx.module, b, 0), [ir.Constant(I32, at)], source_etype=ir.IntType(8))
    ctx.shared_bytes = max(ctx.shared_bytes, at + offset)
    if wait:
        target.barrier(b)
    with b.if_then(b.icmp_unsigned("==", lane, ir.Constant(I32, 0))):
        for v, start in zip(vectors, starts):
            element = v.type.element
            region = b.gep(base, [ir.Constant(I32, start)], source_etype=ir.IntType(8))
            b.store(b.extract_element(v, ir.Constant(I32, 0)), b.gep(region, [own], source_etype=element))
    target.barrier(b)
    source = b.urem(lane, ir.Constant(I32, unique_warps))
    loaded = []
    for v, start in zip(vectors, starts):
        element = v.type.element
        region = b.gep(base, [ir.Constant(I32, start)], source_etype=ir.IntType(8))
        item = b.load(b.gep(region, [source], source_etype=element), typ=element)
        loaded.append(b.insert_element(ir.Constant(v.type, None), item, ir.Constant(I32, 0)))
    mask = unique_warps // 2
    while mask >= 1:
        partners = [ctx.map_elements(v, lambda x, m=mask: target.shuffle_xor(b, x, m)) for v in loaded]
        loaded = combine(loaded, partners)
        mask //= 2
    return loaded


def _across_warps(ctx: LoweringContext, op: Operation, vectors: list[ir.Value], root, root_axis: int,
                  unique_warps: int, warp_stride: int, combine, commutative: bool = True) -> list[ir.Value]:
    """Each warp writes its partial results to shared memory; every thread then combines the warps' in order.

    Threads holding the same result slots form a group (`shared.thread_group`); threads holding copies store
    the same values to the same place. Per group, the scratch holds either
    - each slot's partials of all warps consecutively, where those fill 16 bytes and all partials would hold
      more than 16 registers: a thread stores its slots one by one and loads each slot's warps in 16-byte
      accesses, so each slot's combine can start as soon as its load arrives (softmax [4, 2048] over 8 warps:
      64 registers; 73 with all loads in flight at once); or
    - each warp's slots consecutively: one run of up to 16-byte accesses to store, one per warp to load
      (a layer norm's 4 rows over 2 warps: 1 store and 2 loads of 16 bytes instead of 4 and 8 of 4 bytes).
    """
    from .shared import load_run, store_run, store_slots, thread_group

    b = ctx.builder
    result_type = op.results[0].type
    count = vectors[0].type.count
    if not isinstance(result_type, TensorType) and unique_warps <= ctx.target.warp_size:
        return _scalar_across_warps(ctx, op, vectors, root, root_axis, unique_warps, warp_stride, combine)
    if isinstance(result_type, TensorType):
        result = ctx.layout_map(result_type)
        group, groups = thread_group(ctx, result, range(len(result.shape)))
    else:
        group, groups = ir.Constant(I32, 0), 1
    warp = ctx.target.warp_id(b)
    warp_coord = b.urem(b.udiv(warp, ir.Constant(I32, warp_stride)), ir.Constant(I32, root.warps_per_cta[root_axis]))
    own = b.urem(warp_coord, ir.Constant(I32, unique_warps))
    tree = commutative and reduce_warp_tree.fits(ctx, vectors, groups * count, unique_warps)
    starts, offset_bytes = [], 0
    for v in vectors:
        starts.append(offset_bytes)
        offset_bytes += reduce_warp_tree.scratch_bytes(groups * count, unique_warps, v.type.element) if tree else \
            -(-groups * unique_warps * count * byte_size(v.type.element) // 16) * 16
    at, wait = reduce_partners.scratch_place(ctx, op, offset_bytes)
    base = ctx.target.shared_memory(ctx.module, b, 0)
    buffers = [b.gep(base, [ir.Constant(I32, at + start)], source_etype=ir.IntType(8)) for start in starts]
    ctx.shared_bytes = max(ctx.shared_bytes, at + offset_bytes)
    group_start = b.mul(group, ir.Constant(I32, count * unique_warps))  # the group's first element
    slot_steps = ir.Constant(ir.VectorType(I32, count), list(range(count)))

    def warps_inner(v: ir.Value) -> bool:  # where all partials at once would hold more than 16 registers
        size = byte_size(v.type.element)
        return count > 1 and unique_warps * size >= 16 and unique_warps * count * size > 64

    if wait:
        ctx.target.barrier(b)
    if tree:
        return reduce_warp_tree.combine_in_a_warp(ctx, vectors, buffers, b.mul(group, ir.Constant(I32, count)), own,
                                                  groups * count, unique_warps, combine)
    for v, region in zip(vectors, buffers):
        if warps_inner(v):  # slot s of warp w at s * unique_warps + w
            places = b.mul(slot_steps, ir.Constant(slot_steps.type, [unique_warps] * count))
            store_slots(ctx, region, v, b.add(places, ctx.splat(b.add(group_start, own), count)))
        else:  # slot s of warp w at w * count + s
            store_run(ctx, region, v, b.add(group_start, b.mul(own, ir.Constant(I32, count))))
    ctx.target.barrier(b)
    by_vector = []  # per vector, per warp: the warp's partials
    for v, region in zip(vectors, buffers):
        if warps_inner(v):
            slots = [load_run(ctx, region, b.add(group_start, ir.Constant(I32, s * unique_warps)), v.type.element,
                              unique_warps) for s in range(count)]
            by_vector.append([_gather(ctx, slots, w) for w in range(unique_warps)])
        else:
            by_vector.append([load_run(ctx, region, b.add(group_start, ir.Constant(I32, w * count)), v.type.element,
                                       count) for w in range(unique_warps)])
    partials = [[warps[w] for warps in by_vector] for w in range(unique_warps)]
    # combine the warps' partials as a tree (log2 depth); neighbours first, so argmax keeps the first index
    while len(partials) > 1:
        partials = [combine(a, c) for a, c in zip(partials[0::2], partials[1::2])]
    return partials[0]


def _gather(ctx: LoweringContext, per_slot: list[ir.Value], w: int) -> ir.Value:
    """The vector of element w of each of `per_slot` (one vector per slot, one element per warp)."""
    b = ctx.builder
    out = ir.Constant(ir.VectorType(per_slot[0].type.element, len(per_slot)), None)
    for s, loaded in enumerate(per_slot):
        out = b.insert_element(out, b.extract_element(loaded, ir.Constant(I32, w)), ir.Constant(I32, s))
    return out
