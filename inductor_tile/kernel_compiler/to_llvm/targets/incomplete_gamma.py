"""The regularized incomplete gamma functions P(a, x) (torch.igamma, special.gammainc) and
Q(a, x) = 1 - P(a, x) (igammac, gammaincc), in float64.

With L = a log x - lgamma(a + 1) and u = e^L = x^a / Gamma(a + 1):
- x <= 1.1: P = u (1 + R), R = sum_(n >= 1) (-x)^n a / (n! (a + n)) (from integrating e^-t term by term),
  and Q = -expm1(L) - u R, which keeps Q's relative accuracy where P is near 1 (small a);
- 1.1 < x < a: P = e^(L - x) sum_(n >= 0) x^n / ((a+1) ... (a+n)) (terms fall as x / (a + n) < 1),
  Q = 1 - P;
- x >= a (and x > 1.1): Q = e^(L - x) a h, with h the continued fraction
  1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))) by the modified Lentz
  method, P = 1 - Q.
Sums and the fraction stop at a relative change below 1e-17 (or 5000 steps). Domain and limits as
torch's: x < 0 or a < 0 give NaN; a = 0 gives P = 1 for x > 0 (NaN at x = 0); x = 0 gives P = 0;
a = inf gives P = 0 (NaN if x = inf too); x = inf gives P = 1.
"""

from __future__ import annotations

from .scalar_code import ScalarFunction, Value

_SMALL_X = 1.1
_EPSILON = 1e-17
_MAX_STEPS = 5000.0
_TINY = 1e-300


def _small_x(f: ScalarFunction, a: Value, x: Value, log_u: Value) -> tuple[Value, Value]:
    def condition(n, term, total):
        return (f.call("fabs", term) > f.call("fabs", total) * _EPSILON) & (n < _MAX_STEPS)

    def body(n, term, total):  # term_n = (-x)^n / n!
        term = term * -x / n
        return [n + 1.0, term, total + term * a / (a + n)]

    _, _, rest = f.loop([1.0, 1.0, 0.0], condition, body)
    u = f.call("exp", log_u)
    return u * (1.0 + rest), -f.call("expm1", log_u) - u * rest


def _series(f: ScalarFunction, a: Value, x: Value, log_u: Value) -> Value:
    def condition(n, term, total):
        return (term > total * _EPSILON) & (n < _MAX_STEPS)

    def body(n, term, total):
        term = term * x / (a + n)
        return [n + 1.0, term, total + term]

    _, _, total = f.loop([1.0, 1.0, 1.0], condition, body)
    return f.call("exp", log_u - x) * total


def _continued_fraction(f: ScalarFunction, a: Value, x: Value, log_u: Value) -> Value:
    b = x + 1.0 - a
    c = f.c(1.0 / _TINY)
    d = 1.0 / b

    def clamp(v: Value) -> Value:
        return f.select(f.call("fabs", v) < _TINY, _TINY, v)

    def condition(i, b, c, d, h, change):
        return (f.call("fabs", change - 1.0) > _EPSILON) & (i < _MAX_STEPS)

    def body(i, b, c, d, h, change):
        numerator = -i * (i - a)
        b = b + 2.0
        d = 1.0 / clamp(numerator * d + b)
        c = clamp(b + numerator / c)
        change = d * c
        return [i + 1.0, b, c, d, h * change, change]

    h = f.loop([1.0, b, c, d, d, 2.0], condition, body)[4]
    return f.call("exp", log_u - x) * a * h  # x^a e^-x / Gamma(a) = e^(L - x) a


def _both(f: ScalarFunction, a: Value, x: Value) -> tuple[Value, Value]:
    """(P, Q) away from the edges."""
    log_u = a * f.call("log", x) - f.call("lgamma", a + 1.0)
    small_p, small_q = _small_x(f, a, f.select(x <= _SMALL_X, x, 0.5), log_u)
    use_series = (x > _SMALL_X) & (x < a)
    series_p = _series(f, a, f.select(use_series, x, 0.5), log_u)
    fraction_q = _continued_fraction(f, a, f.select((x > _SMALL_X) & ~use_series, x, 2.0), log_u)
    p = f.select(x <= _SMALL_X, small_p, f.select(use_series, series_p, 1.0 - fraction_q))
    q = f.select(x <= _SMALL_X, small_q, f.select(use_series, 1.0 - series_p, fraction_q))
    return p, q


def _edges(f: ScalarFunction, a: Value, x: Value, value: Value, lower: bool) -> Value:
    one, zero = (1.0, 0.0) if lower else (0.0, 1.0)
    value = f.select(f.call("fabs", x) == float("inf"), one, value)
    a_inf = f.call("fabs", a) == float("inf")
    value = f.select(a_inf, f.select(f.call("fabs", x) == float("inf"), f.nan, f.c(zero)), value)
    value = f.select(x == 0.0, zero, value)
    value = f.select(a == 0.0, f.select(x > 0.0, f.c(one), f.nan), value)
    return f.select((x < 0.0) | (a < 0.0), f.nan, value)


def igamma(f: ScalarFunction, a: Value, x: Value) -> Value:
    return _edges(f, a, x, _both(f, a, x)[0], lower=True)


def igammac(f: ScalarFunction, a: Value, x: Value) -> Value:
    return _edges(f, a, x, _both(f, a, x)[1], lower=False)
