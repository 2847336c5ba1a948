"""The mask bit of each slot of a masked load or store, built from the mask's factors.

A mask is mostly an `arith.andi` of broadcasts: `(rows[:, None] < M) & (cols[None, :] < N)` in every
matmul epilogue and Inductor kernel. Its lowered i1 vector has one lane per slot, and a lane of a wide
`and` of i1 vectors costs an `and` per slot, which LLVM's NVPTX back end may even pack into integers
first when the lanes are extracted one by one. Here each factor (a leaf of the `andi` tree) is read at
its own constancy leader (`constancy_leaders`: a row condition once per distinct row a thread holds, a
column condition once per distinct column run), and a slot's bit is the scalar `and` of its factors'
bits, built once per distinct combination, where the access that needs it is emitted: one predicate
per row and per column, combined per store.

A factor's bit is not extracted from its i1 vector: LLVM turns a broadcast of a compare into a compare
of broadcasts, and the NVPTX back end packs the lanes of a wide i1 vector into integers to extract
them (a shl/or/and chain per row of a matmul epilogue). `scalar_lane` recomputes the lane instead: the
compare (or i1 `and`/`or`/`xor`) of its operands' lanes, followed through shuffles and insertions, so
the store's predicate is one `setp` of the row index next to it.
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
        for leaf in and_factors(mask_ssa):
            vector = ctx.get(leaf)
            if not isinstance(vector.type, ir.VectorType) or vector.type.count != count:
                self.factors = [(mask, self._leaders(mask_ssa, count))]
                break
            self.factors.append((vector, self._leaders(leaf, count)))
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
            self._lanes[factor, slot] = scalar_lane(self.ctx.builder, vector, slot, self._scalars)
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


def scalar_lane(b: ir.IRBuilder, vector: ir.Value, lane: int, cache: dict[tuple[int, int], ir.Value],
                depth: int = 0) -> ir.Value:
    """Element `lane` of `vector`, computed at the builder's position as a scalar: through shufflevector and
    insertelement to the element's source, an i1 compare or bitwise op redone on its operands' lanes,
    constants folded; anything else extracted. `cache` (by vector and lane) keeps one scalar per lane."""
    key = (id(vector), lane)
    if key in cache:
        return cache[key]
    if isinstance(vector, ir.Constant):
        element = vector.constant[lane] if isinstance(vector.constant, list) else vector.constant
        out = element if isinstance(element, ir.Value) else ir.Constant(vector.type.element, element)
    elif depth >= MAX_LANE_DEPTH:
        out = b.extract_element(vector, ir.Constant(I32, lane))
    elif isinstance(vector, instructions.ShuffleVector):
        first, second, mask = vector.operands
        index = _constant_int(mask.constant[lane])
        count = first.type.count
        if index is None:  # an undefined lane: any value
            out = ir.Constant(vector.type.element, None)
        else:
            source = first if index < count else second
            out = scalar_lane(b, source, index % count, cache, depth + 1)
    elif isinstance(vector, instructions.InsertElement) and _constant_int(vector.operands[2]) is not None:
        into, element, index = vector.operands
        out = element if _constant_int(index) == lane else scalar_lane(b, into, lane, cache, depth + 1)
    elif isinstance(vector, instructions.CompareInstr):
        lhs, rhs = (scalar_lane(b, v, lane, cache, depth + 1) for v in vector.operands)
        out = _compare(b, vector, lhs, rhs)
    elif vector.type.element == I1 and getattr(vector, "opname", None) in _BITWISE:
        lhs, rhs = (scalar_lane(b, v, lane, cache, depth + 1) for v in vector.operands)
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
