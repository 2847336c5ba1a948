"""Transfer rules of the axis-info analysis for integer arithmetic.

Addition keeps runs of consecutive values when the other side is constant over them;
multiplication keeps nothing but divisibility (unless by one); division and remainder by a
positive constant c, and masking by a power of two, are exact on runs that stay inside one
block of c values (`x // 768` and `x % 768` over 64 consecutive values starting at a multiple
of 64).  Like Triton, division and remainder assume non-negative index values.
"""

from __future__ import annotations

import math

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation

from ..ir.tt_types import element_of, shape_of
from .axis_info import MAX_DIVISIBILITY, AxisInfo, AxisInfoSolver, rule
from .axis_info_rules import constancy_gcd, constant_info, dims, is_pow2, sum_info


def _operands(solver: AxisInfoSolver, op: Operation) -> tuple[AxisInfo, AxisInfo]:
    """The infos of a binary op's two operands."""
    return solver.get(op.operands[0]), solver.get(op.operands[1])


def _both(a: AxisInfo, b: AxisInfo) -> bool:
    """Both sides are known constants."""
    return a.constant is not None and b.constant is not None


@rule("arith.addi")
def _addi(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    a, b = _operands(solver, op)
    constant = a.constant + b.constant if _both(a, b) else None
    return [sum_info(a, b, constant=constant)]


@rule("arith.subi")
def _subi(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """a - b is contiguous where a is and b is constant; a constant minus a range decreases."""
    a, b = _operands(solver, op)
    contiguity = tuple(map(math.gcd, a.contiguity, b.constancy))
    divisibility = tuple(math.gcd(a.divisibility_at(d, r), b.divisibility_at(d, r)) for d, r in enumerate(contiguity))
    constant = a.constant - b.constant if _both(a, b) else None
    return [AxisInfo(contiguity, divisibility, constancy_gcd(a, b), constant)]


@rule("arith.muli")
def _muli(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """Times one changes nothing; otherwise runs of consecutive values are lost and the
    divisibilities of the elements multiply."""
    a, b = _operands(solver, op)
    if b.constant == 1:
        return [a]
    if a.constant == 1:
        return [b]
    if 0 in (a.constant, b.constant):
        return [constant_info(0, dims(op.results[0]), bool(shape_of(op.results[0].type)))]
    divisibility = tuple(
        min(a.element_divisibility(d) * b.element_divisibility(d), MAX_DIVISIBILITY) for d in range(a.rank)
    )
    constant = a.constant * b.constant if _both(a, b) else None
    return [AxisInfo((1,) * a.rank, divisibility, constancy_gcd(a, b), constant)]


def _positive(value: int | None) -> bool:
    return value is not None and value > 0


def _aligned_run(a: AxisInfo, d: int, period: int) -> int:
    """The longest aligned run of `a` along `d` that stays inside one block [k*period,
    (k+1)*period) of values, for a positive `period`: 1 when nothing is known.  A run whose
    length divides the period and whose start is a multiple of its length never crosses a
    block boundary (boundaries are multiples of the period, hence of the length)."""
    run = math.gcd(a.contiguity[d], period)
    return run if a.divisibility_at(d, run) % run == 0 else 1


@rule("arith.divsi", "arith.divui")
def _div(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """Division by a positive constant c is constant over runs of consecutive values that stay
    in one block of c values; a power of two also leaves the divisibility divided by it."""
    a, b = _operands(solver, op)
    if b.constant == 1:
        return [a]
    constancy = constancy_gcd(a, b)
    divisibility = (1,) * a.rank
    if _positive(b.constant):
        c = b.constant
        assert c is not None
        constancy = tuple(max(k, _aligned_run(a, d, c)) for d, k in enumerate(constancy))
        if is_pow2(c):
            divisibility = tuple(max(1, a.element_divisibility(d) // c) for d in range(a.rank))
    constant = None
    if a.constant is not None and b.constant:
        constant = int(a.constant / b.constant) if op.name == "arith.divsi" else a.constant // b.constant
    return [AxisInfo((1,) * a.rank, divisibility, constancy, constant)]


def _modulo(a: AxisInfo, b: AxisInfo, p: int) -> AxisInfo:
    """a mod p for a positive constant p: runs of a inside one block of p values stay runs,
    and a run's first value k*p + r keeps the factors its start shares with p."""
    contiguity = tuple(_aligned_run(a, d, p) for d in range(a.rank))
    divisibility = tuple(math.gcd(a.divisibility_at(d, r), p) for d, r in enumerate(contiguity))
    return AxisInfo(contiguity, divisibility, constancy_gcd(a, b), a.constant % p if a.constant is not None else None)


@rule("arith.remsi", "arith.remui")
def _rem(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    a, b = _operands(solver, op)
    if _positive(b.constant):
        assert b.constant is not None
        return [_modulo(a, b, b.constant)]
    # a % b = a - k*b: divisible by whatever divides both
    divisibility = tuple(math.gcd(a.element_divisibility(d), b.element_divisibility(d)) for d in range(a.rank))
    # b unknown but uniform over a's runs and a multiple of D (like Triton, non-negative): the
    # wrap-around points are multiples of D, so aligned runs of a within blocks of D stay runs
    # (the matmul tutorial's `(pid * BLOCK + arange) % N`, N divisible by 16)
    contiguity = tuple(_aligned_run(a, d, b.element_divisibility(d)) if b.constancy[d] >= a.contiguity[d] else 1
                       for d in range(a.rank))
    # a run's first value k*b + r: r keeps the factors the run's start shares with b's divisor
    divisibility = tuple(math.gcd(a.divisibility_at(d, r), b.element_divisibility(d)) if r > 1 else div
                         for d, (r, div) in enumerate(zip(contiguity, divisibility)))
    return [AxisInfo(contiguity, divisibility, constancy_gcd(a, b))]


@rule("arith.andi")
def _andi(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    """`x & (2**k - 1)` is x mod 2**k (exact in two's complement); otherwise the result has
    at least the trailing zeros of either side."""
    a, b = _operands(solver, op)
    elem = element_of(op.results[0].type)
    if isinstance(elem, IntegerType) and elem.width.data > 1:
        for x, mask in ((a, b), (b, a)):
            if mask.constant is not None and mask.constant >= 0 and is_pow2(mask.constant + 1):
                return [_modulo(x, mask, mask.constant + 1)]
    divisibility = tuple(
        min(max(a.element_divisibility(d), b.element_divisibility(d)), MAX_DIVISIBILITY) for d in range(a.rank)
    )
    return [AxisInfo((1,) * a.rank, divisibility, constancy_gcd(a, b))]


@rule("arith.ori", "arith.xori")
def _or(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    a, b = _operands(solver, op)
    divisibility = tuple(math.gcd(a.element_divisibility(d), b.element_divisibility(d)) for d in range(a.rank))
    return [AxisInfo((1,) * a.rank, divisibility, constancy_gcd(a, b))]


@rule("arith.shli")
def _shli(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    a, b = _operands(solver, op)
    if b.constant == 0:
        return [a]
    shift = b.constant if b.constant is not None and 0 < b.constant < 31 else 0
    divisibility = tuple(min(a.element_divisibility(d) << shift, MAX_DIVISIBILITY) for d in range(a.rank))
    return [AxisInfo((1,) * a.rank, divisibility, constancy_gcd(a, b))]


@rule("arith.shrsi", "arith.shrui")
def _shr(solver: AxisInfoSolver, op: Operation) -> list[AxisInfo]:
    a, b = _operands(solver, op)
    if b.constant == 0:
        return [a]
    shift = b.constant if b.constant is not None and b.constant > 0 else 64
    divisibility = tuple(max(1, a.element_divisibility(d) >> shift) for d in range(a.rank))
    return [AxisInfo((1,) * a.rank, divisibility, constancy_gcd(a, b))]
