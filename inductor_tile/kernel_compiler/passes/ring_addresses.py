"""The address order of a ring operand's copies (pipeline-async-copies): loop-invariant offsets first.

`b_ptr + k[:, None] * stride_bk + cols[None, :]` is `addptr(broadcast(addptr(splat(b_ptr), k * stride_bk)),
cols)`: the offset that changes with the loop's index is added first, the invariant columns after it. Each
`tt.addptr` is 64-bit arithmetic on the sign-extended offset (to_llvm/rules_tensor.py), and LLVM factors the
two scaled offsets into one (sext(k * s) + sext(col)) * 2 per element, which no longer splits into a part it can
hoist: every iteration recomputes 64-bit sums, shifts and adds per element. Swapped,

    addptr(addptr(broadcast(splat(b_ptr)), cols), broadcast(k * stride_bk))

the invariant pointers `b_ptr + cols` leave the loop and each copy's address is one 64-bit multiply-add of
its 32-bit row offset, as in Triton's loops (its addresses are GEPs, which LLVM keeps in this order). The
sum is the same: each offset is still sign-extended on its own, nothing is added in 32 bits.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from ..ir import tt
from ..ir.tt_memory import LoadOp
from ..ir.tt_types import element_of, shape_of


def varies(value: SSAValue, body: Block) -> bool:
    """Whether `value` depends on the induction variable of the loop whose body is `body` (or on anything
    else the body computes from it)."""
    iv = body.args[0]
    pending, seen = [value], set()
    while pending:
        current = pending.pop()
        if current is iv:
            return True
        if isinstance(current, BlockArgument):
            if current.block is body:
                return True  # a loop-carried value
            continue
        op = current.owner
        if not isinstance(op, Operation) or op.parent_block() is not body or op in seen:
            continue
        seen.add(op)
        pending.extend(op.operands)
    return False


def _outside(value: SSAValue, body: Block) -> bool:
    owner = value.owner
    return value.block is not body if isinstance(value, BlockArgument) else owner.parent_block() is not body


def invariant_offsets_first(load: LoadOp, body: Block, loop: Operation) -> bool:
    """Rewrite `load`'s pointers `addptr([broadcast](addptr(base, varying)), invariant)`, base and invariant
    defined before `loop`, into `addptr(invariant_pointers, [broadcast](varying))` with `invariant_pointers =
    addptr([broadcast](base), invariant)` placed before `loop` (in the body, LLVM would merge the two sums
    again); the old ops are left to DCE. True if it did."""
    outer = load.ptr.owner
    if not isinstance(outer, tt.AddPtrOp) or not _outside(outer.offset, body):
        return False
    widened = outer.ptr.owner if isinstance(outer.ptr.owner, tt.BroadcastOp) else None
    inner = (widened.src if widened else outer.ptr).owner
    if not (isinstance(inner, tt.AddPtrOp) and inner.parent_block() is body and varies(inner.offset, body)
            and _outside(inner.ptr, body) and element_of(inner.offset.type) == element_of(outer.offset.type)):
        return False
    pointer_type = outer.ptr.type
    assert isinstance(pointer_type, TensorType)
    before = _invariant_pointers(inner.ptr, outer.offset, pointer_type)
    in_body: list[Operation] = []
    offset = inner.offset
    if widened is not None:
        in_body.append(tt.BroadcastOp(offset, TensorType(element_of(offset.type), shape_of(pointer_type),
                                                          pointer_type.encoding)))
        offset = in_body[0].results[0]
    in_body.append(tt.AddPtrOp(before[-1].results[0], offset))
    outer_block = loop.parent_block()
    assert outer_block is not None
    outer_block.insert_ops_before(before, loop)
    body.insert_ops_before(in_body, load)
    load.operands = [in_body[-1].results[0], *load.operands[1:]]
    return True


def _invariant_pointers(base: SSAValue, offset: SSAValue, pointer_type: TensorType) -> list[Operation]:
    """Ops computing `[broadcast](base) + offset` of `pointer_type`: where the base is a splat and the offset a
    broadcast (b's columns), at the offset's own shape and then broadcast, so that LLVM sees one pointer per
    distinct offset (at the full shape it folds the sum back into the loop's)."""
    narrow = offset.owner if isinstance(offset.owner, tt.BroadcastOp) else None
    if isinstance(base.owner, tt.SplatOp) and narrow is not None:
        narrow_type = narrow.src.type
        assert isinstance(narrow_type, TensorType)
        splat = tt.SplatOp(base.owner.src, TensorType(element_of(pointer_type), shape_of(narrow_type),
                                                      narrow_type.encoding))
        pointers = tt.AddPtrOp(splat.result, narrow.src)
        return [splat, pointers, tt.BroadcastOp(pointers.result, pointer_type)]
    ops: list[Operation] = []
    if shape_of(base.type) != shape_of(pointer_type):
        ops.append(tt.BroadcastOp(base, pointer_type))
        base = ops[0].results[0]
    return ops + [tt.AddPtrOp(base, offset)]
