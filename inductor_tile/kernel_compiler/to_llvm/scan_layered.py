"""A scan along an axis that spans lanes and warps, in layers (GPU targets).

The elements along the axis are laid out as repetitions of one CTA tile; within a tile, each
thread holds `spt` consecutive elements, lanes hold consecutive chunks, then warps. For each
repetition:
1. within a thread: a sequential scan of its chunk (the chunk's total is its last element);
2. across lanes: a butterfly over the chunk totals (xor-shuffles, log2(lanes) steps) that keeps,
   per lane, the combination of the chunks before it (`exclusive`, with a flag: a combine need
   not have an identity) and of its whole group;
3. across warps: each warp's total through shared memory, every thread combining the totals of
   the warps before its own, in order;
then the repetitions' totals are carried from one repetition to the next, and every element is
combined with what precedes its chunk. `reverse` runs every layer from the other end. The
combine always gets (earlier, later) in scan order, so it need only be associative.
Used when the layout is blocked and one CTA tile fits in the axis; otherwise rules_combine
exchanges through shared memory.
"""

from __future__ import annotations

from llvmlite import ir

from ..ir.layouts import Blocked, LayoutMap
from .context import I1, I32, LoweringContext, byte_size


def applies(lmap: LayoutMap, axis: int) -> bool:
    """The layout is blocked (not a slice) and one CTA tile along the axis fits in it."""
    root = lmap.root
    return isinstance(lmap.layout, Blocked) and root.cta_tile(axis) <= lmap.shape[axis]


def _select(b: ir.IRBuilder, cond: ir.Value, a: list[ir.Value], c: list[ir.Value]) -> list[ir.Value]:
    return [b.select(cond, x, y) for x, y in zip(a, c)]


def scan_layered(ctx: LoweringContext, vectors: list[ir.Value], lmap: LayoutMap, axis: int, reverse: bool,
                 combine) -> list[ir.Value]:
    b = ctx.builder
    root: Blocked = lmap.root
    spt, tpw, wpc = root.size_per_thread[axis], root.threads_per_warp[axis], root.warps_per_cta[axis]
    size = lmap.shape[axis]
    reps = size // root.cta_tile(axis)
    n = lmap.num_slots

    # --- slots grouped by their coordinate along the axis (group c: repetition c // spt, element c % spt)
    members: list[list[int]] = [[] for _ in range(reps * spt)]
    for slot in range(n):
        members[lmap.slot_coords(slot)[axis]].append(slot)
    groups = [[ctx.shuffle(v, members[c]) for v in vectors] for c in range(reps * spt)]
    width = len(members[0])

    # --- 1. within each chunk
    chunk_totals = []
    for r in range(reps):
        order = list(range(r * spt, (r + 1) * spt))
        if reverse:
            order.reverse()
        for previous, c in zip(order, order[1:]):
            groups[c] = combine(groups[previous], groups[c])
        chunk_totals.append(groups[order[-1]])

    # --- 2. across lanes (butterfly)
    lane_stride = warp_stride = 1
    for d in root.order:
        if d == axis:
            break
        lane_stride *= root.threads_per_warp[d]
        warp_stride *= root.warps_per_cta[d]
    lane, warp = ctx.target.lane_id(b), ctx.target.warp_id(b)
    lane_c = b.urem(b.udiv(lane, ir.Constant(I32, lane_stride)), ir.Constant(I32, tpw))
    warp_c = b.urem(b.udiv(warp, ir.Constant(I32, warp_stride)), ir.Constant(I32, wpc))
    false = ir.Constant(I1, 0)
    prefixes, has_prefix, totals = [], [], []
    for r in range(reps):
        total, exclusive, has = chunk_totals[r], chunk_totals[r], false
        mask = 1
        while mask < tpw:
            partner = [ctx.map_elements(v, lambda x, m=mask * lane_stride: ctx.target.shuffle_xor(b, x, m))
                       for v in total]
            bit = b.icmp_unsigned("!=", b.and_(lane_c, ir.Constant(I32, mask)), ir.Constant(I32, 0))
            partner_first = b.not_(bit) if reverse else bit
            total = combine(_select(b, partner_first, partner, total), _select(b, partner_first, total, partner))
            joined = _select(b, has, combine(partner, exclusive), partner)
            exclusive = _select(b, partner_first, joined, exclusive)
            has = b.or_(has, partner_first)
            mask *= 2
        prefixes.append(exclusive)
        has_prefix.append(has)
        totals.append(total)

    # --- 3. across warps (shared memory)
    if wpc > 1:
        prefixes, has_prefix, totals = _across_warps(ctx, lmap, axis, members, reps, wpc, warp_c, reverse,
                                                     prefixes, has_prefix, totals, combine)

    # --- 4. repetitions after repetitions, then every element after what precedes its chunk
    true = ir.Constant(I1, 1)
    carry = None
    for r in (reversed(range(reps)) if reverse else range(reps)):
        prefix, has = prefixes[r], has_prefix[r]
        if carry is not None:
            prefix = _select(b, has, combine(carry, prefix), carry)
            has = true
        carry = totals[r] if carry is None else combine(carry, totals[r])
        for c in range(r * spt, (r + 1) * spt):
            groups[c] = _select(b, has, combine(prefix, groups[c]), groups[c])

    # --- back to slot order
    out = []
    for k, v in enumerate(vectors):
        result = ir.Constant(v.type, None)
        for c in range(reps * spt):
            for position, slot in enumerate(members[c]):
                item = b.extract_element(groups[c][k], ir.Constant(I32, position)) if width > 1 else \
                    b.extract_element(groups[c][k], ir.Constant(I32, 0))
                result = b.insert_element(result, item, ir.Constant(I32, slot))
        out.append(result)
    return out


def _across_warps(ctx: LoweringContext, lmap: LayoutMap, axis: int, members: list[list[int]], reps: int, wpc: int,
                  warp_c: ir.Value, reverse: bool, prefixes, has_prefix, totals, combine):
    """Each warp stores its group totals of every repetition; each thread combines those of the warps before
    its own (in scan order) into its prefix, and all of them into the repetition's total.

    The scratch holds, per warp along the axis and per group of threads holding the same elements off the
    axis (`shared.thread_group`), the totals of all repetitions consecutively: one run of up to 16 bytes per
    access on both sides."""
    from .shared import load_run, store_run, thread_group

    b = ctx.builder
    group, groups = thread_group(ctx, lmap, [d for d in range(len(lmap.shape)) if d != axis])
    count = len(members[0])
    run = reps * count
    base = ctx.target.shared_memory(ctx.module, b, 0)
    starts, offset = [], 0
    for v in totals[0]:
        starts.append(offset)
        offset += -(-wpc * groups * run * byte_size(v.type.element) // 16) * 16
    ctx.shared_bytes = max(ctx.shared_bytes, offset)
    regions = [b.gep(base, [ir.Constant(I32, s)], source_etype=ir.IntType(8)) for s in starts]

    def place(w) -> ir.Value:  # the first element of warp w's totals for this thread's group
        w = w if isinstance(w, ir.Value) else ir.Constant(I32, w)
        return b.mul(b.add(b.mul(w, ir.Constant(I32, groups)), group), ir.Constant(I32, run))

    ctx.target.barrier(b)
    for k, region in enumerate(regions):
        store_run(ctx, region, _concatenate(ctx, [totals[r][k] for r in range(reps)]), place(warp_c))
    ctx.target.barrier(b)
    order = list(reversed(range(wpc))) if reverse else list(range(wpc))
    loaded_by_warp = {}
    for w in order:
        runs = [load_run(ctx, region, place(w), v.type.element, run) for v, region in zip(totals[0], regions)]
        loaded_by_warp[w] = [[ctx.shuffle(v, list(range(r * count, (r + 1) * count))) if reps > 1 else v
                              for v in runs] for r in range(reps)]
    new_prefixes, new_has, new_totals = [], [], []
    for r in range(reps):
        acc = before = None
        has = ir.Constant(I1, 0)
        for w in order:
            loaded = loaded_by_warp[w][r]
            acc = loaded if acc is None else combine(acc, loaded)
            is_before = b.icmp_unsigned(">" if reverse else "<", ir.Constant(I32, w), warp_c)
            before = acc if before is None else _select(b, is_before, acc, before)
            has = b.or_(has, is_before)
        lane_prefix, lane_has = prefixes[r], has_prefix[r]
        joined = combine(before, lane_prefix)
        prefix = _select(b, has, _select(b, lane_has, joined, before), lane_prefix)
        new_prefixes.append(prefix)
        new_has.append(b.or_(has, lane_has))
        new_totals.append(acc)
    return new_prefixes, new_has, new_totals


def _concatenate(ctx: LoweringContext, vectors: list[ir.Value]) -> ir.Value:
    """One vector of the elements of `vectors` (equal lengths, a power-of-two count) in order."""
    while len(vectors) > 1:
        vectors = [ctx.builder.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(I32, 2 * lo.type.count),
                                                                  list(range(2 * lo.type.count))))
                   for lo, hi in zip(vectors[0::2], vectors[1::2])]
    return vectors[0]
