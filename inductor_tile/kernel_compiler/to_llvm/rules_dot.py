"""Lowering of `tt.dot`: `a @ b + acc` per thread, in one of three ways chosen by the layouts.

- result in `#ttg.nvidia_mma`: tensor cores (`dot_mma.py`); in `#ttg.amd_mfma` / `#ttg.amd_wmma`: AMD
  matrix cores (`dot_mfma.py`, `dot_wmma.py`);
- one thread holds everything (the CPU): a, b and acc go to stack buffers in row-major
  order and two counted loops compute each result row as a vector: for every k,
  row += a[m, k] * b[k, :] (one vector FMA per k), so the code size does not grow with K;
- otherwise (GPU FMA path): the operands are in the dot-operand layouts of the result's
  blocked layout, so each thread holds the rows of a and columns of b its result elements
  need and computes them with K unrolled FMAs each.

Operands are widened to the accumulator's type first (fp16/bf16 -> f32, int8 -> i32), the
accumulator too; an fp16 result is rounded once at the end. fp32 operands of a "tf32" dot
are rounded to tf32 first (`dot_tf32.py`); "tf32x3" and "ieee" compute in full fp32 here.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from ..ir.dot_layouts import NvidiaMma
from ..ir.layouts import AmdMfma, AmdWmma, LayoutMap
from ..ir.ttg import layout_of
from . import half
from .context import F32, F64, I32, LoweringContext, float_kind, intrinsic_suffix, lowering
from .dot_tf32 import round_to_tf32, tf32_precision


def compute_type(kind: str | None) -> ir.Type:
    """The type products are summed in, by the result's float kind (None: int32)."""
    return {"f64": F64, None: I32}.get(kind, F32)


def widen(ctx: LoweringContext, value: ir.Value, kind: str | None, to: ir.Type) -> ir.Value:
    """Elements of float kind `kind` (None: an integer) converted to `to` exactly."""
    b = ctx.builder
    like = ir.VectorType(to, value.type.count)
    if kind is None:
        return value if value.type.element == to else b.sext(value, like)
    if ctx.soft_half(kind):
        return half.half_to_f32(b, value, kind)
    return value if value.type.element == to else b.fpext(value, like)


def narrow(ctx: LoweringContext, value: ir.Value, kind: str | None) -> ir.Value:
    """The computed result rounded to the result's kind (only fp16 results need it)."""
    if kind != "f16":
        return value
    if ctx.soft_half(kind):
        return half.f32_to_half(ctx.builder, value, kind)
    return ctx.builder.fptrunc(value, ir.VectorType(ir.HalfType(), value.type.count))


def multiply_add(ctx: LoweringContext, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
    """a * b + c: one fused rounding for floats, wrapping for integers."""
    if isinstance(c.type.element if isinstance(c.type, ir.VectorType) else c.type, ir.IntType):
        return ctx.builder.add(ctx.builder.mul(a, b), c)
    fma = ctx.intrinsic(f"llvm.fma.{intrinsic_suffix(c.type)}", c.type, [c.type] * 3)
    return ctx.builder.call(fma, [a, b, c])


def dot_operands(ctx: LoweringContext, op: Operation) -> tuple[ir.Value, ir.Value, ir.Value, ir.Type]:
    """a, b and acc widened to the compute type, and that type."""
    out_kind, in_kind = float_kind(op.results[0].type), float_kind(op.operands[0].type)
    ty = compute_type(out_kind)
    a, b = (widen(ctx, ctx.get(v), in_kind, ty) for v in op.operands[:2])
    acc = widen(ctx, ctx.get(op.operands[2]), out_kind, ty)
    return a, b, acc, ty


@lowering("tt.dot")
def lower_dot(ctx: LoweringContext, op: Operation) -> None:
    if isinstance(layout_of(op.results[0].type), NvidiaMma):
        from .dot_mma import lower_mma_dot

        ctx.set(op.results[0], lower_mma_dot(ctx, op))
        return
    if isinstance(layout_of(op.results[0].type), AmdMfma):
        from .dot_mfma import lower_mfma_dot

        ctx.set(op.results[0], lower_mfma_dot(ctx, op))
        return
    if isinstance(layout_of(op.results[0].type), AmdWmma):
        from .dot_wmma import lower_wmma_dot

        ctx.set(op.results[0], lower_wmma_dot(ctx, op))
        return
    maps = [ctx.layout_map(v.type) for v in (*op.operands[:2], op.results[0])]
    if ctx.single_thread:
        result = _dot_loops(ctx, op, *maps)
    else:
        a, b, acc, _ = dot_operands(ctx, op)
        if tf32_precision(op) == "tf32":
            a, b = round_to_tf32(ctx, a), round_to_tf32(ctx, b)
        result = _dot_unrolled(ctx, a, b, acc, *maps)
    ctx.set(op.results[0], narrow(ctx, result, float_kind(op.results[0].type)))


# ===------------------------------------------------------------------------===
# GPU FMA path: unrolled per thread
# ===------------------------------------------------------------------------===
def _dot_unrolled(ctx: LoweringContext, a: ir.Value, b: ir.Value, acc: ir.Value,
                  a_map: LayoutMap, b_map: LayoutMap, c_map: LayoutMap) -> ir.Value:
    builder = ctx.builder
    k_size = a_map.shape[-1]
    out = acc
    for slot in range(c_map.num_slots):
        coords = list(c_map.slot_coords(slot))
        total = builder.extract_element(acc, ir.Constant(I32, slot))
        for k in range(k_size):
            a_coords, b_coords = coords.copy(), coords.copy()
            a_coords[-1], b_coords[-2] = k, k
            x = builder.extract_element(a, ir.Constant(I32, a_map.slot_of_coords(tuple(a_coords))))
            y = builder.extract_element(b, ir.Constant(I32, b_map.slot_of_coords(tuple(b_coords))))
            total = multiply_add(ctx, x, y, total)
        out = builder.insert_element(out, total, ir.Constant(I32, slot))
    return out


# ===------------------------------------------------------------------------===
# CPU path: row-major buffers and loops
# ===------------------------------------------------------------------------===
def _row_major_order(lmap: LayoutMap) -> list[int]:
    """The slot holding each element, elements in row-major order (one thread holds them all)."""
    where: dict[tuple[int, ...], int] = {}
    for slot in range(lmap.num_slots):
        where.setdefault(lmap.index(slot), slot)
    order = []
    for linear in range(len(where)):
        index, rest = [], linear
        for size in reversed(lmap.shape):
            index.append(rest % size)
            rest //= size
        order.append(where[tuple(reversed(index))])
    return order


def _entry_alloca(ctx: LoweringContext, ty: ir.Type, count: int) -> ir.Value:
    """A stack buffer of `count` elements, allocated once in the function's entry block."""
    b = ctx.builder
    here = b.block
    b.position_at_start(ctx.function.entry_basic_block)
    buffer = b.alloca(ir.ArrayType(ty, count))
    b.position_at_end(here)
    return buffer


def _to_buffer(ctx: LoweringContext, value: ir.Value, lmap: LayoutMap) -> ir.Value:
    buffer = _entry_alloca(ctx, value.type.element, value.type.count)
    _store_vector(ctx, ctx.shuffle(value, _row_major_order(lmap)), ctx.builder.bitcast(buffer, value.type.element.as_pointer()))
    return buffer


def _load_vector(ctx: LoweringContext, pointer: ir.Value, ty: ir.VectorType) -> ir.Value:
    return ctx.builder.load(ctx.builder.bitcast(pointer, ty.as_pointer()), align=4)


def _store_vector(ctx: LoweringContext, value: ir.Value, pointer: ir.Value) -> None:
    ctx.builder.store(value, ctx.builder.bitcast(pointer, value.type.as_pointer()), align=4)


def _counted_loop(ctx: LoweringContext, count: int, carried: ir.Value | None, body) -> ir.Value | None:
    """for i in range(count): carried = body(i, carried); returns the final carried value."""
    b = ctx.builder
    before = b.block
    header = ctx.function.append_basic_block("dot.loop")
    after = ctx.function.append_basic_block("dot.done")
    b.branch(header)
    b.position_at_end(header)
    index = b.phi(I32)
    index.add_incoming(ir.Constant(I32, 0), before)
    value = None
    if carried is not None:
        value = b.phi(carried.type)
        value.add_incoming(carried, before)
    new_value = body(index, value)
    following = b.add(index, ir.Constant(I32, 1))
    end = b.block
    index.add_incoming(following, end)
    if carried is not None:
        value.add_incoming(new_value, end)
    b.cbranch(b.icmp_unsigned("<", following, ir.Constant(I32, count)), header, after)
    b.position_at_end(after)
    return new_value


def _dot_loops(ctx: LoweringContext, op: Operation, a_map: LayoutMap, b_map: LayoutMap, c_map: LayoutMap) -> ir.Value:
    """The operands are stored as they are and widened row by row inside the loop (widening whole
    half-precision tiles at once made LLVM's code generation slow)."""
    builder = ctx.builder
    *batch, m_size, k_size = a_map.shape
    n_size = b_map.shape[-1]
    in_kind, out_kind = float_kind(op.operands[0].type), float_kind(op.results[0].type)
    element = compute_type(out_kind)
    a, b = ctx.get(op.operands[0]), ctx.get(op.operands[1])
    if tf32_precision(op) == "tf32":
        a, b = round_to_tf32(ctx, a), round_to_tf32(ctx, b)
    acc = widen(ctx, ctx.get(op.operands[2]), out_kind, element)
    row_type = ir.VectorType(element, n_size)
    a_buf, b_buf, c_buf = (_to_buffer(ctx, v, m) for v, m in ((a, a_map), (b, b_map), (acc, c_map)))

    def at(buffer: ir.Value, offset: ir.Value) -> ir.Value:
        return builder.gep(buffer, [ir.Constant(I32, 0), offset], inbounds=True)

    def row(r: ir.Value, _: None) -> None:
        batch_index = builder.udiv(r, ir.Constant(I32, m_size))
        b_base = builder.mul(batch_index, ir.Constant(I32, k_size * n_size))
        c_row = at(c_buf, builder.mul(r, ir.Constant(I32, n_size)))
        a_row = builder.mul(r, ir.Constant(I32, k_size))

        def step(k: ir.Value, total: ir.Value) -> ir.Value:
            x = builder.load(at(a_buf, builder.add(a_row, k)))
            x = widen(ctx, ctx.splat(x, 1), in_kind, element)
            y_ptr = at(b_buf, builder.add(b_base, builder.mul(k, ir.Constant(I32, n_size))))
            y = widen(ctx, _load_vector(ctx, y_ptr, ir.VectorType(b.type.element, n_size)), in_kind, element)
            return multiply_add(ctx, ctx.shuffle(x, [0] * n_size), y, total)

        total = _counted_loop(ctx, k_size, _load_vector(ctx, c_row, row_type), step)
        _store_vector(ctx, total, c_row)

    rows = m_size
    for size in batch:
        rows *= size
    _counted_loop(ctx, rows, None, row)
    result = _load_vector(ctx, c_buf, acc.type)
    # back from row-major to the result's slot order
    order = _row_major_order(c_map)
    inverse = [0] * len(order)
    for linear, slot in enumerate(order):
        inverse[slot] = linear
    return ctx.shuffle(result, inverse)
