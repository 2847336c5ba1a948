"""Lowering of the shared-memory rings of `ir/ttg_async.py` (NVIDIA): cp.async into slots, tensor-core
operands read from them, and wgmma groups left in flight.

A ring's slot holds its tile the way the dot reads it (`dot_operands.py`): for wgmma, swizzled rows
(`dot_wgmma.swizzled_layout`, Triton's layout; TILE_PIPELINE=padded: the padded core matrices of a
conversion, to time the two) or, where the tile fills no 32-byte row, padded core matrices; for
mma.sync (ldmatrix), padded rows; fp32 operands of a "tf32" dot, the K-major tf32 core matrices of
`dot_tf32_tiles.py` (copied 16 bytes at a time where a thread's run is along K, else 4; wgmma: a's rows
in its order), read by ldmatrix and rounded to tf32 in registers with cvt.rna (`dot_tf32.py`), or read
raw by wgmma's descriptors (`dot_wgmma_tf32.py`): the tensor core keeps the top 19 bits of each fp32,
truncating toward zero, as Triton's tf32 wgmma dots do (its operands are never rounded either). A
rounding pass over each slot would cost a shared-memory round trip per element and a barrier per
iteration; tests/test_pipeline_tf32_rings.py compares with a product of truncated operands. The layout
follows from the ring's `ring_read` (its dot-operand layout and its dot); the copies' layout (the load's,
after coalescing) decides the padding and whether rows are stored transposed, as for a conversion.

The rings of a loop are alive from their `ring_alloc`s to the `async_wait {pending = 0}` after the
loop (`passes/pipeline_async_copies.py`). They lie after the other uses of shared memory in that
range (the exchanges of attention's softmax, reductions): their base is `global_smem` plus an i32
constant (`tile_rings_offset_<n>`) set when the range ends, to the largest exchange in it rounded up
to 1 KiB. Outside the range (an epilogue's conversion) shared memory is reused from 0 again: a
barrier where the range starts lets the first copies overwrite what an exchange before it left.
Slots are 128-byte aligned, swizzled ones 1 KiB-aligned (and `global_smem` is then `.align 1024`).

`async_copy`: each thread's runs of consecutive elements (as the load would read them) become
`cp.async.cg` (16 bytes) or `cp.async.ca` (4, 8 bytes) with a source size of 0 where the run is
masked off (the slot gets zeros and nothing is read); single elements are loaded and stored. Destinations
are 32-bit shared addresses (one register per ring and iteration, the rest immediates), and the source
sizes select once on the mask's bounds that all of a thread's copies share. (Reading a tf32 tile's runs
along N, copied 4 bytes at a time, from the run's first address plus immediates took 16 PTX instructions
out of the fp32 loops but cost ptxas 8-10 registers: not done.)
`async_wait {pending}`: `cp.async.wait_group`, then `fence.proxy.async.shared::cta` where a wgmma dot
reads a ring after it in the loop body, then a barrier. `dot_wait {pending}`: `wgmma.wait_group` with
the accumulators passing through it, so that nothing reads them earlier.

Which accesses need the proxy fence (PTX ISA: "cp.async is treated as a weak memory operation performed
in the generic proxy"; wgmma.mma_async is performed in the async proxy, and "an async proxy fence must be
used to establish an ordering between prior writes to shared memory matrices and subsequent reads of the
same matrices in a wgmma.mma_async instruction"; "the completion of a wgmma.mma_async operation is
followed by an implicit generic-async proxy fence"), per iteration of a ring loop:
- slot r's cp.async writes (generic), then this iteration's wgmma reads of it (async): a fence after the
  wait that completes the writes, before the barrier that publishes them to the other warps;
- slot w's wgmma reads (async, iteration i - 1), then this iteration's cp.async writes into it (generic):
  ordered by the `wgmma.wait_group` that retires those reads (implicit fence) and the barrier after it;
- after the loop, the last wait's slots are followed by generic accesses only (an epilogue's exchange):
  the barrier, no fence. (Copies by TMA, async proxy themselves, would need no fence before wgmma.)
Triton 3.6 and CUTLASS's cp.async + GMMA main loops leave the first fence out (as if cp.async wrote
through the async proxy); in SASS it is MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S in every iteration, issued
while the next stages' copies are in flight. TILE_PIPELINE=nofence leaves it out too, so that the GPU
can tell what it costs (the words of TILE_PIPELINE combine: `passes/pipeline.py`); it stays an
experiment, as the ISA does not promise that cp.async's writes are visible to wgmma without it.

A group left in flight is fragile: where ptxas finds other instructions reading an accumulator
between a wgmma and the wait that retires it, it serializes every wgmma of the kernel (its
"C7514" note in `ptxas -v`). Scalar `cvt.rn.f16.f32` pairs rounding the accumulator after the
loop did (ptxas fuses them into one packed conversion); targets/nvidia.py's `emit_truncf` rounds
two elements per `cvt.rn.f16x2.f32`, as Triton does. tests/test_pipeline_async_copies.py reads
ptxas's report for the benchmark's matmuls.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.ir import Operation, SSAValue

from ..ir.dot_layouts import DotOperand
from ..ir.layouts import LayoutMap
from ..ir.ttg import layout_of
from ..passes.pipeline import pipeline_modes
from .constancy import leaders_of
from .context import F32, I16, I32, I64, LoweringContext, LoweringError, lowering
from .dot_operands import (ROW_PADDING, IntOps, IROps, SharedOperand, stored_transposed, tile_elements, wgmma_tile)
from .dot_tf32_store import Tf32Operand
from .dot_tf32_tiles import choose_tile, k_run, store_place
from .dot_wgmma import (SWIZZLE_ALIGNMENT, SlotAddress, WgmmaOperand, WgmmaTile, fence_async_shared, store_offset,
                         warpgroups, wgmma_dot)
from .rules_memory import run_length
from .rules_tensor import index_vectors

SLOT_ALIGNMENT = 128  # bytes


@dataclass
class Ring:
    """Where a ring's slots lie (from its group's base) and how a slot stores its tile."""

    group: "RingGroup"
    offset: int  # bytes from the group's base
    slot_bytes: int
    op_idx: int
    transposed: bool  # padded rows: stored column by column
    stride: int  # padded rows: elements from one stored row to the next
    tile: WgmmaTile | None  # wgmma's core matrices, else padded rows
    groups: int  # warpgroups of a wgmma dot (0: a tf32 mma.sync dot's, rows as they are)
    tf32: bool = False  # fp32 elements in `tile`'s K-major tf32 core matrices (`dot_tf32_tiles.py`)
    async_proxy: bool = False  # read by a wgmma dot (through the async proxy)

    def element_offset(self, o, row, col):
        """Offset (16-bit units) of tensor element (row, col) within a slot."""
        if self.tf32:
            return store_place(o, self.tile, self.op_idx, row, col, self.groups, False)
        if self.tile is not None:
            return store_offset(o, self.tile, self.op_idx, row, col, self.groups)
        if self.transposed:
            return o.add(o.mul(col, self.stride), row)
        return o.add(o.mul(row, self.stride), col)


@dataclass
class RingGroup:
    """The rings alive together (one loop's), placed after the exchanges lowered while they live."""

    base: ir.GlobalVariable  # i32 constant: the group's offset in shared memory, set by `close`
    outside_bytes: int  # shared memory the kernel needed before the rings came alive
    total: int = 0

    def close(self, ctx: LoweringContext) -> None:
        start = -(-ctx.shared_bytes // SWIZZLE_ALIGNMENT) * SWIZZLE_ALIGNMENT  # a swizzled slot's alignment
        self.base.initializer = ir.Constant(I32, start)
        ctx.shared_bytes = max(self.outside_bytes, start + self.total)


def _state(ctx: LoweringContext) -> dict:
    """The rings (by SSA value), the group alive now (or None) and the number of groups so far."""
    return ctx.__dict__.setdefault("rings", {"rings": {}, "alive": None, "count": 0})


def _user(op: Operation, name: str) -> Operation:
    for use in op.results[0].uses:
        if use.operation.name == name:
            return use.operation
    raise LoweringError(f"{op.name}: the ring has no {name}")


def _alive_group(ctx: LoweringContext) -> RingGroup:
    state = _state(ctx)
    if state["alive"] is None:
        base = ir.GlobalVariable(ctx.module, I32, f"tile_rings_offset_{state['count']}")
        base.global_constant = True
        base.linkage = "internal"
        state["count"] += 1
        state["alive"] = RingGroup(base, ctx.shared_bytes)
        ctx.shared_bytes = 0  # from here on: the exchanges below the rings
        ctx.target.barrier(ctx.builder)  # an exchange before the loop may still be read where the rings go
    return state["alive"]


@lowering("ttg.ring_alloc")
def lower_ring_alloc(ctx: LoweringContext, op: Operation) -> None:
    ring_type = op.results[0].type
    read, copy = _user(op, "ttg.ring_read"), _user(op, "ttg.async_copy")
    layout = layout_of(read.results[0].type)
    assert isinstance(layout, DotOperand)
    src_map = ctx.layout_map(copy.operands[2].type)
    dots = [use.operation for use in read.results[0].uses]
    rows, cols = ring_type.shape
    transposed = stored_transposed(src_map)
    tile, groups, tf32 = None, 1, ring_type.element_type.bitwidth == 32
    async_proxy = len(dots) == 1 and wgmma_dot(dots[0])
    if tf32:  # K-major tf32 tiles: read by ldmatrix (dot_tf32.py) or wgmma's descriptors (dot_wgmma_tf32.py)
        groups = warpgroups(dots[0]) if async_proxy else 0  # wgmma: a's rows in its order
        tile = choose_tile(src_map, layout.op_idx, groups)
        elements = tile.elements
    elif async_proxy:
        groups = warpgroups(dots[0])
        tile = wgmma_tile(src_map, layout.op_idx, groups, swizzled="padded" not in pipeline_modes())
        elements = tile.elements
    else:
        elements = tile_elements((rows, cols), transposed)
    alignment = SLOT_ALIGNMENT
    if tile is not None and tile.swizzle and not tf32:  # the hardware swizzles by address bits: slots on 1 KiB boundaries
        alignment = SWIZZLE_ALIGNMENT
        smem = ctx.target.shared_memory(ctx.module, ctx.builder, 0)
        smem.align = max(smem.align or 0, SWIZZLE_ALIGNMENT)
    slot_bytes = -(-elements * 2 // alignment) * alignment
    group = _alive_group(ctx)
    group.total = -(-group.total // alignment) * alignment
    _state(ctx)["rings"][op.results[0]] = Ring(group, group.total, slot_bytes, layout.op_idx, transposed,
                                               (rows if transposed else cols) + ROW_PADDING, tile, groups, tf32,
                                               async_proxy)
    group.total += slot_bytes * ring_type.stages


def _slot_address(ctx: LoweringContext, ring: Ring, slot: ir.Value) -> ir.Value:
    """The 32-bit shared address of slot `slot` (an i32) of `ring`: shared addresses fit 32 bits, and 32-bit
    arithmetic keeps the copies' destinations and wgmma's descriptors out of 64-bit adds and conversions."""
    b = ctx.builder
    smem = ctx.target.shared_memory(ctx.module, b, 0)
    start = b.add(b.ptrtoint(smem, I32), b.load(ring.group.base))
    return b.add(start, b.add(ir.Constant(I32, ring.offset), b.mul(slot, ir.Constant(I32, ring.slot_bytes))))


def _shared_pointer(ctx: LoweringContext, address: ir.Value) -> ir.Value:
    """A shared-memory pointer to the 32-bit shared `address`."""
    smem = ctx.target.shared_memory(ctx.module, ctx.builder, 0)
    return ctx.builder.inttoptr(ctx.builder.zext(address, I64), smem.type)


def place_rings(ctx: LoweringContext) -> None:
    """After the whole kernel is lowered: a group still alive (no final async_wait) ends here."""
    state = ctx.__dict__.get("rings")
    if state and state["alive"] is not None:
        state["alive"].close(ctx)
        state["alive"] = None


def _asm(ctx: LoweringContext, text: str, constraints: str = "", args: list[ir.Value] | None = None) -> None:
    args = args or []
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [a.type for a in args]), text, constraints, side_effect=True)
    ctx.builder.call(asm, args)


@lowering("ttg.async_copy")
def lower_async_copy(ctx: LoweringContext, op: Operation) -> None:
    b, o = ctx.builder, IROps(ctx.builder)
    ring_ssa, slot_ssa, ptrs_ssa, mask_ssa = op.operands
    ring = _state(ctx)["rings"][ring_ssa]
    base = _slot_address(ctx, ring, ctx.get(slot_ssa))
    src_map: LayoutMap = ctx.layout_map(ptrs_ssa.type)
    addresses = ctx.get(ptrs_ssa)
    element_bytes = 4 if ring.tf32 else 2
    run, alignment = run_length(ctx, ptrs_ssa, mask_ssa, F32 if ring.tf32 else I16)
    if ring.tf32:  # runs along K, within one 16-byte row of a core matrix
        run = min(run, k_run(src_map, ring.op_idx))
    size = element_bytes * run
    if size not in (4, 8, 16) or alignment < size:
        run, size = 1, element_bytes
    rows_index, cols_index = index_vectors(ctx, src_map)
    n = src_map.num_slots
    sizes = _source_sizes(ctx, mask_ssa, n, size)
    deltas = _constant_deltas(ring, src_map, run)
    first_destination = None
    for first in range(0, n, run):
        slot = ir.Constant(I32, first)
        immediate = 0  # bytes after `destination`: an immediate offset of the copy
        if deltas[first] is None or first_destination is None:
            row, col = b.extract_element(rows_index, slot), b.extract_element(cols_index, slot)
            destination = b.add(base, b.mul(ring.element_offset(o, row, col), ir.Constant(I32, 2)))
            first_destination = destination if first == 0 else first_destination
        else:  # the same distance from the first run in every thread: one address register for all
            destination, immediate = first_destination, 2 * deltas[first]
        address, source_size = b.extract_element(addresses, slot), sizes[first]
        if run == 1 and size == 2:
            other = ir.Constant(ir.VectorType(I16, 1), [0])
            enabled = b.icmp_unsigned("!=", source_size, ir.Constant(I32, 0))
            value = ctx.target.load_contiguous(b, address, enabled, other, 2)
            at = _shared_pointer(ctx, b.add(destination, ir.Constant(I32, immediate)))
            b.store(b.extract_element(value, ir.Constant(I32, 0)), at)
            continue
        kind = "cg" if size == 16 else "ca"
        # a 32-bit shared address and an immediate (as Triton passes them): one register serves the runs
        _asm(ctx, f"cp.async.{kind}.shared.global [$0 + {immediate}], [$1], {size}, $2;", "r,l,r",
             [destination, address, source_size])


def _source_sizes(ctx: LoweringContext, mask: SSAValue, count: int, size: int) -> list[ir.Value]:
    """Per slot, the bytes its copy reads: `size` where `mask` holds, else 0. The `arith.andi` leaves of the mask
    that hold one value in all of a thread's slots (the loop's guard, a bound broadcast along the slots' rows,
    `constancy.leaders_of`) select `size` once; each slot then selects on its own leaves only (its row's bound),
    instead of a chain of selects per slot. Selects of whole i1 vectors, then i32 lanes extracted (extracting
    bits of an i1 vector one by one makes LLVM pack them into an integer first)."""
    b = ctx.builder
    leaves = _and_leaves(mask)

    def uniform(leaf: SSAValue) -> bool:
        leaders = leaders_of(ctx, leaf, count)
        return leaders is not None and set(leaders) == {0}

    def all_of(values: list[ir.Value]) -> ir.Value:
        combined = values[0]
        for value in values[1:]:
            combined = b.and_(combined, value)
        return combined

    def select(condition: ir.Value, value: ir.Value) -> ir.Value:
        return b.select(condition, value, ir.Constant(value.type, [0] * count))

    shared = [ctx.get(leaf) for leaf in leaves if uniform(leaf)]
    own = [ctx.get(leaf) for leaf in leaves if not uniform(leaf)]
    sizes = ir.Constant(ir.VectorType(I32, count), [size] * count)
    if shared and own:  # the shared condition's size (slot 0's), then one select per slot
        sizes = ctx.splat(b.extract_element(select(all_of(shared), sizes), ir.Constant(I32, 0)), count)
    sizes = select(all_of(own or shared), sizes)
    return [b.extract_element(sizes, ir.Constant(I32, slot)) for slot in range(count)]


def _and_leaves(value: SSAValue) -> list[SSAValue]:
    """The operands of the tree of `arith.andi` that computes `value` (itself when it is no `andi`)."""
    op = value.owner
    if isinstance(op, Operation) and op.name == "arith.andi":
        return [leaf for operand in op.operands for leaf in _and_leaves(operand)]
    return [value]


def _constant_deltas(ring: Ring, src_map: LayoutMap, run: int) -> dict[int, int | None]:
    """Per run of slots (by its first slot), its element offset in the slot less the first run's when
    that is the same in every thread (the stores then share one address register), else None."""
    o = IntOps()
    threads = [(lane, warp) for lane in range(32) for warp in range(_warps(src_map))]
    deltas: dict[int, int | None] = {}
    for first in range(0, src_map.num_slots, run):
        seen = {ring.element_offset(o, *src_map.index(first, lane, warp))
                - ring.element_offset(o, *src_map.index(0, lane, warp)) for lane, warp in threads}
        deltas[first] = seen.pop() if len(seen) == 1 else None
    return deltas


def _warps(src_map: LayoutMap) -> int:
    count = 1
    for w in src_map.root.warps_per_cta:
        count *= w
    return count


@lowering("ttg.async_commit_group")
def lower_async_commit_group(ctx: LoweringContext, op: Operation) -> None:
    _asm(ctx, "cp.async.commit_group;")


@lowering("ttg.async_wait")
def lower_async_wait(ctx: LoweringContext, op: Operation) -> None:
    pending = op.pending.value.data
    _asm(ctx, f"cp.async.wait_group {pending};")
    state = _state(ctx)
    group = state["alive"]
    if _async_proxy_reads_follow(op, state["rings"]) and "nofence" not in pipeline_modes():
        fence_async_shared(ctx)
    ctx.target.barrier(ctx.builder)
    if group is not None and pending == 0:  # the end of the loop: its rings are free
        group.close(ctx)
        state["alive"] = None


def _async_proxy_reads_follow(wait: Operation, rings: dict) -> bool:
    """Whether a wgmma dot reads a ring slot after `wait` in its block (the loop body): the slots' cp.async
    writes (generic proxy) then need the proxy fence before the barrier. The wait after the loop is followed
    by generic accesses only (an epilogue's exchange), which the barrier alone orders."""
    op = wait.next_op
    while op is not None:
        if op.name == "ttg.ring_read" and rings[op.operands[0]].async_proxy:
            return True
        op = op.next_op
    return False


@lowering("ttg.ring_read")
def lower_ring_read(ctx: LoweringContext, op: Operation) -> None:
    ring = _state(ctx)["rings"][op.operands[0]]
    slot = ctx.get(op.operands[1])
    if ring.async_proxy:  # wgmma's descriptors: slot 0's, moved to the slot (dot_wgmma.Descriptors)
        base = SlotAddress(_slot_address(ctx, ring, ir.Constant(I32, 0)), slot, ring.slot_bytes)
    else:
        base = _shared_pointer(ctx, _slot_address(ctx, ring, slot))
    dst_map = ctx.layout_map(op.results[0].type)
    layout = layout_of(op.results[0].type)
    assert isinstance(layout, DotOperand)
    if ring.tf32:  # raw fp32: the dot rounds the fragments it reads to tf32
        shared = Tf32Operand(base, ring.tile, [0], permuted=False, rounded=False)
    elif ring.tile is not None:
        shared = WgmmaOperand(base, ring.tile)
    else:
        shared = SharedOperand(base, ring.stride, ring.transposed, dst_map, layout.parent)
    ctx.__dict__.setdefault("shared_operands", {})[op.results[0]] = shared
    ctx.set(op.results[0], ir.Constant(ctx.llvm_type(op.results[0].type), None))  # read by the dot only


@lowering("ttg.dot_wait")
def lower_dot_wait(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    value = ctx.get(op.operands[0])
    count = value.type.count
    items = [b.extract_element(value, ir.Constant(I32, i)) for i in range(count)]
    constraints = ",".join(["=f"] * count + [str(i) for i in range(count)])
    asm = ir.InlineAsm(ir.FunctionType(ir.LiteralStructType([F32] * count), [F32] * count),
                       f"wgmma.wait_group.sync.aligned {op.pending.value.data};", constraints, side_effect=True)
    out = b.call(asm, items)
    result = value
    for i in range(count):
        result = b.insert_element(result, b.extract_value(out, i), ir.Constant(I32, i))
    ctx.set(op.results[0], result)
