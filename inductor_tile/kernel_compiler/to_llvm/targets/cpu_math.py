"""float32 `exp`, `tanh`, `erf`, `sin`, `cos` and `log` on the CPU as straight-line vector code.

LLVM expands `llvm.exp.v256f32` (and a library `tanhf`) into one scalar call per element,
and each call spills every live vector of the tile around it: a GPT-2 GELU over 128K
elements took 3 ms on one core.  These functions compute the whole vector with a
polynomial instead (the classic Cephes single-precision forms, within ~2 ulp of the
correctly rounded result), so the backend turns them into a few SIMD instructions per
8 or 16 elements.

- exp: x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two constants so n ln2 is exact),
  e^r by a degree-6 polynomial, times 2^n: on AVX-512 hosts one vscalefps (on 16 floats the x86
  intrinsic on the float n, so no conversions and no NaN select; else `llvm.ldexp`), elsewhere
  built in the exponent bits and applied as two halves so results down to the subnormal range and
  up to FLT_MAX stay right (both round once: the same results).
- tanh: |x| < 0.625 by an odd polynomial in x (no cancellation near 0); above,
  1 - 2 / (e^2|x| + 1) with the sign of x.
- erf: |x| < 1 as x P(x^2); above, 1 - e^-x^2 Q(1/x) with the sign of x, |x| clamped at 4
  (erf rounds to 1 in float32 from about 3.9). P and Q are least-squares fits made for
  this file (numpy, float64, Chebyshev nodes; relative error 1.4e-9 and 3e-9 before rounding).
- sin, cos: x = j pi/2 + r with j = rint(x 2/pi), reduced in float64 with pi/2 split in two
  (the first part has 32 significant bits, so j times it is exact for |j| < 2^21: r keeps its
  relative accuracy even next to a multiple of pi/2), then sin r = r + r^3 S(r^2) and
  cos r = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4, the quadrant j mod 4 picking one and its sign.
  A vector with an element beyond `_TRIG_REDUCED` in magnitude (or inf, NaN) calls the C
  library's sinf/cosf for every element instead (one branch, rarely taken).
- log: x = 2^e m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23 first), f = m - 1,
  log(1 + f) = f - f^2/2 + f^3 P(f), plus e ln 2 in two parts.
S, C and P are least-squares fits made for this file as P and Q of erf were (relative error
5.5e-12, 1.2e-13 and 8.8e-10 before rounding).
NaN gives NaN, +-inf give +inf/0 and +-1, -0 stays -0; log: 0 -> -inf, x < 0 -> NaN
(tests/test_cpu_math.py).
"""

from __future__ import annotations

import math

from llvmlite import ir

from ..context import constant_like, guarded, intrinsic_suffix
from . import cpu_memory

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
# sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4
_SIN_POLY = (2.7184521195331513e-06, -0.00019839353083783706, 0.008333329459792985, -0.16666666642529798)
_COS_POLY = (-2.7205965675925687e-07, 2.4799462690704155e-05, -0.00138888835090539, 0.04166666661957364)
_PIO2_HI = float.fromhex("0x1.921fb54400000p+0")  # pi/2 to 32 significant bits
_PIO2_LO = float.fromhex("0x1.0b4611a626331p-34")  # pi/2 - _PIO2_HI, to double precision
_TRIG_REDUCED = 2.0 ** 20  # |x| up to this: j < 2^21, so j * _PIO2_HI is exact
# log(1 + f) = f - f^2/2 + f^3 P(f) on sqrt(1/2) - 1 <= f < sqrt(2) - 1
_LOG_POLY = (0.06675271891862976, -0.1164643441642604, 0.11904712128461706, -0.12411268686749755,
             0.14217891534681648, -0.1666764371611021, 0.2000220418361037, -0.2500001627905819,
             0.33333310898963875)
_MIN_NORMAL = 2.0 ** -126


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


#: fast-math flag on the polynomials' multiply-adds: LLVM may fuse each pair into one FMA where the
#: host has it (one rounding instead of two: never less accurate, and half the instructions)
CONTRACT = ("contract",)


def _horner(b: ir.IRBuilder, x: ir.Value, coefficients: tuple[float, ...]) -> ir.Value:
    acc = _like(x, coefficients[0])
    for c in coefficients[1:]:
        acc = b.fadd(b.fmul(acc, x, flags=CONTRACT), _like(x, c), flags=CONTRACT)
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
    n = _call(b, "floor", b.fadd(b.fmul(clamped, _like(x, math.log2(math.e)), flags=CONTRACT), _like(x, 0.5),
                                 flags=CONTRACT))
    r = b.fsub(clamped, b.fmul(n, _like(x, _LN2_HI), flags=CONTRACT), flags=CONTRACT)
    r = b.fsub(r, b.fmul(n, _like(x, _LN2_LO), flags=CONTRACT), flags=CONTRACT)
    poly = b.fmul(_horner(b, r, _EXP_POLY), b.fmul(r, r), flags=CONTRACT)
    e_r = b.fadd(b.fadd(poly, r, flags=CONTRACT), _like(x, 1.0))
    if _native_ldexp() and x.type == _V16F32:
        return _scalef_512(b, e_r, n)  # a NaN x made n NaN, and scalef gives NaN for it
    k = b.fptosi(n, _int_type(x))
    if _native_ldexp():
        result = _ldexp(b, e_r, k)
    else:
        half = b.ashr(k, _like(k, 1))
        result = b.fmul(b.fmul(e_r, _pow2(b, half)), _pow2(b, b.sub(k, half)))
    return b.select(b.fcmp_unordered("uno", x, x), x, result)  # NaN in, NaN out


def _native_ldexp() -> bool:
    """Whether `llvm.ldexp` is one instruction on the host (x86 AVX-512: vscalefps); elsewhere LLVM
    expands it into one libm call per element."""
    x86, features = cpu_memory.host()
    return x86 and "avx512f" in features


_V16F32 = ir.VectorType(F32, 16)


def _scalef_512(b: ir.IRBuilder, x: ir.Value, n: ir.Value) -> ir.Value:
    """x * 2^n for 16 floats with an integral float n: one vscalefps taking n as it is (`llvm.ldexp`
    wants integers: two conversions more), NaN if n is NaN."""
    name = "llvm.x86.avx512.mask.scalef.ps.512"
    i16 = ir.IntType(16)
    fn = b.module.globals.get(name) or ir.Function(
        b.module, ir.FunctionType(_V16F32, [_V16F32, _V16F32, _V16F32, i16, I32]), name)
    current_rounding = ir.Constant(I32, 4)
    return b.call(fn, [x, n, ir.Constant(_V16F32, None), ir.Constant(i16, -1), current_rounding])


def _ldexp(b: ir.IRBuilder, x: ir.Value, k: ir.Value) -> ir.Value:
    """x * 2^k rounded once (subnormal results included, inf on overflow): `llvm.ldexp`."""
    name = f"llvm.ldexp.{intrinsic_suffix(x.type)}.{intrinsic_suffix(k.type)}"
    fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(x.type, [x.type, k.type]), name)
    return b.call(fn, [x, k])


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


def _with_type(x: ir.Value, element: ir.Type) -> ir.Type:
    return ir.VectorType(element, x.type.count) if isinstance(x.type, ir.VectorType) else element


def _any(b: ir.IRBuilder, flags: ir.Value) -> ir.Value:
    """i1: some element of `flags` (a vector of i1, or one i1) is set."""
    if not isinstance(flags.type, ir.VectorType):
        return flags
    name = f"llvm.vector.reduce.or.{intrinsic_suffix(flags.type)}"
    fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(ir.IntType(1), [flags.type]), name)
    return b.call(fn, [flags])


def _library_call(b: ir.IRBuilder, symbol: str, x: ir.Value) -> ir.Value:
    """The C library's float32 `symbol` on every element of `x`."""
    fn = b.module.globals.get(symbol) or ir.Function(b.module, ir.FunctionType(F32, [F32]), symbol)
    if not isinstance(x.type, ir.VectorType):
        return b.call(fn, [x])
    if x.type.count >= cpu_memory.LOOP_MIN_ELEMENTS:
        return cpu_memory.map_elements(b, x, fn)
    out = x
    for i in range(x.type.count):
        out = b.insert_element(out, b.call(fn, [b.extract_element(x, ir.Constant(I32, i))]), ir.Constant(I32, i))
    return out


def _sin_or_cos_f32(b: ir.IRBuilder, x: ir.Value, cosine: bool) -> ir.Value:
    wide = b.fpext(x, _with_type(x, ir.DoubleType()))
    j = _call(b, "rint", b.fmul(wide, _like(wide, 2 / math.pi)))
    r = b.fsub(b.fsub(wide, b.fmul(j, _like(wide, _PIO2_HI))), b.fmul(j, _like(wide, _PIO2_LO)))
    r = b.fptrunc(r, x.type)
    quadrant = b.fptosi(j, _int_type(x))
    if cosine:  # cos x = sin(x + pi/2)
        quadrant = b.add(quadrant, _like(quadrant, 1))
    t = b.fmul(r, r)
    sine = b.fadd(r, b.fmul(b.fmul(r, t), _horner(b, t, _SIN_POLY)))
    cos_poly = b.fmul(b.fmul(t, t), _horner(b, t, _COS_POLY))
    cosine_r = b.fadd(b.fsub(_like(x, 1.0), b.fmul(t, _like(x, 0.5))), cos_poly)
    odd = b.icmp_unsigned("!=", b.and_(quadrant, _like(quadrant, 1)), _like(quadrant, 0))
    value = b.select(odd, cosine_r, sine)
    sign = b.shl(b.and_(quadrant, _like(quadrant, 2)), _like(quadrant, 30))  # quadrants 2, 3: negated
    value = b.bitcast(b.xor(b.bitcast(value, quadrant.type), sign), x.type)
    # beyond the reduction's range, inf and NaN: the C library, for the whole vector
    outside = b.fcmp_unordered(">", _call(b, "fabs", x), _like(x, _TRIG_REDUCED))
    return guarded(b, _any(b, outside), lambda: _library_call(b, "cosf" if cosine else "sinf", x), value)


def sin_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _sin_or_cos_f32(b, x, cosine=False)


def cos_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    return _sin_or_cos_f32(b, x, cosine=True)


def log_f32(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    tiny = b.fcmp_ordered("<", x, _like(x, _MIN_NORMAL))  # subnormals (and what the end replaces)
    scaled = b.select(tiny, b.fmul(x, _like(x, 2.0 ** 23)), x)
    bits = b.bitcast(scaled, _int_type(x))
    exponent = b.sub(b.and_(b.lshr(bits, _like(bits, 23)), _like(bits, 0xFF)), _like(bits, 127))
    exponent = b.sub(exponent, b.select(tiny, _like(bits, 23), _like(bits, 0)))
    m = b.bitcast(b.or_(b.and_(bits, _like(bits, 0x7FFFFF)), _like(bits, 0x3F800000)), x.type)  # [1, 2)
    high = b.fcmp_ordered(">", m, _like(x, math.sqrt(2.0)))
    m = b.select(high, b.fmul(m, _like(x, 0.5)), m)
    exponent = b.add(exponent, b.zext(high, bits.type))
    f = b.fsub(m, _like(x, 1.0))
    e = b.sitofp(exponent, x.type)
    f2 = b.fmul(f, f)
    y = b.fmul(b.fmul(f2, f), _horner(b, f, _LOG_POLY))
    y = b.fadd(y, b.fmul(e, _like(x, _LN2_LO)))
    y = b.fsub(y, b.fmul(f2, _like(x, 0.5)))
    result = b.fadd(b.fadd(f, y), b.fmul(e, _like(x, _LN2_HI)))
    result = b.select(b.fcmp_ordered("==", x, _like(x, math.inf)), x, result)
    result = b.select(b.fcmp_ordered("==", x, _like(x, 0.0)), _like(x, -math.inf), result)
    result = b.select(b.fcmp_ordered("<", x, _like(x, 0.0)), _like(x, math.nan), result)
    return b.select(b.fcmp_unordered("uno", x, x), x, result)  # NaN in, NaN out


#: math op -> vector code for float32 (everything else: the target's `math` table)
#: functions computed one register-wide slice at a time in a loop on wide tiles (cpu_memory.map_chunks).
#: 2^16 elements in blocks of 256, one core, looped / inlined (us): exp 28-30 / 31-35, erf 54-56 / 58-62,
#: log 38-42 / 39-48, sin 48-53 / 45-50, cos 49-54 / 47-48 (their float64 reduction keeps two registers
#: per slice and a branch to the library: the inlined form schedules better); a GPT-2 tanh GELU in the
#: small suite 56 -> 35 us per forward (Inductor's C++ 60).
LOOPED = frozenset({"exp", "tanh", "erf", "log"})
FLOAT32 = {"exp": exp_f32, "tanh": tanh_f32, "erf": erf_f32, "sin": sin_f32, "cos": cos_f32, "log": log_f32}
