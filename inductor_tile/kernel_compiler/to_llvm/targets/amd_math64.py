"""float64 math on AMD GPUs without a device library: internal LLVM functions of the kernel's module,
written with scalar_code.py's builder. They also compile for the host, where the tests compare them with
torch's float64 (tests/test_amd_math64.py).

Only +, -, *, /, fma, sqrt, rint, trunc and bit operations are used (all exact or correctly rounded on
AMDGPU). Double-double steps (an exact sum or product and its rounding error) keep the few bits that
the usual formulas lose:
- exp: x = n ln2 + r with ln2 in two parts (n ln2_hi exact), |r| <= ln2/2, e^r - 1 by its Taylor
  series to r^13 (below 1e-17 there), then 2^n as two exact power-of-two factors (subnormal results
  round once). expm1 keeps e^r - 1 apart: 2^n (e^r - 1) + (2^n - 1). exp2 reduces by whole n exactly.
- log: x = 2^e m with m in [sqrt(1/2), sqrt 2] (subnormals scaled first), f = m - 1, s = f / (2 + f) and
  log m = 2 atanh s = f - s f + s R(s^2), with s and s f as double-doubles: log x comes out as a
  double-double (`_log_parts`), accurate to ~2^-60 relative, which pow needs.
- pow: exp(y log|x|) with the product y log|x| as a double-double; C's special cases.
- sin, cos, tan: x = q pi/2 + r, pi/2 in three 53-bit parts subtracted with FMAs (exact first step) below
  2^28, the bits of 2/pi above (amd_trig_reduction.py, in a branch); Taylor series on |r| <= pi/4.
- tanh, sinh, cosh from expm1/exp (e^(|x| - ln 2) where e^|x| would overflow first); atan from a
  Taylor series on |z| <= tan(pi/8) after the usual reductions (pi/2 and pi/4 as double-doubles);
  asin, acos, atan2, asinh, acosh, atanh, log1p from those as amd_math.py does in float32.
- erf: Taylor series for |x| < 1.5, 1 - erfc above; erfc: 1 - erf below 1/2, above e^-x^2 (x^2 a
  double-double) times erfcx = e^(x^2) erfc(x), from Taylor pieces of width 1/2 up to 4 (coefficients computed
  here, in a constant table) and Laplace's continued fraction beyond.
- lgamma: amd_gamma.py; j0, j1, y0, y1: amd_bessel.py.
- hypot scaled by the larger magnitude; nextafter on the bit pattern (float32 too).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from decimal import Decimal, localcontext

from llvmlite import ir

from . import amd_bessel, amd_gamma, amd_tables, amd_trig_reduction
from .scalar_code import F64, Condition, ScalarFunction, Value, define

I32, I64 = ir.IntType(32), ir.IntType(64)
NAME = "__tile_amd64_"

_LN2 = Decimal("0.69314718055994530941723212145817656807550013436025525412068000949339362196969471560586")
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803")


def _split(value: Decimal, parts: int, keep_bits: int = 53) -> list[float]:
    """`value` as a sum of doubles, each of the first parts - 1 rounded to `keep_bits` significant bits."""
    out = []
    for i in range(parts):
        if i == parts - 1:
            out.append(float(value))
            break
        v = float(value)
        if keep_bits < 53:
            mantissa, exponent = math.frexp(v)
            v = math.ldexp(math.floor(mantissa * 2 ** keep_bits), exponent - keep_bits)
        out.append(v)
        value -= Decimal(v)
    return out


with localcontext() as _context:  # (the thread's own Decimal context stays as it is)
    _context.prec = 80
    _LN2_HI, _LN2_LO = _split(_LN2, 2, keep_bits=42)  # n * ln2_hi is exact for |n| < 2^11
    _LOG2E = float(1 / _LN2)
    _INV_LN2_HI, _INV_LN2_LO = _split(1 / _LN2, 2)
    _LOG10_2_HI, _LOG10_2_LO = _split(_LN2 / Decimal(10).ln(), 2, keep_bits=42)
    _LOG10_E_HI, _LOG10_E_LO = _split(1 / Decimal(10).ln(), 2)
    _PIO2 = _split(_PI / 2, 3)  # 53-bit parts: q * part is exact inside an fma
    _PIO2_HI, _PIO2_LO = _split(_PI / 2, 2)
    _PIO4_HI, _PIO4_LO = _split(_PI / 4, 2)
    _PI_HI, _PI_LO = _split(_PI, 2)
    _TWO_OVER_PI = float(2 / _PI)

_SQRT2 = math.sqrt(2.0)
_TAN_3PI_8, _TAN_PI_8 = 2.414213562373095, 0.4142135623730950

_EXPM1_TAYLOR = [1.0 / math.factorial(k + 1) for k in range(13)]  # (e^r - 1) / r = sum r^k / (k+1)!
_ATANH_TAIL = [2.0 / (2 * k + 3) for k in range(11)]  # R(z) = sum 2 z^(k+1) / (2k + 3)
_SIN_TAYLOR = [(-1) ** (k + 1) / math.factorial(2 * k + 3) for k in range(9)]  # (sin r - r) / r^3
_COS_TAYLOR = [(-1) ** k / math.factorial(2 * k + 4) for k in range(9)]  # (cos r - 1 + r^2/2) / r^4
_ATAN_TAYLOR = [(-1) ** k / (2 * k + 1) for k in range(24)]  # atan z / z in z^2, |z| <= tan(pi/8)
_ERF_TAYLOR = [(-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(40)]  # in x^2, times 2/sqrt(pi)
_ERF_TAYLOR_BELOW = 1.5


# --- helpers -----------------------------------------------------------------------------------
def _poly(f: ScalarFunction, z: Value, coefficients: list[float]) -> Value:
    """sum coefficients[k] z^k by Horner's rule with FMAs."""
    acc = f.c(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        acc = f.call("fma", acc, z, c)
    return acc


def _two_sum(a: Value, b: Value) -> tuple[Value, Value]:
    """s, e with s = fl(a + b) and a + b = s + e exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _two_product(f: ScalarFunction, a: Value, b) -> tuple[Value, Value]:
    p = a * b
    return p, f.call("fma", a, b, -p)


def _bits(f: ScalarFunction, x: Value) -> ir.Value:
    return f.b.bitcast(x.value, I64)


def _from_bits(f: ScalarFunction, bits: ir.Value) -> Value:
    return Value(f, f.b.bitcast(bits, F64))


def _power_of_two(f: ScalarFunction, n: ir.Value) -> Value:
    """2^n for an i32 n in [-1022, 1023]."""
    biased = f.b.add(f.b.sext(n, I64), ir.Constant(I64, 1023))
    return _from_bits(f, f.b.shl(biased, ir.Constant(I64, 52)))


def _scale(f: ScalarFunction, x: Value, n: ir.Value) -> Value:
    """x 2^n for i32 n in [-2044, 2046], in two exact factors (one rounding, also into subnormals)."""
    half = f.b.ashr(n, ir.Constant(I32, 1))
    return x * _power_of_two(f, half) * _power_of_two(f, f.b.sub(n, half))


def _integer(f: ScalarFunction, q: Value) -> ir.Value:
    """i32 of an integral, finite-or-NaN double already within i32 range (NaN -> 0)."""
    return f.b.fptosi(f.select(q == q, q, 0.0).value, I32)


def _to_double(f: ScalarFunction, n: ir.Value) -> Value:
    return Value(f, f.b.sitofp(n, F64))


def _sign_bit(f: ScalarFunction, x: Value) -> Condition:
    return Condition(f, f.b.icmp_signed("<", _bits(f, x), ir.Constant(I64, 0)))


# --- exp family --------------------------------------------------------------------------------
def _exp_reduce(f: ScalarFunction, x: Value, low: Value | None = None) -> tuple[Value, ir.Value]:
    """(e^r - 1, n) with e^(x + low) = 2^n e^r; x clamped where the result over- or underflows anyway."""
    xc = f.select(x > 710.0, 710.0, f.select(x < -746.0, -746.0, x))
    q = f.call("rint", xc * _LOG2E)
    r = f.call("fma", -q, _LN2_LO, f.call("fma", -q, _LN2_HI, xc))
    if low is not None:
        r = r + low
    return r * _poly(f, r, _EXPM1_TAYLOR), _integer(f, q)


def exp(f: ScalarFunction, x: Value) -> Value:
    p, n = _exp_reduce(f, x)
    return _scale(f, 1.0 + p, n)


def exp_with_low_part(f: ScalarFunction, x: Value, low: Value) -> Value:
    p, n = _exp_reduce(f, x, low)
    return _scale(f, 1.0 + p, n)


def exp2(f: ScalarFunction, x: Value) -> Value:
    xc = f.select(x > 1025.0, 1025.0, f.select(x < -1076.0, -1076.0, x))
    q = f.call("rint", xc)
    t = xc - q  # exact
    r = f.call("fma", t, _LN2_HI, t * _LN2_LO)
    return _scale(f, 1.0 + r * _poly(f, r, _EXPM1_TAYLOR), _integer(f, q))


def expm1(f: ScalarFunction, x: Value) -> Value:
    p, n = _exp_reduce(f, x)
    scaled = _scale(f, p, n) + (_scale(f, f.c(1.0), n) - 1.0)
    result = f.select(x > 40.0, _scale(f, 1.0 + p, n), scaled)  # 2^n - 1 is inexact, -1 negligible
    return f.select(x < -40.0, -1.0, f.select(x == 0.0, x, result))  # keeps -0


# --- log family --------------------------------------------------------------------------------
def _log_parts(f: ScalarFunction, x: Value) -> tuple[Value, Value, Value]:
    """(e, mh, ml): x = 2^e m, log m = mh + ml (a double-double), for positive finite x."""
    b = f.b
    tiny = x < 2.2250738585072014e-308
    xs = f.select(tiny, x * 18014398509481984.0, x)  # 2^54
    bits = _bits(f, xs)
    exponent = b.sub(b.trunc(b.lshr(bits, ir.Constant(I64, 52)), I32), ir.Constant(I32, 1023))
    exponent = b.select(tiny.value, b.sub(exponent, ir.Constant(I32, 54)), exponent)
    mantissa = b.or_(b.and_(bits, ir.Constant(I64, (1 << 52) - 1)), ir.Constant(I64, 1023 << 52))
    m = _from_bits(f, mantissa)
    big = m > _SQRT2
    m = f.select(big, m * 0.5, m)
    e = _to_double(f, exponent) + f.select(big, 1.0, 0.0)
    g = m - 1.0  # exact
    d = g + 2.0
    d_lo = g - (d - 2.0)
    s_hi = g / d
    s_lo = (f.call("fma", -s_hi, d, g) - s_hi * d_lo) / d
    z = s_hi * s_hi
    tail = s_hi * (z * _poly(f, z, _ATANH_TAIL))  # s R(s^2), R = 2z/3 + 2z^2/5 + ...
    sf_hi, sf_lo = _two_product(f, s_hi, g)
    mh, err = _two_sum(g, -sf_hi)
    ml = err + (tail - sf_lo - s_lo * g)
    return e, mh, ml


def _log_dd(f: ScalarFunction, x: Value) -> tuple[Value, Value]:
    """log x as a double-double for positive finite x."""
    e, mh, ml = _log_parts(f, x)
    hi, err = _two_sum(e * _LN2_HI, mh)
    lo = err + (ml + e * _LN2_LO)
    return _two_sum(hi, lo)


def _log_special(f: ScalarFunction, x: Value, finite: Value) -> Value:
    """C's log at 0 (-inf), below 0 (NaN), +inf and NaN; `finite` elsewhere."""
    result = f.select(x == math.inf, math.inf, finite)
    result = f.select(x == 0.0, -math.inf, result)
    return f.select(~(x >= 0.0), f.nan, result)


def log(f: ScalarFunction, x: Value) -> Value:
    hi, lo = _log_dd(f, x)
    return _log_special(f, x, hi + lo)


def log2(f: ScalarFunction, x: Value) -> Value:
    e, mh, ml = _log_parts(f, x)
    m2 = mh * _INV_LN2_HI + (ml * _INV_LN2_HI + mh * _INV_LN2_LO)
    return _log_special(f, x, e + m2)


def log10(f: ScalarFunction, x: Value) -> Value:
    e, mh, ml = _log_parts(f, x)
    hi, err = _two_sum(e * _LOG10_2_HI, mh * _LOG10_E_HI)
    lo = err + (f.call("fma", mh, _LOG10_E_HI, -(mh * _LOG10_E_HI)) + ml * _LOG10_E_HI + mh * _LOG10_E_LO
                + e * _LOG10_2_LO)
    return _log_special(f, x, hi + lo)


def log1p(f: ScalarFunction, x: Value) -> Value:
    """log(u) x / (u - 1) with u = 1 + x rounded (Kahan's correction of u's rounding)."""
    u = x + 1.0
    d = u - 1.0
    lu = f.call("log", u)
    corrected = lu * x / d
    result = f.select(d == 0.0, x, f.select(u == math.inf, lu, corrected))
    return f.select(x == -1.0, -math.inf, f.select(x < -1.0, f.nan, result))


def pow_(f: ScalarFunction, x: Value, y: Value) -> Value:
    """exp(y log|x|) with y log|x| as a double-double, and C's special cases."""
    a = f.call("fabs", x)
    hi, lo = _log_dd(f, a)
    hi = f.select(a == math.inf, math.inf, f.select(a == 0.0, -math.inf, hi))
    lo = f.select((a == math.inf) | (a == 0.0), 0.0, lo)
    ph, pl = _two_product(f, y, hi)
    pl = pl + y * lo
    pl = f.select(f.call("fabs", ph) < 1e300, pl, 0.0)  # the error terms of inf are NaN
    magnitude = exp_with_low_part(f, ph, pl)
    y_integral = f.call("trunc", y) == y
    half = y * 0.5
    y_odd = y_integral & (f.call("trunc", half) != half)
    result = f.select(_sign_bit(f, x) & y_odd, -magnitude, magnitude)
    result = f.select((x < 0.0) & ~y_integral, f.nan, result)
    one = (y == 0.0) | (x == 1.0) | ((a == 1.0) & (f.call("fabs", y) == math.inf))
    return f.select(one, 1.0, result)


# --- trigonometric -----------------------------------------------------------------------------
def _quadrant(f: ScalarFunction, x: Value) -> tuple[Value, ir.Value]:
    """(r, q mod 4): x = q pi/2 + r, |r| <~ pi/4 (NaN for inf and NaN)."""
    q = f.call("rint", x * _TWO_OVER_PI)
    q = f.select(f.call("fabs", q) < 2.0 ** 30, q, 0.0)  # (the large path's arguments)
    r = x
    for part in _PIO2:
        r = f.call("fma", -q, part, r)
    quadrant = f.b.and_(f.b.fptosi(f.select(q == q, q, 0.0).value, I32), ir.Constant(I32, 3))
    large = (f.call("fabs", x) >= amd_trig_reduction.LARGE) & (f.call("fabs", x) < math.inf)
    r, quadrant = amd_trig_reduction.branch(
        f, large, lambda: amd_trig_reduction.reduce_large(f, x, _PIO2_HI, _PIO2_LO), (r, quadrant))
    return f.select(f.call("fabs", x) == math.inf, f.nan, r), quadrant


def _sin_cos_reduced(f: ScalarFunction, r: Value) -> tuple[Value, Value]:
    z = r * r
    sin_r = f.call("fma", r * z, _poly(f, z, _SIN_TAYLOR), r)
    cos_r = f.call("fma", z * z, _poly(f, z, _COS_TAYLOR), 1.0 - 0.5 * z)
    return sin_r, cos_r


def _pick(f: ScalarFunction, q: ir.Value, values: list[Value]) -> Value:
    out = values[3]
    for i in (2, 1, 0):
        out = f.select(Condition(f, f.b.icmp_unsigned("==", q, ir.Constant(I32, i))), values[i], out)
    return out


def sin(f: ScalarFunction, x: Value) -> Value:
    r, q = _quadrant(f, x)
    s, c = _sin_cos_reduced(f, r)
    return f.select(x == 0.0, x, _pick(f, q, [s, c, -s, -c]))


def cos(f: ScalarFunction, x: Value) -> Value:
    r, q = _quadrant(f, x)
    s, c = _sin_cos_reduced(f, r)
    return _pick(f, q, [c, -s, -c, s])


def tan(f: ScalarFunction, x: Value) -> Value:
    r, q = _quadrant(f, x)
    s, c = _sin_cos_reduced(f, r)
    even = Condition(f, f.b.icmp_unsigned("==", f.b.and_(q, ir.Constant(I32, 1)), ir.Constant(I32, 0)))
    return f.select(x == 0.0, x, f.select(even, s / c, -c / s))


def atan(f: ScalarFunction, x: Value) -> Value:
    a = f.call("fabs", x)
    big, mid = a > _TAN_3PI_8, a > _TAN_PI_8
    z = f.select(big, -1.0 / a, f.select(mid, (a - 1.0) / (a + 1.0), a))
    offset_hi = f.select(big, _PIO2_HI, f.select(mid, _PIO4_HI, 0.0))
    offset_lo = f.select(big, _PIO2_LO, f.select(mid, _PIO4_LO, 0.0))
    w = z * z
    series = f.call("fma", z * w, _poly(f, w, _ATAN_TAYLOR[1:]), z)
    return f.call("copysign", offset_hi + (series + offset_lo), x)  # NaN stays NaN


def atan2(f: ScalarFunction, y: Value, x: Value) -> Value:
    ay, ax = f.call("fabs", y), f.call("fabs", x)
    y_smaller = ay <= ax
    small, large = f.select(y_smaller, ay, ax), f.select(y_smaller, ax, ay)
    ratio = f.select(large == 0.0, 0.0, small / large)
    ratio = f.select((ay == math.inf) & (ax == math.inf), 1.0, ratio)
    angle = f.call("atan", ratio)
    angle = f.select(y_smaller, angle, (_PIO2_HI - angle) + _PIO2_LO)
    negative_x = (x < 0.0) | ((x == 0.0) & _sign_bit(f, x))
    angle = f.select(negative_x, (_PI_HI - angle) + _PI_LO, angle)
    return f.select(x != x, x + y, f.select(y != y, x + y, f.call("copysign", angle, y)))


def asin(f: ScalarFunction, x: Value) -> Value:
    return f.call("atan2", x, f.call("sqrt", (1.0 - x) * (1.0 + x)))


def acos(f: ScalarFunction, x: Value) -> Value:
    return 2.0 * f.call("atan2", f.call("sqrt", 1.0 - x), f.call("sqrt", 1.0 + x))


# --- hyperbolic --------------------------------------------------------------------------------
def tanh(f: ScalarFunction, x: Value) -> Value:
    a = f.call("fabs", x)
    e = f.call("expm1", 2.0 * a)
    small = e / (e + 2.0)
    large = 1.0 - 2.0 / (f.call("exp", 2.0 * a) + 1.0)
    magnitude = f.select(a < 0.55, small, f.select(a > 22.0, 1.0, large))
    return f.call("copysign", magnitude, x)


def sinh(f: ScalarFunction, x: Value) -> Value:
    a = f.call("fabs", x)
    e = f.call("expm1", a)
    moderate = 0.5 * (e + e / (e + 1.0))
    return f.call("copysign", f.select(a > 700.0, _half_exp(f, a), moderate), x)


def cosh(f: ScalarFunction, x: Value) -> Value:
    a = f.call("fabs", x)
    e = f.call("exp", a)
    return f.select(a > 700.0, _half_exp(f, a), 0.5 * e + 0.5 / e)


def _half_exp(f: ScalarFunction, a: Value) -> Value:
    """e^a / 2 as e^(a - ln 2), finite up to a = 710.47 (a - ln2_hi is exact for a > 1)."""
    return exp_with_low_part(f, a - _LN2_HI, f.c(-_LN2_LO))


def asinh(f: ScalarFunction, x: Value) -> Value:
    a = f.call("fabs", x)
    square = a * a
    small = f.call("log1p", a + square / (1.0 + f.call("sqrt", 1.0 + square)))
    huge = f.call("log", a) + math.log(2.0)
    return f.call("copysign", f.select(a > 1e150, huge, small), x)


def acosh(f: ScalarFunction, x: Value) -> Value:
    t = x - 1.0
    small = f.call("log1p", t + f.call("sqrt", 2.0 * t + t * t))
    huge = f.call("log", x) + math.log(2.0)
    return f.select(x > 1e150, huge, small)


def atanh(f: ScalarFunction, x: Value) -> Value:
    a = f.call("fabs", x)
    return f.call("copysign", 0.5 * f.call("log1p", 2.0 * a / (1.0 - a)), x)


# --- error function, gamma ---------------------------------------------------------------------
@functools.cache
def _erfcx_taylor_table() -> tuple[float, ...]:
    """Taylor coefficients of erfcx = e^(x^2) erfc(x) about the centers of _ERFCX_COUNT pieces of width 1/2
    from 1/2, from erfcx' = 2x erfcx - 2/sqrt(pi) (computed in 70 decimal digits, erfc(c) by its series)."""
    with localcontext() as context:
        context.prec = 70
        return tuple(_erfcx_pieces())


def _erfcx_pieces() -> list[float]:
    table = []
    for piece in range(_ERFCX_COUNT):
        c = Decimal(_ERFCX_FROM) + (Decimal(piece) + Decimal("0.5")) * Decimal(_ERFCX_WIDTH)
        term, series, n = c, Decimal(0), 0  # term = c^(2n+1) / n!
        while term > Decimal(10) ** -72:  # erf(c) = 2/sqrt(pi) sum (-1)^n c^(2n+1) / (n! (2n+1))
            series += (-1) ** n * term / (2 * n + 1)
            n += 1
            term *= c * c / n
        a = [(c * c).exp() * (1 - 2 / _PI.sqrt() * series)]
        a.append(2 * c * a[0] - 2 / _PI.sqrt())
        for n in range(1, _ERFCX_TERMS - 1):
            a.append((2 * c * a[n] + 2 * a[n - 1]) / (n + 1))
        table += [float(v) for v in a]
    return table


_ERFCX_FROM, _ERFCX_WIDTH, _ERFCX_COUNT, _ERFCX_TERMS = 0.5, 0.5, 7, 20  # up to 4; last term < 1e-18 relative
_ERFCX_PIECES = amd_tables.TaylorPieces("erfcx", _ERFCX_FROM + _ERFCX_WIDTH / 2, _ERFCX_WIDTH, _ERFCX_COUNT,
                                        _ERFCX_TERMS, lambda: _erfcx_taylor_table())


def _erfc_positive(f: ScalarFunction, a: Value) -> Value:
    """erfc(a) for a >= 1/2 (NaN stays NaN): e^-a^2 erfcx(a) with a^2 as a double-double; erfcx by Taylor
    pieces below 4, above by Laplace's continued fraction 1 / sqrt(pi) / (a + (1/2) / (a + 1 / (a + (3/2) /
    (a + ...)))), 25 levels from the bottom (enough for 1e-17 from 4 on)."""
    a = f.select(a > 27.5, 27.5, a)  # erfc underflows to 0 from 27.3 (and a^2's error terms of inf are NaN)
    taylor = _ERFCX_PIECES.evaluate(f, f.select(a < _ERFCX_PIECES.end, a, _ERFCX_PIECES.end))
    far = f.select(a < _ERFCX_PIECES.end, _ERFCX_PIECES.end, a)
    _, t = f.loop([f.c(25.0), far], lambda k, t: k > 0.0, lambda k, t: [k - 1.0, far + (0.5 * k) / t])
    scaled = f.select(a < _ERFCX_PIECES.end, taylor, 1.0 / (t * math.sqrt(math.pi)))
    hi, lo = _two_product(f, a, a)
    return exp_with_low_part(f, -hi, -lo) * scaled


def erf(f: ScalarFunction, x: Value) -> Value:
    a = f.call("fabs", x)
    series = x * (2 / math.sqrt(math.pi)) * _poly(f, x * x, _ERF_TAYLOR)
    tail = 1.0 - _erfc_positive(f, f.select(a < _ERF_TAYLOR_BELOW, _ERF_TAYLOR_BELOW, a))
    return f.select(a < _ERF_TAYLOR_BELOW, series, f.select(a != a, x, f.call("copysign", tail, x)))


def erfc(f: ScalarFunction, x: Value) -> Value:
    a = f.call("fabs", x)
    near = 1.0 - a * (2 / math.sqrt(math.pi)) * _poly(f, a * a, _ERF_TAYLOR)
    far = _erfc_positive(f, f.select(a < _ERFCX_FROM, _ERFCX_FROM, a))
    far = f.select(a > 27.3, 0.0, far)
    positive = f.select(a < _ERFCX_FROM, near, far)
    return f.select(x < 0.0, 2.0 - positive, f.select(x != x, x, positive))


def round_(f: ScalarFunction, x: Value) -> Value:
    """Half away from zero, as C's round."""
    t = f.call("trunc", x)
    step = f.select(f.call("fabs", x - t) >= 0.5, f.call("copysign", f.c(1.0), x), 0.0)
    return t + step


def hypot(f: ScalarFunction, x: Value, y: Value) -> Value:
    a, b = f.call("fabs", x), f.call("fabs", y)
    large, small = f.select(a > b, a, b), f.select(a > b, b, a)
    ratio = small / large
    result = f.select(large == 0.0, 0.0, large * f.call("sqrt", 1.0 + ratio * ratio))
    result = f.select((a != a) | (b != b), x + y, result)
    return f.select((a == math.inf) | (b == math.inf), math.inf, result)


def nextafter(f: ScalarFunction, x: Value, y: Value) -> Value:
    """The float next to x toward y, on the bit pattern (any float width)."""
    b = f.b
    width = 64 if f.element == F64 else 32
    integer = ir.IntType(width)
    bits = b.bitcast(x.value, integer)
    grows = Condition(f, b.icmp_unsigned("==", (y > x).value, (x > 0.0).value))  # the magnitude grows
    stepped = b.select(grows.value, b.add(bits, ir.Constant(integer, 1)), b.sub(bits, ir.Constant(integer, 1)))
    result = Value(f, b.bitcast(stepped, f.element))
    tiniest = f.call("copysign", f.c(math.ldexp(1.0, -1074 if width == 64 else -149)), y)
    result = f.select(x == 0.0, tiniest, result)
    result = f.select(x == y, y, result)
    return f.select((x != x) | (y != y), x + y, result)


#: float64 op -> (arity, body)
BODIES: dict[str, tuple[int, Callable[..., Value]]] = {
    "exp": (1, exp), "exp2": (1, exp2), "expm1": (1, expm1), "log": (1, log), "log2": (1, log2),
    "log10": (1, log10), "log1p": (1, log1p), "pow": (2, pow_), "sin": (1, sin), "cos": (1, cos),
    "tan": (1, tan), "atan": (1, atan), "atan2": (2, atan2), "asin": (1, asin), "acos": (1, acos),
    "tanh": (1, tanh), "sinh": (1, sinh), "cosh": (1, cosh), "asinh": (1, asinh), "acosh": (1, acosh),
    "atanh": (1, atanh), "erf": (1, erf), "erfc": (1, erfc), "lgamma": (1, amd_gamma.lgamma), "round": (1, round_), "hypot": (2, hypot),
    "nextafter": (2, nextafter), "j0": (1, amd_bessel.j0), "j1": (1, amd_bessel.j1), "y0": (1, amd_bessel.y0),
    "y1": (1, amd_bessel.y1),
}
#: ops whose body works in float32 too (bit patterns): the others are float64 only
ANY_WIDTH = frozenset({"nextafter"})


def function(module: ir.Module, op: str, element: ir.Type, library: Callable[[str, ir.Type], str]) -> ir.Function:
    """The module's `op` on `element` (float64, or float32 for ANY_WIDTH), defined on first use."""
    arity, body = BODIES[op]
    suffix = "f64" if element == F64 else "f32"
    return define(module, f"{NAME}{op}_{suffix}", element, arity, library, body)
