"""Lowering of tt.generic_reduce and tt.scan: a user's combine region applied to slot vectors.

The combine region holds scalar ops; `region_combine` lowers it on whole vectors of slots
(LoweringContext.scalar_lanes makes its scalar types vector types; its constants become
splats), so a combine step costs the same as one of tt.reduce's built-in kinds.

- generic_reduce goes through tt.reduce's scheme (rules_reduce.py): within a thread by
  halving (CPU) or in a chain (GPU), across lanes by butterfly shuffles, across warps
  through shared memory.
- scan: when every element along the axis is in the same thread (always on the CPU), a
  Hillis-Steele scan in registers: log2(n) steps, each one shuffle that brings element
  i - d next to element i, one combine of the whole vector, one select keeping elements
  i < d. Across lanes and warps, in layers (scan_layered.py: thread, lane butterfly, warps
  through shared memory, repetitions); for layouts that does not cover (slices, a CTA tile
  longer than the axis) the Hillis-Steele steps exchange elements through shared memory.
  The combine always sees (earlier, later), so an associative, not commutative, one works.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from ..ir.layouts import LayoutMap
from ..ir.tt_types import numel as _numel
from .context import I1, I32, RULES, LoweringContext, LoweringError, byte_size, lowering
from .rules_reduce import _across_threads, _chain_within_thread, _halves, _tree_within_thread
from . import scan_layered
from .rules_permute import to_layout
from .rules_tensor import index_vectors


def region_combine(ctx: LoweringContext, op: Operation):
    """combine(a, b) -> c over lists of N values (vectors or scalars): the op's region lowered on them."""
    block = op.combine.block
    terminator = block.last_op
    body = [inner for inner in block.ops if inner is not terminator]

    def combine(first: list[ir.Value], second: list[ir.Value]) -> list[ir.Value]:
        values = list(first) + list(second)
        lanes = values[0].type.count if isinstance(values[0].type, ir.VectorType) else 0
        saved = ctx.scalar_lanes
        ctx.scalar_lanes = lanes
        try:
            for arg, value in zip(block.args, values):
                ctx.set(arg, value)
            for inner in body:
                _lower_in_region(ctx, inner, lanes)
            return [ctx.get(v) for v in terminator.operands]
        finally:
            ctx.scalar_lanes = saved

    return combine


def _lower_in_region(ctx: LoweringContext, op: Operation, lanes: int) -> None:
    rule = RULES.get(op.name)
    if rule is None:
        raise LoweringError(f"no LLVM lowering for `{op.name}` (in a combine function)")
    if op.name == "arith.constant" and lanes:
        ctx.scalar_lanes = 0
        rule(ctx, op)
        ctx.scalar_lanes = lanes
        ctx.set(op.results[0], ctx.splat(ctx.get(op.results[0]), lanes))
        return
    rule(ctx, op)


def _operands_in_one_layout(ctx: LoweringContext, op: Operation) -> tuple[list[ir.Value], LayoutMap]:
    lmap = ctx.layout_map(op.srcs[0].type)
    return [to_layout(ctx, ctx.get(v), ctx.layout_map(v.type), lmap) for v in op.srcs], lmap


# ===------------------------------------------------------------------------===
# tt.generic_reduce
# ===------------------------------------------------------------------------===
@lowering("tt.generic_reduce")
def lower_generic_reduce(ctx: LoweringContext, op: Operation) -> None:
    vectors, lmap = _operands_in_one_layout(ctx, op)
    root_axis = lmap.kept[op.axis.value.data]
    slots_per_dim, slot_dims = list(lmap.slots_per_dim), lmap.slot_dims
    while slots_per_dim[root_axis] > lmap.root_shape[root_axis]:  # copies of the same elements: keep one
        vectors = [_halves(ctx, v, slots_per_dim, slot_dims, root_axis)[0] for v in vectors]
        slots_per_dim[root_axis] //= 2
    combine = region_combine(ctx, op)
    within = _tree_within_thread if ctx.single_thread else _chain_within_thread
    vectors = within(ctx, vectors, slots_per_dim, slot_dims, root_axis, combine)
    vectors = _across_threads(ctx, op, lmap, root_axis, vectors, combine)
    for result, vector in zip(op.results, vectors):
        if not isinstance(result.type, TensorType):
            vector = ctx.builder.extract_element(vector, ir.Constant(I32, 0))
        ctx.set(result, vector)


# ===------------------------------------------------------------------------===
# tt.scan
# ===------------------------------------------------------------------------===
def _axis_in_thread(ctx: LoweringContext, lmap: LayoutMap, axis: int) -> bool:
    if ctx.single_thread:
        return True
    d = lmap.kept[axis]
    return lmap.root.threads_per_warp[d] == 1 and lmap.root.warps_per_cta[d] == 1


def _scan_in_registers(ctx: LoweringContext, vectors: list[ir.Value], lmap: LayoutMap, axis: int, reverse: bool,
                       combine) -> list[ir.Value]:
    b = ctx.builder
    size = lmap.shape[axis]
    n = lmap.num_slots
    where: dict[tuple[int, ...], int] = {}
    for s in range(n):
        where.setdefault(lmap.index(s), s)
    step = 1
    while step < size:
        perm, take = [], []
        for s in range(n):
            index = list(lmap.index(s))
            source = index[axis] + step if reverse else index[axis] - step
            if 0 <= source < size:
                index[axis] = source
                perm.append(where[tuple(index)])
                take.append(1)
            else:
                perm.append(s)
                take.append(0)
        earlier = [ctx.shuffle(v, perm) for v in vectors]
        combined = combine(earlier, vectors)
        keep = ir.Constant(ir.VectorType(I1, n), take)
        vectors = [b.select(keep, c, v) for c, v in zip(combined, vectors)]
        step *= 2
    return vectors


def _scan_through_shared_memory(ctx: LoweringContext, vectors: list[ir.Value], lmap: LayoutMap, axis: int,
                                reverse: bool, combine) -> list[ir.Value]:
    from .shared import linear_indices, load_slots, store_slots

    b = ctx.builder
    shape, n = lmap.shape, lmap.num_slots
    size, total = shape[axis], _numel(shape)
    stride = _numel(shape[axis + 1:])
    position = index_vectors(ctx, lmap)[axis]
    linear = linear_indices(ctx, lmap, shape)
    starts, offset = [], 0
    for v in vectors:
        starts.append(offset)
        offset += -(-total * byte_size(v.type.element) // 16) * 16
    ctx.shared_bytes = max(ctx.shared_bytes, offset)
    base = ctx.target.shared_memory(ctx.module, b, 0)
    regions = [b.gep(base, [ir.Constant(I32, start)], source_etype=ir.IntType(8)) for start in starts]
    vec = ir.VectorType(I32, n)
    step = 1
    while step < size:
        ctx.target.barrier(b)
        for v, region in zip(vectors, regions):
            store_slots(ctx, region, v, linear)
        ctx.target.barrier(b)
        if reverse:
            has = b.icmp_signed("<", b.add(position, ir.Constant(vec, [step] * n)), ir.Constant(vec, [size] * n))
            source = b.add(linear, ir.Constant(vec, [step * stride] * n))
        else:
            has = b.icmp_signed(">=", position, ir.Constant(vec, [step] * n))
            source = b.sub(linear, ir.Constant(vec, [step * stride] * n))
        source = b.select(has, source, linear)
        earlier = [load_slots(ctx, region, source, v.type.element) for v, region in zip(vectors, regions)]
        combined = combine(earlier, vectors)
        vectors = [b.select(has, c, v) for c, v in zip(combined, vectors)]
        step *= 2
    return vectors


@lowering("tt.scan")
def lower_scan(ctx: LoweringContext, op: Operation) -> None:
    vectors, lmap = _operands_in_one_layout(ctx, op)
    axis, reverse = op.axis.value.data, bool(op.reverse.value.data)
    combine = region_combine(ctx, op)
    if _axis_in_thread(ctx, lmap, axis):
        vectors = _scan_in_registers(ctx, vectors, lmap, axis, reverse, combine)
    elif scan_layered.applies(lmap, axis):
        vectors = scan_layered.scan_layered(ctx, vectors, lmap, axis, reverse, combine)
    else:
        vectors = _scan_through_shared_memory(ctx, vectors, lmap, axis, reverse, combine)
    for result, vector in zip(op.results, vectors):
        ctx.set(result, to_layout(ctx, vector, lmap, ctx.layout_map(result.type)))
