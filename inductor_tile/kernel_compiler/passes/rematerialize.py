"""Backward rematerialization: rebuild a value in another layout instead of converting it.

A value whose producers are all cheap and layout-free can be computed again directly in
the layout a user wants, which costs a few register ops where a `ttg.convert_layout`
may cost a trip through shared memory. The rebuildable producers are:
- tt.splat and tt.make_range (any layout is as cheap as any other);
- a ttg.convert_layout (its own operand is rebuilt instead, or used as is);
- tt.broadcast, tt.expand_dims and pure elementwise ops whose tensor operands are all
  rebuildable (in the layouts `layout_constraints` demands); a packed inline asm only in a
  layout that gives each execution consecutive elements (`packed_asm_layouts`);
- a small tt.load, of no more distinct elements than the launch has threads (as Triton
  judges: no access pattern to lose; the copy reads right after the original, so it sees
  the same memory), when the rematerializer is told the thread count.  Distinct elements
  are the tile's elements divided by the pointers' constancy (`load_values`): a per-row
  mean loaded over a [64 columns x 8 rows] tile has 8, which every thread reads from L1 in
  whatever layout the arithmetic around it has.
Never rebuilt: other loads, reductions, loop-carried values, reshapes.
Each rebuilt op is inserted right after its original, so it dominates every use the
original dominates.

Narrowing (``narrowing=True``): where an op that widens its one operand (a broadcast, an
`arith.extf`/`extsi`/... of fewer bytes) meets an operand that cannot be rebuilt, the operand
is converted instead and the op rebuilt on the converted value: a conversion moved above the
broadcast of a [1, N] weight row to [8, N] moves 8x fewer bytes through shared memory (as
Triton hoists conversions over broadcasts and extensions). Pointers count as wide too: a
`tt.addptr(p, off)` whose pointers `p` can be rebuilt (a splat of the base pointer) and whose
offsets cannot (a reshaped range) converts the offsets when they take 32 bits or fewer and
adds them to `p` again in the wanted layout: half the bytes of 8-byte pointers (a 32768-element
pointer tile would need 256 KB of shared memory; its i32 offsets need 128 KB). `narrowed` lists
those operands.

How far up it goes: producers up to ``MAX_DEPTH`` steps above the conversion, when at most
``MAX_DUPLICATED`` of the ops rebuilt keep other users (those are computed twice; the rest
move to the new layout and the originals die). So a long chain of elementwise ops that only
the conversion uses (a Philox random-number chain feeding a dropout mask) is rebuilt, while
a deep chain that the rest of the kernel also uses is converted once.
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, IntegerType, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.traits import is_side_effect_free

from ..ir import tt
from ..ir.layouts import Layout, Slice
from ..ir.tt_memory import LoadOp, StoreOp
from ..ir.tt_types import element_of, numel, shape_of
from ..analysis.axis_info import compute_axis_info
from ..ir.ttg import ConvertLayoutOp, convert_to, with_layout
from .layout_constraints import is_elementwise, is_tensor, value_layout
from .liveness import region_dce
from .packed_asm_layouts import layout_accepted

MAX_DEPTH = 160  # producers further up than this are converted, not rebuilt
MAX_DUPLICATED = 24  # rebuilt ops that keep users elsewhere (computed twice), at most
MAX_DUPLICATED_CHAIN = 64  # a rebuilt copy doing more ops of its own than this is converted instead


def _operand_layout(op: Operation, layout: Layout) -> Layout:
    """The layout `op`'s tensor operands need for its result to be in `layout`."""
    if isinstance(op, tt.ExpandDimsOp):
        return Slice(op.axis.value.data, layout)
    return layout


def load_values(func_op: Operation) -> dict[Operation, int]:
    """For each tensor tt.load in `func_op`: how many distinct elements it reads (the tile's
    elements over the pointers' constancy along each dimension)."""
    infos = compute_axis_info(func_op)
    counts: dict[Operation, int] = {}
    for op in func_op.walk():
        if isinstance(op, LoadOp) and is_tensor(op.result):
            shape = shape_of(op.result.type)
            info = infos.get(op.ptr)
            count = numel(shape)
            if info is not None:
                for size, run in zip(shape, info.constancy):
                    count //= max(1, min(size, run))
            counts[op] = max(1, count)
    return counts


def tile_bytes(value: SSAValue) -> int:
    """Bytes a tensor value occupies (pointers 8 bytes, i1 one byte an element)."""
    element = element_of(value.type)
    bits = element.bitwidth if isinstance(element, IntegerType | AnyFloat) else 64
    return numel(shape_of(value.type)) * max(8, bits) // 8


def widens(op: Operation) -> SSAValue | None:
    """The one tensor operand of `op` when `op` computes more bytes from it in the same layout (a
    broadcast, an extension); None for any other op."""
    operands = [v for v in op.operands if is_tensor(v)]
    if len(operands) != 1 or len(op.results) != 1:
        return None
    if not isinstance(op, tt.BroadcastOp) and not (is_elementwise(op) and is_side_effect_free(op)):
        return None
    return operands[0] if tile_bytes(operands[0]) < tile_bytes(op.results[0]) else None


def narrow_offsets(op: Operation) -> SSAValue | None:
    """The offsets of `op` when it is a tensor `tt.addptr` whose offsets take 32 bits or fewer
    (narrower than its 64-bit pointers); None otherwise."""
    if not isinstance(op, tt.AddPtrOp) or not is_tensor(op.offset):
        return None
    element = element_of(op.offset.type)
    return op.offset if isinstance(element, IntegerType) and element.bitwidth <= 32 else None


def _rebuildable_op(op: Operation, num_threads: int, values: dict[Operation, int]) -> bool:
    if isinstance(op, tt.SplatOp | tt.MakeRangeOp | tt.BroadcastOp | tt.ExpandDimsOp):
        return True
    if isinstance(op, LoadOp):
        return is_tensor(op.result) and values.get(op, numel(shape_of(op.result.type))) <= num_threads
    # one result: a copy is built with its result's type alone (an inline asm of several results stays)
    return is_elementwise(op) and not isinstance(op, StoreOp) and is_side_effect_free(op) and len(op.results) == 1


class Rematerializer:
    """Answers "can `value` be rebuilt in `layout`?" and rebuilds it; both memoized, so a
    shared producer is rebuilt once. Use a fresh one after the IR changes otherwise."""

    def __init__(self, num_threads: int = 0, values: dict[Operation, int] | None = None,
                 origins: dict[Operation, Operation] | None = None, narrowing: bool = False) -> None:
        self.num_threads = num_threads  # loads this small may be rebuilt (0: no load is)
        self.narrowing = narrowing  # convert a widening op's operand where it cannot be rebuilt
        self.narrowed: set[tuple[SSAValue, Layout]] = set()  # operands converted, not rebuilt
        self.values = values or {}  # distinct elements of loads (`load_values`); default: all
        self.origins = origins if origins is not None else {}  # each rebuilt op -> the op it copies
        self._can: dict[tuple[SSAValue, Layout], bool] = {}
        self._walks: dict[tuple[SSAValue, Layout], tuple[set[Operation], set[tuple[SSAValue, Layout]]]] = {}
        self._built: dict[tuple[SSAValue, Layout], SSAValue] = {}

    def can(self, value: SSAValue, layout: Layout, depth: int = 0) -> bool:
        """True when `value` is in `layout` already or can be rebuilt in it."""
        if value_layout(value) == layout:
            return True
        key = (value, layout)
        if key not in self._can:
            self._can[key] = False  # a cycle (impossible in SSA, but cheap to guard) answers no
            self._can[key] = depth < MAX_DEPTH and self._can_rebuild(value, layout, depth)
        return self._can[key]

    def _can_rebuild(self, value: SSAValue, layout: Layout, depth: int) -> bool:
        op = value.owner
        if not isinstance(op, Operation) or len(op.results) != 1:
            return False
        if isinstance(op, ConvertLayoutOp):
            return self.can(op.src, layout, depth + 1)
        if not _rebuildable_op(op, self.num_threads, self.values) or not layout_accepted(op, layout):
            return False
        wanted = _operand_layout(op, layout)
        if all(self.can(v, wanted, depth + 1) for v in op.operands if is_tensor(v)):
            return True
        if self.narrowing and (operand := self._narrowable(op, wanted, depth)) is not None:
            self.narrowed.add((operand, wanted))
            return True
        return False

    def _narrowable(self, op: Operation, wanted: Layout, depth: int) -> SSAValue | None:
        """The operand of `op` that narrowing would convert: the one operand of a broadcast or an
        extension, or the offsets of an addptr whose pointers can be rebuilt in `wanted`."""
        if (operand := widens(op)) is not None:
            return operand
        offsets = narrow_offsets(op)
        if offsets is not None and self.can(op.operands[0], wanted, depth + 1):  # the pointers
            return offsets
        return None

    def _walk(self, value: SSAValue, layout: Layout) -> tuple[set[Operation], set[tuple[SSAValue, Layout]]]:
        """The ops that rebuilding `value` in `layout` copies, and the operands it converts (call
        only when `can` said yes)."""
        if (value, layout) in self._walks:
            return self._walks[value, layout]
        rebuilt: set[Operation] = set()
        converted: set[tuple[SSAValue, Layout]] = set()
        stack = [(value, layout)]
        while stack:
            v, wanted = stack.pop()
            op = v.owner
            if value_layout(v) == wanted or not isinstance(op, Operation) or op in rebuilt:
                continue
            if (v, wanted) in self.narrowed and not self.can(v, wanted):
                converted.add((v, wanted))
                continue
            rebuilt.add(op)
            if isinstance(op, ConvertLayoutOp):
                stack.append((op.src, wanted))
            else:
                stack.extend((w, _operand_layout(op, wanted)) for w in op.operands if is_tensor(w))
        self._walks[value, layout] = rebuilt, converted
        return rebuilt, converted

    def computed_twice(self, value: SSAValue, layout: Layout, convert: Operation) -> list[Operation]:
        """The ops that rebuilding `value` in `layout` would compute twice: those with users other
        than the ops rebuilt and `convert` (call only when `can` said yes). Splats and ranges are
        left out: they cost nothing."""
        rebuilt, _ = self._walk(value, layout)
        keep = rebuilt | {convert}
        free = ConvertLayoutOp | tt.SplatOp | tt.MakeRangeOp
        return [op for op in rebuilt if not isinstance(op, free)
                and any(use.operation not in keep for result in op.results for use in result.uses)]

    def duplicated(self, value: SSAValue, layout: Layout, convert: Operation) -> int:
        """How many ops rebuilding `value` in `layout` would compute twice (`computed_twice`)."""
        return len(self.computed_twice(value, layout, convert))

    def conversions(self, value: SSAValue, layout: Layout) -> list[SSAValue]:
        """The operands that rebuilding `value` in `layout` converts (narrowing; call only when
        `can` said yes)."""
        return [v for v, _ in self._walk(value, layout)[1]]

    def build(self, value: SSAValue, layout: Layout) -> SSAValue:
        """`value` in `layout` (call only when `can` said yes)."""
        if value_layout(value) == layout:
            return value
        key = (value, layout)
        if key in self._built:
            return self._built[key]
        op = value.owner
        if key in self.narrowed and not self.can(value, layout):
            rebuilt = self._convert(value, layout)
        elif isinstance(op, ConvertLayoutOp):
            rebuilt = self.build(op.src, layout)
        else:
            assert isinstance(op, Operation), "block arguments cannot be rebuilt"
            rebuilt = self._clone(op, layout)
        self._built[key] = rebuilt
        return rebuilt

    @staticmethod
    def _convert(value: SSAValue, layout: Layout) -> SSAValue:
        """A conversion of `value` to `layout`, placed right after its definition."""
        convert = convert_to(value, layout)
        if isinstance(value.owner, Operation):
            block = value.owner.parent_block()
            assert block is not None
            block.insert_op_after(convert, value.owner)
        else:
            block = value.owner
            if block.first_op is None:
                block.add_op(convert)
            else:
                block.insert_op_before(convert, block.first_op)
        return convert.result

    def _clone(self, op: Operation, layout: Layout) -> SSAValue:
        wanted = _operand_layout(op, layout)
        operands = [self.build(v, wanted) if is_tensor(v) else v for v in op.operands]
        result_type = op.results[0].type
        assert isinstance(result_type, TensorType)
        clone = op.__class__.create(
            operands=operands,
            result_types=[with_layout(result_type, layout)],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        block = op.parent_block()
        assert block is not None
        block.insert_op_after(clone, op)
        clone.results[0].name_hint = op.results[0].name_hint
        self.origins[clone] = op
        if op in self.values:  # a copy reads what its original reads
            self.values[clone] = self.values[op]
        return clone.results[0]


def _recomputed_elements(ops: list[Operation]) -> int:
    """Elements that ops computed twice compute again (broadcasts and expand_dims rename registers:
    free)."""
    return sum(numel(shape_of(op.results[0].type)) for op in ops
               if not isinstance(op, tt.BroadcastOp | tt.ExpandDimsOp))


def narrowed_operand(remat: Rematerializer, value: SSAValue, layout: Layout, user: Operation) -> SSAValue | None:
    """The one value whose conversion, with the ops above it rebuilt, gives `value` in `layout` for
    fewer bytes than converting `value` itself (`remat` narrowing); None when there is none or when
    the elements computed twice (ops with users other than `user` and the rebuilt ones) are more
    than the 32-bit words no longer moved through shared memory."""
    if not remat.can(value, layout):
        return None
    converted = remat.conversions(value, layout)
    if len(converted) != 1:
        return None  # more conversions than one (or none: plain rematerialization)
    saved = tile_bytes(value) - tile_bytes(converted[0])
    if saved <= 0 or _recomputed_elements(remat.computed_twice(value, layout, user)) > saved // 4:
        return None
    return converted[0]


def merge_duplicated_chains(func_op: Operation, origins: dict[Operation, Operation]) -> bool:
    """Convert, instead of computing twice, values that rebuilding left alive in two layouts.

    Rebuilding decides one conversion at a time: when the users of a chain never settle in one
    layout, two copies of it stay alive (a Philox chain feeding a dropout mask stored as bytes,
    16 per thread, and the fp16 arithmetic, 8 per thread, of a one-warp softmax, both copies of
    the original chain). A copy that computes more than ``MAX_DUPLICATED_CHAIN`` ops of its own
    again is replaced by a conversion of the first copy. Returns whether anything changed; the
    copies left without users are dead code."""
    free = ConvertLayoutOp | tt.SplatOp | tt.MakeRangeOp

    def root(op: Operation) -> Operation:
        while op in origins:
            op = origins[op]
        return op

    changed = False
    while True:
        ops = list(func_op.walk())
        position = {op: i for i, op in enumerate(ops)}
        copies: dict[Operation, list[Operation]] = {}
        for op in ops:
            if not isinstance(op, free) and len(op.results) == 1 and is_tensor(op.results[0]):
                copies.setdefault(root(op), []).append(op)
        twice = {op for group in copies.values() if len(group) > 1 for op in group}

        def own_work(top: Operation) -> int:
            seen, stack = set(), [top]
            while stack:
                op = stack.pop()
                if op not in seen:
                    seen.add(op)
                    stack.extend(v.owner for v in op.operands if isinstance(v.owner, Operation) and v.owner in twice)
            return len(seen)

        target = None
        for op in sorted(twice, key=position.__getitem__, reverse=True):  # users first: the longest copy
            first = copies[root(op)][0]
            if (op is not first and op.results[0].uses and first.parent_block() is op.parent_block()
                    and value_layout(first.results[0]) != value_layout(op.results[0])
                    and own_work(op) > MAX_DUPLICATED_CHAIN):
                target = (op, first)
                break
        if target is None:
            return changed
        op, first = target
        convert = convert_to(first.results[0], value_layout(op.results[0]))
        block = op.parent_block()
        assert block is not None
        block.insert_op_after(convert, op)
        op.results[0].replace_all_uses_with(convert.result)
        region_dce(func_op.regions[0])
        changed = True
