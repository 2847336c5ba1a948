"""erfcx and ndtri (the inverse of the standard normal CDF) in float64, for targets whose library has
none (the C library; NVIDIA uses libdevice's __nv_erfcx and __nv_normcdfinv).

erfcx(x) = e^(x^2) erfc(x):
- x >= 10: the asymptotic series 1 / (x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k, 15 terms (the last
  below 1e-17 at x = 10);
- below: e^(x^2) erfc(x) with x^2 split exactly into hi + lo (fma), e^(x^2) = e^hi (1 + lo), so the
  rounding of x^2 does not cost x^2 ulps; x < -26.7 overflows to inf (so does -inf).

ndtri(p):
- p >= 1/4: sqrt(2) erfinv(2p - 1) (2p - 1 is exact there);
- p < 1/4: a first guess from the rational approximation of Abramowitz and Stegun 26.2.23 (error
  below 4.5e-4), then five Newton steps on log Phi(z) = log p, in logarithms so that nothing underflows
  for subnormal p: with u = -z / sqrt 2, Phi(z) = erfcx(u) e^(-u^2) / 2 and Phi / Phi' = sqrt(pi / 2)
  erfcx(u);
- 0 gives -inf, 1 gives inf, outside [0, 1] and NaN give NaN.
"""

from __future__ import annotations

import math

from .scalar_code import ScalarFunction, Value

_ASYMPTOTIC_FROM = 10.0
_ASYMPTOTIC_TERMS = 15
_NEWTON_STEPS = 5


def erfcx(f: ScalarFunction, x: Value) -> Value:
    inverse_twice_square = 0.5 / (x * x)
    term = total = f.c(1.0)
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = term * (-float(2 * k - 1)) * inverse_twice_square
        total = total + term
    asymptotic = total / (x * math.sqrt(math.pi))
    hi = x * x
    lo = f.call("fma", x, x, -hi)
    direct = f.call("exp", hi) * (1.0 + lo) * f.call("erfc", x)
    result = f.select(x >= _ASYMPTOTIC_FROM, asymptotic, direct)
    return f.select(x < -26.7, f.inf, result)


def ndtri(f: ScalarFunction, p: Value) -> Value:
    central = math.sqrt(2.0) * f.call("erfinv", 2.0 * p - 1.0)
    t = f.call("sqrt", -2.0 * f.call("log", p))  # (the log of the smaller tail: p < 1/4 where used)
    z = -(t - (2.515517 + t * (0.802853 + t * 0.010328)) / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    log_p = f.call("log", p)
    for _ in range(_NEWTON_STEPS):
        u = z * -math.sqrt(0.5)
        scaled = f.call("erfcx", u)
        residual = f.call("log", 0.5 * scaled) - u * u - log_p
        z = z - residual * math.sqrt(math.pi / 2) * scaled
    result = f.select(p >= 0.25, central, z)
    result = f.select(p == 0.0, -math.inf, result)
    return f.select((p < 0.0) | (p > 1.0), f.nan, result)
