"""Reductions that cross warps together: one scratch buffer and one barrier pair for several `tt.reduce`.

A reduction across warps costs a barrier, a store of each warp's partial results, a barrier and the
loads. Where later reductions of the same block reduce the same axis of a tile of the same type (a layer
norm backward's two row sums), and their operands need nothing the first one computes, their operands are
computed now and all of them cross warps at once; their results wait in `ctx.paired_results` until the
driver reaches them. Only pure register operations may lie between them (`_pure`): those the partners'
operands need are lowered here ahead of their turn, and lowered again when their turn comes (the copies
are identical pure instructions, merged by LLVM's common-subexpression elimination). A reduction whose
operand depends on the first (softmax's sum after its maximum) is no partner.

The barrier before a reduction's stores keeps them from overwriting scratch that another warp still reads.
Where the previous op of the block to touch shared memory is a reduction across warps (only pure ops and
reductions that stayed within warps lie between), its scratch was last read before that reduction's own
second barrier: a scratch disjoint from that reduction's needs no barrier before it (`scratch_place`;
softmax's sum after its maximum, a layer norm's variance after its mean). Any other shared-memory user
(layout conversions, scans, gathers) starts with its own barrier.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from .context import RULES, LoweringContext

_PURE_NAMES = {"tt.splat", "tt.broadcast", "tt.expand_dims", "tt.make_range"}


def _pure(op: Operation) -> bool:
    """A register-only op whose result depends on its operands alone."""
    return not op.regions and (op.name in _PURE_NAMES or op.name.startswith(("arith.", "math.")))


def _compatible(first: Operation, other: Operation) -> bool:
    return (other.name == "tt.reduce" and other.axis.value.data == first.axis.value.data
            and other.operands[0].type == first.operands[0].type
            and other.results[0].type == first.results[0].type)


def partners(ctx: LoweringContext, first: Operation) -> list[Operation]:
    """The later reductions of `first`'s block that cross warps with it; their operands are lowered."""
    between: list[Operation] = []  # the pure ops after `first`, in block order
    reduced: set[SSAValue] = set(first.results)  # results of `first` and of the reductions after it
    found: list[Operation] = []
    lowered: set[Operation] = set()
    op = first.next_op
    while op is not None:
        if op.name == "tt.reduce" and _compatible(first, op):
            needed = _slice(op.operands[0], between)
            if op.operands[0] not in reduced and not any(v in reduced for n in needed for v in n.operands):
                for needed_op in needed:
                    if needed_op not in lowered:
                        RULES[needed_op.name](ctx, needed_op)
                        lowered.add(needed_op)
                found.append(op)
            reduced.update(op.results)
        elif _pure(op):
            between.append(op)
        else:
            break
        op = op.next_op
    return found


def _slice(value: SSAValue, between: list[Operation]) -> list[Operation]:
    """The ops of `between` that `value` depends on, in block order."""
    candidates = set(between)
    needed: set[Operation] = set()
    stack = [value]
    while stack:
        owner = stack.pop().owner
        if isinstance(owner, Operation) and owner in candidates and owner not in needed:
            needed.add(owner)
            stack.extend(owner.operands)
    return [op for op in between if op in needed]


_SCRATCH_ATTRIBUTE = "reduction_scratch"  # on the LoweringContext: reduction op -> its scratch (start, end)


def scratch_place(ctx: LoweringContext, op: Operation, size: int) -> tuple[int, bool]:
    """(byte offset in shared memory, whether a barrier must come before the stores) of the scratch of
    reduction `op` that crosses warps, `size` bytes."""
    placed: dict[Operation, tuple[int, int]] = ctx.__dict__.setdefault(_SCRATCH_ATTRIBUTE, {})
    previous = op.prev_op
    while previous is not None and previous not in placed and (
            _pure(previous) or previous.name == "tt.reduce"):  # reductions not placed stayed within warps
        previous = previous.prev_op
    if previous is None or previous not in placed:
        at, wait = 0, True
    else:
        start, end = placed[previous]
        at, wait = (0, False) if size <= start else (-(-end // 16) * 16, False)
    placed[op] = (at, at + size)
    return at, wait
