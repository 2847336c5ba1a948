"""`tt.dot` on Hopper's warpgroup MMA: `wgmma.mma_async.m64nNk16` with both operands in shared memory.

Used for a dot whose result has `#ttg.nvidia_mma<{versionMajor = 3}>` (4 warps along M, see
`passes/accelerate_matmul.py`) when both operands come straight from their conversions
(`dot_operands.deferred_dot`); otherwise the same layout is computed with mma.sync.

Shared memory ("interleaved", no swizzle): an operand tile is made of 8 x 16-byte core
matrices, each 128 contiguous bytes. Its two dimensions are MN (M for a, N for b) and K.
- K-major (a as loaded, b transposed): a core matrix holds 8 MN indices x 8 consecutive k;
  the element (mn, k) lies at (mn/8) SBO + (k/8) LBO + (mn%8) 16 B + (k%8) 2 B;
- MN-major (b as loaded, a transposed): a core matrix holds 8 k x 8 consecutive mn;
  (mn, k) lies at (mn/8) SBO + (k/8) LBO + (k%8) 16 B + (mn%8) 2 B.
SBO steps along MN and LBO along K in both (the matrix descriptor's two strides). One of
them gets a padding of a few 16-byte units, chosen so that the 16-byte stores of the source
layout's threads fall in different banks (`choose_padding`).

The slots of cp.async rings (`dot_async.py`) use Hopper's swizzled layouts instead, as Triton and
CUTLASS store wgmma operands (`swizzled_layout`): rows of 128, 64 or 32 bytes along the contiguous
dimension (K-major: a row per mn, of k; MN-major: a row per k, of mn), 8-row groups SBO apart,
blocks of the contiguous dimension LBO apart, and the 16-byte chunks of each 128-byte line XORed
with the line's index in the swizzle's repeat (1 KiB for 128 bytes), which the tensor core undoes
from the address. No padding, no bank conflict for 16-byte copies; descriptors carry the mode.
Descriptor start fields are computed in 32 bits, and from warp-uniform values only (the warpgroup
through `shfl.sync.idx`, once in the entry block), so that ptxas keeps them in uniform registers. Each
operand's descriptor is built once (a ring's: slot 0's, loop-invariant) and moved to the slot and to each
instruction's part of the tile by 64-bit adds of 16-byte units (`Descriptors`), as Triton does.

The rows of a are permuted on the way in. With W warpgroups (4W warps along M) the mma
layout gives warp w = 4 wg + wl the tensor rows 64W i + 32W h + 32 wg + 8 wl + g (its
repetitions 2i + h), and the warpgroup's wgmma instruction i gives warp wl its rows
16 wl + 8h + g; so tensor row m is stored as row 64 (W i + wg) + 16 wl + 8h + g
(`wgmma_row`), and warpgroup wg's instruction i reads the 64 rows from 64 (W i + wg). The
accumulator of instruction i is then, per thread, the slots (2i + h, 2s + j) of the mma
layout in the order d[4s + 2h + j] (row g, then g + 8, of each 8-column block s).

The stores are followed by `fence.proxy.async.shared::cta` (wgmma reads through the async
proxy) and a barrier; the dot issues `wgmma.fence`, every instruction (k steps outer), one
`commit_group` and `wait_group 0`, so that the tiles may be overwritten afterwards; a dot whose only
user is a `ttg.dot_wait` (operands in cp.async rings, `dot_async.py`) leaves its group in flight.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation

from ..ir.dot_layouts import NvidiaMma
from ..ir.layouts import LayoutMap
from ..ir.ttg import layout_of
from .context import F32, I32, I64, LoweringContext, float_kind

WGMMA_M, WGMMA_K = 64, 16
CORE_ELEMENTS = 64  # 8 x 8 16-bit elements: 128 bytes
_TYPES = {"f16": "f16", "bf16": "bf16"}


def _stored_for(dot: Operation, index: int) -> bool:
    """Whether operand `index` of `dot` is a conversion that leaves its tile in shared memory for it,
    or a read of a shared-memory ring (dot_async.py)."""
    from .dot_operands import deferred_dot, mma_operand

    conversion = dot.operands[index].owner
    if isinstance(conversion, Operation) and conversion.name == "ttg.ring_read":
        return True
    return (isinstance(conversion, Operation) and conversion.name == "ttg.convert_layout"
            and mma_operand(conversion) is not None and deferred_dot(conversion) is dot)


def wgmma_dot(dot: Operation) -> bool:
    """Whether `dot` is computed with wgmma: an mma version 3 result whose b is a conversion that
    leaves its tile in shared memory for it. a is read from shared memory too when its conversion
    is of the same kind or a ring read (`a_in_shared_memory`; attention's q under TILE_PIPELINE=resident),
    else from registers (its mma.sync fragments: attention's q, loaded once, and p, computed in registers)."""
    layout = layout_of(dot.results[0].type)
    return isinstance(layout, NvidiaMma) and layout.version == 3 and _stored_for(dot, 1)


def a_in_shared_memory(dot: Operation) -> bool:
    return _stored_for(dot, 0)


def warpgroups(dot: Operation) -> int:
    """Warpgroups along M of a wgmma dot (1 or 2)."""
    layout = layout_of(dot.results[0].type)
    assert isinstance(layout, NvidiaMma)
    return layout.warps_per_cta[0] // 4


def wgmma_row(o, m, groups: int = 1):
    """Instruction row order (in shared memory) of tensor row m of operand a, for `groups`
    (1 or 2) warpgroups along M."""
    shift = groups.bit_length() - 1  # log2
    block = o.shr(m, 6 + shift)  # i
    half = o.and_(o.shr(m, 5 + shift), 1)  # h
    group = o.and_(o.shr(m, 5), groups - 1)  # wg
    warp = o.and_(o.shr(m, 3), 3)  # wl
    first = o.mul(o.add(o.mul(block, groups), group), 64)
    return o.add(o.add(first, o.mul(warp, 16)), o.add(o.mul(half, 8), o.and_(m, 7)))


@dataclass(frozen=True)
class WgmmaTile:
    """Where an operand tile lies in shared memory (strides in 16-bit elements). `swizzle` 0: padded
    core matrices; 32, 64 or 128: rows of that many bytes whose 16-byte chunks are permuted by the
    row (Hopper's swizzle modes, `swizzled_layout`)."""

    mn_major: bool
    sbo: int  # between core matrices (swizzled: groups of 8 rows) along MN, or along K when MN-major and swizzled
    lbo: int  # between core matrices along K (swizzled: between row blocks of the other dimension)
    elements: int  # the tile's size, padding included
    swizzle: int = 0  # bytes per swizzled row

    def logical(self, o, mn, k):
        """Element offset of (mn, k) before the swizzle (what a descriptor's start address holds)."""
        if self.swizzle:
            shift = (self.swizzle // 2).bit_length() - 1  # log2 of the elements per row
            row = self.swizzle // 2 - 1
            if self.mn_major:  # rows of MN elements, one per k; blocks of rows along MN LBO apart
                return o.add(o.add(o.mul(o.shr(mn, shift), self.lbo), o.mul(k, self.swizzle // 2)), o.and_(mn, row))
            return o.add(o.add(o.mul(o.shr(k, shift), self.lbo), o.mul(mn, self.swizzle // 2)), o.and_(k, row))
        inner = (o.add(o.mul(o.and_(k, 7), 8), o.and_(mn, 7)) if self.mn_major
                 else o.add(o.mul(o.and_(mn, 7), 8), o.and_(k, 7)))
        return o.add(o.add(o.mul(o.shr(mn, 3), self.sbo), o.mul(o.shr(k, 3), self.lbo)), inner)

    def offset(self, o, mn, k):
        """Element offset of (mn, k) (mn already permuted for operand a): with a swizzle, the 16-byte
        chunk within each 128-byte line is XORed with the line's index within the swizzle's repeat."""
        where = self.logical(o, mn, k)
        if not self.swizzle:
            return where
        return o.xor(where, o.mul(o.and_(o.shr(where, 6), self.swizzle // 16 - 1), 8))


def tile_layout(mn_size: int, k_size: int, mn_major: bool, padding: int) -> WgmmaTile:
    """The tile of mn_size x k_size elements with `padding` elements (a multiple of 8) after each
    group of core matrices along the outer stride."""
    if mn_major:  # core matrices along MN first, then K
        sbo = CORE_ELEMENTS + padding
        lbo = (mn_size // 8) * sbo
    else:
        sbo = CORE_ELEMENTS
        lbo = (mn_size // 8) * CORE_ELEMENTS + padding
    return WgmmaTile(mn_major, sbo, lbo, (k_size // 8) * lbo)


SWIZZLE_MODES = {0: 0, 128: 1, 64: 2, 32: 3}  # bytes per row -> the descriptor's mode (bits 62-63)
SWIZZLE_ALIGNMENT = 1024  # bytes: the repeat of the 128-byte swizzle, where a swizzled tile must start


def swizzled_layout(mn_size: int, k_size: int, mn_major: bool, run: int) -> WgmmaTile | None:
    """The tile in rows of the widest swizzle (128, 64 or 32 bytes) the contiguous dimension fills (K for
    K-major, MN for MN-major), as Triton and CUTLASS store wgmma operands; None when it fills none or
    the stores are not 16-byte runs. A row holds `swizzle / 2` elements; K-major: row mn, 8-row groups
    SBO apart, blocks of K columns LBO apart; MN-major: row k, 8-row groups SBO apart, blocks of MN
    columns LBO apart. The 16-byte chunks of the 8 (64-byte mode: 4, 32-byte: 2) lines of 128 bytes
    of each repeat are permuted by XOR with the line index; the hardware undoes it from the address,
    so the tile must start at a multiple of SWIZZLE_ALIGNMENT."""
    contiguous = mn_size if mn_major else k_size
    swizzle = next((s for s in (128, 64, 32) if contiguous * 2 >= s), 0)
    if not swizzle or run != 8 or mn_size % 8 or k_size % 16:
        return None
    row = swizzle // 2
    if mn_major:
        if mn_size % row:
            return None
        return WgmmaTile(True, sbo=8 * row, lbo=k_size * row, elements=mn_size * k_size, swizzle=swizzle)
    if k_size % row:
        return None
    return WgmmaTile(False, sbo=8 * row, lbo=mn_size * row, elements=mn_size * k_size, swizzle=swizzle)


def choose_padding(src_map: LayoutMap, op_idx: int, mn_major: bool, run: int, groups: int = 1) -> int:
    """The padding (0..56 elements, multiples of 8) with the fewest bank conflicts for the first
    vector store of warp 0's threads: each quarter-warp's 16-byte stores should hit 8 different
    16-byte bank groups."""
    from .dot_operands import IntOps

    if run != 8:
        return 8
    o = IntOps()
    rows, cols = src_map.shape
    mn_size, k_size = (rows, cols) if op_idx == 0 else (cols, rows)
    best, best_cost = 0, None
    for padding in range(0, 64, 8):
        tile = tile_layout(mn_size, k_size, mn_major, padding)
        cost = 0
        for quarter in range(4):
            banks: dict[int, set[int]] = {}
            for lane in range(8 * quarter, 8 * quarter + 8):
                r, c = src_map.index(0, lane, 0)
                mn, k = (r, c) if op_idx == 0 else (c, r)
                if op_idx == 0:
                    mn = wgmma_row(o, mn, groups)
                address = tile.offset(o, mn, k) * 2
                banks.setdefault((address // 16) % 8, set()).add(address)
            cost += max(len(a) for a in banks.values())
        if best_cost is None or cost < best_cost:
            best, best_cost = padding, cost
    return best


@dataclass(frozen=True)
class SlotAddress:
    """Where slot `index` of a ring lies: `first` (slot 0's 32-bit shared address) + index * `stride` bytes."""

    first: ir.Value
    index: ir.Value
    stride: int  # bytes, a multiple of 16


@dataclass
class WgmmaOperand:
    """An operand tile left in shared memory for a wgmma dot: `base` is its shared-memory pointer, or the
    slot of a ring that holds it (`dot_async.py`)."""

    base: ir.Value | SlotAddress
    tile: WgmmaTile


DESCRIPTOR_START_BITS = 14  # the start field: bits 4-17 of a shared address, in bits 0-13 of the descriptor
RESERVED_SHARED_BYTES = 1024  # sm_90 reserves 1 KiB of a block's shared memory, which may lie below the kernel's


def descriptor(ctx: LoweringContext, address: ir.Value, tile: WgmmaTile) -> ir.Value:
    """The 64-bit matrix descriptor of the operand at `address` (a 32-bit shared address; add a logical offset,
    `WgmmaTile.logical`, to point into the tile): start address, LBO and SBO in 16-byte units, the swizzle mode.
    A swizzled K-major tile has no LBO (one instruction's 16 k lie in one row; 1, as CUTLASS sets it)."""
    b = ctx.builder
    # shared addresses fit 32 bits: the start field in 32-bit arithmetic (no 64-bit shifts and carries)
    start = b.zext(b.and_(b.lshr(address, ir.Constant(I32, 4)), ir.Constant(I32, 0x3FFF)), I64)
    lbo = 1 if tile.swizzle and not tile.mn_major else ((tile.lbo * 2) >> 4) & 0x3FFF
    strides = lbo << 16 | (((tile.sbo * 2) >> 4) & 0x3FFF) << 32 | SWIZZLE_MODES[tile.swizzle] << 62
    return b.or_(start, ir.Constant(I64, strides))


class Descriptors:
    """The descriptors of one operand tile for a dot's instructions, as Triton builds them: one built from the
    tile's start (a ring's slot 0, plus a run-time offset: a warpgroup's rows), loop-invariant in a ring's
    loop, the others derived from it by adding their distance in 16-byte units (the slot's, each
    instruction's offset into the tile) to the 64-bit descriptor.

    No carry leaves the start field (bits 0-13): it holds address / 16 of a 16-byte-aligned shared address
    (tiles and slots are 128-byte aligned, offsets into them multiples of 8 elements), and every address
    of a tile lies in the block's shared memory, below the target's maximum plus the reserved bytes, at
    most 2^18 (`DESCRIPTOR_START_BITS` + 4; sm_90: 228 KiB), so each sum is the moved address / 16, below
    2^14 too. A target with more shared memory gets each descriptor built from its own address instead."""

    def __init__(self, ctx: LoweringContext, base: ir.Value | SlotAddress, tile: WgmmaTile,
                 offset: ir.Value | None = None):
        b = ctx.builder
        self.ctx, self.tile = ctx, tile
        self.derived = ctx.target.max_shared_bytes + RESERVED_SHARED_BYTES <= 1 << (DESCRIPTOR_START_BITS + 4)
        slot = base if isinstance(base, SlotAddress) else None
        address = slot.first if slot else base if isinstance(base.type, ir.IntType) else b.ptrtoint(base, I32)
        if offset is not None:  # elements
            address = b.add(address, b.shl(offset, ir.Constant(I32, 1)))
        if slot and not self.derived:
            address = b.add(address, b.mul(slot.index, ir.Constant(I32, slot.stride)))
        self.address = address
        self.first = descriptor(ctx, address, tile)
        if slot and self.derived:
            if slot.stride % 16:
                raise ValueError(f"ring slots {slot.stride} bytes apart: not a multiple of 16 bytes")
            self.first = b.add(self.first, b.zext(b.mul(slot.index, ir.Constant(I32, slot.stride >> 4)), I64))

    def at(self, offset_elements: int) -> ir.Value:
        """The descriptor of the operand `offset_elements` (a logical offset: `WgmmaTile.logical`) into the tile."""
        if offset_elements % 8:
            raise ValueError(f"wgmma operand offset of {offset_elements} elements: not a multiple of 16 bytes")
        b = self.ctx.builder
        if not offset_elements:
            return self.first
        if not self.derived:
            return descriptor(self.ctx, b.add(self.address, ir.Constant(I32, 2 * offset_elements)), self.tile)
        return b.add(self.first, ir.Constant(I64, (2 * offset_elements) >> 4))


def store_offset(o, tile: WgmmaTile, op_idx: int, row, col, groups: int = 1):
    """Element offset of tensor element (row, col) of operand `op_idx` in its tile."""
    if op_idx == 0:
        return tile.offset(o, wgmma_row(o, row, groups), col)
    return tile.offset(o, col, row)


def accumulator_slots(c_map: LayoutMap, block: int) -> list[int]:
    """The accumulator slots of instruction `block` (rows 64 block ..) in wgmma's register order."""
    col_blocks = c_map.slots_per_dim[1] // 2
    return [c_map.slot_of_coords((2 * block + h, 2 * s + j)) for s in range(col_blocks) for h in (0, 1) for j in (0, 1)]


def accumulator_blocks(ctx: LoweringContext, op: Operation) -> tuple[list[list[int]], list[list[ir.Value]]]:
    """Per wgmma instruction along M (64 rows of this warpgroup each): its accumulator slots, and their values."""
    c_map = ctx.layout_map(op.results[0].type)
    acc = ctx.get(op.operands[2])
    m_size = op.operands[0].type.get_shape()[0]
    blocks = [accumulator_slots(c_map, i) for i in range(m_size // (WGMMA_M * warpgroups(op)))]
    return blocks, [[ctx.builder.extract_element(acc, ir.Constant(I32, slot)) for slot in slots] for slots in blocks]


def with_accumulators(ctx: LoweringContext, acc: ir.Value, blocks: list[list[int]], registers: list[list[ir.Value]],
                      wait: bool = True) -> ir.Value:
    """`acc` with each block's registers put back in its slots (after `wgmma.wait_group 0` unless `wait` is off:
    a `ttg.dot_wait` follows)."""
    out = acc
    for slots, values in zip(blocks, registers):
        for slot, value in zip(slots, _wait(ctx, values) if wait else values):
            out = ctx.builder.insert_element(out, value, ir.Constant(I32, slot))
    return out


def _side_effect(ctx: LoweringContext, text: str) -> None:
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), []), text, "", side_effect=True)
    ctx.builder.call(asm, [])


def fence_async_shared(ctx: LoweringContext) -> None:
    """Make this thread's st.shared visible to the async proxy wgmma reads through."""
    _side_effect(ctx, "fence.proxy.async.shared::cta;")


def _warp_uniform(ctx: LoweringContext, value: ir.Value) -> ir.Value:
    """`value` (the same in every lane) as lane 0's, through shfl.sync.idx: ptxas then computes what
    depends on it (wgmma's descriptors) in uniform registers instead of moving it there each time."""
    module = ctx.builder.module
    symbol = "llvm.nvvm.shfl.sync.idx.i32"
    fn = module.globals.get(symbol) or ir.Function(module, ir.FunctionType(I32, [I32] * 4), symbol)
    return ctx.builder.call(fn, [ir.Constant(I32, -1), value, ir.Constant(I32, 0), ir.Constant(I32, 31)])


def warpgroup_index(ctx: LoweringContext) -> ir.Value:
    """This thread's warpgroup (warp / 4), warp-uniform (`_warp_uniform`), computed once in the kernel's entry
    block (where every thread still runs) and shared by every dot."""
    cached = ctx.__dict__.get("warpgroup_index")
    if cached is None:
        with ctx.builder.goto_entry_block():
            warp = ctx.target.warp_id(ctx.builder)
            cached = ctx.__dict__["warpgroup_index"] = _warp_uniform(ctx, ctx.builder.lshr(warp, ir.Constant(I32, 2)))
    return cached


def wgmma(ctx: LoweringContext, instruction: str, a: ir.Value | list[ir.Value], b_desc: ir.Value, immediates: str,
          acc: list[ir.Value], accumulate: bool = True) -> list[ir.Value]:
    """One `instruction` (`wgmma.mma_async...` with its shape and types) on a (its descriptor, or this warp's four
    registers) and b (its descriptor); `immediates` follow scale-d (the scales of a and b, the transposes).
    With `accumulate` off, scale-d is 0 (D = A B, as Triton issues a dot's first k step on a zero accumulator):
    `acc` is not read, only its length counts, so nothing has to set those registers first."""
    count = len(acc)
    a_values = a if isinstance(a, list) else [a]
    outs = ", ".join(f"${i}" for i in range(count))
    a_text = (f"${count}" if len(a_values) == 1 else
              "{" + ", ".join(f"${count + i}" for i in range(len(a_values))) + "}")
    b_text = f"${count + len(a_values)}"
    constraints = ["=f"] * count + ["l" if len(a_values) == 1 else "r"] * len(a_values) + ["l"]
    args = [*a_values, b_desc]
    if accumulate:
        scale = count + len(a_values) + 1
        text = (f"{{ .reg .pred p; setp.ne.b32 p, ${scale}, 0; "
                f"{instruction} {{{outs}}}, {a_text}, {b_text}, p, {immediates}; }}")
        constraints += ["r"] + [str(i) for i in range(count)]
        args += [ir.Constant(I32, 1), *acc]
    else:
        text = f"{instruction} {{{outs}}}, {a_text}, {b_text}, 0, {immediates};"
    asm = ir.InlineAsm(ir.FunctionType(ir.LiteralStructType([F32] * count), [v.type for v in args]), text,
                       ",".join(constraints), side_effect=True)
    out = ctx.builder.call(asm, args)
    return [ctx.builder.extract_value(out, i) for i in range(count)]


def zero_accumulator(dot: Operation) -> bool:
    """Whether `dot` adds to a splat of 0 (a dot without acc): its first k step then ignores the accumulator
    (`wgmma(..., accumulate=False)`), and no register has to be zeroed for it."""
    from ..passes.matchers import scalar_constant

    value = scalar_constant(dot.operands[2])
    return isinstance(value, FloatAttr) and value.value.data == 0.0


def _wait(ctx: LoweringContext, acc: list[ir.Value]) -> list[ir.Value]:
    """wgmma.wait_group 0 with the accumulators passing through it, so that nothing reads them earlier."""
    count = len(acc)
    constraints = ",".join(["=f"] * count + [str(i) for i in range(count)])
    asm = ir.InlineAsm(ir.FunctionType(ir.LiteralStructType([F32] * count), [F32] * count),
                       "wgmma.wait_group.sync.aligned 0;", constraints, side_effect=True)
    out = ctx.builder.call(asm, acc)
    return [ctx.builder.extract_value(out, i) for i in range(count)]


def lower_wgmma_dot(ctx: LoweringContext, op: Operation, a, b: WgmmaOperand) -> ir.Value:
    """`a`: a WgmmaOperand, or a function (instruction i, k step q) -> its four a registers."""
    from .dot_operands import IntOps

    builder = ctx.builder
    kind = float_kind(op.operands[0].type)
    k_size = op.operands[0].type.get_shape()[1]
    n_size = op.operands[1].type.get_shape()[1]
    groups = warpgroups(op)
    blocks, registers = accumulator_blocks(ctx, op)
    in_registers = not isinstance(a, WgmmaOperand)
    b_descriptors = Descriptors(ctx, b.base, b.tile)
    if not in_registers:  # this warpgroup's first rows of a: 64 wg
        group_offset = None
        if groups > 1:
            group_offset = builder.mul(warpgroup_index(ctx), ir.Constant(I32, a.tile.logical(IntOps(), WGMMA_M, 0)))
        a_descriptors = Descriptors(ctx, a.base, a.tile, group_offset)
    instruction = f"wgmma.mma_async.sync.aligned.m64n{n_size}k16.f32.{_TYPES[kind]}.{_TYPES[kind]}"
    zero = zero_accumulator(op)
    _side_effect(ctx, "wgmma.fence.sync.aligned;")
    for q in range(k_size // WGMMA_K):
        b_desc = b_descriptors.at(b.tile.logical(IntOps(), 0, WGMMA_K * q))
        for i in range(len(blocks)):
            if in_registers:
                registers[i] = wgmma(ctx, instruction, a(i, q), b_desc, f"1, 1, {int(b.tile.mn_major)}", registers[i],
                                     accumulate=not (zero and q == 0))
                continue
            a_desc = a_descriptors.at(a.tile.logical(IntOps(), WGMMA_M * groups * i, WGMMA_K * q))
            registers[i] = wgmma(ctx, instruction, a_desc, b_desc,
                                 f"1, 1, {int(a.tile.mn_major)}, {int(b.tile.mn_major)}", registers[i],
                                 accumulate=not (zero and q == 0))
    _side_effect(ctx, "wgmma.commit_group.sync.aligned;")
    return with_accumulators(ctx, ctx.get(op.operands[2]), blocks, registers, wait=not left_in_flight(op))


def left_in_flight(dot: Operation) -> bool:
    """Whether `dot`'s group stays in flight: its only user is a `ttg.dot_wait` (dot_async.py), which waits."""
    uses = list(dot.results[0].uses)
    return len(uses) == 1 and uses[0].operation.name == "ttg.dot_wait"
