"""Math on AMD GPUs without a device library (no ocml, no ROCm install needed to compile).

- Native: LLVM's AMDGPU backend expands the f32 intrinsics exp, exp2, log, log2 and log10
  into the hardware's v_exp/v_log with range reduction, and sqrt/floor/ceil/fabs/trunc/
  rint/copysign for f32 and f64.
- Ours, f32: sin, cos and tan reduce by multiples of pi/2 (three-part constant, FMAs) to
  polynomials on [-pi/4, pi/4] (v_sin/v_cos would lose ~1e-4 at |x| ~ 4096, as RoPE tables
  reach); tanh and erf are the CPU target's polynomials (cpu_math.py); the others are
  built from the native ones with the usual cancellation-free identities: log1p and expm1
  with Kahan's correction, atan as a reduced odd polynomial (asin, acos, atan2 from it),
  sinh/cosh/asinh/acosh/atanh from exp/log1p, pow as exp2(y log2|x|) with C's special
  cases, round half away from zero from trunc.
  Each is an internal function `__tile_amd_<op>_f32` defined in the kernel's module only
  when the kernel calls it (`define_used`); O3 inlines it.
- f64: sqrt/floor/ceil/fabs/trunc/rint/copysign are native; the rest are amd_math64.py's functions,
  defined in the module on first use (`own_function`), as are the special functions that other targets
  build from their library (special_functions.py, digamma, Bessel I, erfinv): here they call
  amd_math64's. float32 versions of functions that exist only in float64 compute in float64 (`widened`).
- `IMPLEMENTED` is what this target has code for (today every math op of the lowering); the backend lets the
  users of any other fall back (Target.implements_math).
"""

from __future__ import annotations

import math
from typing import Callable

from llvmlite import ir

from ..context import LoweringError
from ..target import MathEntry
from . import amd_math64, bessel_i, cpu_erfinv, cpu_math, digamma, special_functions
from .scalar_code import F64

F32, I1, I32 = ir.FloatType(), ir.IntType(1), ir.IntType(32)

_INTRINSICS = {"sqrt": "llvm.sqrt", "floor": "llvm.floor", "ceil": "llvm.ceil", "absf": "llvm.fabs",
               "trunc": "llvm.trunc", "roundeven": "llvm.rint", "copysign": "llvm.copysign"}
_NATIVE_F32 = {"exp": "llvm.exp", "exp2": "llvm.exp2", "log": "llvm.log", "log2": "llvm.log2",
               "log10": "llvm.log10"}
_PREFIX = "__tile_amd_"

# sin and cos on |r| <= pi/4 (Cephes' single-precision coefficients); pi/2 in three parts for the reduction
_SIN_POLY = (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1)
_COS_POLY = (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2)
_PIO2 = (1.5707963705062866, -4.371138828673793e-08, -1.7763568394002505e-15)
# atan(x) = x + x^3 P(x^2) on |x| <= tan(pi/8) (Cephes' single-precision coefficients)
_ATAN_POLY = (8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1)
_TAN_3PI_8, _TAN_PI_8 = 2.414213562373095, 0.4142135623730950


def entry(op: str, type_name: str) -> MathEntry:
    """How math op `op` is computed on `type_name` ("f32" or "f64")."""
    if op in _INTRINSICS:
        return MathEntry(_INTRINSICS[op], True)
    if type_name == "f32" and op in _NATIVE_F32:
        return MathEntry(_NATIVE_F32[op], True)
    if type_name == "f32" and op in F32_BODIES:
        return MathEntry(f"{_PREFIX}{op}_f32", False)
    raise LoweringError(f"{op} ({type_name}) is not available on the AMD (hip) target")


_BESSEL_I = {"cyl_bessel_i0": (0, False), "cyl_bessel_i1": (1, False), "i0e": (0, True), "i1e": (1, True)}


def own_function(module: ir.Module, op: str, element: ir.Type) -> ir.Function | None:
    """The module's scalar function for `op` on `element` where amd_math64.py or a shared special-function
    builder provides it (defined on first use), else None (native intrinsics and the float32 bodies)."""
    library = library_of(module)
    if op in amd_math64.BODIES and (element == F64 or op in amd_math64.ANY_WIDTH):
        return amd_math64.function(module, op, element, library)
    if op in special_functions.SPECIAL:
        return special_functions.function(module, op, element, library)
    if op == "digamma":
        return digamma.digamma_function(module, element, lambda name: library(name, F64))
    if op in _BESSEL_I:
        return bessel_i.bessel_i_function(module, *_BESSEL_I[op], element, lambda name: library(name, F64))
    if op == "erfinv":
        return cpu_erfinv.erfinv_function(module, element)  # calls the C names `define_used` provides
    if op in amd_math64.BODIES and op not in F32_BODIES and op not in _NATIVE_F32:  # erfc, lgamma, hypot
        return _widened(module, amd_math64.function(module, op, F64, library), f"{_PREFIX}{op}_w32")
    return None


def library_of(module: ir.Module):
    """Names of the math the shared builders call (scalar_code's `library`): the module's own functions,
    native intrinsics, or the float32 bodies."""
    def name(op: str, element: ir.Type) -> str:
        suffix = "f32" if element == F32 else "f64"
        if op == "rint":
            return f"llvm.rint.{suffix}"
        own = own_function(module, op, element)
        if own is not None:
            return own.name
        math_entry = entry(op, suffix)
        return f"{math_entry.symbol}.{suffix}" if math_entry.is_intrinsic else math_entry.symbol
    return name


def _widened(module: ir.Module, f64: ir.Function, name: str) -> ir.Function:
    """`name`(float, ...) = (float) f64((double) args...), for any arity."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    fn = ir.Function(module, ir.FunctionType(F32, [F32] * len(f64.args)), name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.fptrunc(b.call(f64, [b.fpext(a, F64) for a in fn.args]), F32))
    return fn


def define_used(module: ir.Module) -> None:
    """Give every function the kernel declared and this module provides its body: the `__tile_amd_*_f32`
    bodies, and the C library's float64 names (`erf`, `exp`...) that cpu_erfinv.py calls."""
    for fn in list(module.functions):
        if fn.is_declaration and fn.name in amd_math64.BODIES and fn.function_type.return_type == F64:
            fn.linkage = "internal"
            b = ir.IRBuilder(fn.append_basic_block("entry"))
            b.ret(b.call(amd_math64.function(module, fn.name, F64, library_of(module)), list(fn.args)))
    for fn in list(module.functions):
        if fn.is_declaration and fn.name.startswith(_PREFIX):
            op = fn.name[len(_PREFIX):].removesuffix("_f32")
            fn.linkage = "internal"
            b = ir.IRBuilder(fn.append_basic_block("entry"))
            b.ret(F32_BODIES[op](b, *fn.args))


# --- helpers -------------------------------------------------------------------------------
def _c(value: float) -> ir.Constant:
    return ir.Constant(F32, value)


def _native(b: ir.IRBuilder, base: str, *args: ir.Value) -> ir.Value:
    name = f"{base}.f32"
    fn = b.module.globals.get(name) or ir.Function(b.module, ir.FunctionType(F32, [F32] * len(args)), name)
    return b.call(fn, list(args))


def _exp(b, x):
    return _native(b, "llvm.exp", x)


def _log(b, x):
    return _native(b, "llvm.log", x)


def _abs(b, x):
    return _native(b, "llvm.fabs", x)


def _sign_of(b, magnitude, x):
    return _native(b, "llvm.copysign", magnitude, x)


def _where(b, condition, then, other):
    return b.select(condition, then, other)


def _lt(b, x, y):
    return b.fcmp_ordered("<", x, y)


def _eq(b, x, y):
    return b.fcmp_ordered("==", x, y)


# --- bodies ----------------------------------------------------------------------------------
def _log1p(b, x):
    """log(1 + x) without losing x's digits: log(u) * x / (u - 1) with u = 1 + x rounded."""
    u = b.fadd(_c(1.0), x)
    d = b.fsub(u, _c(1.0))
    corrected = b.fdiv(b.fmul(_log(b, u), x), d)
    exact = b.or_(_eq(b, d, _c(0.0)), b.fcmp_ordered("==", u, _c(math.inf)))
    return _where(b, exact, _where(b, _eq(b, d, _c(0.0)), x, _log(b, u)), corrected)


def _expm1(b, x):
    """e^x - 1 without cancellation near 0: (u - 1) * x / log(u) with u = e^x rounded."""
    u = _exp(b, x)
    d = b.fsub(u, _c(1.0))
    corrected = b.fdiv(b.fmul(d, x), _log(b, u))
    plain = b.or_(_eq(b, u, _c(1.0)), b.or_(b.fcmp_ordered("==", d, _c(-1.0)), _eq(b, u, _c(math.inf))))
    return _where(b, plain, _where(b, _eq(b, u, _c(1.0)), x, d), corrected)


def _quadrant(b, x):
    """(r, q): x = q pi/2 + r with |r| <= pi/4 (fused multiply-adds keep r exact to ~1e5), q mod 4 as i32."""
    q = _native(b, "llvm.rint", b.fmul(x, _c(2 / math.pi)))
    r = x
    for part in _PIO2:
        r = _native(b, "llvm.fma", b.fneg(q), _c(part), r)
    return r, b.and_(b.fptosi(q, I32), ir.Constant(I32, 3))


def _sin_cos_reduced(b, r):
    z = b.fmul(r, r)
    sin_poly, cos_poly = _c(_SIN_POLY[0]), _c(_COS_POLY[0])
    for c in _SIN_POLY[1:]:
        sin_poly = b.fadd(b.fmul(sin_poly, z), _c(c))
    for c in _COS_POLY[1:]:
        cos_poly = b.fadd(b.fmul(cos_poly, z), _c(c))
    sin_r = b.fadd(r, b.fmul(b.fmul(sin_poly, z), r))
    cos_r = b.fadd(b.fsub(_c(1.0), b.fmul(_c(0.5), z)), b.fmul(b.fmul(cos_poly, z), z))
    return sin_r, cos_r


def _pick(b, q, values):
    out = values[3]
    for i in (2, 1, 0):
        out = _where(b, b.icmp_unsigned("==", q, ir.Constant(I32, i)), values[i], out)
    return out


def _sin(b, x):
    """sin by reduction to [-pi/4, pi/4] (v_sin_f32 scales by 1/2pi in float32: ~1e-4 off at x ~ 4096)."""
    r, q = _quadrant(b, x)
    s, c = _sin_cos_reduced(b, r)
    return _pick(b, q, [s, c, b.fneg(s), b.fneg(c)])


def _cos(b, x):
    r, q = _quadrant(b, x)
    s, c = _sin_cos_reduced(b, r)
    return _pick(b, q, [c, b.fneg(s), b.fneg(c), s])


def _tan(b, x):
    r, q = _quadrant(b, x)
    s, c = _sin_cos_reduced(b, r)
    odd = b.icmp_unsigned("==", b.and_(q, ir.Constant(I32, 1)), ir.Constant(I32, 0))
    return _where(b, odd, b.fdiv(s, c), b.fdiv(b.fneg(c), s))


def _sinh(b, x):
    e = _expm1(b, _abs(b, x))  # sinh|x| = (e + e / (e + 1)) / 2
    magnitude = b.fmul(_c(0.5), b.fadd(e, b.fdiv(e, b.fadd(e, _c(1.0)))))
    return _sign_of(b, magnitude, x)


def _cosh(b, x):
    e = _exp(b, _abs(b, x))
    return b.fadd(b.fmul(_c(0.5), e), b.fdiv(_c(0.5), e))


def _atan(b, x):
    magnitude = _abs(b, x)
    big = b.fcmp_ordered(">", magnitude, _c(_TAN_3PI_8))
    mid = b.fcmp_ordered(">", magnitude, _c(_TAN_PI_8))
    reduced = _where(b, big, b.fdiv(_c(-1.0), magnitude),
                     _where(b, mid, b.fdiv(b.fsub(magnitude, _c(1.0)), b.fadd(magnitude, _c(1.0))), magnitude))
    offset = _where(b, big, _c(math.pi / 2), _where(b, mid, _c(math.pi / 4), _c(0.0)))
    z = b.fmul(reduced, reduced)
    poly = _c(_ATAN_POLY[0])
    for c in _ATAN_POLY[1:]:
        poly = b.fadd(b.fmul(poly, z), _c(c))
    result = b.fadd(offset, b.fadd(b.fmul(b.fmul(poly, z), reduced), reduced))
    return _sign_of(b, result, x)  # NaN stays NaN through the arithmetic


def _atan2(b, y, x):
    ay, ax = _abs(b, y), _abs(b, x)
    y_smaller = b.fcmp_ordered("<=", ay, ax)
    small, large = _where(b, y_smaller, ay, ax), _where(b, y_smaller, ax, ay)
    ratio = _where(b, _eq(b, large, _c(0.0)), _c(0.0), b.fdiv(small, large))
    both_inf = b.and_(_eq(b, ay, _c(math.inf)), _eq(b, ax, _c(math.inf)))
    ratio = _where(b, both_inf, _c(1.0), ratio)
    angle = _atan(b, ratio)
    angle = _where(b, y_smaller, angle, b.fsub(_c(math.pi / 2), angle))  # |y| >= |x|: pi/2 - atan(|x|/|y|)
    negative_x = b.or_(_lt(b, x, _c(0.0)), b.and_(_eq(b, x, _c(0.0)), _sign_bit(b, x)))
    angle = _where(b, negative_x, b.fsub(_c(math.pi), angle), angle)
    result = _sign_of(b, angle, y)
    is_nan = b.fcmp_unordered("uno", x, y)
    return _where(b, is_nan, b.fadd(x, y), result)


def _sign_bit(b, x):
    return b.icmp_signed("<", b.bitcast(x, I32), ir.Constant(I32, 0))


def _asin(b, x):
    return _atan2(b, x, _native(b, "llvm.sqrt", b.fmul(b.fsub(_c(1.0), x), b.fadd(_c(1.0), x))))


def _acos(b, x):
    return b.fmul(_c(2.0), _atan2(b, _native(b, "llvm.sqrt", b.fsub(_c(1.0), x)),
                                  _native(b, "llvm.sqrt", b.fadd(_c(1.0), x))))


def _asinh(b, x):
    a = _abs(b, x)
    square = b.fmul(a, a)  # log1p(a + a^2 / (1 + sqrt(1 + a^2))); log(2a) + ... for huge a
    small = _log1p(b, b.fadd(a, b.fdiv(square, b.fadd(_c(1.0), _native(b, "llvm.sqrt",
                                                                              b.fadd(_c(1.0), square))))))
    huge = b.fadd(_log(b, a), _c(math.log(2.0)))
    return _sign_of(b, _where(b, b.fcmp_ordered(">", a, _c(1e18)), huge, small), x)


def _acosh(b, x):
    t = b.fsub(x, _c(1.0))  # log1p(t + sqrt(2t + t^2)) with t = x - 1; log(2x) for huge x
    small = _log1p(b, b.fadd(t, _native(b, "llvm.sqrt", b.fadd(b.fmul(_c(2.0), t), b.fmul(t, t)))))
    huge = b.fadd(_log(b, x), _c(math.log(2.0)))
    return _where(b, b.fcmp_ordered(">", x, _c(1e18)), huge, small)


def _atanh(b, x):
    a = _abs(b, x)
    return _sign_of(b, b.fmul(_c(0.5), _log1p(b, b.fdiv(b.fmul(_c(2.0), a), b.fsub(_c(1.0), a)))), x)


def _round(b, x):
    """Half away from zero, as C's roundf."""
    t = _native(b, "llvm.trunc", x)
    step = _where(b, b.fcmp_ordered(">=", _abs(b, b.fsub(x, t)), _c(0.5)), _sign_of(b, _c(1.0), x), _c(0.0))
    return b.fadd(t, step)


def _pow(b, x, y):
    """exp2(y log2|x|) with C's powf special cases (sign for odd integer y, NaN for x < 0 and y not integral)."""
    magnitude = _native(b, "llvm.exp2", b.fmul(y, _native(b, "llvm.log2", _abs(b, x))))
    y_integral = _eq(b, _native(b, "llvm.trunc", y), y)
    half = b.fmul(y, _c(0.5))
    y_odd = b.and_(y_integral, b.fcmp_ordered("!=", _native(b, "llvm.trunc", half), half))
    negative = b.fmul(_c(-1.0), magnitude)
    result = _where(b, b.and_(_sign_bit(b, x), y_odd), negative, magnitude)
    result = _where(b, b.and_(_lt(b, x, _c(0.0)), b.not_(y_integral)), _c(math.nan), result)
    one = b.or_(_eq(b, y, _c(0.0)), _eq(b, x, _c(1.0)))
    return _where(b, one, _c(1.0), result)


def _tanh(b, x):
    return cpu_math.tanh_f32(b, x)


def _erf(b, x):
    return cpu_math.erf_f32(b, x)


#: op -> body builder over f32 scalars (one or two arguments)
F32_BODIES: dict[str, Callable[..., ir.Value]] = {
    "sin": _sin, "cos": _cos, "tanh": _tanh, "erf": _erf, "log1p": _log1p, "expm1": _expm1, "tan": _tan, "sinh": _sinh, "cosh": _cosh,
    "atan": _atan, "asin": _asin, "acos": _acos, "asinh": _asinh, "acosh": _acosh, "atanh": _atanh,
    "round": _round, "pow": _pow, "atan2": _atan2,
}

#: the math ops (the lowering's names) this target has code for, in float32 and float64
IMPLEMENTED = frozenset({*_INTRINSICS, *_NATIVE_F32, *F32_BODIES, *amd_math64.BODIES, *special_functions.SPECIAL,
                         *_BESSEL_I, "digamma", "erfinv"})


def implements(op: str) -> bool:
    """Whether `op` (the lowering's name, e.g. "erfc", "j0") compiles on this target."""
    return op in IMPLEMENTED
