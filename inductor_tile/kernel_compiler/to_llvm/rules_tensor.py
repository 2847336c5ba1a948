"""Lowering rules of program ids, ranges, shape ops, layout conversions and pointer arithmetic.

Shape ops move slots between vectors with `shufflevector`. The slot that feeds each
result slot comes from the layouts (`ir/layouts.py`): for broadcast and expand_dims the
mapping is the same in every thread; when one thread holds the whole tile (the CPU),
reshape and convert_layout are in-register permutations too.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from ..ir.layouts import AmdMatrixCoreLayout, LayoutMap
from .context import I32, LoweringContext, LoweringError, byte_size, constant_like, lowering


def thread_offsets(ctx: LoweringContext, lmap: LayoutMap) -> list[ir.Value]:
    """Per kept dimension, the i32 index offset of this thread's slots (lane and warp part)."""
    if ctx.single_thread:
        return [ir.Constant(I32, 0) for _ in lmap.kept]
    b = ctx.builder
    root = lmap.root
    lane, warp = ctx.target.lane_id(b), ctx.target.warp_id(b)
    lane_c, warp_c = {}, {}
    lane_stride = warp_stride = 1
    for d in root.order:
        lane_c[d] = b.urem(b.udiv(lane, ir.Constant(I32, lane_stride)), ir.Constant(I32, root.threads_per_warp[d]))
        warp_c[d] = b.urem(b.udiv(warp, ir.Constant(I32, warp_stride)), ir.Constant(I32, root.warps_per_cta[d]))
        lane_stride *= root.threads_per_warp[d]
        warp_stride *= root.warps_per_cta[d]
    out = []
    for d in lmap.kept:
        spt, tpw = root.size_per_thread[d], root.threads_per_warp[d]
        out.append(b.add(b.mul(lane_c[d], ir.Constant(I32, spt)), b.mul(warp_c[d], ir.Constant(I32, spt * tpw))))
    return out


def index_vectors(ctx: LoweringContext, lmap: LayoutMap) -> list[ir.Value]:
    """Per dimension, an i32 vector: the tensor index each of this thread's slots holds."""
    offsets = thread_offsets(ctx, lmap)
    n = lmap.num_slots
    out = []
    for position, (offset, size) in enumerate(zip(offsets, lmap.shape)):
        constants = [lmap.slot_offset(s)[position] for s in range(n)]
        if isinstance(offset, ir.Constant) and offset.constant == 0:
            out.append(ir.Constant(ir.VectorType(I32, n), [c % size for c in constants]))
            continue
        summed = ctx.builder.add(ir.Constant(ir.VectorType(I32, n), constants), ctx.splat(offset, n))
        out.append(ctx.builder.urem(summed, constant_like(summed.type, size)))
    return out


def same_thread_permutation(src: LayoutMap, dst: LayoutMap, to_src_index) -> list[int]:
    """For one-thread layouts: the source slot feeding each destination slot."""
    where = {}
    for s in range(src.num_slots):
        where.setdefault(src.index(s), s)
    perm = []
    for s in range(dst.num_slots):
        key = to_src_index(dst.index(s))
        if key not in where:
            raise LoweringError(f"no slot holds index {key} for a layout conversion")
        perm.append(where[key])
    return perm


def uniform_permutation(ctx: LoweringContext, src: LayoutMap, dst: LayoutMap, to_src_index) -> list[int] | None:
    """The source slot feeding each destination slot, if every thread has its data already and the
    mapping is the same in every thread (so one static shuffle works); else None."""
    lanes, warps = ctx.target.warp_size, ctx.num_warps
    first: list[int] | None = None
    for lane in range(lanes):
        for warp in range(warps):
            where: dict[tuple[int, ...], int] = {}
            for s in range(src.num_slots):
                where.setdefault(src.index(s, lane, warp), s)
            perm = []
            for s in range(dst.num_slots):
                slot = where.get(to_src_index(dst.index(s, lane, warp)))
                if slot is None:
                    return None
                perm.append(slot)
            if first is None:
                first = perm
            elif perm != first:
                return None
    return first


# ===------------------------------------------------------------------------===
# Program ids and ranges
# ===------------------------------------------------------------------------===
@lowering("tt.get_program_id")
def lower_program_id(ctx: LoweringContext, op: Operation) -> None:
    ctx.set(op.results[0], ctx.target.program_id(ctx.builder, ctx.function, op.axis.value.data))


@lowering("tt.get_num_programs")
def lower_num_programs(ctx: LoweringContext, op: Operation) -> None:
    ctx.set(op.results[0], ctx.target.num_programs(ctx.builder, ctx.function, op.axis.value.data))


@lowering("tt.make_range")
def lower_make_range(ctx: LoweringContext, op: Operation) -> None:
    lmap = ctx.layout_map(op.results[0].type)
    (indices,) = index_vectors(ctx, lmap)
    start = op.start.value.data
    if start and isinstance(indices, ir.Constant):
        indices = ir.Constant(indices.type, [c.constant + start for c in indices.constant])
    elif start:
        indices = ctx.builder.add(indices, constant_like(indices.type, start))
    ctx.set(op.results[0], indices)


# ===------------------------------------------------------------------------===
# Shape ops
# ===------------------------------------------------------------------------===
@lowering("tt.splat")
def lower_splat(ctx: LoweringContext, op: Operation) -> None:
    n = ctx.layout_map(op.results[0].type).num_slots
    ctx.set(op.results[0], ctx.splat(ctx.get(op.operands[0]), n))


@lowering("tt.broadcast")
def lower_broadcast(ctx: LoweringContext, op: Operation) -> None:
    src_map = ctx.layout_map(op.operands[0].type)
    dst_map = ctx.layout_map(op.results[0].type)
    src_shape = src_map.shape
    if ctx.single_thread:
        perm = same_thread_permutation(src_map, dst_map,
                                       lambda idx: tuple(0 if s == 1 else i for i, s in zip(idx, src_shape)))
    else:
        if src_map.layout != dst_map.layout:
            raise LoweringError("tt.broadcast needs the same layout on both sides")
        perm = []
        for s in range(dst_map.num_slots):
            coords = dst_map.slot_coords(s)
            src_coords = tuple(0 if src_map.root_shape[d] == 1 and dst_map.root_shape[d] != 1 else c
                               for d, c in enumerate(coords))
            perm.append(src_map.slot_of_coords(src_coords))
    ctx.set(op.results[0], ctx.shuffle(ctx.get(op.operands[0]), perm))


@lowering("tt.expand_dims")
def lower_expand_dims(ctx: LoweringContext, op: Operation) -> None:
    src_map = ctx.layout_map(op.operands[0].type)
    dst_map = ctx.layout_map(op.results[0].type)
    axis = op.axis.value.data
    if ctx.single_thread:
        perm = same_thread_permutation(src_map, dst_map, lambda idx: idx[:axis] + idx[axis + 1:])
    else:
        if src_map.root != dst_map.root:
            raise LoweringError("tt.expand_dims needs its operand in a slice of the result's layout")
        perm = []
        for s in range(dst_map.num_slots):
            coords = list(dst_map.slot_coords(s))
            coords[dst_map.kept[axis]] = 0
            perm.append(src_map.slot_of_coords(tuple(coords)))
    ctx.set(op.results[0], ctx.shuffle(ctx.get(op.operands[0]), perm))


def _linear(index: tuple[int, ...], shape: tuple[int, ...]) -> int:
    linear = 0
    for i, s in zip(index, shape):
        linear = linear * s + i
    return linear


def _delinear(linear: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for s in reversed(shape):
        out.append(linear % s)
        linear //= s
    return tuple(reversed(out))


@lowering("tt.reshape")
def lower_reshape(ctx: LoweringContext, op: Operation) -> None:
    src_map = ctx.layout_map(op.operands[0].type)
    dst_map = ctx.layout_map(op.results[0].type)
    if not ctx.single_thread:
        from .shared import exchange

        ctx.set(op.results[0], exchange(ctx, ctx.get(op.operands[0]), src_map, dst_map, src_map.shape, dst_map.shape))
        return
    perm = same_thread_permutation(src_map, dst_map,
                                   lambda idx: _delinear(_linear(idx, dst_map.shape), src_map.shape))
    ctx.set(op.results[0], ctx.shuffle(ctx.get(op.operands[0]), perm))


@lowering("ttg.convert_layout")
def lower_convert_layout(ctx: LoweringContext, op: Operation) -> None:
    src_map = ctx.layout_map(op.operands[0].type)
    dst_map = ctx.layout_map(op.results[0].type)
    perm = uniform_permutation(ctx, src_map, dst_map, lambda idx: idx)
    if perm is None and ctx.target.mma_version >= 2:
        from .dot_operands import lower_mma_operand_conversion, mma_operand

        if mma_operand(op) is not None and byte_size(ctx.scalar_type(op.results[0].type.element_type)) == 2:
            ctx.set(op.results[0], lower_mma_operand_conversion(ctx, op))
            return
        from .dot_tf32_store import tf32_conversion

        if mma_operand(op) is not None and (stored := tf32_conversion(ctx, op)) is not None:
            ctx.set(op.results[0], stored)
            return
    if perm is None and ctx.target.mma_version >= 2:
        from .dot_epilogue import applies, mma_exchange

        value = ctx.get(op.operands[0])
        if applies(src_map, dst_map, byte_size(value.type.element)):
            ctx.set(op.results[0], mma_exchange(ctx, value, src_map, dst_map))
            return
    if perm is None and ctx.target.name == "hip":  # operands of AMD matrix cores: vector LDS accesses
        from .dot_amd_operands import applies as operand_applies, operand_exchange

        if operand_applies(src_map, dst_map):
            ctx.set(op.results[0], operand_exchange(ctx, ctx.get(op.operands[0]), src_map, dst_map))
            return
    if perm is None and isinstance(src_map.layout, AmdMatrixCoreLayout):  # a large accumulator: in chunks
        from .dot_mfma_epilogue import applies, chunked_exchange

        value = ctx.get(op.operands[0])
        if applies(src_map, dst_map, byte_size(value.type.element)):
            ctx.set(op.results[0], chunked_exchange(ctx, value, src_map, dst_map))
            return
    if perm is None:
        from .shared import exchange

        ctx.set(op.results[0], exchange(ctx, ctx.get(op.operands[0]), src_map, dst_map, src_map.shape, dst_map.shape))
        return
    ctx.set(op.results[0], ctx.shuffle(ctx.get(op.operands[0]), perm))


# ===------------------------------------------------------------------------===
# Pointers (i64 addresses)
# ===------------------------------------------------------------------------===
@lowering("tt.addptr")
def lower_addptr(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    ptr, offset = ctx.get(op.operands[0]), ctx.get(op.operands[1])
    pointer_type = op.operands[0].type
    pointer_type = pointer_type.element_type if isinstance(pointer_type, TensorType) else pointer_type
    size = byte_size(ctx.memory_type(pointer_type.pointee))
    offset64 = b.sext(offset, ptr.type) if _width(offset.type) < 64 else offset
    ctx.set(op.results[0], b.add(ptr, b.mul(offset64, constant_like(ptr.type, size))))


def _width(ty: ir.Type) -> int:
    element = ty.element if isinstance(ty, ir.VectorType) else ty
    return element.width


@lowering("tt.bitcast", "tt.int_to_ptr")
def lower_pointer_cast(ctx: LoweringContext, op: Operation) -> None:
    ctx.set(op.results[0], ctx.get(op.operands[0]))

