"""The modified Bessel functions of the second kind K0, K1 (torch.special.modified_bessel_k0/k1) and
their scaled versions e^x K0(x), e^x K1(x) in float64, and the spherical Bessel function j0.

Scaled K_n (n = 0, 1) for x > 0:
- x <= 40: the integral e^x K_n(x) = int_0^inf e^(-x (cosh t - 1)) cosh(n t) dt by the trapezoidal rule
  with step 1/10 (the integrand is analytic and decays doubly exponentially: the rule's error is of
  order e^(-pi^2 / h) e^x, below 1e-25 here), summed until a term falls below 1e-18 of the sum;
  cosh t - 1 = 2 sinh(t/2)^2, sinh from expm1, so small t does not cancel;
- above: the asymptotic series sqrt(pi / (2x)) sum_k a_k / x^k, a_k = a_(k-1) (4n^2 - (2k-1)^2) / (8k),
  20 terms.
K_n = e^-x (scaled K_n). As torch: 0 gives inf, x < 0 NaN, inf gives 0, NaN stays NaN.

j0(x) = sin(x) / x; below |x| = 1/2 its Taylor series to x^14; 0 at +-inf.
"""

from __future__ import annotations

import math

from .scalar_code import ScalarFunction, Value

_STEP = 0.1
_INTEGRAL_UP_TO = 40.0
_ASYMPTOTIC_TERMS = 20
_MAX_STEPS = 20000.0


def scaled_k(f: ScalarFunction, x: Value, order: float) -> Value:
    """e^x K_order(x) (order 0, 1, or 1/3 for airy.py)."""
    x_integral = f.select((x > 0.0) & (x <= _INTEGRAL_UP_TO), x, 1.0)  # 0 and NaN would never stop

    def integrand(t: Value) -> Value:
        e = f.call("expm1", t * 0.5)
        sinh_half = (e + e / (e + 1.0)) * 0.5
        excess = 2.0 * sinh_half * sinh_half  # cosh t - 1
        value = f.call("exp", -x_integral * excess)
        if order == 0:
            return value
        if order == 1:
            return value * (excess + 1.0)
        e = f.call("exp", t * order)
        return value * (e + 1.0 / e) * 0.5

    def condition(j, total, term):
        return (term > total * 1e-18) & (j < _MAX_STEPS)

    def body(j, total, term):
        term = integrand(j * _STEP)
        return [j + 1.0, total + term, term]

    _, total, _ = f.loop([1.0, 0.5, 1.0], condition, body)
    integral = total * _STEP
    inverse = 1.0 / x
    term = series = f.c(1.0)
    for k in range(1, _ASYMPTOTIC_TERMS + 1):
        term = term * inverse * ((4 * order * order - (2 * k - 1) ** 2) / (8 * k))
        series = series + term
    asymptotic = series * f.call("sqrt", (math.pi / 2) * inverse)
    result = f.select(x <= _INTEGRAL_UP_TO, integral, asymptotic)
    result = f.select(x == 0.0, f.inf, result)
    return f.select(x < 0.0, f.nan, f.select(x != x, x, result))


def k_function(order: int, scaled: bool):
    def body(f: ScalarFunction, x: Value) -> Value:
        value = scaled_k(f, x, order)
        return value if scaled else value * f.call("exp", -x)
    return body


def spherical_j0(f: ScalarFunction, x: Value) -> Value:
    square = x * x
    series = f.c(0.0)
    for k in range(7, 0, -1):  # sum_k (-1)^k x^2k / (2k+1)!
        series = (series + (-1) ** k / math.factorial(2 * k + 1)) * square
    series = series + 1.0
    result = f.select(f.call("fabs", x) < 0.5, series, f.call("sin", x) / x)
    return f.select(f.call("fabs", x) == math.inf, 0.0, result)
