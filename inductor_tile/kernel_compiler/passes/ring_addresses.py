"""The address order of a ring operand's copies (pipeline-async-copies): loop-invariant offsets first; and of
a wgmma ring kernel's stores (its epilogue): the columns' offsets first (`contiguous_offsets_first`).

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
from ..ir.layouts import Blocked
from ..ir.tt_memory import LoadOp, StoreOp
from ..ir.ttg import layout_of
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


def contiguous_offsets_first(store: StoreOp) -> bool:
    """Rewrite a store's pointers `addptr([broadcast](addptr(splat(p), rows)), broadcast(cols))`, `cols` varying
    only along the layout's fastest dimension and `rows` constant along it (the matmul's `c_ptr + rows[:, None] *
    stride_cm + cols[None, :]`), into `addptr(broadcast(addptr(splat(p), cols)), [broadcast](rows))`: one pointer
    per run of a thread's columns, plus one 64-bit multiply-add per row. In the other order LLVM folds both
    offsets into one 64-bit sum per element, all computed while the accumulator is still in registers (the tf32
    matmul's epilogue held 221 live registers there, 254 allocated). True if it did."""
    outer = store.ptr.owner
    pointer_type = store.ptr.type
    layout = layout_of(pointer_type) if isinstance(pointer_type, TensorType) else None
    if not (isinstance(outer, tt.AddPtrOp) and isinstance(layout, Blocked)):
        return False
    widened = outer.ptr.owner if isinstance(outer.ptr.owner, tt.BroadcastOp) else None
    inner = (widened.src if widened else outer.ptr).owner
    cols = outer.offset.owner
    if not (isinstance(inner, tt.AddPtrOp) and isinstance(inner.ptr.owner, tt.SplatOp)
            and isinstance(cols, tt.BroadcastOp) and element_of(inner.offset.type) == element_of(cols.src.type)):
        return False
    fastest = layout.order[0]
    cols_shape, rows_shape = shape_of(cols.src.type), shape_of(inner.offset.type)
    if not (rows_shape[fastest] == 1 and all(size == 1 for dim, size in enumerate(cols_shape) if dim != fastest)):
        return False
    assert isinstance(pointer_type, TensorType)
    narrow_type = cols.src.type
    assert isinstance(narrow_type, TensorType)
    splat = tt.SplatOp(inner.ptr.owner.src, TensorType(element_of(pointer_type), shape_of(narrow_type),
                                                       narrow_type.encoding))
    column_pointers = tt.AddPtrOp(splat.result, cols.src)
    ops: list[Operation] = [splat, column_pointers, tt.BroadcastOp(column_pointers.result, pointer_type)]
    rows = inner.offset
    if tuple(rows_shape) != tuple(shape_of(pointer_type)):
        ops.append(tt.BroadcastOp(rows, TensorType(element_of(rows.type), shape_of(pointer_type),
                                                   pointer_type.encoding)))
        rows = ops[-1].results[0]
    ops.append(tt.AddPtrOp(ops[2].results[0], rows))
    block = store.parent_block()
    assert block is not None
    block.insert_ops_before(ops, store)
    store.operands = [ops[-1].results[0], *store.operands[1:]]
    return True
