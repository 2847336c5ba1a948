"""float64 Bessel functions J0, J1, Y0, Y1 for the AMD target (amd_math64.py's; float32 calls them widened).

- |x| < 1: the power series (Y with the logarithmic terms: Y0 = 2/pi (log(x/2) + gamma) J0 + 2/pi sum
  (-1)^(k+1) H_k (x^2/4)^k / k!^2, Y1 = 2/pi log(x/2) J1 - 2 / (pi x) - 1/pi sum (-1)^k (psi(k+1) + psi(k+2))
  (x/2)^(2k+1) / (k! (k+1)!)), coefficients computed here from exact fractions;
- 1 <= x < 20: Taylor pieces of width 1/2 (amd_tables.TaylorPieces); their coefficients come from Bessel's
  equation x^2 y'' + x y' + (x^2 - n^2) y = 0 about each center c, started from the series' values of
  y(c) and y'(c) in 60 digits: a_(m+2) = -(c (m+1)(2m+1) a_(m+1) + (m^2 + c^2 - n^2) a_m + 2c a_(m-1) +
  a_(m-2)) / (c^2 (m+1)(m+2));
- x >= 20: Hankel's expansions sqrt(2 / (pi x)) (P cos chi -+ Q sin chi), chi = x - (2n+1) pi/4, with
  cos chi and sin chi from sin x and cos x (accurately reduced), 15 terms of P and Q (below 1e-18 from 20).
The error is absolute near the zeros (as everywhere one subtracts nearly equal values), ~1e-16.
J0 is even, J1 odd; Y is NaN below 0 and -inf at 0.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

from . import amd_tables
from .scalar_code import ScalarFunction, Value

_GAMMA = Decimal("0.57721566490153286060651209008240243104215933593992359880576723488486772677766467")
_SERIES_BELOW = 1.0
_HANKEL_FROM = 20.0
_WIDTH, _TERMS = 0.5, 24  # centers 1.25 .. 19.75; (1/4 / 5/4)^24 < 1e-17 for Y's singularity at 0
_COUNT = int((_HANKEL_FROM - _SERIES_BELOW) / _WIDTH)
_SMALL_TERMS = 12  # (1/4)^12 / 12!^2 < 1e-24
_HANKEL_TERMS = 15


@functools.cache
def _harmonic(k: int) -> Fraction:
    return _harmonic(k - 1) + Fraction(1, k) if k else Fraction(0)


def _values(order: int, kind: str, c: Decimal, pi: Decimal) -> tuple[Decimal, Decimal]:
    """(y(c), y'(c)) of J_order or Y_order, from the series (60 digits)."""
    def j(n: int) -> Decimal:
        total, k = Decimal(0), 0
        while True:
            term = (c / 2) ** (2 * k + n) / (math.factorial(k) * math.factorial(k + n))
            total += -term if k % 2 else term
            if term < Decimal(10) ** -62:
                return total
            k += 1

    def y0() -> Decimal:
        total, k = Decimal(0), 1
        while True:
            term = _d(_harmonic(k)) * (c * c / 4) ** k / math.factorial(k) ** 2
            total += term if k % 2 else -term
            if term < Decimal(10) ** -62:
                return 2 / pi * ((c / 2).ln() + _GAMMA) * j(0) + 2 / pi * total
            k += 1

    def y1() -> Decimal:
        total, k = Decimal(0), 0
        while True:
            psi_sum = -2 * _GAMMA + _d(_harmonic(k) + _harmonic(k + 1))
            term = psi_sum * (c / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1))
            total += -term if k % 2 else term
            if abs(term) < Decimal(10) ** -62 and k > 2:
                return 2 / pi * j(1) * (c / 2).ln() - 2 / (pi * c) - total / pi
            k += 1

    if kind == "j":
        return (j(0), -j(1)) if order == 0 else (j(1), j(0) - j(1) / c)
    return (y0(), -y1()) if order == 0 else (y1(), y0() - y1() / c)


def _d(q: Fraction) -> Decimal:
    return Decimal(q.numerator) / Decimal(q.denominator)


@functools.cache
def _taylor_table(order: int, kind: str) -> tuple[float, ...]:
    from .amd_math64 import _PI

    table = []
    with localcontext() as context:
        context.prec = 60
        for piece in range(_COUNT):
            c = Decimal(_SERIES_BELOW) + (Decimal(piece) + Decimal("0.5")) * Decimal(_WIDTH)
            a = list(_values(order, kind, c, +_PI))
            for m in range(_TERMS - 2):
                previous = (a[m - 1] if m >= 1 else 0) * 2 * c + (a[m - 2] if m >= 2 else 0)
                a.append(-(c * (m + 1) * (2 * m + 1) * a[m + 1] + (m * m + c * c - order * order) * a[m] + previous)
                         / (c * c * (m + 1) * (m + 2)))
            table += [float(v) for v in a]
    return tuple(table)


_PIECES = {(n, kind): amd_tables.TaylorPieces(f"{kind}{n}", _SERIES_BELOW + _WIDTH / 2, _WIDTH, _COUNT, _TERMS,
                                              functools.partial(_taylor_table, n, kind))
           for n in (0, 1) for kind in "jy"}


def _poly(f: ScalarFunction, z: Value, coefficients: list[float]) -> Value:
    acc = f.c(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = f.call("fma", acc, z, c)
    return acc


# small x: J0 = sum (-1)^k z^k / k!^2, J1 = x/2 sum (-1)^k z^k / (k! (k+1)!), z = x^2 / 4
_J0_SERIES = [(-1) ** k / math.factorial(k) ** 2 for k in range(_SMALL_TERMS)]
_J1_SERIES = [(-1) ** k / (math.factorial(k) * math.factorial(k + 1)) for k in range(_SMALL_TERMS)]
_Y0_SERIES = [0.0] + [float((-1) ** (k + 1) * _harmonic(k) / math.factorial(k) ** 2) for k in range(1, _SMALL_TERMS)]
_Y1_SERIES = [float((-1) ** k * (_harmonic(k) + _harmonic(k + 1)) / (math.factorial(k) * math.factorial(k + 1)))
              for k in range(_SMALL_TERMS)]  # the psi sums' harmonic parts; their -2 gamma goes with J1


def _small(f: ScalarFunction, order: int, kind: str, x: Value) -> Value:
    z = x * x * 0.25
    if kind == "j":
        return _poly(f, z, _J0_SERIES) if order == 0 else x * 0.5 * _poly(f, z, _J1_SERIES)
    log_half = f.call("log", x * 0.5)
    gamma = float(_GAMMA)
    if order == 0:
        return (2 / math.pi) * ((log_half + gamma) * _poly(f, z, _J0_SERIES) + _poly(f, z, _Y0_SERIES))
    j1 = x * 0.5 * _poly(f, z, _J1_SERIES)  # (the psi sums' -2 gamma is the gamma J1 term)
    harmonic = x * 0.5 * _poly(f, z, _Y1_SERIES)
    return (2 / math.pi) * ((log_half + gamma) * j1) - (2 / math.pi) / x - (1 / math.pi) * harmonic


def _hankel_coefficients(order: int) -> list[float]:
    """a_k = prod_(j=1..k) (4 n^2 - (2j - 1)^2) / (k! 8^k), k < 2 _HANKEL_TERMS."""
    out, a = [], Fraction(1)
    for k in range(2 * _HANKEL_TERMS):
        out.append(a)
        a = a * (4 * order * order - (2 * k + 1) ** 2) / ((k + 1) * 8)
    return [float(v) for v in out]


def _hankel(f: ScalarFunction, order: int, kind: str, x: Value) -> Value:
    a = _hankel_coefficients(order)
    w = 1.0 / x
    w2 = w * w
    p = _poly(f, w2, [(-1) ** k * a[2 * k] for k in range(_HANKEL_TERMS)])
    q = w * _poly(f, w2, [(-1) ** k * a[2 * k + 1] for k in range(_HANKEL_TERMS)])
    s, c = f.call("sin", x), f.call("cos", x)
    if order == 0:  # chi = x - pi/4: sqrt 2 cos chi = c + s, sqrt 2 sin chi = s - c
        combined = p * (c + s) - q * (s - c) if kind == "j" else p * (s - c) + q * (c + s)
    else:  # chi = x - 3 pi/4: sqrt 2 cos chi = s - c, sqrt 2 sin chi = -(s + c)
        combined = p * (s - c) + q * (s + c) if kind == "j" else q * (s - c) - p * (s + c)
    return combined / (f.call("sqrt", x) * math.sqrt(math.pi))


def _bessel(f: ScalarFunction, x: Value, order: int, kind: str) -> Value:
    a = f.call("fabs", x) if kind == "j" else x
    pieces = _PIECES[(order, kind)]
    small = _small(f, order, kind, f.select(a < _SERIES_BELOW, a, 0.5))
    middle = pieces.evaluate(f, f.select((a >= _SERIES_BELOW) & (a < pieces.end), a, pieces.end - _WIDTH / 2))
    large = _hankel(f, order, kind, f.select(a >= _HANKEL_FROM, a, _HANKEL_FROM))
    result = f.select(a < _SERIES_BELOW, small, f.select(a < _HANKEL_FROM, middle, large))
    result = f.select(a == float("inf"), 0.0, result)
    if kind == "j":
        return f.select(x != x, x, f.select(x < 0.0, -result, result) if order == 1 else result)
    result = f.select(x == 0.0, -math.inf, result)
    return f.select((x < 0.0) | (x != x), f.nan, result)


def j0(f: ScalarFunction, x: Value) -> Value:
    return _bessel(f, x, 0, "j")


def j1(f: ScalarFunction, x: Value) -> Value:
    return _bessel(f, x, 1, "j")


def y0(f: ScalarFunction, x: Value) -> Value:
    return _bessel(f, x, 0, "y")


def y1(f: ScalarFunction, x: Value) -> Value:
    return _bessel(f, x, 1, "y")
