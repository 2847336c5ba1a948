"""float32 `exp` and `tanh` on the CPU as straight-line vector code.

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
NaN gives NaN, +-inf give +inf/0 and +-1, -0 stays -0 (tests/test_cpu_math.py).
"""

from __future__ import annotations

import math

from llvmlite import ir

F32, I32 = ir.FloatType(), ir.IntType(32)

_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
_LN2_HI, _LN2_LO = 0.693359375, -2.12194440e-4  # ln 2 = _LN2_HI + _LN2_LO; n * _LN2_HI is exact
_EXP_MIN, _EXP_MAX = -104.0, 89.0  # e^x is 0 below, inf above (float32)
_TANH_POLY = (-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1)
_TANH_SMALL = 0.625


def _like(x: ir.Value, value: float, element: ir.Type = F32) -> ir.Constant:
    if isinstance(x.type, ir.VectorType):
        return ir.Constant(ir.VectorType(element, x.type.count), [value] * x.type.count)
    return ir.Constant(element, value)


def _int_type(x: ir.Value) -> ir.Type:
    return ir.VectorType(I32, x.type.count) if isinstance(x.type, ir.VectorType) else I32


def _call(b: ir.IRBuilder, base: str, x: ir.Value) -> ir.Value:
    suffix = f"v{x.type.count}f32" if isinstance(x.type, ir.VectorType) else "f32"
    name = f"llvm.{base}.{suffix}"
    fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(x.type, [x.type]), name)
    return b.call(fn, [x])


def _horner(b: ir.IRBuilder, x: ir.Value, coefficients: tuple[float, ...]) -> ir.Value:
    acc = _like(x, coefficients[0])
    for c in coefficients[1:]:
        acc = b.fadd(b.fmul(acc, x), _like(x, c))
    return acc


def _pow2(b: ir.IRBuilder, k: ir.Value) -> ir.Value:
    """2^k for integer k in [-126, 127], built in the exponent bits."""
    bits = b.shl(b.add(k, _like(k, 127, I32)), _like(k, 23, I32))
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
    half = b.ashr(k, _like(k, 1, I32))
    result = b.fmul(b.fmul(e_r, _pow2(b, half)), _pow2(b, b.sub(k, half)))
    return b.select(b.fcmp_unordered("uno", x, x), x, result)  # NaN in, NaN out


def tanh_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    magnitude = _call(b, "fabs", x)
    square = b.fmul(x, x)
    small = b.fadd(b.fmul(b.fmul(_horner(b, square, _TANH_POLY), square), x), x)
    e = exp_f32(b, b.fmul(magnitude, _like(x, 2.0)))
    large = b.fsub(_like(x, 1.0), b.fdiv(_like(x, 2.0), b.fadd(e, _like(x, 1.0))))
    result = _select_less(b, magnitude, _like(x, _TANH_SMALL), small, large)
    name = f"llvm.copysign.v{x.type.count}f32" if isinstance(x.type, ir.VectorType) else "llvm.copysign.f32"
    copysign = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(x.type, [x.type, x.type]), name)
    return b.call(copysign, [result, x])  # the sign of x, -0 included


#: math op -> vector code for float32 (everything else: the target's `math` table)
FLOAT32 = {"exp": exp_f32, "tanh": tanh_f32}
