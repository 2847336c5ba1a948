"""pointer-induction: pointer tiles advanced by a fixed step in a loop of dots become functions of
the loop index (TTIR).

The matmul tutorial's form carries its pointer tiles around the loop:

    before:  for i, p = p0: x = load(p); ... dot(x, ..) ...; yield p + d
    after:   for i:         x = load(p0 + ((i - lb) / step) * d); ... dot(x, ..) ...

when `d` is defined outside the loop and the loop's final pointers are not used afterwards (the
loop-carried value is then removed; if they are used it stays, and only the uses inside the body
are rewritten). Then the addresses no longer pass through the loop: axis analysis sees their
contiguity (vector loads), the layout passes need no conversion of the pointer tile per step,
and pipeline-loads can prefetch them. Offsets stay 32-bit, as the index form
(`a_ptr + rows * stride + k`) is. Only loops whose body computes a `tt.dot`; run before
pipeline-loads.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from ..ir import tt
from ..ir.tt_types import element_of
from .layout_constraints import functions


def _defined_outside(value: SSAValue, loop: scf.ForOp) -> bool:
    owner = value.owner
    block = value.block if isinstance(value, BlockArgument) else owner.parent_block()
    while block is not None:
        if block is loop.body.block:
            return False
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return True


def _stepped_pointers(loop: scf.ForOp) -> list[int]:
    """Indices of the iter args that are pointer tiles advanced by a loop-invariant 32-bit offset."""
    body = loop.body.block
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    found = []
    for index, (arg, yielded) in enumerate(zip(body.args[1:], yield_op.operands)):
        step = yielded.owner
        if not (isinstance(arg.type, TensorType) and isinstance(step, tt.AddPtrOp) and step.ptr is arg):
            continue
        offset_type = step.offset.type
        if not (isinstance(offset_type, TensorType) and element_of(offset_type) == IntegerType(32)
                and _defined_outside(step.offset, loop)):
            continue
        found.append(index)
    return found


def _iteration(loop: scf.ForOp, body: Block) -> tuple[list[Operation], SSAValue]:
    """Ops computing (iv - lb) / step at the top of the body, and that value."""
    iv = body.args[0]
    lb, step = loop.lb, loop.step
    ops: list[Operation] = []
    value: SSAValue = iv
    if not (isinstance(lb.owner, arith.ConstantOp) and lb.owner.value.value.data == 0):
        sub = arith.SubiOp(iv, lb)
        ops.append(sub)
        value = sub.result
    if not (isinstance(step.owner, arith.ConstantOp) and step.owner.value.value.data == 1):
        div = arith.DivSIOp(value, step)
        ops.append(div)
        value = div.result
    return ops, value


def _rewrite(loop: scf.ForOp) -> bool:
    body = loop.body.block
    if not any(isinstance(op, tt.DotOp) for op in body.ops):
        return False
    indices = _stepped_pointers(loop)
    if not indices:
        return False
    ops, count = _iteration(loop, body)
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    for index in indices:
        arg, step = body.args[1 + index], yield_op.operands[index].owner
        offset_type = step.offset.type
        splat = tt.SplatOp(count, TensorType(IntegerType(32), offset_type.get_shape()))
        total = arith.MuliOp(splat.result, step.offset)
        pointers = tt.AddPtrOp(loop.iter_args[index], total.result)
        ops.extend([splat, total, pointers])
        for use in list(arg.uses):
            if use.operation is not step:
                use.operation.operands[use.index] = pointers.result
    body.insert_ops_before(ops, body.first_op)  # type: ignore[arg-type]
    dead = [index for index in indices if not loop.results[index].uses]
    if dead:
        _drop_iter_args(loop, dead)
    return True


def _drop_iter_args(loop: scf.ForOp, dead: list[int]) -> None:
    """Rebuild `loop` without the loop-carried values `dead` (unused after the loop, and inside the
    body used only by the step that yields them)."""
    body = loop.body.block
    yield_op = body.last_op
    assert isinstance(yield_op, scf.YieldOp)
    keep = [i for i in range(len(loop.iter_args)) if i not in dead]
    steps = [yield_op.operands[i].owner for i in dead]
    new_yield = scf.YieldOp(*[yield_op.operands[i] for i in keep])
    body.insert_op_before(new_yield, yield_op)
    yield_op.detach()
    yield_op.erase()
    for step in steps:
        if not step.result.uses:
            step.detach()
            step.erase()
    for i in sorted(dead, reverse=True):
        body.erase_arg(body.args[1 + i])
    outer = loop.parent_block()
    assert outer is not None
    new_loop = scf.ForOp(loop.lb, loop.ub, loop.step, [loop.iter_args[i] for i in keep],
                         loop.detach_region(loop.body))
    outer.insert_op_before(new_loop, loop)
    for old_index, new_result in zip(keep, new_loop.results):
        loop.results[old_index].replace_all_uses_with(new_result)
    loop.detach()
    loop.erase()


@dataclass(frozen=True)
class PointerInductionPass(ModulePass):
    """Rewrite loop-carried pointer increments of dot loops from the loop index (module docstring)."""

    name = "pointer-induction"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func_op in functions(op):
            for loop in [o for o in func_op.walk() if isinstance(o, scf.ForOp)]:
                _rewrite(loop)
