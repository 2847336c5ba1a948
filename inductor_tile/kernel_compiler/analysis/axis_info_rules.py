"""Transfer rules of the axis-info analysis for sources, shape ops, pointers, memory,
comparisons and selects (integer arithmetic is in `axis_info_arith.py`).

Each rule gets the solver (to look up operand infos) and the op, and returns one
`AxisInfo` per result. Ops without a rule know nothing about their results, except the
elementwise ones (`elementwise`): a pure function of operands that are constant over a
run is constant over that run. Sizes are powers of two, so gcd is min.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

from ..ir.tt_types import PointerType, element_of, shape_of
from .axis_info import MAX_DIVISIBILITY, AxisInfo, AxisInfoSolver, pow2_divisor, rank_of, rule

# --- helpers shared with axis_info_arith -------------------------------------------------


def dims(value: SSAValue) -> tuple[int, ...]:
    """The tracked shape: the tensor shape, (1,) for a scalar."""
    return shape_of(value.type) or (1,)


def constancy_gcd(*infos: AxisInfo) -> tuple[int, ...]:
    """Constancy of an elementwise function of values with these infos."""
    return tuple(math.gcd(*column) for column in zip(*(i.constancy for i in infos)))


def is_pow2(value: int | None) -> bool:
    return value is not None and value > 0 and value & (value - 1) == 0


def element_bytes(ty: Attribute) -> int:
    """Bytes of one element of a (tensor of) scalar or pointer type."""
    elem = element_of(ty)
    if isinstance(elem, PointerType):
        return 8
    width = elem.width.data if isinstance(elem, IntegerType) else getattr(elem, "bitwidth", 8)
    return max(1, width // 8)


def constant_info(value: int, shape: tuple[int, ...], is_tensor: bool) -> AxisInfo:
    """Every element equals the integer `value`."""
    rank = len(shape)
    return AxisInfo((1,) * rank, (pow2_divisor(value),) * rank, shape if is_tensor else (1,), value)


def sum_info(a: AxisInfo, b: AxisInfo, b_scale: int = 1, constant: int | None = None) -> AxisInfo:
    """a + b * b_scale. A run of consecutive values plus a constant run is a run (of the
    shorter length); `b_scale` turns addptr's element offsets into bytes."""
    contiguity, divisibility = [], []
    for d in range(a.rank):
        run = max(math.gcd(a.contiguity[d], b.constancy[d]), math.gcd(a.constancy[d], b.contiguity[d]))
        contiguity.append(run)
        scaled = min(b.divisibility_at(d, run) * b_scale, MAX_DIVISIBILITY)
        divisibility.append(math.gcd(a.divisibility_at(d, run), scaled))
    return AxisInfo(tuple(contiguity), tuple(divisibility), constancy_gcd(a, b), constant)


# --- sources -----------------------------------------------------------------------------


@rule("arith.constant")
def _arith_constant(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    value, result = op.properties.get("value"), op.results[0]
    shape, is_tensor = dims(result), bool(shape_of(result.type))
    if isinstance(value, IntegerAttr) and isinstance(value.type, IntegerType):
        return [constant_info(value.value.data, shape, is_tensor)]
    if isinstance(value, DenseIntOrFPElementsAttr) and value.is_splat():
        first = value.get_values()[0]
        if isinstance(first, int):
            return [constant_info(first, shape, is_tensor)]
        return [AxisInfo((1,) * len(shape), (1,) * len(shape), shape)]
    return [AxisInfo.unknown(len(shape))]


@rule("tt.make_range")
def _make_range(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    start, end = op.start.value.data, op.end.value.data  # type: ignore[attr-defined]
    return [AxisInfo((end - start,), (pow2_divisor(start),), (1,))]


@rule("tt.splat")
def _splat(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    src, shape = solver.get(op.operands[0]), dims(op.results[0])
    return [AxisInfo((1,) * len(shape), (src.divisibility[0],) * len(shape), shape, src.constant)]


# --- shape ops ---------------------------------------------------------------------------


@rule("tt.broadcast")
def _broadcast(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """Stretched size-1 dimensions are constant along their whole length."""
    src = solver.get(op.operands[0])
    pairs = zip(dims(op.operands[0]), dims(op.results[0]), src.constancy)
    constancy = tuple(dst if size == 1 else c for size, dst, c in pairs)
    return [AxisInfo(src.contiguity, src.divisibility, constancy, src.constant)]


@rule("tt.expand_dims")
def _expand_dims(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """On the new size-1 dimension every element starts a run, so its divisibility must
    hold for every element: the best such bound over the old dimensions."""
    src, axis = solver.get(op.operands[0]), op.axis.value.data  # type: ignore[attr-defined]
    every = max(src.element_divisibility(d) for d in range(src.rank))

    def insert(values: tuple[int, ...], new: int) -> tuple[int, ...]:
        return values[:axis] + (new,) + values[axis:]

    return [AxisInfo(insert(src.contiguity, 1), insert(src.divisibility, every), insert(src.constancy, 1), src.constant)]


@rule("ttg.convert_layout", "arith.extsi")
def _same_values(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """The values do not change (a new layout, or a sign extension)."""
    return [solver.get(op.operands[0])]


# --- pointers and memory -----------------------------------------------------------------


@rule("tt.addptr")
def _addptr(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """Pointer divisibility is in bytes: the offset's counts elements of the pointee."""
    ptr, offset = solver.get(op.operands[0]), solver.get(op.operands[1])
    pointee = element_of(op.operands[0].type)
    assert isinstance(pointee, PointerType)
    return [sum_info(ptr, offset, element_bytes(pointee.pointee))]


@rule("tt.bitcast")
def _bitcast(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """Addresses stay; consecutive elements are only consecutive if the element size stays."""
    src = solver.get(op.operands[0])
    src_elem, dst_elem = element_of(op.operands[0].type), element_of(op.results[0].type)
    assert isinstance(src_elem, PointerType) and isinstance(dst_elem, PointerType)
    if element_bytes(src_elem.pointee) == element_bytes(dst_elem.pointee):
        return [src]
    return [AxisInfo((1,) * src.rank, src.divisibility, src.constancy)]


@rule("tt.load")
def _load(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """Equal addresses (under equal mask bits) load equal values; nothing else is known."""
    infos = [solver.get(v) for v in op.operands]  # ptr, mask, other
    rank = infos[0].rank
    return [AxisInfo((1,) * rank, (1,) * rank, constancy_gcd(*infos))]


# --- comparisons and select --------------------------------------------------------------

# `run OP c` for a run of consecutive values s..s+L-1 (s a multiple of L) and a constant c
# that is a multiple of L is the same for the whole run exactly when the predicate flips
# at c: x < c and x >= c do, x <= c and x > c flip at c + 1.
_FLIPS_AT_RHS = {"slt", "sge", "ult", "uge"}
_FLIPS_AT_LHS = {"sgt", "sle", "ugt", "ule"}  # c OP x, i.e. x < c or x >= c seen from x


def _run_vs_constant(run: AxisInfo, const: AxisInfo, d: int) -> int:
    """Constancy along `d` of comparing a run of consecutive values against a constant run."""
    length = min(run.contiguity[d], const.constancy[d], const.divisibility[d])
    length = 1 << (length.bit_length() - 1)  # a power of two
    return length if run.divisibility_at(d, length) % length == 0 else 1


@rule("arith.cmpi")
def _cmpi(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    lhs, rhs = solver.get(op.operands[0]), solver.get(op.operands[1])
    predicate = op.predicate_name  # type: ignore[attr-defined]
    constancy = list(constancy_gcd(lhs, rhs))
    for d in range(lhs.rank):
        if predicate in _FLIPS_AT_RHS:
            constancy[d] = max(constancy[d], _run_vs_constant(lhs, rhs, d))
        elif predicate in _FLIPS_AT_LHS:
            constancy[d] = max(constancy[d], _run_vs_constant(rhs, lhs, d))
    return [AxisInfo((1,) * lhs.rank, (1,) * lhs.rank, tuple(constancy))]


@rule("arith.select")
def _select(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """Where the condition is constant, the result follows one side: runs common to both
    sides survive, cut to the condition's constant runs."""
    cond, a, b = (solver.get(v) for v in op.operands)
    scalar_cond = not shape_of(op.operands[0].type)
    contiguity, divisibility = [], []
    for d in range(a.rank):
        run = math.gcd(a.contiguity[d], b.contiguity[d])
        if not scalar_cond:
            run = math.gcd(run, cond.constancy[d])
        contiguity.append(run)
        divisibility.append(math.gcd(a.divisibility_at(d, run), b.divisibility_at(d, run)))
    constancy = constancy_gcd(a, b) if scalar_cond else constancy_gcd(cond, a, b)
    constant = a.constant if a.constant is not None and a.constant == b.constant else None
    return [AxisInfo(tuple(contiguity), tuple(divisibility), constancy, constant)]


# --- everything else elementwise ---------------------------------------------------------


@rule("arith.*", "math.*", "tt.int_to_ptr", "tt.mulhiui")
def elementwise(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """A pure elementwise op (the default of arith and math): constant where all its operands are."""
    shape = dims(op.results[0])
    infos = [solver.get(v) for v in op.operands if dims(v) == shape]
    rank = len(shape)
    constancy = constancy_gcd(*infos) if infos else (1,) * rank
    return [AxisInfo((1,) * rank, (1,) * rank, constancy) for _ in op.results]
