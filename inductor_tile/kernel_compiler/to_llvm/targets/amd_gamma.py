"""float64 lgamma for the AMD target (amd_math64.py's), relatively accurate also near its zeros at 1 and 2.

- 3/4 <= x < 10.25: Taylor pieces of width 1/2 centered on 1, 3/2, 2, ..., 10 (so lgamma(1) = lgamma(2) = 0
  are centers, and the pieces around them have no constant term to cancel against); coefficients
  lgamma(c), digamma(c) and (-1)^k zeta(k, c) / k, computed here once in 40 digits (Hurwitz zeta and
  lgamma by direct sums shifted to c + 30, then Euler-Maclaurin / Stirling with exact Bernoulli numbers),
  in a constant table;
- 0 < x < 3/4: lgamma(x + 1) - log x; x >= 10.25: Stirling's series;
- x < 0: the reflection log(pi / |sin(pi x)|) - lgamma(1 - x) (absolute accuracy ~1e-15 near its zeros),
  inf at the poles and at -inf.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction


from . import amd_tables
from .scalar_code import ScalarFunction, Value

_FROM, _WIDTH, _PIECES, _TERMS = 1.0, 0.5, 19, 28  # centers 1 .. 10; (1/4)^28 / 28 < 1e-18
_STIRLING_FROM = _FROM + _WIDTH * (_PIECES - 0.5)
_SHIFT = 30  # the sums run to c + 30 before the asymptotic tails
_ASYMPTOTIC_TERMS = 12


@functools.cache
def _bernoulli(count: int) -> list[Fraction]:
    """B_2, B_4, ..., B_2count (exact), from sum_j C(m + 1, j) B_j = 0."""
    b = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        b.append(-sum(math.comb(m + 1, j) * b[j] for j in range(m)) / (m + 1))
    return [b[2 * k] for k in range(1, count + 1)]


def _d(q: Fraction) -> Decimal:
    return Decimal(q.numerator) / Decimal(q.denominator)


def _hurwitz_zeta(s: int, a: Decimal) -> Decimal:
    w = a + _SHIFT
    total = sum((a + j) ** -s for j in range(_SHIFT)) + w ** (1 - s) / (s - 1) + w ** -s / 2
    rising = Decimal(s)  # s (s + 1) ... (s + 2m - 2)
    for m, b in enumerate(_bernoulli(_ASYMPTOTIC_TERMS), start=1):
        total += _d(b) / math.factorial(2 * m) * rising * w ** (-s - 2 * m + 1)
        rising *= (s + 2 * m - 1) * (s + 2 * m)
    return total


def _digamma(a: Decimal) -> Decimal:
    w = a + _SHIFT
    total = w.ln() - sum(1 / (a + j) for j in range(_SHIFT)) - 1 / (2 * w)
    return total - sum(_d(b) / (2 * m * w ** (2 * m)) for m, b in enumerate(_bernoulli(_ASYMPTOTIC_TERMS), 1))


def _lgamma(a: Decimal, pi: Decimal) -> Decimal:
    w = a + _SHIFT
    stirling = (w - Decimal("0.5")) * w.ln() - w + (2 * pi).ln() / 2
    stirling += sum(_d(b) / (2 * m * (2 * m - 1) * w ** (2 * m - 1))
                    for m, b in enumerate(_bernoulli(_ASYMPTOTIC_TERMS), 1))
    return stirling - sum((a + j).ln() for j in range(_SHIFT))


@functools.cache
def taylor_table() -> tuple[float, ...]:
    """_PIECES x _TERMS Taylor coefficients of lgamma about the pieces' centers (computed on first use)."""
    from .amd_math64 import _PI

    table = []
    with localcontext() as context:
        context.prec = 40
        for piece in range(_PIECES):
            c = Decimal(_FROM) + Decimal(piece) * Decimal(_WIDTH)
            coefficients = [_lgamma(c, +_PI), _digamma(c)]
            coefficients += [(-1) ** k * _hurwitz_zeta(k, c) / k for k in range(2, _TERMS)]
            if c in (1, 2):
                coefficients[0] = Decimal(0)
            table += [float(v) for v in coefficients]
    return tuple(table)


_PIECES_OF_LGAMMA = amd_tables.TaylorPieces("lgamma", _FROM, _WIDTH, _PIECES, _TERMS, lambda: taylor_table())


def _stirling_coefficients() -> list[float]:
    return [float(b / ((2 * k + 2) * (2 * k + 1))) for k, b in enumerate(_bernoulli(9))]


def _positive(f: ScalarFunction, x: Value) -> Value:
    """lgamma(x) for x > 0."""
    small = x < _FROM - _WIDTH / 2
    y = f.select(small, x + 1.0, x)  # (exact below 3/4: no rounding in x + 1 matters beyond x's own)
    taylor = _PIECES_OF_LGAMMA.evaluate(f, f.select(y < _STIRLING_FROM, y, _FROM))
    z = f.select(y < _STIRLING_FROM, _STIRLING_FROM, y)
    w = 1.0 / z
    series = w * _poly(f, w * w, _stirling_coefficients())
    stirling = (z - 0.5) * f.call("log", z) - z + (0.5 * math.log(2 * math.pi) + series)
    result = f.select(y < _STIRLING_FROM, taylor, stirling)
    return f.select(small, result - f.call("log", x), result)


def _poly(f: ScalarFunction, z: Value, coefficients: list[float]) -> Value:
    acc = f.c(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = f.call("fma", acc, z, c)
    return acc


def lgamma(f: ScalarFunction, x: Value) -> Value:
    positive = _positive(f, f.select(x > 0.0, x, 1.0 - x))
    fraction = x - f.call("rint", x)  # exact; sin(pi x) has the sign of no interest here
    sin_pi = f.call("fabs", f.call("sin", fraction * math.pi))
    reflected = f.call("log", math.pi / sin_pi) - positive
    result = f.select(x > 0.0, positive, reflected)
    result = f.select((x <= 0.0) & (fraction == 0.0), math.inf, result)  # poles (and -inf)
    return f.select(f.call("fabs", x) == math.inf, math.inf, result)
