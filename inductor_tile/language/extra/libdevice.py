"""Math functions under Triton's `triton.language.extra.libdevice` names.

A Triton kernel that calls `libdevice.tanh(x)` ports by importing this module instead.
Every function takes floats (fp16/bf16 are computed in fp32 and rounded back) and is
lowered to libdevice (`__nv_tanhf`) on NVIDIA GPUs, to libm or an LLVM intrinsic on the
CPU, and computed with torch by the interpreter.
"""

from __future__ import annotations

from typing import Any

from ..builtins import ceil, cos, erf, exp, exp2, floor, log, log2, rsqrt, sin, sqrt
from ..core import builtin, constexpr, current_semantic, tensor


def _c(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


def _named(fn, name: str, doc: str):
    """`fn` as the language function `name` documented by `doc`."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _unary(name: str, doc: str, op: str | None = None):
    """The language function `name` of one float: the semantic's math op `op` (default: `name`)."""
    @builtin
    def fn(x: Any) -> tensor:
        return current_semantic().float_math(op or name, _c(x), name)

    return _named(fn, name, doc)


def _binary(name: str, doc: str, op: str | None = None):
    """The language function `name` of two floats: the semantic's math op `op` (default: `name`)."""
    @builtin
    def fn(x: Any, y: Any) -> tensor:
        return current_semantic().float_math_binary(op or name, _c(x), _c(y), name)

    return _named(fn, name, doc)


tanh = _unary("tanh", "Hyperbolic tangent.")
log1p = _unary("log1p", "log(1 + x), accurate for small x.")
expm1 = _unary("expm1", "exp(x) - 1, accurate for small x.")
log10 = _unary("log10", "Base-10 logarithm.")
tan = _unary("tan", "Tangent.")
sinh = _unary("sinh", "Hyperbolic sine.")
cosh = _unary("cosh", "Hyperbolic cosine.")
asin = _unary("asin", "Arc sine.")
acos = _unary("acos", "Arc cosine.")
atan = _unary("atan", "Arc tangent.")
asinh = _unary("asinh", "Inverse hyperbolic sine.")
acosh = _unary("acosh", "Inverse hyperbolic cosine.")
atanh = _unary("atanh", "Inverse hyperbolic tangent.")
trunc = _unary("trunc", "Round toward zero.")
rint = _unary("rint", "Round to the nearest integer, halfway cases to even.", op="roundeven")
nearbyint = _unary("nearbyint", "Round to the nearest integer, halfway cases to even (as torch.round).", op="roundeven")
round = _unary("round", "Round to the nearest integer, halfway cases away from zero (C's round).")
pow = _binary("pow", "x raised to the power y (C's pow: pow(x, 0) is 1, pow(1, y) is 1, even for NaN).", op="powf")
atan2 = _binary("atan2", "C's atan2(y, x): the angle in radians of the point (x, y), in [-pi, pi].")
copysign = _binary("copysign", "The magnitude of x with the sign of y.")
erfc = _unary("erfc", "1 - erf(x), accurate where erf(x) is near 1.")
lgamma = _unary("lgamma", "log|Gamma(x)| (inf at 0 and the negative integers).")
digamma = _unary("digamma", "psi(x), the derivative of lgamma (an extension: Triton's libdevice has none).")
j0 = _unary("j0", "The Bessel function of the first kind of order 0.")
j1 = _unary("j1", "The Bessel function of the first kind of order 1.")
y0 = _unary("y0", "The Bessel function of the second kind of order 0 (NaN below 0, -inf at 0).")
y1 = _unary("y1", "The Bessel function of the second kind of order 1 (NaN below 0, -inf at 0).")
cyl_bessel_i0 = _unary("cyl_bessel_i0", "The modified Bessel function of the first kind of order 0.")
cyl_bessel_i1 = _unary("cyl_bessel_i1", "The modified Bessel function of the first kind of order 1.")
i0e = _unary("i0e", "I0(x) e^-|x| (an extension: Triton's libdevice has none).")
i1e = _unary("i1e", "I1(x) e^-|x| (an extension: Triton's libdevice has none).")
erfinv = _unary("erfinv", "The inverse error function: erf(erfinv(x)) == x on (-1, 1), +-inf at +-1, NaN outside.")
hypot = _binary("hypot", "sqrt(x^2 + y^2) without overflow or underflow on the way.")
nextafter = _binary("nextafter", "The float next to x in the direction of y (y when x == y).")
erfcx = _unary("erfcx", "e^(x^2) erfc(x), the scaled complementary error function.")
ndtri = _unary("ndtri", "The inverse of the standard normal CDF (libdevice's normcdfinv; NaN outside [0, 1]).")
normcdfinv = _unary("normcdfinv", "The inverse of the standard normal CDF (Triton's name of ndtri).", op="ndtri")
modified_bessel_k0 = _unary("modified_bessel_k0",
                            "K0, the modified Bessel function of the second kind of order 0 (an extension).")
modified_bessel_k1 = _unary("modified_bessel_k1",
                            "K1, the modified Bessel function of the second kind of order 1 (an extension).")
scaled_modified_bessel_k0 = _unary("scaled_modified_bessel_k0", "e^x K0(x) (an extension).")
scaled_modified_bessel_k1 = _unary("scaled_modified_bessel_k1", "e^x K1(x) (an extension).")
spherical_bessel_j0 = _unary("spherical_bessel_j0", "sin(x) / x, 1 at 0 (an extension).")
airy_ai = _unary("airy_ai", "The Airy function Ai (an extension).")
zeta = _binary("zeta", "The Hurwitz zeta function zeta(x, q) = sum_k (q + k)^-x (an extension).")
polygamma = _binary("polygamma",
                    "The n-th derivative of digamma at x, polygamma(n, x) for integer n >= 0 (an extension).")

igamma = _binary("igamma", "The regularized lower incomplete gamma function P(a, x), igamma(a, x) (an extension).")
igammac = _binary("igammac", "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (an extension).")


def _polynomial(name: str, what: str):
    return _binary(name, f"{what} of degree int(n) at x, {name}(x, n) (0 for n < 0; an extension).")


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "The Chebyshev polynomial of the first kind")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "The Chebyshev polynomial of the second kind")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", "The Chebyshev polynomial of the third kind")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", "The Chebyshev polynomial of the fourth kind")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t", "T_n(2x - 1)")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u", "U_n(2x - 1)")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v", "V_n(2x - 1)")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w", "W_n(2x - 1)")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", "The (physicists') Hermite polynomial H")
hermite_polynomial_he = _polynomial("hermite_polynomial_he", "The (probabilists') Hermite polynomial He")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "The Laguerre polynomial")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "The Legendre polynomial")


@builtin
def fmod(x: Any, y: Any) -> tensor:
    """C's fmod: x - trunc(x / y) * y, with the sign of x."""
    return current_semantic().mod(_c(x), _c(y))


fabs = _unary("fabs", "Absolute value of a float.", op="absf")

__all__ = [
    "acos", "acosh", "airy_ai", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "copysign", "cos", "cosh",
    "cyl_bessel_i0", "cyl_bessel_i1", "digamma", "erf", "erfc", "erfcx", "erfinv", "exp", "exp2", "expm1", "fabs",
    "floor", "fmod", "hermite_polynomial_h", "hermite_polynomial_he", "hypot", "i0e", "i1e", "igamma", "igammac",
    "j0", "j1", "laguerre_polynomial_l", "legendre_polynomial_p", "lgamma", "log", "log10", "log1p", "log2",
    "modified_bessel_k0", "modified_bessel_k1", "ndtri", "nearbyint", "nextafter", "normcdfinv", "polygamma", "pow",
    "rint", "round", "rsqrt", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sin", "sinh", "spherical_bessel_j0", "sqrt", "tan", "tanh", "trunc", "y0",
    "y1", "zeta",
]
