"""pipeline-async-copies: load a loop's dot operands `num_stages - 1` iterations ahead with cp.async
(TTGIR, NVIDIA).

In an scf.for, a dot operand that is a `tt.load` of the body converted to a tensor-core operand
layout (`ttg.convert_layout` to `#ttg.dot_op` of `#ttg.nvidia_mma`, used by that dot alone) whose
address and mask depend only on the induction variable and on values from outside the loop, with
zeros (or nothing) for masked-off elements, goes through a ring of `num_stages` shared-memory slots:

    before:  for i: x = load(f(i), m(i)); xd = convert_layout(x); ... dot(xd, ..) ...
    after:   ring = ring_alloc
             for s in 0 .. S-2: async_copy(ring, s, f(lb + s step), m & lb + s step < ub); async_commit_group
             for i, r = 0, w = S-1:
                 async_wait {pending = S-2}            (iteration i's slot has arrived, for every thread)
                 async_copy(ring, w, f(i + (S-1) step), m & i + (S-1) step < ub); async_commit_group
                 xd = ring_read(ring, r); ... dot(xd, ..) ...
                 yield .., (r + 1) % S, (w + 1) % S
             async_wait {pending = 0}                   (the rings are free from here on)

Slot w is the one iteration i - 1 read; the barrier of `async_wait` orders every thread's reads of
it before anyone's new copies. The copies of the last S-1 iterations are masked off (zeros).

With wgmma (mma version 3) a dot whose accumulator only goes around the loop and whose operands
both come from rings stays in flight into the next iteration (`dots_in_flight`; TILE_PIPELINE=sync
turns it off): `ttg.dot_wait {pending = 1}` after it, `{pending = 0}` after the loop (before the
last async_wait). Its slot may then still be read while the next iteration starts, so the copies
come after the dot_wait and a barrier (iteration i - 1's group is finished in every warp by then).
So does a dot whose result only goes to the yield while its accumulator is computed from the iter-arg
(attention's `p v` on `acc * rescale`; a from registers or a ring, b from a ring): the iter-arg gets a
`dot_wait {pending = 0}` before its first use, which costs nothing where an earlier dot of the body has
waited already (attention's scores), and the copies move behind the dot as above, so that the tensor
core works on `p v` while the next copies are issued (Triton's order; TILE_PIPELINE=accsync keeps such
a dot waiting for itself, the copies at the top).

With `resident` (the default for one warpgroup, `pipeline.resident_operands`; TILE_PIPELINE=resident), a wgmma dot of the loop whose a
is a loop-invariant load converted before the loop (attention's q), and whose b comes from a ring, reads a from a
one-slot ring too: the load becomes an `async_copy` into slot 0 in the first prologue group, the dot reads it
through `ring_read` (wgmma's descriptors, as Triton keeps q in shared memory), so q's tile no longer holds
registers through the loop (d128 64x64/4w: 32 a thread).

fp32 operands of "tf32" dots (`tf32_ring_dot`, mma.sync and wgmma) go through rings too when both of the
dot's do (their slots hold K-major tf32 tiles: to_llvm/dot_async.py; mma.sync rounds what it reads to tf32,
wgmma truncates). Operands that are not such loads (attention's q
unless `resident`, computed operands) keep their conversions (and
pipeline-loads' prefetch through registers, which leaves the ring operands to this pass).
num_stages <= 1 leaves the loop alone; the rings of a loop take at most `max_ring_bytes` (fewer
stages if needed, down to 2; Triton reports an out-of-resources error instead). Run last in the
TTGIR pipeline: it needs the final layouts.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, ModuleOp, TensorType, i32
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from ..ir import arith_ext, tt
from ..ir.dot_layouts import DotOperand, NvidiaMma
from ..ir.tt_debug import DebugBarrierOp
from ..ir.tt_memory import LoadOp
from ..ir.tt_types import element_of, shape_of
from ..ir.ttg import ConvertLayoutOp, layout_of, with_layout
from ..ir.ttg_async import (AsyncCommitGroupOp, AsyncCopyOp, AsyncWaitOp, DotWaitOp, RingAllocOp, RingReadOp,
                            ring_type)
from .layout_constraints import functions
from .matchers import scalar_constant
from .pipeline_loads import address_slice



@dataclass
class _Operand:
    load: LoadOp
    conversion: ConvertLayoutOp
    slice_ops: list[Operation]


def zero_or_none(value: SSAValue | None) -> bool:
    """Whether a load's `other` is absent or zero (cp.async fills masked-off elements with zeros)."""
    if value is None:
        return True
    constant = scalar_constant(value)
    return isinstance(constant, IntegerAttr | FloatAttr) and constant.value.data == 0


def tf32_ring_dot(dot: Operation, mma_version: int = 2) -> bool:
    """Whether `dot`'s fp32 operands may go through rings: "tf32" (not "tf32x3", which splits each
    operand in registers), on mma.sync (ldmatrix reads the slots and rounds each fragment with cvt.rna) or
    wgmma (mma version 3: the tensor core reads the raw fp32 slots through descriptors and keeps the top
    19 bits of each, truncating toward zero, as Triton's wgmma tf32 dots do: to_llvm/dot_wgmma_tf32.py)."""
    from .accelerate_matmul import tf32_dot

    return (isinstance(dot, tt.DotOp) and mma_version in (2, 3) and tf32_dot(dot)
            and dot.input_precision.data == "tf32")


def _operand(conversion: Operation, body: Block) -> _Operand | None:
    """The pipelinable load behind a dot-operand conversion of the body, if it is one."""
    if not isinstance(conversion, ConvertLayoutOp):
        return None
    layout = layout_of(conversion.result.type)
    if not (isinstance(layout, DotOperand) and isinstance(layout.parent, NvidiaMma)):
        return None
    uses = list(conversion.result.uses)
    if len(uses) != 1 or not isinstance(uses[0].operation, tt.DotOp) or uses[0].index > 1:
        return None
    load = conversion.src.owner
    if not (isinstance(load, LoadOp) and load.parent_block() is body and len(list(load.result.uses)) == 1):
        return None
    ty = load.result.type
    bits = element_of(ty).bitwidth if isinstance(ty, TensorType) else 0
    if not (bits and len(shape_of(ty)) == 2 and (bits == 16 or bits == 32 and tf32_ring_dot(uses[0].operation,
                                                                                    layout.parent.version))):
        return None
    if not zero_or_none(load.other):
        return None
    slice_ops = address_slice(load, body)
    return None if slice_ops is None else _Operand(load, conversion, slice_ops)


def _resident(dot: Operation, body: Block, ring_conversions: set[SSAValue]) -> _Operand | None:
    """The loop-invariant a of a wgmma `dot` of the body whose b goes through a ring, if it can live in a
    one-slot ring for the whole loop: a 16-bit `tt.load` outside the loop (zeros or nothing where masked off),
    converted to the dot-operand layout, each used once."""
    if not (isinstance(dot, tt.DotOp) and dot.b in ring_conversions):
        return None
    conversion = dot.a.owner
    if not isinstance(conversion, ConvertLayoutOp) or body.is_ancestor(conversion):
        return None
    layout = layout_of(conversion.result.type)
    if not (isinstance(layout, DotOperand) and isinstance(layout.parent, NvidiaMma) and layout.parent.version == 3
            and layout.op_idx == 0):
        return None
    load = conversion.src.owner
    if not (isinstance(load, LoadOp) and len(list(conversion.result.uses)) == 1
            and len(list(load.result.uses)) == 1 and zero_or_none(load.other)):
        return None
    ty = load.result.type
    if not (isinstance(ty, TensorType) and len(shape_of(ty)) == 2 and element_of(ty).bitwidth == 16):
        return None
    return _Operand(load, conversion, [])


def _resident_copy(operand: _Operand, ring: SSAValue) -> list[Operation]:
    """The resident operand's copy into slot 0 of its ring: the load's own pointers and mask (all true
    without one), computed before the loop already."""
    load = operand.load
    ops: list[Operation] = []
    mask = load.mask
    if mask is None:
        ptr_type = load.ptr.type
        assert isinstance(ptr_type, TensorType)
        true = arith.ConstantOp(IntegerAttr(1, IntegerType(1)))
        splat = tt.SplatOp(true.result, TensorType(IntegerType(1), ptr_type.get_shape(), ptr_type.encoding))
        ops += [true, splat]
        mask = splat.result
    slot = _constant(0)
    copy = AsyncCopyOp(ring, slot.result, load.ptr, mask)
    copy.location = load.location
    return ops + [slot, copy]


def _constant(value: int, ty=i32) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, ty))


def _copy(operand: _Operand, ring: SSAValue, slot: SSAValue, iv: SSAValue, index: SSAValue, ub: SSAValue,
          ) -> list[Operation]:
    """The operand's address computation for induction variable `index` and its async copy into `slot`,
    masked off when `index` is not below `ub`."""
    load = operand.load
    mapping: dict[SSAValue, SSAValue] = {iv: index}
    ops = [op.clone(value_mapper=mapping) for op in operand.slice_ops]
    in_range = arith_ext.CmpiOp(index, ub, "slt")
    ptr_type = load.ptr.type
    assert isinstance(ptr_type, TensorType)
    splat = tt.SplatOp(in_range.result, TensorType(IntegerType(1), ptr_type.get_shape(), ptr_type.encoding))
    ops += [in_range, splat]
    mask = splat.result
    if load.mask is not None:
        both = arith.AndIOp(mapping.get(load.mask, load.mask), mask)
        ops.append(both)
        mask = both.result
    copy = AsyncCopyOp(ring, slot, mapping.get(load.ptr, load.ptr), mask)
    copy.location = load.location  # diagnostics point at the user's tl.load
    return ops + [copy]


def _next_slot(slot: SSAValue, stages: int) -> list[Operation]:
    """(slot + 1) % stages, without a division."""
    one, last = _constant(1), _constant(stages)
    bumped = arith.AddiOp(slot, one.result)
    wrapped = arith_ext.CmpiOp(bumped.result, last.result, "eq")
    zero = _constant(0)
    select = arith_ext.SelectOp(wrapped.result, zero.result, bumped.result)
    return [one, last, bumped, wrapped, zero, select]


def _async_accumulator(dot: tt.DotOp, body: Block, rescaled: bool) -> int | None:
    """The iter-arg index of a wgmma dot's accumulator that only goes around the loop (so the dot may
    stay in flight), else None. With `rescaled`, also of a dot whose result only goes to the yield and
    whose accumulator is computed from that iter-arg (`_rescaled_accumulator`)."""
    layout = layout_of(dot.result.type)
    if not (isinstance(layout, NvidiaMma) and layout.version == 3):
        return None
    if not (isinstance(dot.a.owner, RingReadOp) and isinstance(dot.b.owner, RingReadOp)):
        return _rescaled_accumulator(dot, body) if rescaled else None
    acc = dot.c
    uses = list(dot.result.uses)
    if not (isinstance(acc, BlockArgument) and acc.block is body and len(list(acc.uses)) == 1 and len(uses) == 1
            and isinstance(uses[0].operation, scf.YieldOp) and uses[0].index == acc.index - 1):
        return _rescaled_accumulator(dot, body) if rescaled else None
    return acc.index - 1


def _rescaled_accumulator(dot: tt.DotOp, body: Block) -> int | None:
    """The iter-arg index of a wgmma dot whose result only goes to the yield, b read from a ring and a from a
    ring or from registers (a conversion of a dot's result: attention's p; an operand in the exchange buffer
    would be overwritten while the dot reads it), else None. The iter-arg's uses in the body then read it
    through a `dot_wait {pending = 0}` placed before the first of them."""
    a = dot.a.owner
    a_in_registers = isinstance(a, ConvertLayoutOp) and isinstance(layout_of(a.src.type), NvidiaMma)
    if not (isinstance(dot.b.owner, RingReadOp) and (isinstance(a, RingReadOp) or a_in_registers)):
        return None
    uses = list(dot.result.uses)
    if not (len(uses) == 1 and isinstance(uses[0].operation, scf.YieldOp)):
        return None
    acc = body.args[uses[0].index + 1]
    users = {id(use.operation) for use in acc.uses}
    if not users or id(dot) in users or any(use.operation.parent_block() is not body for use in acc.uses):
        return None  # unused, the dot's own accumulator (the plain chain), or read in a nested region
    first = next(op for op in body.ops if id(op) in users)
    wait = DotWaitOp(acc, 0)
    body.insert_op_before(wait, first)
    acc.replace_uses_with_if(wait.result, lambda use: use.operation is not wait)
    return uses[0].index


def _ring_bytes(operands: list[_Operand], stages: int, residents: list[_Operand] = ()) -> int:
    from ..to_llvm.dot_tf32_tiles import tf32_tile

    total = 0
    for operand in operands:
        rows, cols = shape_of(operand.load.result.type)
        slot = (rows * cols + 8 * max(rows, cols)) * 2  # the most padding a slot gets (to_llvm/dot_async.py)
        if element_of(operand.load.result.type).bitwidth == 32:  # K-major tf32 tiles, the most padding
            mn, k = (rows, cols) if next(iter(operand.conversion.result.uses)).index == 0 else (cols, rows)
            slot = 2 * tf32_tile(mn, k, 24, 56).elements
        total += stages * -(-slot // 1024) * 1024  # swizzled slots start at multiples of 1 KiB
    for operand in residents:  # one slot each
        rows, cols = shape_of(operand.load.result.type)
        total += -(-(rows * cols + 8 * max(rows, cols)) * 2 // 1024) * 1024
    return total


def _both_tf32_operands(operands: list[_Operand]) -> list[_Operand]:
    """The operands, less fp32 ones whose dot does not read both operands from rings (a tile read with
    ldmatrix next to one in registers would need its k permuted: `dot_tf32_tiles.register_a_k`)."""
    converted = {o.conversion.result for o in operands}
    kept = []
    for operand in operands:
        dot = next(iter(operand.conversion.result.uses)).operation
        if element_of(operand.load.result.type).bitwidth == 32 and not (dot.a in converted and dot.b in converted):
            continue
        kept.append(operand)
    return kept


def _pipeline(loop: scf.ForOp, num_stages: int, max_ring_bytes: int, dots_in_flight: bool,
              rescaled_in_flight: bool = True, resident: bool = False) -> bool:
    body = loop.body.block
    operands = [o for op in body.ops if (o := _operand(op, body)) is not None]
    operands = _both_tf32_operands(operands)
    if not operands:
        return False
    converted = {o.conversion.result for o in operands}
    residents = [r for op in body.ops if resident and (r := _resident(op, body, converted)) is not None]
    stages = num_stages
    while stages > 2 and _ring_bytes(operands, stages) > max_ring_bytes:
        stages -= 1
    if _ring_bytes(operands, stages) > max_ring_bytes:
        return False
    if _ring_bytes(operands, stages, residents) > max_ring_bytes:
        residents = []  # no room beside the rings: they stay in registers (and cost no stage)
    outer = loop.parent_block()
    assert outer is not None
    iv, lb, ub, step = body.args[0], loop.lb, loop.ub, loop.step
    iv_type = iv.type
    # the rings and the first S-1 iterations' copies, before the loop
    before: list[Operation] = []
    rings = []
    for operand in operands:
        ty = operand.load.result.type
        alloc = RingAllocOp(ring_type(stages, shape_of(ty), element_of(ty)))
        before.append(alloc)
        rings.append(alloc.result)
    resident_rings = []
    for operand in residents:
        ty = operand.load.result.type
        alloc = RingAllocOp(ring_type(1, shape_of(ty), element_of(ty)))
        before.append(alloc)
        resident_rings.append(alloc.result)
    for stage in range(stages - 1):
        slot = _constant(stage)
        offset = _constant(stage, iv_type)
        scaled = arith.MuliOp(offset.result, step)
        index = arith.AddiOp(lb, scaled.result)
        before += [slot, offset, scaled, index]
        for operand, ring in zip(operands, rings):
            before += _copy(operand, ring, slot.result, iv, index.result, ub)
        if stage == 0:  # the resident operands arrive with the first iteration's
            for operand, ring in zip(residents, resident_rings):
                before += _resident_copy(operand, ring)
        before.append(AsyncCommitGroupOp())
    first_read, first_write = _constant(0), _constant(stages - 1)
    before += [first_read, first_write]
    outer.insert_ops_before(before, loop)
    read_slot = body.insert_arg(i32, len(body.args))
    write_slot = body.insert_arg(i32, len(body.args))
    # this iteration's operands from their slots
    for operand, ring in zip(operands, rings):
        read = RingReadOp(ring, read_slot, operand.conversion.result.type)
        body.insert_op_before(read, operand.conversion)
        operand.conversion.result.replace_all_uses_with(read.result)
    for operand, ring in zip(residents, resident_rings):  # slot 0, read where the dot is
        dot = next(iter(operand.conversion.result.uses)).operation
        slot = _constant(0)
        read = RingReadOp(ring, slot.result, operand.conversion.result.type)
        body.insert_ops_before([slot, read], dot)
        operand.conversion.result.replace_all_uses_with(read.result)
    for operand in [*operands, *residents]:
        operand.conversion.detach()
        operand.conversion.erase()
        operand.load.detach()
        operand.load.erase()
    # the copies of iteration i + S-1: at the top, or after an in-flight wgmma dot's wait
    ahead = _constant(stages - 1, iv_type)
    distance = arith.MuliOp(ahead.result, step)
    index = arith.AddiOp(iv, distance.result)
    copies: list[Operation] = [ahead, distance, index]
    for operand, ring in zip(operands, rings):
        copies += _copy(operand, ring, write_slot, iv, index.result, ub)
    copies.append(AsyncCommitGroupOp())
    in_flight = [(dot, acc) for dot in list(body.ops) if dots_in_flight and isinstance(dot, tt.DotOp)
                 and (acc := _async_accumulator(dot, body, rescaled_in_flight)) is not None]
    wait = AsyncWaitOp(stages - 2)
    body.insert_op_before(wait, body.first_op)  # type: ignore[arg-type]
    if in_flight:
        last_wait = None
        for dot, _ in in_flight:
            dot_wait = DotWaitOp(dot.result, 1)
            body.insert_op_after(dot_wait, dot)
            dot.result.replace_uses_with_if(dot_wait.result, lambda use: use.operation is not dot_wait)
            last_wait = dot_wait if last_wait is None or _after(dot_wait, last_wait) else last_wait
        assert last_wait is not None
        body.insert_ops_after([DebugBarrierOp(), *copies], last_wait)
    else:
        body.insert_ops_after(copies, wait)
    # the slots of the next iteration
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    next_read, next_write = _next_slot(read_slot, stages), _next_slot(write_slot, stages)
    body.insert_ops_before([*next_read, *next_write], yield_op)
    new_yield = scf.YieldOp(*yield_op.operands, next_read[-1].results[0], next_write[-1].results[0])
    body.insert_op_before(new_yield, yield_op)
    yield_op.detach()
    yield_op.erase()
    new_loop = scf.ForOp(lb, ub, step, [*loop.iter_args, first_read.result, first_write.result],
                         loop.detach_region(loop.body))
    outer.insert_op_before(new_loop, loop)
    for old, new in zip(loop.results, new_loop.results):
        old.replace_all_uses_with(new)
    loop.detach()
    loop.erase()
    after: list[Operation] = []
    for _, acc in in_flight:
        done = DotWaitOp(new_loop.results[acc], 0)
        new_loop.results[acc].replace_uses_with_if(done.result, lambda use, done=done: use.operation is not done)
        after.append(done)
    after.append(AsyncWaitOp(0))  # every copy and dot done: the rings' memory is free again
    outer.insert_ops_after(after, new_loop)
    return True


def _after(a: Operation, b: Operation) -> bool:
    """Whether `a` comes after `b` in their block."""
    op = b.next_op
    while op is not None:
        if op is a:
            return True
        op = op.next_op
    return False


def _innermost_loops(func_op: Operation) -> list[scf.ForOp]:
    return [op for op in func_op.walk() if isinstance(op, scf.ForOp)
            and not any(isinstance(inner, scf.ForOp | scf.WhileOp) for inner in op.body.block.walk())]


@dataclass(frozen=True)
class PipelineAsyncCopiesPass(ModulePass):
    """Copy the dot operands of loops `num_stages - 1` iterations ahead into shared memory (see the module docstring)."""

    name = "pipeline-async-copies"

    num_stages: int = 3
    max_ring_bytes: int = 158720  # sm_80's shared memory less a margin
    dots_in_flight: bool = True  # False: every wgmma dot waits for itself (TILE_PIPELINE=sync)
    rescaled_in_flight: bool = True  # False: a dot on a rescaled accumulator waits for itself (=accsync)
    resident: bool = False  # a loop-invariant wgmma a (attention's q) in a one-slot ring (=resident)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.num_stages < 2:
            return
        for func_op in functions(op):
            for loop in _innermost_loops(func_op):
                _pipeline(loop, self.num_stages, self.max_ring_bytes, self.dots_in_flight, self.rescaled_in_flight,
                          self.resident)
