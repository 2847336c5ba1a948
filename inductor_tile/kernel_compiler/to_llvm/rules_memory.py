"""Lowering rules of tt.load and tt.store.

A thread's slots are split into runs of consecutive slots that sit at consecutive
addresses (from the axis-info analysis and the layout's order); each run is one vector
access through the target, and a tile with no contiguity is gathered/scattered. i1 values
live in memory as bytes.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from .context import I1, I8, I32, LoweringContext, byte_size, lowering


def _largest_power_of_two_dividing(n: int) -> int:
    return n & -n if n > 0 else 1 << 30


def run_length(ctx: LoweringContext, ptr: SSAValue, mask: SSAValue | None, element: ir.Type) -> tuple[int, int]:
    """(slots per contiguous run, byte alignment of each run's first address) for a tensor of pointers.

    A run is consecutive slots along the layout's fastest dimension that are consecutive in memory
    (axis-info contiguity), aligned to their own size where the target needs that, and, on targets
    without per-element masks, equally masked (mask constancy). 1 means gather/scatter.
    """
    size = byte_size(element)
    lmap = ctx.layout_map(ptr.type)
    info = ctx.axis_info.get(ptr) if ctx.axis_info else None
    root = lmap.root
    fastest = root.order[0]
    if info is None or fastest not in lmap.kept:
        return 1, size
    dim = lmap.kept.index(fastest)
    slots_along = lmap.slots_per_dim[fastest]
    per_thread_run = slots_along if ctx.single_thread else root.size_per_thread[fastest]
    run = min(info.contiguity[dim], slots_along, per_thread_run, max(1, ctx.target.max_vector_bytes // size))
    alignment = _largest_power_of_two_dividing(info.divisibility[dim])
    if not ctx.target.per_element_masks:
        run = min(run, max(1, alignment // size))  # vector accesses must be aligned to their size
        if mask is not None:
            mask_info = ctx.axis_info.get(mask)
            run = min(run, mask_info.constancy[dim] if mask_info else 1)
    run = 1 << (max(run, 1).bit_length() - 1)  # a power of two that divides the slot count
    return run, max(size, min(alignment, run * size))


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
    result_type = op.results[0].type
    element_ir = ctx.memory_type(result_type.element_type if isinstance(result_type, TensorType) else result_type)
    is_bool = ctx.scalar_type(result_type.element_type if isinstance(result_type, TensorType) else result_type) == I1
    addresses = ctx.get(ptr_ssa)
    mask = ctx.get(mask_ssa) if mask_ssa is not None else None
    other = ctx.get(other_ssa) if other_ssa is not None else None
    if not isinstance(result_type, TensorType):
        value = _scalar_load(ctx, addresses, mask, other, element_ir, is_bool)
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
        loaded = ctx.target.gather(b, addresses, mask, other_mem)
    else:
        parts = []
        for start in range(0, n, run):
            address = b.extract_element(addresses, ir.Constant(I32, start))
            part_mask = _split(ctx, mask, start, run) if mask is not None else None
            if part_mask is not None and not ctx.target.per_element_masks:
                part_mask = b.extract_element(part_mask, ir.Constant(I32, 0))
            parts.append(ctx.target.load_contiguous(b, address, part_mask, _split(ctx, other_mem, start, run), alignment))
        loaded = _concat(ctx, parts)
    if is_bool:
        loaded = b.icmp_unsigned("!=", loaded, ir.Constant(vec_type, [0] * n))
    ctx.set(op.results[0], loaded)


def _scalar_load(ctx: LoweringContext, address: ir.Value, mask: ir.Value | None, other: ir.Value | None,
                 element: ir.Type, is_bool: bool) -> ir.Value:
    """A scalar load, branching around it when masked."""
    b = ctx.builder
    pointer = b.inttoptr(address, ir.PointerType())
    if mask is None:
        value = b.load(pointer, typ=element)
        return b.icmp_unsigned("!=", value, ir.Constant(I8, 0)) if is_bool else value
    fallback = other if other is not None else ir.Constant(I1 if is_bool else element, 0)
    with b.if_else(mask) as (then, otherwise):
        with then:
            loaded = b.load(pointer, typ=element)
            if is_bool:
                loaded = b.icmp_unsigned("!=", loaded, ir.Constant(I8, 0))
            then_block = b.block
        with otherwise:
            else_block = b.block
    phi = b.phi(loaded.type)
    phi.add_incoming(loaded, then_block)
    phi.add_incoming(fallback, else_block)
    return phi


@lowering("tt.store")
def lower_store(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    ptr_ssa, value_ssa, mask_ssa = op.ptr, op.value, op.mask
    value_type = value_ssa.type
    scalar_ty = value_type.element_type if isinstance(value_type, TensorType) else value_type
    element_ir = ctx.memory_type(scalar_ty)
    is_bool = ctx.scalar_type(scalar_ty) == I1
    addresses, value = ctx.get(ptr_ssa), ctx.get(value_ssa)
    mask = ctx.get(mask_ssa) if mask_ssa is not None else None
    if is_bool:
        value = b.zext(value, ir.VectorType(I8, value.type.count) if isinstance(value.type, ir.VectorType) else I8)
    if not isinstance(value_type, TensorType):
        pointer = b.inttoptr(addresses, ir.PointerType())
        if mask is None:
            b.store(value, pointer)
        else:
            with b.if_then(mask):
                b.store(value, pointer)
        return
    n = addresses.type.count
    run, alignment = run_length(ctx, ptr_ssa, mask_ssa, element_ir)
    if run == 1:
        ctx.target.scatter(b, addresses, value, mask)
        return
    for start in range(0, n, run):
        address = b.extract_element(addresses, ir.Constant(I32, start))
        part_mask = _split(ctx, mask, start, run) if mask is not None else None
        if part_mask is not None and not ctx.target.per_element_masks:
            part_mask = b.extract_element(part_mask, ir.Constant(I32, 0))
        ctx.target.store_contiguous(b, address, _split(ctx, value, start, run), part_mask, alignment)
