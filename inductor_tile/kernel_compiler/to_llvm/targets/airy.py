"""The Airy function Ai (torch.special.airy_ai) in float64.

- -10 <= x <= 1: the differential equation Ai'' = x Ai integrated from Ai(0), Ai'(0) by Taylor steps of
  the exact local series (a_(k+2) (k+2)(k+1) = x0 a_k + a_(k-1)), 18 terms, with sqrt|x| h <= 1/2
  per step; toward negative x both solutions oscillate, so the rounding errors do not grow;
- x > 1: Ai(x) = sqrt(x / 3) / pi K_(1/3)(z), z = 2/3 x^(3/2), from bessel_k.py's e^z K(z) times e^-z;
  0 above 103.892, where it underflows (as torch);
- x < -10: the oscillating asymptotic expansion pi^(-1/2) |x|^(-1/4) (cos(z - pi/4) sum_k (-1)^k u_2k
  z^-2k + sin(z - pi/4) sum_k (-1)^k u_(2k+1) z^-(2k+1)), z = 2/3 |x|^(3/2) >= 21, u_k =
  u_(k-1) (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k), 12 terms;
- +-inf and NaN give NaN, as torch.
"""

from __future__ import annotations

import math

from .bessel_k import scaled_k
from .scalar_code import ScalarFunction, Value

_AI_0 = 0.355028053887817239260063186004183176  # Ai(0) = 3^(-2/3) / Gamma(2/3)
_AI_PRIME_0 = -0.258819403792806798405183560189203963  # Ai'(0) = -3^(-1/3) / Gamma(1/3)
_TAYLOR_TERMS = 18
_ASYMPTOTIC_TERMS = 12
_ODE_FROM, _ODE_TO = -10.0, 1.0


def _u(count: int) -> list[float]:
    u = [1.0]
    for k in range(1, count):
        u.append(u[-1] * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k))
    return u


def _integrated(f: ScalarFunction, x: Value) -> Value:
    steps = f.call("floor", 2.0 * f.call("fabs", x) * f.call("sqrt", f.call("fabs", x))) + 1.0
    h = x / steps

    def condition(j, x0, y, slope):
        return j < steps

    def body(j, x0, y, slope):
        # b_k = a_k h^k of the local series at x0; y(x0 + h) = sum b_k, h y'(x0 + h) = sum k b_k
        h2 = h * h
        terms = [y, slope * h]
        previous = f.c(0.0)  # b_(k-1)
        for k in range(_TAYLOR_TERMS - 2):
            previous_term = terms[k - 1] if k >= 1 else previous
            terms.append((x0 * terms[k] * h2 + previous_term * h2 * h) / float((k + 2) * (k + 1)))
        value = terms[0]
        derivative = f.c(0.0)
        for k in range(1, _TAYLOR_TERMS):
            value = value + terms[k]
            derivative = derivative + float(k) * terms[k]
        return [j + 1.0, x0 + h, value, derivative / h]

    return f.loop([0.0, 0.0, _AI_0, _AI_PRIME_0], condition, body)[2]


def _oscillating(f: ScalarFunction, x: Value) -> Value:
    a = -x
    root = f.call("sqrt", a)
    z = (2.0 / 3.0) * a * root
    inverse = 1.0 / z
    u = _u(2 * _ASYMPTOTIC_TERMS)
    even, odd, power = f.c(0.0), f.c(0.0), f.c(1.0)
    for k in range(2 * _ASYMPTOTIC_TERMS):
        sign = (-1.0) ** (k // 2)
        if k % 2 == 0:
            even = even + sign * u[k] * power
        else:
            odd = odd + sign * u[k] * power
        power = power * inverse
    phase = z - math.pi / 4
    return (f.call("cos", phase) * even + f.call("sin", phase) * odd) / (math.sqrt(math.pi) * f.call("sqrt", root))


def airy_ai(f: ScalarFunction, x: Value) -> Value:
    inside = (x >= _ODE_FROM) & (x <= _ODE_TO)
    integrated = _integrated(f, f.select(inside, x, 0.0))
    positive = f.select(x > _ODE_TO, x, 2.0)
    z = (2.0 / 3.0) * positive * f.call("sqrt", positive)
    decaying = f.call("sqrt", positive * (1.0 / 3.0)) / math.pi * scaled_k(f, z, 1.0 / 3.0) * f.call("exp", -z)
    oscillating = _oscillating(f, f.select(x < _ODE_FROM, x, -20.0))
    result = f.select(inside, integrated, f.select(x > _ODE_TO, decaying, oscillating))
    result = f.select(x > 103.892, 0.0, result)
    return f.select((f.call("fabs", x) == math.inf) | (x != x), f.nan, result)
