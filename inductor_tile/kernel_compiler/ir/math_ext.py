"""The `math` dialect of TTIR: xdsl's math ops plus special functions it lacks.

`math.erfc`, `math.lgamma`, `math.digamma`, `math.erfinv`, the Bessel functions `math.j0`, `j1`,
`y0`, `y1`, `cyl_bessel_i0`, `cyl_bessel_i1`, `i0e`, `i1e` (one float) and `math.hypot`,
`math.nextafter` (two floats), and the special functions of SPECIAL_UNARY / SPECIAL_BINARY
(erfcx, ndtri, the Bessel K functions, Airy Ai, zeta, polygamma, the incomplete gamma functions, the
orthogonal polynomials) have no MLIR op in xdsl; each is one pure elementwise op of the operand type,
printed and parsed as `%r = math.erfc %x : f32`, lowered through the targets' math tables
as the other math ops are.
"""

from __future__ import annotations

from xdsl.dialects import math
from xdsl.dialects.math import FloatingPointLikeBinaryMathOperation, FloatingPointLikeUnaryMathOperation
from xdsl.ir import Dialect
from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Pure, SameOperandsAndResultType


def _unary(op_name: str, doc: str) -> type[FloatingPointLikeUnaryMathOperation]:
    cls = type(f"{op_name.capitalize()}Op", (FloatingPointLikeUnaryMathOperation,),
               {"name": f"math.{op_name}", "__doc__": doc, "__module__": __name__,
                "traits": traits_def(Pure(), SameOperandsAndResultType())})
    return irdl_op_definition(cls)


def _binary(op_name: str, doc: str) -> type[FloatingPointLikeBinaryMathOperation]:
    cls = type(f"{op_name.capitalize()}Op", (FloatingPointLikeBinaryMathOperation,),
               {"name": f"math.{op_name}", "__doc__": doc, "__module__": __name__,
                "traits": traits_def(Pure(), SameOperandsAndResultType())})
    return irdl_op_definition(cls)


ErfcOp = _unary("erfc", "1 - erf(x), accurate where erf(x) is near 1.")
LgammaOp = _unary("lgamma", "log|Gamma(x)|.")
DigammaOp = _unary("digamma", "psi(x), the derivative of lgamma.")
ErfinvOp = _unary("erfinv", "The inverse of erf on (-1, 1); +-inf at +-1, NaN outside.")
HypotOp = _binary("hypot", "sqrt(x^2 + y^2) without overflow or underflow on the way.")
NextafterOp = _binary("nextafter", "The float next to x in the direction of y (y itself when x == y).")

J0Op = _unary("j0", "The Bessel function of the first kind of order 0.")
J1Op = _unary("j1", "The Bessel function of the first kind of order 1.")
Y0Op = _unary("y0", "The Bessel function of the second kind of order 0 (NaN below 0, -inf at 0).")
Y1Op = _unary("y1", "The Bessel function of the second kind of order 1 (NaN below 0, -inf at 0).")
CylBesselI0Op = _unary("cyl_bessel_i0", "The modified Bessel function of the first kind of order 0 (torch.i0).")
CylBesselI1Op = _unary("cyl_bessel_i1", "The modified Bessel function of the first kind of order 1 (torch.special.i1).")
I0eOp = _unary("i0e", "I0(x) e^-|x|, the exponentially scaled modified Bessel function of order 0.")
I1eOp = _unary("i1e", "I1(x) e^-|x|, the exponentially scaled modified Bessel function of order 1.")
# special functions built by the targets (to_llvm/targets/special_functions.py): name -> description
SPECIAL_UNARY = {
    "erfcx": "e^(x^2) erfc(x), the scaled complementary error function.",
    "ndtri": "The inverse of the standard normal CDF (NaN outside [0, 1]).",
    "modified_bessel_k0": "The modified Bessel function of the second kind of order 0.",
    "modified_bessel_k1": "The modified Bessel function of the second kind of order 1.",
    "scaled_modified_bessel_k0": "e^x K0(x).",
    "scaled_modified_bessel_k1": "e^x K1(x).",
    "spherical_bessel_j0": "The spherical Bessel function of the first kind of order 0, sin(x) / x.",
    "airy_ai": "The Airy function Ai.",
}
SPECIAL_BINARY = {
    "zeta": "The Hurwitz zeta function zeta(s, q) of (s, q).",
    "polygamma": "The polygamma function psi^(n)(x) of (n, x), n a non-negative integer.",
    "igamma": "The regularized lower incomplete gamma function P(a, x) of (a, x).",
    "igammac": "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) of (a, x).",
    **{name: f"The {name.replace('_', ' ')} of (x, n): order int(n), 0 for n < 0."
       for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
                    "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p")},
}
SPECIAL_OPS = {name: _unary(name, doc) for name, doc in SPECIAL_UNARY.items()} | \
    {name: _binary(name, doc) for name, doc in SPECIAL_BINARY.items()}
EXTRA_OPS = [ErfcOp, LgammaOp, DigammaOp, ErfinvOp, J0Op, J1Op, Y0Op, Y1Op, CylBesselI0Op, CylBesselI1Op, I0eOp, I1eOp,
             HypotOp, NextafterOp, *SPECIAL_OPS.values()]

Math = Dialect("math", list(math.Math.operations) + EXTRA_OPS, list(math.Math.attributes))
