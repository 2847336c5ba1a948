"""Axis info: what is known about the integer (and pointer) values of a kernel, per dimension.

For every SSA value and every dimension `d` of its shape (scalars count as one dimension
of size 1) the analysis records three numbers:

- contiguity[d]: the value splits along `d` into aligned runs of this length (starting at
  index 0) in which consecutive elements increase by exactly 1;
- divisibility[d]: the largest power of two known to divide the first element of every
  such run (for pointers: the address in BYTES);
- constancy[d]: the value splits along `d` into aligned runs of this length whose
  elements are all equal.

1 is always a safe answer. The facts come from kernel arguments (`tt.divisibility` from
the specialization on multiples of 16), constants, `tt.make_range`, and hints on ops
(`tt.divisibility` / `tt.contiguity` / `tt.constancy` arrays override the computed
fields), and flow forward in program order through the transfer rules of
`axis_info_rules.py` and `axis_info_arith.py`. Coalescing uses them to pick vector widths; the LLVM lowering uses
them to emit vector loads and stores. Like Triton, the rules for division and remainder
assume that index arithmetic does not go negative.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, DictionaryAttr, IntegerAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue

from ..ir.tt_types import shape_of

MAX_DIVISIBILITY = 1 << 30
MAX_LOOP_ROUNDS = 4  # fixpoint rounds over a loop body before its carried values are given up
HINTS = ("contiguity", "divisibility", "constancy")


def pow2_divisor(value: int) -> int:
    """The largest power of two dividing `value` (capped at 2**30, which 0 gets)."""
    return MAX_DIVISIBILITY if value == 0 else min(abs(value) & -abs(value), MAX_DIVISIBILITY)


@dataclass(frozen=True)
class AxisInfo:
    """Contiguity, divisibility and constancy per dimension, and the value if it is a known constant."""

    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]
    constant: int | None = None

    @staticmethod
    def unknown(rank: int) -> AxisInfo:
        """Nothing known: every field 1."""
        return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank)

    @property
    def rank(self) -> int:
        return len(self.contiguity)

    def divisibility_at(self, d: int, run: int) -> int:
        """The power of two dividing every element at a position that is a multiple of `run`
        along `d`. Those positions are run starts when `run` is a multiple of the contiguity;
        otherwise they sit `k * gcd(run, contiguity)` past a run start."""
        contig = self.contiguity[d]
        if run % contig == 0:
            return self.divisibility[d]
        return math.gcd(self.divisibility[d], pow2_divisor(math.gcd(run, contig)))

    def element_divisibility(self, d: int) -> int:
        """The power of two dividing every element (as seen along `d`)."""
        return self.divisibility_at(d, 1)

    def join(self, other: AxisInfo) -> AxisInfo:
        """What holds for a value that is either `self` or `other` (gcd of every field)."""
        return AxisInfo(
            tuple(map(math.gcd, self.contiguity, other.contiguity)),
            tuple(map(math.gcd, self.divisibility, other.divisibility)),
            tuple(map(math.gcd, self.constancy, other.constancy)),
            self.constant if self.constant == other.constant else None,
        )

    def __str__(self) -> str:
        def fmt(values: tuple[int, ...]) -> str:
            return "[" + ", ".join(str(v) for v in values) + "]"

        return (
            f"contiguity = {fmt(self.contiguity)}, divisibility = {fmt(self.divisibility)}, "
            f"constancy = {fmt(self.constancy)}"
        )


def rank_of(value: SSAValue) -> int:
    """The number of dimensions the analysis tracks: the tensor rank, 1 for scalars."""
    return max(1, len(shape_of(value.type)))


def hint_values(attr: Attribute | None, rank: int) -> tuple[int, ...] | None:
    """The per-dimension values of a hint (`16 : i32` or `array<i32: ...>`), or None."""
    if isinstance(attr, IntegerAttr):
        values: tuple[int, ...] = (attr.value.data,)
    elif isinstance(attr, DenseArrayBase):
        values = tuple(int(v) for v in attr.get_values())
    else:
        return None
    if len(values) == 1 and rank > 1:
        values = values * rank
    return values if len(values) == rank and all(v > 0 for v in values) else None


def apply_hints(info: AxisInfo, attrs: dict[str, Attribute]) -> AxisInfo:
    """`info` with the fields named by `tt.<hint>` attributes replaced by their values."""
    fields = {name: getattr(info, name) for name in HINTS}
    for name in HINTS:
        values = hint_values(attrs.get(f"tt.{name}"), info.rank)
        if values is not None:
            fields[name] = values
    return AxisInfo(fields["contiguity"], fields["divisibility"], fields["constancy"], info.constant)


Rule = Callable[["AxisInfoSolver", Operation], list[AxisInfo]]
RULES: dict[str, Rule] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    """Register a transfer rule (solver, op) -> one AxisInfo per result, for the ops `names`
    ("arith.*" is the default of a dialect's ops that have no rule of their own)."""

    def register(fn: Rule) -> Rule:
        for name in names:
            RULES[name] = fn
        return fn

    return register


class AxisInfoSolver:
    """Runs the transfer rules over one function in program order."""

    def __init__(self) -> None:
        from . import axis_info_arith, axis_info_rules  # noqa: F401  (they fill RULES)

        self.infos: dict[SSAValue, AxisInfo] = {}

    def get(self, value: SSAValue) -> AxisInfo:
        """The info of `value`; values not reached yet (loop-carried ones) know nothing."""
        return self.infos.get(value) or AxisInfo.unknown(rank_of(value))

    def run(self, func_op: func.FuncOp) -> dict[SSAValue, AxisInfo]:
        arg_attrs = func_op.arg_attrs.data if isinstance(func_op.arg_attrs, ArrayAttr) else ()
        for index, arg in enumerate(func_op.body.block.args):
            attrs = arg_attrs[index].data if index < len(arg_attrs) and isinstance(arg_attrs[index], DictionaryAttr) else {}
            self.infos[arg] = apply_hints(AxisInfo.unknown(rank_of(arg)), dict(attrs))
        self._visit_block(func_op.body.block)
        return self.infos

    def _visit_block(self, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, scf.ForOp):
                self._visit_for(op)
            elif isinstance(op, scf.IfOp):
                self._visit_if(op)
            elif isinstance(op, scf.WhileOp):
                self._visit_while(op)
            else:
                for region in op.regions:
                    for inner in region.blocks:
                        self._visit_block(inner)
                self._transfer(op)

    def _visit_for(self, op: scf.ForOp) -> None:
        """The induction variable starts at lb and moves by step: divisible by both. A
        loop-carried value is what holds for its init value and for every yielded value:
        start from the init's info, join in what the body yields until nothing changes
        (gcds only shrink, so this ends fast); after MAX_LOOP_ROUNDS, assume nothing."""
        body = op.body.block
        lb, step = self.get(op.lb), self.get(op.step)
        divisibility = math.gcd(lb.divisibility[0], step.divisibility[0])
        self.infos[body.args[0]] = AxisInfo((1,), (divisibility,), (1,))
        yield_op = body.last_op

        def run_once(carried: list[AxisInfo]) -> list[AxisInfo] | None:
            for arg, info in zip(body.args[1:], carried):
                self.infos[arg] = info
            self._visit_block(body)
            return [self.get(v) for v in yield_op.operands] if isinstance(yield_op, scf.YieldOp) else None

        carried = self._loop_fixpoint([self.get(init) for init in op.iter_args], run_once)
        for result, info in zip(op.results, carried):
            self.infos[result] = info

    @staticmethod
    def _loop_fixpoint(carried: list[AxisInfo], run_once) -> list[AxisInfo]:
        """Visit a loop with `run_once(carried)` (which returns what the body yields, or None) until the
        carried infos stop changing; after MAX_LOOP_ROUNDS rounds they are unknown for one last visit."""
        for round_ in range(MAX_LOOP_ROUNDS + 1):
            if round_ == MAX_LOOP_ROUNDS:
                carried = [AxisInfo.unknown(info.rank) for info in carried]
            yielded = run_once(carried)
            if round_ == MAX_LOOP_ROUNDS or yielded is None:
                break
            joined = [info.join(y) for info, y in zip(carried, yielded)]
            if joined == carried:
                break
            carried = joined
        return carried

    def _visit_while(self, op: scf.WhileOp) -> None:
        """As scf.for's carried values: the condition region's arguments start from the inits and
        join in what the body yields, to a fixpoint; the body's arguments and the results are what
        scf.condition forwards."""
        before, after = op.before_region.block, op.after_region.block
        forwarded: list[AxisInfo] = []

        def run_once(carried: list[AxisInfo]) -> list[AxisInfo] | None:
            for arg, info in zip(before.args, carried):
                self.infos[arg] = info
            self._visit_block(before)
            condition = before.last_op
            forwarded[:] = ([self.get(v) for v in condition.operands[1:]] if isinstance(condition, scf.ConditionOp)
                            else [AxisInfo.unknown(rank_of(a)) for a in after.args])
            for arg, info in zip(after.args, forwarded):
                self.infos[arg] = info
            self._visit_block(after)
            yield_op = after.last_op
            return [self.get(v) for v in yield_op.operands] if isinstance(yield_op, scf.YieldOp) else None

        self._loop_fixpoint([self.get(init) for init in op.arguments], run_once)
        for result, info in zip(op.results, forwarded):
            self.infos[result] = info

    def _visit_if(self, op: scf.IfOp) -> None:
        """A result of scf.if is the join of what its branches yield."""
        yielded: list[list[AxisInfo]] = []
        for region in op.regions:
            for block in region.blocks:
                self._visit_block(block)
                if block.last_op is not None and isinstance(block.last_op, scf.YieldOp):
                    yielded.append([self.get(v) for v in block.last_op.operands])
        for index, result in enumerate(op.results):
            infos = [y[index] for y in yielded if index < len(y)]
            joined = infos[0] if len(infos) == len(op.regions) == 2 else AxisInfo.unknown(rank_of(result))
            for other in infos[1:]:
                joined = joined.join(other)
            self.infos[result] = joined

    def _transfer(self, op: Operation) -> None:
        if not op.results:
            return
        transfer = RULES.get(op.name) or RULES.get(op.name.split(".")[0] + ".*")
        if transfer is not None:
            infos = transfer(self, op)
        else:
            infos = [AxisInfo.unknown(rank_of(r)) for r in op.results]
        if len(op.results) == 1:
            infos = [apply_hints(infos[0], dict(op.attributes))]
        for result, info in zip(op.results, infos):
            self.infos[result] = info


def compute_axis_info(func_op: func.FuncOp) -> dict[SSAValue, AxisInfo]:
    """Axis info of every value in `func_op` that the rules reach (look values up with
    `.get(v)`; a value missing from the dict knows nothing)."""
    return AxisInfoSolver().run(func_op)


def axis_info_of(func_op: func.FuncOp, computed: dict | None) -> dict[SSAValue, AxisInfo]:
    """`compute_axis_info(func_op)`, kept in `computed` (when given) for the next reader of the same,
    unchanged IR: the compiler's performance findings and its lowering read the final TTGIR."""
    if computed is None:
        return compute_axis_info(func_op)
    infos = computed.get(func_op)
    if infos is None:
        infos = computed[func_op] = compute_axis_info(func_op)
    return infos
