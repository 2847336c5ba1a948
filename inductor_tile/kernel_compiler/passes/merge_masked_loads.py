"""merge-masked-loads: two loads of the same pointers whose masks differ by conjuncts become one load.

Inductor's index-heavy kernels (Longformer's chunked attention: pads, slices and select-scatters of one
buffer) load the same addresses under `m & a` and under `m`, with the same `other`. Where `a` holds the
first load equals the second, and where it does not both give `other`, so

    load(p, m & a, other)  ==  select(a, load(p, m, other), other)

exactly, and the load under the narrower mask `m & a` is dropped. The load kept reads only where the
dropped one's mask is a subset of its own: no new address is touched. Masks are compared as sets of
conjuncts (the leaves of `arith.andi` trees, by SSA value, as CSE leaves them). Both loads must agree in
`other`, cache modifier, eviction policy and volatility, sit in one block with no write to memory between
them, and have no volatile load. Where the wider load comes second, it moves up to the first (with the
pure ops computing its mask and pointers that sit between), since nothing between them writes memory.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import MemoryEffectKind, get_effects, is_side_effect_free

from ..ir import arith_ext
from ..ir.tt_memory import LoadOp
from .matchers import defining_op


def _conjuncts(mask: SSAValue) -> list[SSAValue]:
    """The leaves of the `arith.andi` tree `mask` is, left to right, each once."""
    op = defining_op(mask, "arith.andi")
    if op is not None:
        leaves: list[SSAValue] = []
        for operand in op.operands:
            leaves += [leaf for leaf in _conjuncts(operand) if leaf not in leaves]
        return leaves
    return [mask]


def _writes(op: Operation) -> bool:
    """Whether `op` may write memory (unknown effects count as writes)."""
    effects = get_effects(op)
    if effects is None:
        return True
    return any(effect.kind == MemoryEffectKind.WRITE for effect in effects)


def _same_access(a: LoadOp, b: LoadOp) -> bool:
    return (a.ptr is b.ptr and a.other is not None and a.other is b.other and a.mask is not None
            and b.mask is not None and a.attributes == b.attributes and "isVolatile" not in a.attributes
            and a.result.type == b.result.type)


def _hoisted_before(load: LoadOp, anchor: Operation, block: Block) -> bool:
    """Move `load`, with the pure ops of `block` between `anchor` and it that compute its operands, in
    front of `anchor`; False (nothing moved) where one of them is not pure."""
    start = block.get_operation_index(anchor)
    moving: set[Operation] = set()
    pending = list(load.operands)
    while pending:
        owner = pending.pop().owner
        if not isinstance(owner, Operation) or owner.parent is not block or owner in moving:
            continue
        if block.get_operation_index(owner) < start:
            continue
        if owner.regions or not is_side_effect_free(owner):
            return False
        moving.add(owner)
        pending += owner.operands
    for op in [op for op in block.ops if op in moving] + [load]:
        op.detach()
        block.insert_op_before(op, anchor)
    return True


def _merge(narrow: LoadOp, wide: LoadOp, extra: list[SSAValue]) -> None:
    """Replace `narrow` by `select(extra conjuncts, wide, other)` (or `wide` itself), in narrow's place."""
    block = narrow.parent
    assert block is not None
    value = wide.result
    if extra:
        condition = extra[0]
        for leaf in extra[1:]:
            both = arith.AndIOp(condition, leaf)
            block.insert_op_before(both, narrow)
            condition = both.result
        select = arith_ext.SelectOp(condition, wide.result, narrow.other)
        block.insert_op_before(select, narrow)
        value = select.result
    narrow.result.replace_all_uses_with(value)
    block.erase_op(narrow)


def _merge_in_block(block: Block) -> bool:
    """One merge in `block` (True) or none."""
    ops = list(block.ops)
    for i, first in enumerate(ops):
        if not isinstance(first, LoadOp) or first.mask is None:
            continue
        for second in ops[i + 1:]:
            if _writes(second) and not isinstance(second, LoadOp):
                break  # a store or an atomic: later loads may read what it wrote
            if not isinstance(second, LoadOp) or not _same_access(first, second):
                continue
            a, b = _conjuncts(first.mask), _conjuncts(second.mask)
            if all(leaf in b for leaf in a):  # first's mask is the wider (or the same)
                _merge(second, first, [leaf for leaf in b if leaf not in a])
                return True
            if all(leaf in a for leaf in b) and _hoisted_before(second, first, block):
                _merge(first, second, [leaf for leaf in a if leaf not in b])
                return True
    return False


class MergeMaskedLoadsPass(ModulePass):
    """Load once where two loads of the same pointers differ only by conjuncts of their masks."""

    name = "merge-masked-loads"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = [block for inner in op.walk() for region in inner.regions for block in region.blocks]
        for block in blocks:
            while _merge_in_block(block):
                pass
