"""pipeline-loads: load the next iteration's dot operands while this iteration computes (TTIR).

In an scf.for whose body computes a `tt.dot`, every `tt.load` of the body whose address
and mask depend only on the induction variable and on values from outside the loop is
software-pipelined by one iteration, through registers:

    before:  for i: x = load(f(i)); ... dot(x, ..) ...
    after:   x0 = load(f(lb), mask & lb < ub)
             for i, x = x0: x1 = load(f(i + step), mask & i + step < ub); ... dot(x, ..) ...; yield x1

The next iteration's loads are issued at the top of the body, so their latency overlaps the
tensor-core work of the current one (two stages: Triton's num_stages=2, without cp.async).
With `ring_num_warps` (the launch's warps, when cp.async rings are on), loads that pipeline-async-copies
will put in shared-memory rings (fp16/bf16 operands of a tensor-core dot alone, with zeros or nothing
for masked-off elements; with `mma_version` 2 both fp32 operands of a "tf32" dot) are left to it.
The last iteration's extra loads are masked off. Loads whose addresses follow a loop-carried
value (pointer tiles incremented each iteration) are left alone. Run on TTIR, before the
layouts (the GPU pipeline runs it first in make_ttgir).

With `num_warps` (the launch's), the prefetched tiles live across the dots beside their accumulators:
a load is prefetched only while the loop's dots (accumulators and operands) and the loads prefetched
so far (body order), spread over the launch's threads in 32-bit registers, stay within
`PREFETCH_REGISTER_BUDGET` per thread. Beyond it ptxas spills (sm_80, fp32 128x128x32 at 4 warps:
14.6 KB of spills with both operands prefetched, 616 B without; at 8 warps 24 B, none without).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free

from ..ir import arith_ext, tt
from ..ir.tt_memory import LoadOp, access_hints
from .layout_constraints import functions

#: 32-bit registers per thread that a loop's dots (accumulators and operands, `dot_registers`) and its
#: prefetched tiles may take together (the estimate counts more than ptxas keeps live: each warp's
#: whole operand tiles at once). Measured with ptxas -O3 for sm_80 (mma.sync, 4 warps): fp16
#: 128x128x32 (208 + 32) 247 registers, no spills; fp32 128x64x32 (256 + 48) spilled 32 B, 128x128x32
#: (448 + 64) 14.6 KB, fp16 128x128x64 (288 + 64) 556 B; none of them spill as much without it.
PREFETCH_REGISTER_BUDGET = 240


def registers_per_thread(ty, num_warps: int, replicas: int = 1) -> int:
    """32-bit registers a tensor of type `ty` takes per thread when spread over `num_warps` warps, each
    element held by `replicas` of them."""
    from ..ir.tt_types import element_of, shape_of

    if not isinstance(ty, TensorType):
        return 1
    elements = replicas
    for size in shape_of(ty):
        elements *= size
    return -(-elements * element_of(ty).bitwidth // (32 * 32 * num_warps))


def dot_registers(dot: tt.DotOp, num_warps: int) -> int:
    """Registers per thread a dot keeps live: its accumulator and its operands, which a tensor-core dot
    holds in each warp of its row (a) or column (b) of warps (`mma_warps`); fp32 operands twice (their
    values and the tf32 registers the tensor cores read)."""
    from ..ir.tt_types import element_of, shape_of
    from .accelerate_matmul import mma_eligible, mma_warps

    shape = shape_of(dot.result.type)
    warps = mma_warps(shape, num_warps) if mma_eligible(dot) and len(shape) == 2 else None
    replicas = (1, 1) if warps is None else (warps[1], warps[0])  # a is repeated along N's warps, b along M's
    total = registers_per_thread(dot.result.type, num_warps)
    for operand, repeat in zip((dot.a, dot.b), replicas):
        copies = 2 if element_of(operand.type).bitwidth == 32 else 1
        total += copies * registers_per_thread(operand.type, num_warps, repeat)
    return total


def _within_budget(body: Block, loads: list[tuple[LoadOp, list[Operation]]], num_warps: int,
                   ) -> list[tuple[LoadOp, list[Operation]]]:
    """The loads (body order) that fit `PREFETCH_REGISTER_BUDGET` beside the body's dots."""
    if not num_warps:
        return loads
    used = sum(dot_registers(op, num_warps) for op in body.ops if isinstance(op, tt.DotOp))
    kept = []
    for load, slice_ops in loads:
        cost = registers_per_thread(load.result.type, num_warps)
        if used + cost <= PREFETCH_REGISTER_BUDGET:
            kept.append((load, slice_ops))
            used += cost
    return kept


def address_slice(load: LoadOp, body: Block) -> list[Operation] | None:
    """The body ops `load`'s operands are computed from (in body order), or None when they
    depend on a loop-carried value or on an op that is not pure, or when the load is volatile
    (issued an iteration early it would read another moment's value)."""
    if access_hints(load).volatile:
        return None
    iv = body.args[0]
    needed: set[Operation] = set()
    pending = list(load.operands)
    while pending:
        value = pending.pop()
        if isinstance(value, BlockArgument):
            if value.block is body and value is not iv:
                return None  # a loop-carried value
            continue
        op = value.owner
        if op.parent_block() is not body or op in needed:
            continue  # defined outside the loop (or seen)
        if op.regions or isinstance(op, LoadOp) or not is_side_effect_free(op):
            return None
        needed.add(op)
        pending.extend(op.operands)
    return [op for op in body.ops if op in needed]


def _clone_load(load: LoadOp, slice_ops: list[Operation], iv: SSAValue, index: SSAValue, ub: SSAValue,
                ) -> list[Operation]:
    """`load` and its address computation for induction variable `index`, masked off when
    `index` is not below `ub`."""
    mapping: dict[SSAValue, SSAValue] = {iv: index}
    ops = [op.clone(value_mapper=mapping) for op in slice_ops]
    in_range = arith_ext.CmpiOp(index, ub, "slt")
    ops.append(in_range)
    mask = in_range.result
    shape_type = load.ptr.type
    if isinstance(shape_type, TensorType):
        splat = tt.SplatOp(mask, TensorType(IntegerType(1), shape_type.get_shape()))
        ops.append(splat)
        mask = splat.result
    if load.mask is not None:
        both = arith.AndIOp(mapping.get(load.mask, load.mask), mask)
        ops.append(both)
        mask = both.result
    other = None if load.other is None else mapping.get(load.other, load.other)
    early = LoadOp(mapping.get(load.ptr, load.ptr), mask, other, load.result.type)
    early.attributes.update(access_hints(load).attributes())  # the cache hints travel with it
    early.location = load.location  # diagnostics point at the user's tl.load
    ops.append(early)
    return ops


def _ring_operand(load: LoadOp, num_warps: int, mma_version: int, body: Block) -> bool:
    """Whether pipeline-async-copies will copy `load` into a ring: a 16-bit tensor-core operand of a dot alone,
    or both fp32 operands of a "tf32" mma.sync dot (`tf32_ring_dot`)."""
    from ..ir.tt_types import element_of, shape_of
    from .accelerate_matmul import mma_eligible, mma_warps
    from .pipeline_async_copies import tf32_ring_dot, zero_or_none

    uses = list(load.result.uses)
    if not (len(uses) == 1 and isinstance(uses[0].operation, tt.DotOp) and uses[0].index < 2):
        return False
    dot = uses[0].operation
    bits = element_of(load.result.type).bitwidth
    return (mma_eligible(dot) and (bits == 16 or bits == 32 and tf32_ring_dot(dot, mma_version)
                                   and all(_ring_load(v, body) for v in (dot.a, dot.b)))
            and mma_warps(shape_of(dot.result.type), num_warps) is not None
            and zero_or_none(load.other))


def _ring_load(value: SSAValue, body: Block) -> bool:
    """Whether a tf32 dot's operand is a load of the loop body that only the dot reads, with zeros or
    nothing for masked-off elements (pipeline-async-copies puts both in rings, or neither)."""
    from .pipeline_async_copies import zero_or_none

    load = value.owner
    return (isinstance(load, LoadOp) and load.parent_block() is body and len(list(load.result.uses)) == 1
            and zero_or_none(load.other) and address_slice(load, body) is not None)


def _pipeline(loop: scf.ForOp, ring_num_warps: int, num_warps: int = 0, mma_version: int = 0) -> bool:
    body = loop.body.block
    if not any(isinstance(op, tt.DotOp) for op in body.ops):
        return False
    loads = [(op, s) for op in body.ops if isinstance(op, LoadOp)
             and not (ring_num_warps and _ring_operand(op, ring_num_warps, mma_version, body))
             and (s := address_slice(op, body)) is not None]
    loads = _within_budget(body, loads, num_warps)
    if not loads:
        return False
    iv = body.args[0]
    outer = loop.parent_block()
    assert outer is not None
    # the first iteration's loads, before the loop
    first_values = []
    for load, slice_ops in loads:
        ops = _clone_load(load, slice_ops, iv, loop.lb, loop.ub)
        outer.insert_ops_before(ops, loop)
        first_values.append(ops[-1].results[0])
    # the next iteration's loads at the top of the body
    next_index = arith.AddiOp(iv, loop.step)
    next_ops: list[Operation] = [next_index]
    next_values = []
    for load, slice_ops in loads:
        ops = _clone_load(load, slice_ops, iv, next_index.result, loop.ub)
        next_ops.extend(ops)
        next_values.append(ops[-1].results[0])
    body.insert_ops_before(next_ops, body.first_op)  # type: ignore[arg-type]
    # this iteration's values become loop-carried
    for load, _ in loads:
        carried = body.insert_arg(load.result.type, len(body.args))
        load.result.replace_all_uses_with(carried)
        load.detach()
        load.erase()
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    new_yield = scf.YieldOp(*yield_op.operands, *next_values)
    body.insert_op_before(new_yield, yield_op)
    yield_op.detach()
    yield_op.erase()
    new_loop = scf.ForOp(loop.lb, loop.ub, loop.step, [*loop.iter_args, *first_values], loop.detach_region(loop.body))
    outer.insert_op_before(new_loop, loop)
    for old, new in zip(loop.results, new_loop.results):
        old.replace_all_uses_with(new)
    loop.detach()
    loop.erase()
    return True


@dataclass(frozen=True)
class PipelineLoadsPass(ModulePass):
    """Prefetch the dot operands of the next loop iteration (see the module docstring)."""

    name = "pipeline-loads"

    ring_num_warps: int = 0
    num_warps: int = 0  # the launch's, for the register budget (0: no budget)
    mma_version: int = 0  # 2: fp32 operands of "tf32" dots go into rings too (with `ring_num_warps`)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func_op in functions(op):
            for loop in [o for o in func_op.walk() if isinstance(o, scf.ForOp)]:
                _pipeline(loop, self.ring_num_warps, self.num_warps, self.mma_version)
