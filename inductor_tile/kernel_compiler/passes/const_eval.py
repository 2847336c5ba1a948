"""Python semantics of arith/math ops on scalar constants, for the constant-fold pass.

Integers arrive as xdsl stores them (signed two's complement of the type's width) and
results wrap to the width. Cases that are undefined or poison in LLVM (division by zero,
INT_MIN / -1, shifts by >= width, float-to-int out of range) return None: not folded.
Floats are computed in double precision, then rounded once to the result type
(round-to-nearest-even, overflow to infinity), which is exact for + - * /.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from collections.abc import Callable

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import Attribute

from ..ir.types import wrap_int

Constant = IntegerAttr | FloatAttr

# (mantissa bits, minimum normal exponent, maximum exponent) of the narrow float types.
_FLOAT_FORMATS: dict[type, tuple[int, int, int]] = {
    Float16Type: (10, -14, 15),
    BFloat16Type: (7, -126, 127),
    Float32Type: (23, -126, 127),
}


def round_float(x: float, ty: Attribute) -> float:
    """`x` rounded to the nearest value of float type `ty` (ties to even; overflow -> inf)."""
    if type(ty) not in _FLOAT_FORMATS or not math.isfinite(x) or x == 0.0:
        return x
    mantissa_bits, emin, emax = _FLOAT_FORMATS[type(ty)]
    exponent = max(math.frexp(abs(x))[1] - 1, emin)
    ulp = math.ldexp(1.0, exponent - mantissa_bits)
    rounded = round(abs(x) / ulp) * ulp  # exact scaling; round() ties to even
    if rounded >= math.ldexp(1.0, emax + 1):
        rounded = math.inf
    return math.copysign(rounded, x)


def make_int(value: int, ty: IntegerType) -> IntegerAttr:
    return IntegerAttr(wrap_int(value, ty.width.data), ty)


def make_float(value: float, ty: Attribute) -> FloatAttr:
    return FloatAttr(round_float(value, ty), ty)


def unsigned(value: int, width: int) -> int:
    return value & ((1 << width) - 1)


# --- integer binary ops: (lhs, rhs, width) -> result or None ---------------------


def _divsi(a: int, b: int, w: int) -> int | None:
    if b == 0 or (a == -(1 << (w - 1)) and b == -1):
        return None
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _remsi(a: int, b: int, w: int) -> int | None:
    q = _divsi(a, b, w)
    return None if q is None else a - b * q


def _shift(fn: Callable[[int, int, int], int]) -> Callable[[int, int, int], int | None]:
    return lambda a, b, w: fn(a, b, w) if 0 <= unsigned(b, w) < w else None


INT_BINARY: dict[str, Callable[[int, int, int], int | None]] = {
    "arith.addi": lambda a, b, w: a + b,
    "arith.subi": lambda a, b, w: a - b,
    "arith.muli": lambda a, b, w: a * b,
    "arith.divsi": _divsi,
    "arith.remsi": _remsi,
    "arith.divui": lambda a, b, w: unsigned(a, w) // unsigned(b, w) if b else None,
    "arith.remui": lambda a, b, w: unsigned(a, w) % unsigned(b, w) if b else None,
    "arith.andi": lambda a, b, w: a & b,
    "arith.ori": lambda a, b, w: a | b,
    "arith.xori": lambda a, b, w: a ^ b,
    "arith.shli": _shift(lambda a, b, w: a << unsigned(b, w)),
    "arith.shrsi": _shift(lambda a, b, w: a >> unsigned(b, w)),
    "arith.shrui": _shift(lambda a, b, w: unsigned(a, w) >> unsigned(b, w)),
    "arith.maxsi": lambda a, b, w: max(a, b),
    "arith.minsi": lambda a, b, w: min(a, b),
    "arith.maxui": lambda a, b, w: max(unsigned(a, w), unsigned(b, w)),
    "arith.minui": lambda a, b, w: min(unsigned(a, w), unsigned(b, w)),
}

# --- float ops ------------------------------------------------------------------


def _divf(a: float, b: float) -> float:
    if b != 0.0:
        return a / b
    if a == 0.0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _extremum(pick: Callable[[float, float], float], zero: float) -> Callable[[float, float], float]:
    """maximumf/minimumf: NaN if either is NaN; -0.0 < +0.0."""

    def fn(a: float, b: float) -> float:
        if math.isnan(a) or math.isnan(b):
            return math.nan
        if a == b == 0.0:
            return zero if math.copysign(1.0, a) != math.copysign(1.0, b) else a
        return pick(a, b)

    return fn


def _guard(fn: Callable[[float], float], domain_error: float = math.nan) -> Callable[[float], float]:
    """`fn` with IEEE results instead of Python exceptions (overflow -> inf)."""

    def wrapped(x: float) -> float:
        if math.isnan(x):
            return x
        try:
            return fn(x)
        except OverflowError:
            return math.inf
        except ValueError:
            return domain_error

    return wrapped


def _log(fn: Callable[[float], float]) -> Callable[[float], float]:
    return _guard(lambda x: -math.inf if x == 0.0 else (math.inf if x == math.inf else fn(x)))


FLOAT_BINARY: dict[str, Callable[[float, float], float]] = {
    "arith.addf": lambda a, b: a + b,
    "arith.subf": lambda a, b: a - b,
    "arith.mulf": lambda a, b: a * b,
    "arith.divf": _divf,
    "arith.remf": lambda a, b: math.nan if b == 0.0 or math.isinf(a) else math.fmod(a, b),
    "arith.maximumf": _extremum(max, 0.0),
    "arith.minimumf": _extremum(min, -0.0),
    "arith.maxnumf": lambda a, b: b if math.isnan(a) else a if math.isnan(b) else _extremum(max, 0.0)(a, b),
    "arith.minnumf": lambda a, b: b if math.isnan(a) else a if math.isnan(b) else _extremum(min, -0.0)(a, b),
}
FLOAT_UNARY: dict[str, Callable[[float], float]] = {
    "math.exp": _guard(lambda x: 0.0 if x == -math.inf else math.exp(x)),
    "math.exp2": _guard(lambda x: 0.0 if x == -math.inf else 2.0**x),
    "math.log": _log(math.log),
    "math.log2": _log(math.log2),
    "math.sqrt": _guard(math.sqrt),
    "math.rsqrt": _guard(lambda x: math.copysign(math.inf, x) if x == 0.0 else 1.0 / math.sqrt(x)),
    "math.sin": _guard(math.sin),
    "math.cos": _guard(math.cos),
    "math.erf": _guard(math.erf),
    "math.floor": lambda x: x if not math.isfinite(x) else math.copysign(float(math.floor(x)), x),
    "math.ceil": lambda x: x if not math.isfinite(x) else math.copysign(float(math.ceil(x)), x),
    "math.absf": abs,
    "arith.negf": lambda x: -x,
}

def fma(a: float, b: float, c: float, ty: Attribute) -> float | None:
    """a * b + c rounded once to `ty`; None when that cannot be guaranteed (the exact
    value is not a double and `ty` is narrower: rounding twice could differ)."""
    if not all(math.isfinite(x) for x in (a, b, c)):
        return a * b + c if not any(math.isnan(x) for x in (a, b, c)) else math.nan
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        nearest = float(exact)  # correctly rounded to double
    except OverflowError:
        return math.copysign(math.inf, exact)
    if isinstance(ty, Float64Type) or Fraction(nearest) == exact:
        return nearest
    return None


# --- comparisons: predicate -> (lhs, rhs, width) -> bool ------------------------------

CMPI: dict[str, Callable[[int, int, int], bool]] = {
    "eq": lambda a, b, w: a == b,
    "ne": lambda a, b, w: a != b,
    "slt": lambda a, b, w: a < b,
    "sle": lambda a, b, w: a <= b,
    "sgt": lambda a, b, w: a > b,
    "sge": lambda a, b, w: a >= b,
    "ult": lambda a, b, w: unsigned(a, w) < unsigned(b, w),
    "ule": lambda a, b, w: unsigned(a, w) <= unsigned(b, w),
    "ugt": lambda a, b, w: unsigned(a, w) > unsigned(b, w),
    "uge": lambda a, b, w: unsigned(a, w) >= unsigned(b, w),
}
_ORDERED_CMPF: dict[str, Callable[[float, float], bool]] = {
    "eq": lambda a, b: a == b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "ne": lambda a, b: a != b,
}


def cmpf(predicate: str, a: float, b: float) -> bool:
    """`o<op>` is false and `u<op>` true when either side is NaN; also false/true/ord/uno."""
    unordered = math.isnan(a) or math.isnan(b)
    if predicate in ("false", "true"):
        return predicate == "true"
    if predicate in ("ord", "uno"):
        return unordered == (predicate == "uno")
    if unordered:
        return predicate.startswith("u")
    return _ORDERED_CMPF[predicate[1:]](a, b)


# --- casts: (value, source type, result type) -> constant or None -------------------


def _float_to_int(signed: bool) -> Callable[[Constant, Attribute, Attribute], Constant | None]:
    def fn(x: Constant, src: Attribute, dst: Attribute) -> Constant | None:
        assert isinstance(x, FloatAttr) and isinstance(dst, IntegerType)
        v, w = x.value.data, dst.width.data
        if not math.isfinite(v):
            return None
        t = math.trunc(v)
        low, high = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
        return make_int(t, dst) if low <= t <= high else None

    return fn


def _int_to_float(signed: bool) -> Callable[[Constant, Attribute, Attribute], Constant | None]:
    def fn(x: Constant, src: Attribute, dst: Attribute) -> Constant | None:
        assert isinstance(x, IntegerAttr) and isinstance(src, IntegerType)
        v = x.value.data if signed else unsigned(x.value.data, src.width.data)
        if abs(v) > 2**53 and not isinstance(dst, Float64Type):
            return None  # float(v) would round twice
        return make_float(float(v), dst)

    return fn


_BIT_FORMATS: dict[type, str] = {Float16Type: "<e", Float32Type: "<f", Float64Type: "<d"}


def _to_bits(x: Constant, ty: Attribute) -> int | None:
    """The bit pattern of a constant as an unsigned int (None for NaN: payloads are lost)."""
    if isinstance(x, IntegerAttr):
        return unsigned(x.value.data, ty.width.data)
    if math.isnan(x.value.data):
        return None
    if isinstance(ty, BFloat16Type):  # the high half of the f32 with the same value
        return struct.unpack("<I", struct.pack("<f", x.value.data))[0] >> 16
    return int.from_bytes(struct.pack(_BIT_FORMATS[type(ty)], x.value.data), "little")


def _from_bits(bits: int, ty: Attribute) -> Constant | None:
    if isinstance(ty, IntegerType):
        return make_int(bits, ty)
    if isinstance(ty, BFloat16Type):
        value = struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    else:
        value = struct.unpack(_BIT_FORMATS[type(ty)], bits.to_bytes(ty.bitwidth // 8, "little"))[0]
    return None if math.isnan(value) else FloatAttr(value, ty)


def _bitcast(x: Constant, src: Attribute, dst: Attribute) -> Constant | None:
    """Same-width reinterpretation of the bits."""
    bits = _to_bits(x, src)
    return None if bits is None else _from_bits(bits, dst)


CASTS: dict[str, Callable[[Constant, Attribute, Attribute], Constant | None]] = {
    "arith.extsi": lambda x, s, d: make_int(x.value.data, d),
    "arith.extui": lambda x, s, d: make_int(unsigned(x.value.data, s.width.data), d),
    "arith.trunci": lambda x, s, d: make_int(x.value.data, d),
    "arith.extf": lambda x, s, d: FloatAttr(x.value.data, d),
    "arith.truncf": lambda x, s, d: make_float(x.value.data, d),
    "arith.sitofp": _int_to_float(signed=True),
    "arith.uitofp": _int_to_float(signed=False),
    "arith.fptosi": _float_to_int(signed=True),
    "arith.fptoui": _float_to_int(signed=False),
    "arith.bitcast": _bitcast,
}
