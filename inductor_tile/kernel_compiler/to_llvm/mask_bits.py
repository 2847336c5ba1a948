"""The mask bit of each slot of a masked load or store, built from the mask's factors.

A mask is mostly an `arith.andi` of broadcasts: `(rows[:, None] < M) & (cols[None, :] < N)` in every
matmul epilogue and Inductor kernel. Its lowered i1 vector has one lane per slot, and a lane of a wide
`and` of i1 vectors costs an `and` per slot, which LLVM's NVPTX back end may even pack into integers
first when the lanes are extracted one by one. Here each factor (a leaf of the `andi` tree) is read at
its own constancy leader (`constancy_leaders`: a row condition once per distinct row a thread holds, a
column condition once per distinct column run), and a slot's bit is the scalar `and` of its factors'
bits, built once per distinct combination, where the access that needs it is emitted: one predicate
per row and per column, combined per store.

A factor's bit is not always extracted from its i1 vector: LLVM turns a broadcast compare (a row
condition held by the 8 slots of a row) into one compare of broadcasts, as wide as the tile, and the NVPTX
back end packs the lanes of such a wide i1 vector into integers to extract them (a selp/shl/or chain per
row of a matmul epilogue). Where the compare serves masks only (`serves_masks_only`: its vector is dead
once the accesses take their bits), `scalar_lane` recomputes the lane instead, the compare of its
operands' lanes next to the access; a compare that other ops use anyway is read from its vector, and
where no factor's compare serves masks only, the mask's own lanes are read (at its constancy leaders):
splitting it would only move LLVM's choices around.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.ir import instructions
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from .constancy import MAX_SHARED_SLOTS, constancy_leaders
from .context import I1, I32, LoweringContext

#: the factors of a larger `andi` tree stop at this many (some of them `andi`s, read as vectors)
MAX_FACTORS = 8


def and_factors(value: SSAValue, limit: int = MAX_FACTORS) -> list[SSAValue]:
    """Values whose `and` is `value`: the leaves of the tree of `arith.andi` computing it, expanded up to
    `limit` of them ([value] when it is no `andi`)."""
    leaves = [value]
    while len(leaves) < limit:
        index = next((i for i, leaf in enumerate(leaves) if _is_andi(leaf)), None)
        if index is None:
            break
        leaves[index:index + 1] = list(leaves[index].owner.operands)
    return leaves


def _is_andi(value: SSAValue) -> bool:
    op = value.owner
    return isinstance(op, Operation) and op.name == "arith.andi" and isinstance(value.type, TensorType)


class MaskBits:
    """Per slot, the i1 bit of a tensor mask for a target without per-element masks (one predicate per
    access). `bit(slot)` emits what it needs at the builder's position the first time it is asked for."""

    def __init__(self, ctx: LoweringContext, mask_ssa: SSAValue, mask: ir.Value):
        self.ctx = ctx
        count = mask.type.count
        self.factors: list[tuple[ir.Value, list[int]]] = []
        self.recompute: list[bool] = []
        for leaf in and_factors(mask_ssa):
            vector = ctx.get(leaf)
            if not isinstance(vector.type, ir.VectorType) or vector.type.count != count:
                self.recompute = []
                break
            self.factors.append((vector, self._leaders(leaf, count)))
            self.recompute.append(serves_masks_only(_unbroadcast(leaf)))
        if not any(self.recompute):  # every factor's vector stays: the mask's lanes, as they are
            self.factors, self.recompute = [(mask, self._leaders(mask_ssa, count))], [False]
        self._lanes: dict[tuple[int, int], ir.Value] = {}
        self._bits: dict[tuple[int, ...], ir.Value] = {}
        self._scalars: dict[tuple[int, int], ir.Value] = {}

    def _leaders(self, ssa: SSAValue, count: int) -> list[int]:
        """The slot each slot of `ssa` reads its value from (`constancy_leaders`; itself where nothing is known)."""
        ctx = self.ctx
        info = ctx.axis_info.get(ssa) if ctx.axis_info is not None else None
        if info is None or not ctx.target.shares_equal_slots or count > MAX_SHARED_SLOTS:
            return list(range(count))
        return constancy_leaders(ctx.layout_map(ssa.type), info.constancy)

    def bit(self, slot: int) -> ir.Value:
        key = tuple(leaders[slot] for _, leaders in self.factors)
        if key not in self._bits:
            combined = None
            for index, leader in enumerate(key):
                lane = self._lane(index, leader)
                combined = lane if combined is None else self.ctx.builder.and_(combined, lane)
            self._bits[key] = combined
        return self._bits[key]

    def _lane(self, factor: int, slot: int) -> ir.Value:
        if (factor, slot) not in self._lanes:
            vector = self.factors[factor][0]
            self._lanes[factor, slot] = scalar_lane(self.ctx.builder, vector, slot, self._scalars,
                                                    self.recompute[factor])
        return self._lanes[factor, slot]

    def vector(self, slots: list[int]) -> ir.Value:
        """The bits of `slots` as one i1 vector (lanes inserted one by one: the target reads them back so)."""
        out: ir.Value = ir.Constant(ir.VectorType(I1, len(slots)), None)
        for i, slot in enumerate(slots):
            out = self.ctx.builder.insert_element(out, self.bit(slot), ir.Constant(I32, i))
        return out


#: how deep `scalar_lane` follows a lane through instructions before extracting it
MAX_LANE_DEPTH = 12
_BITWISE = {"and": ir.IRBuilder.and_, "or": ir.IRBuilder.or_, "xor": ir.IRBuilder.xor}
_INT_SYMBOLS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _unbroadcast(value: SSAValue) -> SSAValue:
    """The value `value` broadcasts (through `tt.broadcast`s), or `value` itself."""
    while isinstance(value.owner, Operation) and value.owner.name == "tt.broadcast":
        value = value.owner.operands[0]
    return value


def serves_masks_only(value: SSAValue) -> bool:
    """Whether every use of `value` is, through `tt.broadcast` and `arith.andi`, the mask of a `tt.load` or
    `tt.store` (whose lowering takes the bits it needs one by one: the vector then has no use left)."""
    for use in value.uses:
        op = use.operation
        if op.name in ("tt.load", "tt.store"):
            if op.operands[use.index] is not op.mask:
                return False
        elif op.name not in ("tt.broadcast", "arith.andi") or not serves_masks_only(op.results[0]):
            return False
    return True


def scalar_lane(b: ir.IRBuilder, vector: ir.Value, lane: int, cache: dict[tuple[int, int], ir.Value],
                recompute: bool, depth: int = 0) -> ir.Value:
    """Element `lane` of `vector` at the builder's position: followed through shufflevector and insertelement to
    the element's source, constants folded, and with `recompute` an i1 compare or bitwise op redone on its
    operands' lanes; anything else extracted. `cache` (by vector and lane) keeps one scalar per lane."""
    key = (id(vector), lane)
    if key in cache:
        return cache[key]
    if isinstance(vector, ir.Constant) and isinstance(vector.constant, (list, tuple)):
        element = vector.constant[lane]
        out = element if isinstance(element, ir.Value) else ir.Constant(vector.type.element, element)
    elif depth >= MAX_LANE_DEPTH or not isinstance(vector, instructions.Instruction):
        out = b.extract_element(vector, ir.Constant(I32, lane))
    elif isinstance(vector, instructions.ShuffleVector) and isinstance(vector.operands[2].constant, (list, tuple)):
        first, second, mask = vector.operands
        index = _constant_int(mask.constant[lane])
        count = first.type.count
        if index is None:  # an undefined lane: any value
            out = ir.Constant(vector.type.element, ir.Undefined)
        else:
            out = scalar_lane(b, first if index < count else second, index % count, cache, recompute, depth + 1)
    elif isinstance(vector, instructions.InsertElement) and _constant_int(vector.operands[2]) is not None:
        into, element, index = vector.operands
        out = element if _constant_int(index) == lane else scalar_lane(b, into, lane, cache, recompute, depth + 1)
    elif recompute and isinstance(vector, instructions.CompareInstr):
        lhs, rhs = (scalar_lane(b, v, lane, cache, recompute, depth + 1) for v in vector.operands)
        out = _compare(b, vector, lhs, rhs)
    elif recompute and vector.type.element == I1 and getattr(vector, "opname", None) in _BITWISE:
        lhs, rhs = (scalar_lane(b, v, lane, cache, recompute, depth + 1) for v in vector.operands)
        out = _BITWISE[vector.opname](b, lhs, rhs)
    else:
        out = b.extract_element(vector, ir.Constant(I32, lane))
    cache[key] = out
    return out


def _constant_int(value) -> int | None:
    """The integer of a constant (an int or an `ir.Constant` of one); None for undef or anything else."""
    if isinstance(value, int):
        return value
    if isinstance(value, ir.Constant) and isinstance(value.constant, int):
        return value.constant
    return None


def _compare(b: ir.IRBuilder, like: instructions.CompareInstr, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
    """The scalar compare of `like`'s kind and predicate (and flags) of lhs and rhs."""
    if isinstance(like, instructions.FCMPInstr):
        return b.fcmp_ordered(like.op, lhs, rhs, flags=like.flags)  # a predicate name (`olt`, `une`) is kept
    if like.op in ("eq", "ne"):
        return b.icmp_signed(_INT_SYMBOLS[like.op], lhs, rhs)
    compare = b.icmp_signed if like.op[0] == "s" else b.icmp_unsigned
    return compare(_INT_SYMBOLS[like.op[1:]], lhs, rhs)
