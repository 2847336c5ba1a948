"""float32 `exp`, `tanh` and `erf` on the CPU as straight-line vector code.

LLVM expands `llvm.exp.v256f32` (and a library `tanhf`) into one scalar call per element,
and each call spills every live vector of the tile around it: a GPT-2 GELU over 128K
elements took 3 ms on one core.  These functions compute the whole vector with a
polynomial instead (the classic Cephes single-precision forms, within ~2 ulp of the
correctly rounded result), so the backend turns them into a few SIMD instructions per
8 or 16 elements.

- exp: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two constants so n ln2 is exact),
  e^r by a degree-6 polynomial, times 2^n built in the exponent bits; 2^n is applied as
  two halves so results down to the subnormal range and up to FLT_MAX stay right.
- tanh: |x| < 0.625 by an odd polynomial in x (no cancellation near 0); above,
  1 - 2 / (e^2|x| + 1) with the sign of x.
- erf: |x| < 1 as x P(x^2); above, 1 - e^-x^2 Q(1/x) with the sign of x, |x| clamped at 4
  (erf rounds to 1 in float32 from about 3.9). P and Q are least-squares fits made for
  this file (numpy, float64, Chebyshev nodes; relative error 1.4e-9 and 3e-9 before rounding).
NaN gives NaN, +-inf give +inf/0 and +-1, -0 stays -0 (tests/test_cpu_math.py).
"""

from __future__ import annotations

import math

from llvmlite import ir

from ..context import constant_like, intrinsic_suffix

F32, I32 = ir.FloatType(), ir.IntType(32)

_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
_LN2_HI, _LN2_LO = 0.693359375, -2.12194440e-4  # ln 2 = _LN2_HI + _LN2_LO; n * _LN2_HI is exact
_EXP_MIN, _EXP_MAX = -104.0, 89.0  # e^x is 0 below, inf above (float32)
_TANH_POLY = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1)
_TANH_SMALL = 0.625
# erf(x) / x as a polynomial in x^2 on |x| < 1
_ERF_SMALL = (7.882497152254505e-05, -8.01885500860301e-04, 5.189311944880892e-03, -2.6854328797475065e-02,
              1.1283597463529038e-01, -3.7612626903584473e-01, 1.1283791658815043)
# erfc(x) e^(x^2) as a polynomial in 1/x - 0.625 on 1 <= x <= 4
_ERFC_SCALED = (2.8223217523593854e-02, -7.106618776436753e-03, -2.76200821796309e-02, 4.466495955283495e-02,
                -4.68692256736668e-02, 2.3258019303880682e-02, 4.376405545960651e-02, -1.7239349267126738e-01,
                3.82283802117379e-01, 3.059529887413257e-01)
_ERF_CLAMP = 4.0


def _like(x: ir.Value, value: float) -> ir.Constant:
    return constant_like(x.type, value)


def _int_type(x: ir.Value) -> ir.Type:
    return ir.VectorType(I32, x.type.count) if isinstance(x.type, ir.VectorType) else I32


def _call(b: ir.IRBuilder, base: str, *args: ir.Value) -> ir.Value:
    """`llvm.<base>` on float32 values (`floor`, `fabs`, `copysign`), declared once per module."""
    ty = args[0].type
    name = f"llvm.{base}.{intrinsic_suffix(ty)}"
    fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(ty, [ty] * len(args)), name)
    return b.call(fn, list(args))


def _horner(b: ir.IRBuilder, x: ir.Value, coefficients: tuple[float, ...]) -> ir.Value:
    acc = _like(x, coefficients[0])
    for c in coefficients[1:]:
        acc = b.fadd(b.fmul(acc, x), _like(x, c))
    return acc


def _pow2(b: ir.IRBuilder, k: ir.Value) -> ir.Value:
    """2^k for integer k in [-126, 127], built in the exponent bits."""
    bits = b.shl(b.add(k, _like(k, 127)), _like(k, 23))
    return b.bitcast(bits, F32 if k.type == I32 else ir.VectorType(F32, k.type.count))


def _select_less(b: ir.IRBuilder, x: ir.Value, bound: ir.Value, then: ir.Value, other: ir.Value) -> ir.Value:
    return b.select(b.fcmp_ordered("<", x, bound), then, other)


def exp_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    low, high = _like(x, _EXP_MIN), _like(x, _EXP_MAX)
    clamped = _select_less(b, x, low, low, x)
    clamped = _select_less(b, high, clamped, high, clamped)
    n = _call(b, "floor", b.fadd(b.fmul(clamped, _like(x, math.log2(math.e))), _like(x, 0.5)))
    r = b.fsub(clamped, b.fmul(n, _like(x, _LN2_HI)))
    r = b.fsub(r, b.fmul(n, _like(x, _LN2_LO)))
    poly = b.fmul(_horner(b, r, _EXP_POLY), b.fmul(r, r))
    e_r = b.fadd(b.fadd(poly, r), _like(x, 1.0))
    k = b.fptosi(n, _int_type(x))
    half = b.ashr(k, _like(k, 1))
    result = b.fmul(b.fmul(e_r, _pow2(b, half)), _pow2(b, b.sub(k, half)))
    return b.select(b.fcmp_unordered("uno", x, x), x, result)  # NaN in, NaN out


def tanh_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    magnitude = _call(b, "fabs", x)
    square = b.fmul(x, x)
    small = b.fadd(b.fmul(b.fmul(_horner(b, square, _TANH_POLY), square), x), x)
    e = exp_f32(b, b.fmul(magnitude, _like(x, 2.0)))
    large = b.fsub(_like(x, 1.0), b.fdiv(_like(x, 2.0), b.fadd(e, _like(x, 1.0))))
    result = _select_less(b, magnitude, _like(x, _TANH_SMALL), small, large)
    return _call(b, "copysign", result, x)  # the sign of x, -0 included


def erf_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    magnitude = _call(b, "fabs", x)
    small = b.fmul(x, _horner(b, b.fmul(x, x), _ERF_SMALL))
    clamped = _select_less(b, magnitude, _like(x, _ERF_CLAMP), magnitude, _like(x, _ERF_CLAMP))
    t = b.fsub(b.fdiv(_like(x, 1.0), clamped), _like(x, 0.625))
    tail = b.fmul(exp_f32(b, b.fneg(b.fmul(clamped, clamped))), _horner(b, t, _ERFC_SCALED))
    large = _call(b, "copysign", b.fsub(_like(x, 1.0), tail), x)
    result = _select_less(b, magnitude, _like(x, 1.0), small, large)
    return b.select(b.fcmp_unordered("uno", x, x), x, result)  # NaN in, NaN out


#: math op -> vector code for float32 (everything else: the target's `math` table)
FLOAT32 = {"exp": exp_f32, "tanh": tanh_f32, "erf": erf_f32}
