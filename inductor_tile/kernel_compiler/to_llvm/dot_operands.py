"""Tensor-core operands from shared memory: `ttg.convert_layout` of a 16-bit tile into a
`#ttg.dot_op` of `#ttg.nvidia_mma` (NVIDIA), with vector stores and `ldmatrix`.

The tile is written row-major into shared memory (column-major when the source's threads
hold runs down the columns, e.g. a transposed load; `.trans` is then flipped for both
operands), each row padded by 8 elements (16 bytes):
the 8 row addresses one `ldmatrix` reads then fall in 8 different 16-byte bank groups for
any power-of-two row length of 16 or more. Each thread writes its runs of consecutive
elements (its sizePerThread along the rows) as one vector store.

Then each `ldmatrix.x4` loads four 8 x 8 matrices, lanes 8i..8i+7 giving the row
addresses of matrix i; every lane receives, per matrix, the pair (row lane/4, columns
2 (lane%4), +1), which is exactly one 32-bit register of an mma.sync fragment:
- a ([M, K]): matrices {rows g, k lo}, {rows g+8, k lo}, {rows g, k hi}, {rows g+8, k hi}
  of one 16 x 16 piece: a0..a3 of one instruction;
- b ([K, N], stored with k as the row): `.trans` gives the pair (k = 2 (lane%4), +1; n =
  lane/4); matrices {k lo, n block s}, {k hi, s}, {k lo, s+1}, {k hi, s+1}: the b registers
  of two instructions (`.x2` when the warp has a single n block).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.ir import Operation

from ..ir.dot_layouts import DotOperand, NvidiaMma
from ..ir.layouts import LayoutMap
from ..ir.ttg import layout_of
from .context import I16, I32, I64, LoweringContext
from .dot_wgmma import (WgmmaOperand, WgmmaTile, a_in_shared_memory, choose_padding, fence_async_shared, store_offset,
                        swizzled_layout, tile_layout, warpgroups, wgmma_dot)
from .rules_tensor import index_vectors

ROW_PADDING = 8  # elements after each row in shared memory
MAX_RUN = 8  # elements per vector store (16 bytes)


def mma_operand(op: Operation) -> DotOperand | None:
    """The mma operand layout a conversion produces, if it is one this file lowers."""
    layout = layout_of(op.results[0].type)
    shape = op.results[0].type.get_shape()
    if not (isinstance(layout, DotOperand) and isinstance(layout.parent, NvidiaMma) and len(shape) == 2):
        return None
    return layout


@dataclass
class SharedOperand:
    """An operand left in shared memory by its conversion; the dot loads each fragment with
    ldmatrix just before the instructions that use it (so few fragments are live at a time)."""

    base: ir.Value
    stride: int
    transposed: bool
    dst_map: LayoutMap
    mma: NvidiaMma

    def a_registers(self, ctx: LoweringContext, p: int, q: int) -> list[ir.Value]:
        """The four a registers of row pair p, k step q."""
        b, o = ctx.builder, IROps(ctx.builder)
        lane, warp = ctx.target.lane_id(b), ctx.target.warp_id(b)
        row, col = smem_row_col(o, *a_address(o, lane, warp, p, q, self.mma.warps_per_cta[0]), self.transposed)
        return _ldmatrix(ctx, _address(ctx, self.base, row, col, self.stride), 4, transposed=self.transposed)

    def b_registers(self, ctx: LoweringContext, q: int, s0: int, per_load: int) -> list[ir.Value]:
        """The b registers of k step q for n blocks s0 (.. s0 + 1): (h = 0, 1) per block."""
        b, o = ctx.builder, IROps(ctx.builder)
        lane, warp = ctx.target.lane_id(b), ctx.target.warp_id(b)
        row, col = smem_row_col(o, *b_address(o, lane, warp, q, s0, per_load, self.mma.warps_per_cta[1]),
                                self.transposed)
        return _ldmatrix(ctx, _address(ctx, self.base, row, col, self.stride), 2 * per_load,
                         transposed=not self.transposed)


def tile_elements(shape: tuple[int, ...], transposed: bool) -> int:
    """Elements of a padded-rows tile of `shape` (stored column by column when `transposed`)."""
    rows, cols = shape
    return rows * cols + (cols if transposed else rows) * ROW_PADDING


#: operations that may lie between a deferred operand conversion and its dot: they touch no shared memory
REGISTER_ONLY = ("arith.constant", "tt.splat")


def deferred_dot(op: Operation) -> Operation | None:
    """The dot whose fragments of this conversion it loads itself: when the conversion's only
    user is a tt.dot of the same block and nothing but the dot's other operand conversion (or its
    ring_read, ir/ttg_async.py) and register-only constants (`REGISTER_ONLY`: the zero accumulator of
    `tl.dot(a, b)`) lies between them (nothing else may reuse shared memory before the dot has read
    it). The accumulator's conversion does not count as an operand's: lowered through shared memory
    (`shared.exchange`), it overwrote the tile before the dot read it (tf32's wrong products on the H100).
    Nor does a conversion from a dot's result (`from_mma_result`: attention's p), on either side."""
    uses = list(op.results[0].uses)
    if len(uses) != 1 or uses[0].operation.name != "tt.dot" or uses[0].index > 1 or from_mma_result(op):
        return None
    dot, index = uses[0].operation, uses[0].index
    between = op.next_op
    while between is not None and between is not dot:
        if between.name in REGISTER_ONLY:
            between = between.next_op
            continue
        operand = between.name == "ttg.ring_read" or (between.name == "ttg.convert_layout"
                                                       and not from_mma_result(between))
        users = [(u.operation, u.index) for u in between.results[0].uses] if operand else []
        if users != [(dot, 1 - index)]:  # only the dot's other operand (a or b), used by the dot alone
            return None
        between = between.next_op
    return dot if between is dot else None


def from_mma_result(conversion: Operation) -> bool:
    """Whether `conversion` converts a dot's result (attention's p): a register shuffle when both mma layouts
    have the same warps, which stores nothing for the dot, else a conversion through shared memory of its
    own (`lower_mma_operand_conversion` without a dot). Neither may count as a stored operand of a dot: the
    other operand's conversion would drop its barrier or misplace its tile (`_stored_with_partner`)."""
    return isinstance(layout_of(conversion.operands[0].type), NvidiaMma)


def _wgmma_tile(ctx: LoweringContext, conversion: Operation, op_idx: int, groups: int) -> WgmmaTile:
    """The shared-memory tile of a wgmma operand conversion (dot_wgmma.py)."""
    return wgmma_tile(ctx.layout_map(conversion.operands[0].type), op_idx, groups)


def wgmma_tile(src_map: LayoutMap, op_idx: int, groups: int, swizzled: bool = False) -> WgmmaTile:
    """The shared-memory tile of a wgmma operand stored from layout `src_map` (dot_wgmma.py): padded
    core matrices, or with `swizzled` (cp.async rings) Hopper's swizzled rows where the tile allows."""
    transposed = stored_transposed(src_map)
    mn_major = transposed if op_idx == 0 else not transposed
    rows, cols = src_map.shape
    mn_size, k_size = (rows, cols) if op_idx == 0 else (cols, rows)
    if swizzled and (tile := swizzled_layout(mn_size, k_size, mn_major, store_run(src_map, transposed))):
        return tile
    padding = choose_padding(src_map, op_idx, mn_major, store_run(src_map, transposed), groups)
    return tile_layout(mn_size, k_size, mn_major, padding)


def _store_for_wgmma(ctx: LoweringContext, op: Operation, dot: Operation, value: ir.Value, src_map: LayoutMap,
                     op_idx: int) -> ir.Value:
    """Store the tile where wgmma reads it; a's tile first, b's after it (128-byte aligned)."""
    b = ctx.builder
    groups = warpgroups(dot)
    tile = _wgmma_tile(ctx, op, op_idx, groups)
    offset = 0
    if op_idx == 1 and a_in_shared_memory(dot):
        offset = -(-_wgmma_tile(ctx, dot.operands[0].owner, 0, groups).elements // 64) * 64
    ctx.shared_bytes = max(ctx.shared_bytes, (offset + tile.elements) * 2)
    base = ctx.target.shared_memory(ctx.module, b, (offset + tile.elements) * 2)
    if not (op_idx == 1 and _stored_with_partner(op, op.prev_op, dot)):
        ctx.target.barrier(b)
    if offset:
        base = b.gep(base, [ir.Constant(I32, offset)], source_etype=I16)
    _store_rows(ctx, base, value, src_map, 0, stored_transposed(src_map),
                offset_of=lambda o, row, col: store_offset(o, tile, op_idx, row, col, groups))
    if not (op_idx == 0 and _stored_with_partner(op, op.next_op, dot)):
        fence_async_shared(ctx)
        ctx.target.barrier(b)
    ctx.__dict__.setdefault("shared_operands", {})[op.results[0]] = WgmmaOperand(base, tile)
    dst_map = ctx.layout_map(op.results[0].type)
    return ir.Constant(ir.VectorType(value.type.element, dst_map.num_slots), None)  # read by the dot only


def _stored_with_partner(op: Operation, neighbour: Operation | None, dot: Operation | None) -> bool:
    """Whether `op` and its neighbour are the two operand conversions, a then b, of the same deferred
    `dot`: b's region lies after a's, so both are stored between one pair of barriers (the barrier
    before a also orders b's stores after every earlier reader; the one after b covers a's stores)."""
    if dot is None or neighbour is None or neighbour.name != "ttg.convert_layout" or mma_operand(neighbour) is None:
        return False
    first, second = (op, neighbour) if op.next_op is neighbour else (neighbour, op)
    return (deferred_dot(neighbour) is dot and first.results[0] is dot.operands[0]
            and second.results[0] is dot.operands[1])


def lower_mma_operand_conversion(ctx: LoweringContext, op: Operation) -> ir.Value:
    b = ctx.builder
    layout = mma_operand(op)
    assert layout is not None
    src_map, dst_map = ctx.layout_map(op.operands[0].type), ctx.layout_map(op.results[0].type)
    value = ctx.get(op.operands[0])
    element = value.type.element
    if element != I16:
        value = b.bitcast(value, ir.VectorType(I16, value.type.count))
    rows, cols = src_map.shape
    transposed = stored_transposed(src_map)
    stride = (rows if transposed else cols) + ROW_PADDING
    dot = deferred_dot(op)
    if dot is not None and wgmma_dot(dot) and (layout.op_idx == 1 or a_in_shared_memory(dot)):
        return _store_for_wgmma(ctx, op, dot, value, src_map, layout.op_idx)
    offset = 0
    if dot is not None and layout.op_idx == 1:  # b after a's region: a may still be read from it
        a_shape = tuple(dot.operands[0].type.get_shape())
        offset = max(tile_elements(a_shape, True), tile_elements(a_shape, False))  # a's region, either padding
        offset = -(-offset // ROW_PADDING) * ROW_PADDING  # 16-byte aligned
    size = offset + tile_elements((rows, cols), transposed)
    ctx.shared_bytes = max(ctx.shared_bytes, size * 2)
    base = ctx.target.shared_memory(ctx.module, b, size * 2)
    if not (layout.op_idx == 1 and _stored_with_partner(op, op.prev_op, dot)):
        ctx.target.barrier(b)
    if offset:
        base = b.gep(base, [ir.Constant(I32, offset)], source_etype=I16)
    _store_rows(ctx, base, value, src_map, stride, transposed)
    if not (layout.op_idx == 0 and _stored_with_partner(op, op.next_op, dot)):
        ctx.target.barrier(b)
    if dot is not None:
        deferred = ctx.__dict__.setdefault("shared_operands", {})
        deferred[op.results[0]] = SharedOperand(base, stride, transposed, dst_map, layout.parent)
        return ir.Constant(ir.VectorType(element, dst_map.num_slots), None)  # read through the SharedOperand only
    load = _load_a if layout.op_idx == 0 else _load_b
    out = load(ctx, base, dst_map, layout.parent, stride, transposed)
    return out if element == I16 else b.bitcast(out, ir.VectorType(element, out.type.count))


def stored_transposed(src_map: LayoutMap) -> bool:
    """Whether the tile goes to shared memory column by column: when the source layout's
    threads hold runs along the columns (a transposed load, such as attention's k^T), so that
    the runs stay vector stores."""
    return src_map.root.order[0] == 0 and src_map.root.size_per_thread[0] > 1


def smem_row_col(o, first, second, r, transposed: bool):
    """Shared-memory (row, column) of row r of an 8 x 8 matrix at tensor index (first, second),
    whose rows run along the tensor's first dimension."""
    return (o.add(second, r), first) if transposed else (o.add(first, r), second)


def store_run(src_map: LayoutMap, transposed: bool) -> int:
    """Consecutive slots of a thread stored as one vector: its run along the stored rows."""
    root = src_map.root
    along = 0 if transposed else 1
    run = root.size_per_thread[along] if root.order[0] == along else 1
    return max(1, min(run, MAX_RUN, src_map.shape[along]))


def _store_rows(ctx: LoweringContext, base: ir.Value, value: ir.Value, src_map: LayoutMap, stride: int,
                transposed: bool, offset_of=None) -> None:
    """Every slot at row * stride + column (column * stride + row when transposed), runs of
    consecutive elements along the stored rows as vector stores; or at `offset_of(ops, row, column)`
    (tensor indices) when given."""
    b = ctx.builder
    rows_index, cols_index = index_vectors(ctx, src_map)
    run = store_run(src_map, transposed)
    if transposed and offset_of is None:
        rows_index, cols_index = cols_index, rows_index
    for first in range(0, src_map.num_slots, run):
        slot = ir.Constant(I32, first)
        row, col = b.extract_element(rows_index, slot), b.extract_element(cols_index, slot)
        if offset_of is not None:
            offset = offset_of(IROps(b), row, col)
        else:
            offset = b.add(b.mul(row, ir.Constant(I32, stride)), col)
        pointer = b.gep(base, [offset], source_etype=I16)
        if run == 1:
            b.store(b.extract_element(value, slot), pointer)
        else:
            b.store(ctx.shuffle(value, list(range(first, first + run))), pointer, align=2 * run)


def _ldmatrix(ctx: LoweringContext, address: ir.Value, count: int, transposed: bool) -> list[ir.Value]:
    """`count` (2 or 4) 32-bit registers of `ldmatrix` from this lane's shared-memory row address."""
    registers = ", ".join(f"${i}" for i in range(count))
    text = f"ldmatrix.sync.aligned.m8n8.x{count}{'.trans' if transposed else ''}.shared.b16 {{{registers}}}, [${count}];"
    constraints = ",".join(["=r"] * count + ["l"])
    result = ir.LiteralStructType([I32] * count)
    asm = ir.InlineAsm(ir.FunctionType(result, [I64]), text, constraints, side_effect=True)
    out = ctx.builder.call(asm, [address])
    return [ctx.builder.extract_value(out, i) for i in range(count)]


def _address(ctx: LoweringContext, base: ir.Value, row: ir.Value, col: ir.Value, stride: int) -> ir.Value:
    b = ctx.builder
    offset = b.add(b.mul(row, ir.Constant(I32, stride)), col)  # i32 values (IROps)
    return b.ptrtoint(b.gep(base, [offset], source_etype=I16), I64)


def _place(ctx: LoweringContext, out: ir.Value, register: ir.Value, slots: tuple[int, int]) -> ir.Value:
    pair = ctx.builder.bitcast(register, ir.VectorType(I16, 2))
    for j, slot in enumerate(slots):
        out = ctx.builder.insert_element(out, ctx.builder.extract_element(pair, ir.Constant(I32, j)), ir.Constant(I32, slot))
    return out


class IntOps:
    """The integer operations the address formulas use, on Python ints (tests) ..."""

    def add(self, a, b): return a + b  # noqa: E704
    def mul(self, a, b): return a * b  # noqa: E704
    def rem(self, a, b): return a % b  # noqa: E704
    def shr(self, a, b): return a >> b  # noqa: E704
    def and_(self, a, b): return a & b  # noqa: E704
    def xor(self, a, b): return a ^ b  # noqa: E704
    def const(self, a): return a  # noqa: E704


class IROps:
    """... and on i32 LLVM values (the lowering)."""

    def __init__(self, builder: ir.IRBuilder):
        self.b = builder

    def _c(self, x):
        return ir.Constant(I32, x) if isinstance(x, int) else x

    def add(self, a, b): return self.b.add(self._c(a), self._c(b))  # noqa: E704
    def mul(self, a, b): return self.b.mul(self._c(a), self._c(b))  # noqa: E704
    def rem(self, a, b): return self.b.urem(self._c(a), self._c(b))  # noqa: E704
    def shr(self, a, b): return self.b.lshr(self._c(a), self._c(b))  # noqa: E704
    def and_(self, a, b): return self.b.and_(self._c(a), self._c(b))  # noqa: E704
    def xor(self, a, b): return self.b.xor(self._c(a), self._c(b))  # noqa: E704
    def const(self, a): return ir.Constant(I32, a)  # noqa: E704


def a_loads(dst_map: LayoutMap) -> list[tuple[int, int]]:
    """The (p, q) of each ldmatrix.x4 of operand a: row pair p, k step q."""
    return [(p, q) for p in range(dst_map.slots_per_dim[0] // 2) for q in range(dst_map.shape[1] // 16)]


def a_address(o, lane, warp, p: int, q: int, warps_m: int):
    """(first row, first column, row within) of the 8 x 8 matrix of the tile whose row this lane
    points ldmatrix at, for load (p, q) of operand a."""
    row_in_matrix, matrix = o.and_(lane, 7), o.shr(lane, 3)
    rep = o.add(o.and_(matrix, 1), 2 * p)  # matrices 1, 3: the instruction's rows g + 8
    row = o.add(o.mul(o.rem(warp, warps_m), 8), o.mul(rep, 8 * warps_m))
    col = o.add(o.mul(o.shr(matrix, 1), 8), 16 * q)  # matrices 2, 3: k + 8
    return row, col, row_in_matrix


def a_slots(dst_map: LayoutMap, p: int, q: int) -> list[tuple[int, int]]:
    """The two slots each of the four registers of load (p, q) fills."""
    return [tuple(dst_map.slot_of_coords((2 * p + index % 2, 4 * q + 2 * (index // 2) + j)) for j in (0, 1))
            for index in range(4)]  # type: ignore[misc]


def b_loads(dst_map: LayoutMap) -> list[tuple[int, int, int]]:
    """(q, first n block, n blocks per load) of each ldmatrix.trans of operand b."""
    col_reps = dst_map.slots_per_dim[1]
    per_load = 2 if col_reps >= 2 else 1
    return [(q, s0, per_load) for q in range(dst_map.shape[0] // 16) for s0 in range(0, col_reps, per_load)]


def b_address(o, lane, warp, q: int, s0: int, per_load: int, warps_n: int):
    """As `a_address`, for load (q, s0) of operand b (rows are k)."""
    row_in_matrix, matrix = o.and_(lane, 7), o.shr(lane, 3)
    row = o.add(o.mul(o.and_(matrix, 1), 8), 16 * q)  # matrices 1, 3: k + 8
    rep = o.add(o.shr(matrix, 1), s0) if per_load == 2 else o.const(s0)  # matrices 2, 3: the next n block
    col = o.add(o.mul(o.rem(warp, warps_n), 8), o.mul(rep, 8 * warps_n))
    return row, col, row_in_matrix


def b_slots(dst_map: LayoutMap, q: int, s0: int, per_load: int) -> list[tuple[int, int]]:
    return [tuple(dst_map.slot_of_coords((4 * q + 2 * (index % 2) + j, s0 + index // 2)) for j in (0, 1))
            for index in range(2 * per_load)]  # type: ignore[misc]


def _load_a(ctx: LoweringContext, base: ir.Value, dst_map: LayoutMap, mma: NvidiaMma, stride: int,
            transposed: bool) -> ir.Value:
    b, o = ctx.builder, IROps(ctx.builder)
    lane, warp = ctx.target.lane_id(b), ctx.target.warp_id(b)
    out = ir.Constant(ir.VectorType(I16, dst_map.num_slots), None)
    for p, q in a_loads(dst_map):
        row, col = smem_row_col(o, *a_address(o, lane, warp, p, q, mma.warps_per_cta[0]), transposed)
        registers = _ldmatrix(ctx, _address(ctx, base, row, col, stride), 4, transposed=transposed)
        for register, slots in zip(registers, a_slots(dst_map, p, q)):
            out = _place(ctx, out, register, slots)
    return out


def _load_b(ctx: LoweringContext, base: ir.Value, dst_map: LayoutMap, mma: NvidiaMma, stride: int,
            transposed: bool) -> ir.Value:
    b, o = ctx.builder, IROps(ctx.builder)
    lane, warp = ctx.target.lane_id(b), ctx.target.warp_id(b)
    out = ir.Constant(ir.VectorType(I16, dst_map.num_slots), None)
    for q, s0, per_load in b_loads(dst_map):
        row, col = smem_row_col(o, *b_address(o, lane, warp, q, s0, per_load, mma.warps_per_cta[1]), transposed)
        registers = _ldmatrix(ctx, _address(ctx, base, row, col, stride), 2 * per_load, transposed=not transposed)
        for register, slots in zip(registers, b_slots(dst_map, q, s0, per_load)):
            out = _place(ctx, out, register, slots)
    return out
