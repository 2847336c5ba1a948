"""The Hurwitz zeta function zeta(s, q) = sum_(k >= 0) (q + k)^-s and the polygamma functions
psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) (n >= 1; digamma for n = 0), in float64.

zeta: the terms (q + k)^-s are summed until q + k > 9 (at least 9 of them), the rest of the sum by
Euler-Maclaurin at a = q + k: a^(1-s) / (s - 1) + a^-s / 2 + sum_j B_2j / (2j)! s (s+1) ... (s+2j-2)
a^(-s-2j+1), twelve terms. Domain as torch's: s = 1 gives inf, s < 1 NaN; q a non-positive integer
gives inf, q < 0 with a non-integer s NaN; q = inf gives NaN.
"""

from __future__ import annotations

from fractions import Fraction
from math import comb, factorial

from .scalar_code import ScalarFunction, Value

_DIRECT_TERMS = 9
_TAIL_TERMS = 12


def _bernoulli(count: int) -> list[Fraction]:
    """B_0 .. B_(count-1) from sum_(k <= m) C(m+1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, count):
        b.append(-sum(comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


_B = _bernoulli(2 * _TAIL_TERMS + 1)
# B_2j / (2j)! for j = 1 .. _TAIL_TERMS
_TAIL = [float(_B[2 * j] / factorial(2 * j)) for j in range(1, _TAIL_TERMS + 1)]


def zeta(f: ScalarFunction, s: Value, q: Value) -> Value:
    def condition(k, a, total):
        return (k < float(_DIRECT_TERMS)) | (a <= float(_DIRECT_TERMS))

    def body(k, a, total):
        return [k + 1.0, a + 1.0, total + f.call("pow", a, -s)]

    _, a, total = f.loop([0.0, q, 0.0], condition, body)
    w = f.call("pow", a, -s)
    total = total + a * w / (s - 1.0) + 0.5 * w
    inverse_square = 1.0 / (a * a)
    factor = s / a  # s (s+1) ... (s+2j-2) / a^(2j-1)
    for j, coefficient in enumerate(_TAIL, start=1):
        if j > 1:
            factor = factor * (s + float(2 * j - 3)) * (s + float(2 * j - 2)) * inverse_square
        total = total + coefficient * factor * w
    non_positive = q <= 0.0
    result = f.select(non_positive & (s != f.call("floor", s)), f.nan, total)
    result = f.select(non_positive & (q == f.call("floor", q)), f.inf, result)
    result = f.select(s < 1.0, f.nan, result)
    return f.select(s == 1.0, f.inf, result)


def polygamma(f: ScalarFunction, n: Value, x: Value) -> Value:
    """psi^(n)(x) for an integer n >= 0 (torch's polygamma)."""
    odd = n - 2.0 * f.call("floor", n * 0.5) != 0.0
    scale = f.select(odd, 1.0, -1.0) * f.call("exp", f.call("lgamma", n + 1.0))
    higher = scale * f.call("zeta", n + 1.0, x)
    return f.select(n == 0.0, f.call("digamma", x), higher)
