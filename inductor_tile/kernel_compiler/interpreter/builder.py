"""`InterpreterBuilder`: the Builder protocol computed eagerly with torch CPU tensors.

Handles are torch tensors: scalars are 0-d, blocks have the block's shape. Language dtypes
map to torch dtypes (int1 -> bool, uintN -> torch.uintN, pointers -> int64 byte addresses).
Every result has exactly the torch dtype of the op's `ty`. This is the reference the
compiled targets are tested against, so the rules are spelled out:

Integers: every op runs on int64 "bits" (`_bits`) and is truncated back to the type's
width, so arithmetic wraps (two's complement) and never overflows. The op name, not the
type, says how bits are read (divsi vs divui, slt vs ult). torch lacks arithmetic for
uint16/32/64, which this scheme sidesteps: those tensors are only converted and moved.
  Undefined behaviour (LLVM: poison/UB), values chosen here; shifts and float->int match
  PTX, division by zero matches RISC-V (PTX leaves it machine-specific):
  - x / 0 = -1 (all ones; UINT_MAX for divui), x % 0 = x;
  - INT_MIN / -1 = INT_MIN (wraps), INT_MIN % -1 = 0;
  - shifts by >= bit width (amount read as unsigned): shli/shrui -> 0, shrsi -> sign fill;
  - fptosi/fptoui of NaN -> 0, of out-of-range values -> saturate to the target range.
  - extsi/sitofp of int1 true give -1 (LLVM); extui/uitofp give 1.
Floats: fp16/bf16 ops compute in fp32 and round once (exact for + - * / fmod, like GPUs);
fp32 and fp64 compute natively (+ - * / fmod sqrt are correctly rounded; the
transcendentals and rsqrt are torch's, within a few ulp).
Conversions that round (truncf, sitofp, uitofp) are correctly rounded (round to nearest
even) for every source, via round-to-odd where torch would round twice (fp64 -> fp16/bf16,
int64 -> any float). `fma` rounds once (exact product in fp64 for fp32/fp16/bf16; for fp64
an error-free emulation, exact unless an intermediate overflows (then it falls back to
a*b+c) or the product's low part underflows (|a*b| < ~2**-969)). maximumf/minimumf propagate NaN and order -0.0 < +0.0.
Reductions: integer sums wrap; fp16/bf16 sums accumulate in fp32 (torch's summation order);
argmax/argmin give the first index of the extreme value; NaN counts as the extreme for
max/min/argmax/argmin (torch semantics: the first NaN wins).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import Tensor

from inductor_tile.language.builder import ORTHOGONAL_POLYNOMIALS

from .builder_lang import LanguageOpsInterpreter
from .memory import Memory

Ty = object  # a language dtype, pointer_type or block_type (duck-typed: .scalar, .shape)

_TORCH_OF = {
    "int1": torch.bool, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32, "int64": torch.int64,
    "uint8": torch.uint8, "uint16": torch.uint16, "uint32": torch.uint32, "uint64": torch.uint64,
    "fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64,
}
_WIDTH = {torch.bool: 1, torch.int8: 8, torch.int16: 16, torch.int32: 32, torch.int64: 64,
          torch.uint8: 8, torch.uint16: 16, torch.uint32: 32, torch.uint64: 64}
_SIGNED = (torch.int8, torch.int16, torch.int32, torch.int64)
_HALF = (torch.float16, torch.bfloat16)
_MIN64 = -(2**63)


def torch_dtype(ty: Ty) -> torch.dtype:
    """The torch dtype of a language type (pointers are int64 addresses)."""
    s = ty.scalar
    return torch.int64 if s.is_ptr() else _TORCH_OF[s.name]


# --- integer bits ---------------------------------------------------------------
def _bits(x: Tensor) -> Tensor:
    """int64 holding x's value (uint64: its bits); sign/zero extension per x's dtype."""
    return x.view(torch.int64) if x.dtype == torch.uint64 else x.to(torch.int64)


def _sext(v: Tensor, w: int) -> Tensor:
    """Low w bits of v read as signed."""
    if w == 64:
        return v
    sign = 1 << (w - 1)
    return ((v & ((1 << w) - 1)) ^ sign) - sign


def _zext(v: Tensor, w: int) -> Tensor:
    """Low w bits of v read as unsigned (w=64: the bits themselves)."""
    return v if w == 64 else v & ((1 << w) - 1)


def _ukey(v: Tensor, w: int) -> Tensor:
    """int64 whose signed order is the unsigned order of v's low w bits."""
    return v ^ _MIN64 if w == 64 else _zext(v, w)


def _lshr(v: Tensor, s: Tensor | int) -> Tensor:
    """Logical right shift of int64 bits by s in [0, 63]."""
    return (v >> s) & ~((torch.full_like(v, -1) << (63 - s)) << 1)


def _wrap(v: Tensor, dt: torch.dtype) -> Tensor:
    """int64 bits -> dt, keeping the low bits (two's complement truncation)."""
    if dt == torch.bool:
        return (v & 1) != 0
    if dt == torch.uint64:
        return v.view(torch.uint64)
    w = _WIDTH[dt]
    return (_sext(v, w) if dt in _SIGNED else _zext(v, w)).to(dt)


def _as_int64(n: int) -> int:
    """Python int -> the int64 with the same low 64 bits."""
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >> 63 else n


def _divmod(n: Tensor, d: Tensor, w: int, signed: bool) -> tuple[Tensor, Tensor]:
    """C quotient and remainder of w-bit ints given as int64 bits (see module doc for UB)."""
    n, d = (_sext(n, w), _sext(d, w)) if signed else (_zext(n, w), _zext(d, w))
    zero = d == 0
    if signed or w < 64:  # values fit int64; MIN64 / -1 is patched to MIN64 / 1 (same wrapped result)
        d1 = torch.where(zero | ((n == _MIN64) & (d == -1)), 1, d)
        q = torch.div(n, d1, rounding_mode="trunc")
    else:
        d1 = torch.where(zero, 1, d)
        q = _udiv64(n, d1)
    r = n - q * d1
    return torch.where(zero, -1, q), torch.where(zero, n, r)


def _udiv64(n: Tensor, d: Tensor) -> Tensor:
    """Unsigned 64-bit n / d (d != 0) on int64 bits (Hacker's Delight, divlu)."""
    big = d < 0  # d >= 2**63: the quotient is 0 or 1
    q_big = (_ukey(n, 64) >= _ukey(d, 64)).to(torch.int64)
    dd = torch.where(big, 1, d)
    q = torch.div(_lshr(n, 1), dd, rounding_mode="floor") << 1
    q = q + (_ukey(n - q * dd, 64) >= _ukey(dd, 64)).to(torch.int64)
    return torch.where(big, q_big, q)


def _shift_amount(b: Tensor, w: int) -> tuple[Tensor, Tensor]:
    """(amount, valid): b read as unsigned, valid when < w."""
    s = _zext(b, w)
    valid = (s >= 0) & (s < w)
    return torch.where(valid, s, 0), valid


def _shli(a: Tensor, b: Tensor, w: int) -> Tensor:
    s, valid = _shift_amount(b, w)
    return torch.where(valid, a << s, 0)


def _shrsi(a: Tensor, b: Tensor, w: int) -> Tensor:
    s, valid = _shift_amount(b, w)
    return _sext(a, w) >> torch.where(valid, s, 63)


def _shrui(a: Tensor, b: Tensor, w: int) -> Tensor:
    s, valid = _shift_amount(b, w)
    return torch.where(valid, _lshr(_zext(a, w), s), 0)


def _umax(a: Tensor, b: Tensor, w: int) -> Tensor:
    return torch.where(_ukey(a, w) >= _ukey(b, w), a, b)


def _umin(a: Tensor, b: Tensor, w: int) -> Tensor:
    return torch.where(_ukey(a, w) <= _ukey(b, w), a, b)


def _umulhi(a: Tensor, b: Tensor, w: int) -> Tensor:
    """The high w bits of the 2w-bit product of a and b read as unsigned."""
    a, b = _zext(a, w), _zext(b, w)
    if w <= 32:  # the product fits 64 bits; int64 multiplication keeps all of them (wrapping)
        return _lshr(a * b, w)
    low = 0xFFFFFFFF  # 64 bits: schoolbook product of 32-bit halves
    a_lo, a_hi, b_lo, b_hi = a & low, _lshr(a, 32), b & low, _lshr(b, 32)
    lo_lo, hi_lo, lo_hi = a_lo * b_lo, a_hi * b_lo, a_lo * b_hi
    middle = _lshr(lo_lo, 32) + (hi_lo & low) + (lo_hi & low)  # < 3 * 2**32: no overflow
    return a_hi * b_hi + _lshr(hi_lo, 32) + _lshr(lo_hi, 32) + _lshr(middle, 32)


# (a, b, width) on int64 bits -> int64 bits
_INT_BINARY: dict[str, Callable[[Tensor, Tensor, int], Tensor]] = {
    "addi": lambda a, b, w: a + b,
    "subi": lambda a, b, w: a - b,
    "muli": lambda a, b, w: a * b,
    "divsi": lambda a, b, w: _divmod(a, b, w, signed=True)[0],
    "divui": lambda a, b, w: _divmod(a, b, w, signed=False)[0],
    "remsi": lambda a, b, w: _divmod(a, b, w, signed=True)[1],
    "remui": lambda a, b, w: _divmod(a, b, w, signed=False)[1],
    "andi": lambda a, b, w: a & b,
    "ori": lambda a, b, w: a | b,
    "xori": lambda a, b, w: a ^ b,
    "shli": _shli,
    "shrsi": _shrsi,
    "shrui": _shrui,
    "maxsi": lambda a, b, w: torch.maximum(_sext(a, w), _sext(b, w)),
    "minsi": lambda a, b, w: torch.minimum(_sext(a, w), _sext(b, w)),
    "maxui": _umax,
    "minui": _umin,
    "mulhiui": _umulhi,
}


# --- floats -----------------------------------------------------------------------
def _maximumf(a: Tensor, b: Tensor) -> Tensor:
    """NaN-propagating max with -0.0 < +0.0 (llvm.maximum)."""
    return torch.where(a == b, torch.where(torch.signbit(a), b, a), torch.maximum(a, b))


def _minimumf(a: Tensor, b: Tensor) -> Tensor:
    """NaN-propagating min with -0.0 < +0.0 (llvm.minimum)."""
    return torch.where(a == b, torch.where(torch.signbit(a), a, b), torch.minimum(a, b))


def _ignoring_nan(extremum: Callable[[Tensor, Tensor], Tensor], a: Tensor, b: Tensor) -> Tensor:
    """maxnumf/minnumf: the other operand where one is NaN (NaN where both are), else `extremum`."""
    return torch.where(torch.isnan(a), b, torch.where(torch.isnan(b), a, extremum(a, b)))


_FLOAT_BINARY: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "addf": torch.add,
    "subf": torch.sub,
    "mulf": torch.mul,
    "divf": torch.div,
    "divf_rn": torch.div,
    "remf": torch.fmod,
    "maximumf": _maximumf,
    "minimumf": _minimumf,
    "maxnumf": lambda a, b: _ignoring_nan(_maximumf, a, b),
    "minnumf": lambda a, b: _ignoring_nan(_minimumf, a, b),
    "powf": torch.pow,
    "atan2": torch.atan2,
    "copysign": torch.copysign,
    "hypot": torch.hypot,
    "nextafter": torch.nextafter,
    "zeta": torch.special.zeta,
    "igamma": torch.special.gammainc,
    "igammac": torch.special.gammaincc,
    "polygamma": lambda n, x: _polygamma(n, x),
    **{name: getattr(torch.special, name) for name in ORTHOGONAL_POLYNOMIALS},
}


def _polygamma(n: Tensor, x: Tensor) -> Tensor:
    """torch.special.polygamma of a tensor of orders (torch takes one int order)."""
    n, x = torch.broadcast_tensors(n, x)
    out = torch.empty_like(x)
    for order in n.unique().tolist():
        where = n == order
        out[where] = torch.special.polygamma(int(order), x[where])
    return out


def _sqrt(x: Tensor) -> Tensor:
    """Correctly rounded sqrt (numpy uses the hardware instruction; torch's CPU sqrt is off by an ulp)."""
    with np.errstate(invalid="ignore"):
        return torch.as_tensor(np.sqrt(x.numpy()))


def _round_half_away(x: Tensor) -> Tensor:
    """C's round(): to the nearest integer, halfway cases away from zero."""
    t = torch.trunc(x)
    return torch.where((x - t).abs() >= 0.5, t + torch.sign(x), t)


_FLOAT_UNARY: dict[str, Callable[[Tensor], Tensor]] = {
    "exp": torch.exp, "exp2": torch.exp2, "log": torch.log, "log2": torch.log2,
    "sqrt": _sqrt, "rsqrt": torch.rsqrt, "sin": torch.sin, "cos": torch.cos, "erf": torch.erf,
    "floor": torch.floor, "ceil": torch.ceil, "absf": torch.abs, "negf": torch.neg,
    "tanh": torch.tanh, "log1p": torch.log1p, "expm1": torch.expm1, "log10": torch.log10, "tan": torch.tan,
    "sinh": torch.sinh, "cosh": torch.cosh, "asin": torch.asin, "acos": torch.acos, "atan": torch.atan,
    "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh, "trunc": torch.trunc,
    "roundeven": torch.round, "round": _round_half_away, "erfc": torch.erfc, "lgamma": torch.lgamma,
    "digamma": torch.digamma, "erfinv": torch.erfinv, "j0": torch.special.bessel_j0, "j1": torch.special.bessel_j1,
    "y0": torch.special.bessel_y0, "y1": torch.special.bessel_y1, "cyl_bessel_i0": torch.i0,
    "cyl_bessel_i1": torch.special.i1, "i0e": torch.special.i0e, "i1e": torch.special.i1e,
    "erfcx": torch.special.erfcx, "ndtri": torch.special.ndtri, "modified_bessel_k0": torch.special.modified_bessel_k0,
    "modified_bessel_k1": torch.special.modified_bessel_k1,
    "scaled_modified_bessel_k0": torch.special.scaled_modified_bessel_k0,
    "scaled_modified_bessel_k1": torch.special.scaled_modified_bessel_k1,
    "spherical_bessel_j0": torch.special.spherical_bessel_j0, "airy_ai": torch.special.airy_ai,
}


def _compute_dtype(dt: torch.dtype) -> torch.dtype:
    return torch.float32 if dt in _HALF else dt


def _two_sum(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """s = fl(a + b) and the exact error e = a + b - s (fp64)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _round_odd64(s: Tensor, e: Tensor) -> Tensor:
    """The fp64 value s + e (s = fl(s + e)) rounded to odd: truncate, set the last bit if inexact."""
    e = torch.where(torch.isfinite(s), e, 0.0)  # inf/NaN sums are already exact
    bits = s.view(torch.int64)
    away = (e != 0) & (torch.signbit(e) != torch.signbit(s))
    bits = torch.where(away, bits - 1, bits)
    return torch.where(e != 0, bits | 1, bits).view(torch.float64)


def _f64_to(x: Tensor, dt: torch.dtype) -> Tensor:
    """Correctly rounded fp64 -> dt (fp16/bf16 via fp32 rounded to odd, avoiding double rounding)."""
    if dt not in _HALF:
        return x.to(dt)
    r = x.to(torch.float32)
    rd = r.to(torch.float64)
    inexact = (rd != x) & ~torch.isnan(x)
    bits = r.view(torch.int32)
    bits = torch.where(inexact & (rd.abs() > x.abs()), bits - 1, bits)
    return torch.where(inexact, bits | 1, bits).view(torch.float32).to(dt)


def _to_float(x: Tensor, dt: torch.dtype) -> Tensor:
    """Correctly rounded float -> float conversion."""
    return _f64_to(x, dt) if x.dtype == torch.float64 else x.to(dt)


def _pair_to(s: Tensor, e: Tensor, dt: torch.dtype) -> Tensor:
    """The exact fp64 sum s + e (s = fl(s + e)), correctly rounded to dt."""
    return s if dt == torch.float64 else _f64_to(_round_odd64(s, e), dt)


def _int_to_float(v: Tensor, dt: torch.dtype, signed: bool) -> Tensor:
    """Correctly rounded int -> float of int64 value v (signed) or uint64 bits v."""
    hi = (v >> 32) if signed else _lshr(v, 32)
    s, e = _two_sum(hi.to(torch.float64) * 2.0**32, (v & 0xFFFFFFFF).to(torch.float64))
    return _pair_to(s, e, dt)


def _float_to_int(x: Tensor, dt: torch.dtype, signed: bool) -> Tensor:
    """Truncate toward zero; NaN -> 0, out of range -> saturate."""
    w = _WIDTH[dt]
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    t = torch.trunc(x.to(torch.float64))
    t = torch.where(torch.isnan(t), 0.0, t).clamp(float(lo), float(hi))
    top = t >= float(hi)  # float(hi) may round up to 2**63 / 2**64: never convert it
    t = torch.where(top, 0.0, t)
    upper = t >= 2.0**63  # uint64 only
    v = torch.where(upper, t - 2.0**63, t).to(torch.int64) + torch.where(upper, _MIN64, 0)
    return _wrap(torch.where(top, _as_int64(hi), v), dt)


def _fma64(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """Correctly rounded fp64 a*b + c (Boldo-Melquiond emulation with round-to-odd)."""
    def split(x: Tensor) -> tuple[Tensor, Tensor]:
        g = x * 134217729.0  # 2**27 + 1 (Veltkamp)
        h = g - (g - x)
        return h, x - h

    ph = a * b
    (ah, al), (bh, bl) = split(a), split(b)
    pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl
    th, tl = _two_sum(c, ph)
    v = _round_odd64(*_two_sum(tl, pl))
    out = th + v
    return torch.where(torch.isfinite(out) & torch.isfinite(pl), out, a * b + c)


# (x, destination dtype) -> result; the source type is x.dtype
_CASTS: dict[str, Callable[[Tensor, torch.dtype], Tensor]] = {
    "extf": lambda x, dt: x.to(dt),
    "truncf": _to_float,
    "extsi": lambda x, dt: _wrap(_sext(_bits(x), _WIDTH[x.dtype]), dt),
    "extui": lambda x, dt: _wrap(_zext(_bits(x), _WIDTH[x.dtype]), dt),
    "trunci": lambda x, dt: _wrap(_bits(x), dt),
    "sitofp": lambda x, dt: _int_to_float(_sext(_bits(x), _WIDTH[x.dtype]), dt, signed=True),
    "uitofp": lambda x, dt: _int_to_float(_zext(_bits(x), _WIDTH[x.dtype]), dt, signed=False),
    "fptosi": lambda x, dt: _float_to_int(x, dt, signed=True),
    "fptoui": lambda x, dt: _float_to_int(x, dt, signed=False),
    "bitcast": lambda x, dt: x.view(dt),
}

# integer predicates on (a, b, width) int64 bits; float predicates on the floats
_INT_CMP: dict[str, Callable[[Tensor, Tensor, int], Tensor]] = {
    "eq": lambda a, b, w: a == b,
    "ne": lambda a, b, w: a != b,
    "slt": lambda a, b, w: _sext(a, w) < _sext(b, w),
    "sle": lambda a, b, w: _sext(a, w) <= _sext(b, w),
    "sgt": lambda a, b, w: _sext(a, w) > _sext(b, w),
    "sge": lambda a, b, w: _sext(a, w) >= _sext(b, w),
    "ult": lambda a, b, w: _ukey(a, w) < _ukey(b, w),
    "ule": lambda a, b, w: _ukey(a, w) <= _ukey(b, w),
    "ugt": lambda a, b, w: _ukey(a, w) > _ukey(b, w),
    "uge": lambda a, b, w: _ukey(a, w) >= _ukey(b, w),
}
_FLOAT_CMP: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "oeq": torch.eq,  # torch comparisons are false with a NaN operand ("ordered")...
    "une": torch.ne,  # ...and != is true with a NaN operand ("unordered or not equal")
    "olt": torch.lt,
    "ole": torch.le,
    "ogt": torch.gt,
    "oge": torch.ge,
}


# --- reductions ---------------------------------------------------------------------
def _int_key(x: Tensor) -> Tensor:
    """int64 whose signed order is x's order (unsigned types compare unsigned)."""
    w = _WIDTH[x.dtype]
    return _sext(_bits(x), w) if x.dtype in _SIGNED else _ukey(_bits(x), w)


def _from_key(k: Tensor, src: torch.dtype, dt: torch.dtype) -> Tensor:
    return _wrap(k ^ _MIN64 if src == torch.uint64 else k, dt)


def _reduce_sum(x: Tensor, axis: int, dt: torch.dtype) -> Tensor:
    if x.dtype.is_floating_point:
        return _to_float(x.to(_compute_dtype(x.dtype)).sum(axis), dt)
    return _wrap(_bits(x).sum(axis), dt)


def _reduce_extreme(fn: Callable[..., Tensor]) -> Callable[[Tensor, int, torch.dtype], Tensor]:
    def reduce(x: Tensor, axis: int, dt: torch.dtype) -> Tensor:
        if x.dtype.is_floating_point:
            return fn(x, axis).to(dt)
        return _from_key(fn(_int_key(x), axis), x.dtype, dt)
    return reduce


def _reduce_arg(fn: Callable[..., Tensor]) -> Callable[[Tensor, int, torch.dtype], Tensor]:
    def reduce(x: Tensor, axis: int, dt: torch.dtype) -> Tensor:
        return fn(x if x.dtype.is_floating_point else _int_key(x), dim=axis).to(dt)
    return reduce


def _reduce_prod(x: Tensor, axis: int, dt: torch.dtype) -> Tensor:
    """Integer products wrap; fp16/bf16 multiply in fp32 and round once."""
    if x.dtype.is_floating_point:
        return _to_float(x.to(_compute_dtype(x.dtype)).prod(axis), dt)
    return _wrap(_bits(x).prod(axis), dt)


def _reduce_xor_sum(x: Tensor, axis: int, dt: torch.dtype) -> Tensor:
    bits = _bits(x).movedim(axis, 0)
    result = bits[0]
    for row in bits[1:]:
        result = result ^ row
    return _wrap(result, dt)


_REDUCE: dict[str, Callable[[Tensor, int, torch.dtype], Tensor]] = {
    "sum": _reduce_sum,
    "prod": _reduce_prod,
    "xor_sum": _reduce_xor_sum,
    "max": _reduce_extreme(torch.amax),
    "min": _reduce_extreme(torch.amin),
    "argmax": _reduce_arg(torch.argmax),
    "argmin": _reduce_arg(torch.argmin),
}
# Unsigned variants: the tensor's own dtype already orders unsigned values correctly.
_REDUCE.update({"umax": _REDUCE["max"], "umin": _REDUCE["min"], "argumax": _REDUCE["argmax"],
                "argumin": _REDUCE["argmin"]})

# atomic rmw kind -> the binary op combining the old element with the value (xchg just takes the value)
_ATOMIC_COMBINE = {"add": "addi", "fadd": "addf", "max": "maxsi", "min": "minsi", "umax": "maxui", "umin": "minui",
                   "fmax": "maximumf", "fmin": "minimumf", "and": "andi", "or": "ori", "xor": "xori"}


def _same_bits(a: Tensor, b: Tensor) -> Tensor:
    """Bitwise equality (what a compare-and-swap compares: -0.0 != 0.0, a NaN equals itself)."""
    if a.dtype.is_floating_point:
        as_int = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.element_size()]
        a, b = a.view(as_int), b.view(as_int)
    return _bits(a) == _bits(b)


class InterpreterBuilder(LanguageOpsInterpreter):
    """Builder whose handles are torch CPU tensors; see the module docstring for semantics."""

    def __init__(self, memory: Memory):
        self.memory = memory
        self.program_id: tuple[int, int, int] = (0, 0, 0)
        self.grid: tuple[int, int, int] = (1, 1, 1)

    # --- constants and ids --------------------------------------------------
    def get_constant(self, value: int | float | bool, ty: Ty) -> Tensor:
        """0-d tensor of ty's dtype; ints keep their low bits, floats round to nearest even."""
        dt = torch_dtype(ty)
        if dt.is_floating_point:
            return _f64_to(torch.tensor(float(value), dtype=torch.float64), dt)
        return _wrap(torch.tensor(_as_int64(int(value)), dtype=torch.int64), dt)

    def get_null_pointer(self, ty: Ty) -> Tensor:
        return torch.tensor(0, dtype=torch.int64)

    def create_program_id(self, axis: int) -> Tensor:
        return torch.tensor(self.program_id[axis], dtype=torch.int32)

    def create_num_programs(self, axis: int) -> Tensor:
        return torch.tensor(self.grid[axis], dtype=torch.int32)

    # --- shapes -------------------------------------------------------------
    def create_make_range(self, start: int, end: int, ty: Ty) -> Tensor:
        return torch.arange(start, end, dtype=torch.int32)

    def create_splat(self, x: Tensor, ty: Ty) -> Tensor:
        return x.to(torch_dtype(ty)).expand(ty.shape).contiguous()

    def create_broadcast(self, x: Tensor, ty: Ty) -> Tensor:
        return x.expand(ty.shape).contiguous()

    def create_expand_dims(self, x: Tensor, axis: int, ty: Ty) -> Tensor:
        return x.unsqueeze(axis)

    def create_reshape(self, x: Tensor, ty: Ty) -> Tensor:
        return x.reshape(ty.shape).contiguous()

    # --- arithmetic ---------------------------------------------------------
    def create_binary(self, op: str, lhs: Tensor, rhs: Tensor, ty: Ty) -> Tensor:
        dt = torch_dtype(ty)
        if op in _INT_BINARY:
            return _wrap(_INT_BINARY[op](_bits(lhs), _bits(rhs), _WIDTH[dt]), dt)
        ct = _compute_dtype(dt)
        return _to_float(_FLOAT_BINARY[op](lhs.to(ct), rhs.to(ct)), dt)

    def create_cmp(self, predicate: str, lhs: Tensor, rhs: Tensor, ty: Ty) -> Tensor:
        if predicate in _INT_CMP:
            return _INT_CMP[predicate](_bits(lhs), _bits(rhs), _WIDTH[lhs.dtype])
        return _FLOAT_CMP[predicate](lhs, rhs)

    def create_select(self, cond: Tensor, a: Tensor, b: Tensor, ty: Ty) -> Tensor:
        return torch.where(cond, a, b).to(torch_dtype(ty))

    def create_unary(self, op: str, x: Tensor, ty: Ty) -> Tensor:
        dt = torch_dtype(ty)
        if op == "absi":  # abs(INT_MIN) wraps to INT_MIN
            w = _WIDTH[dt]
            return _wrap(torch.abs(_sext(_bits(x), w)), dt)
        return _to_float(_FLOAT_UNARY[op](x.to(_compute_dtype(dt))), dt)

    def create_fma(self, a: Tensor, b: Tensor, c: Tensor, ty: Ty) -> Tensor:
        dt = torch_dtype(ty)
        a, b, c = (t.to(torch.float64) for t in (a, b, c))
        if dt == torch.float64:
            return _fma64(a, b, c)
        return _pair_to(*_two_sum(a * b, c), dt)  # the product of two fp32 is exact in fp64

    def create_cast(self, op: str, x: Tensor, ty: Ty) -> Tensor:
        return _CASTS[op](x, torch_dtype(ty))

    # --- memory -------------------------------------------------------------
    def create_addptr(self, ptr: Tensor, offset: Tensor, ty: Ty) -> Tensor:
        """ptr + offset * sizeof(element); the offset is sign/zero-extended per its dtype."""
        return ptr + _bits(offset) * ty.scalar.element_ty.itemsize

    def create_load(self, ptr: Tensor, mask: Tensor | None, other: Tensor | None, ty: Ty, cache: str = "",
                    evict: str = "", volatile: bool = False) -> Tensor:
        """Cache hints change no value: the interpreter ignores them."""
        dt = torch_dtype(ty)
        value = self.memory.load(ptr, mask, dt)
        if mask is not None and other is not None:
            value = torch.where(mask, value, other.to(dt))
        return value

    def create_store(self, ptr: Tensor, value: Tensor, mask: Tensor | None, cache: str = "",
                     evict: str = "") -> None:
        self.memory.store(ptr, value, mask)

    def create_atomic_rmw(self, kind: str, ptr: Tensor, value: Tensor, mask: Tensor | None, sem: str, scope: str,
                          ty: Ty) -> Tensor:
        """Lanes update memory one at a time in row-major order (see `Memory.atomic_update`)."""
        values = torch.broadcast_to(value, ptr.shape).reshape(-1)

        def update(old: Tensor, lanes: Tensor) -> Tensor:
            if kind == "xchg":
                return values[lanes]
            return self.create_binary(_ATOMIC_COMBINE[kind], old, values[lanes], ty)

        return self.memory.atomic_update(ptr, mask, torch_dtype(ty), update)

    def create_atomic_cas(self, ptr: Tensor, cmp: Tensor, value: Tensor, sem: str, scope: str, ty: Ty) -> Tensor:
        cmps = torch.broadcast_to(cmp, ptr.shape).reshape(-1)
        values = torch.broadcast_to(value, ptr.shape).reshape(-1)

        def update(old: Tensor, lanes: Tensor) -> Tensor:
            return torch.where(_same_bits(old, cmps[lanes]), values[lanes], old)

        return self.memory.atomic_update(ptr, None, torch_dtype(ty), update)

    # --- matrix products ----------------------------------------------------
    def create_dot(self, a: Tensor, b: Tensor, acc: Tensor, input_precision: str, ty: Ty) -> Tensor:
        """a @ b + acc, computed in the accumulator's width: fp16/bf16 in fp32, fp32 with its operands rounded as
        `input_precision` says (tf32 like a GPU's tensor cores: `dot_precision.py`), fp64 in fp64, int8 in int64
        wrapped to int32; then rounded once to the result type."""
        out = torch_dtype(ty)
        if a.dtype == torch.float32:
            from .dot_precision import fp32_dot

            return fp32_dot(a, b, acc.to(torch.float32), input_precision).to(out)
        wide = torch.int64 if not a.dtype.is_floating_point else torch.float64 if out == torch.float64 else torch.float32
        product = torch.matmul(a.to(wide), b.to(wide)) + acc.to(wide)
        return product.to(out)

    # --- reductions and hints -----------------------------------------------
    def create_reduce(self, x: Tensor, axis: int, kind: str, ty: Ty) -> Tensor:
        return _REDUCE[kind](x, axis, torch_dtype(ty))

    def create_hint(self, x: Tensor, kind: str, values: tuple[int, ...]) -> Tensor:
        return x
