"""`cyl_bessel_i0` (torch.i0, the modified Bessel function of order 0) on the CPU, where the C math
library has none: one scalar function per module.

Computed in float64 on |x| (I0 is even; float32 arguments are widened and the result rounded once):
- |x| < 20: the power series sum_k (x^2 / 4)^k / (k!)^2, 45 terms (the last below 1e-17 of the sum);
- above: the asymptotic series e^x / sqrt(2 pi x) sum_k a_k / x^k with a_0 = 1 and
  a_k = a_(k-1) (2k - 1)^2 / (8k), 30 terms (at x = 20 they fall below 1e-17 before diverging).
e^x is applied as two halves, so the result stays finite up to x ~ 713.98 (torch.i0 overflows to inf
from 709.8, where e^x does); +-inf give inf (torch: NaN), NaN stays NaN.
"""

from __future__ import annotations

import math

from llvmlite import ir

F32, F64 = ir.FloatType(), ir.DoubleType()
NAME = "__tile_cpu_bessel_i0"
_SWITCH = 20.0
_POWER_TERMS = 45
_ASYMPTOTIC_TERMS = 30


def _define_f64(module: ir.Module) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(F64, [F64]), f"{NAME}_f64")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def c(v: float) -> ir.Constant:
        return ir.Constant(F64, v)

    def call(name: str, *args: ir.Value) -> ir.Value:
        callee = module.globals.get(name) or ir.Function(module, ir.FunctionType(F64, [F64] * len(args)), name)
        return b.call(callee, list(args))

    a = call("llvm.fabs.f64", fn.args[0])
    quarter_square = b.fmul(c(0.25), b.fmul(a, a))
    term = power = c(1.0)
    for k in range(1, _POWER_TERMS + 1):
        term = b.fmul(term, b.fmul(quarter_square, c(1.0 / (k * k))))
        power = b.fadd(power, term)
    inverse = b.fdiv(c(1.0), a)
    term = asymptotic = c(1.0)
    for k in range(1, _ASYMPTOTIC_TERMS + 1):
        term = b.fmul(term, b.fmul(inverse, c((2 * k - 1) ** 2 / (8 * k))))
        asymptotic = b.fadd(asymptotic, term)
    half = call("exp", b.fmul(c(0.5), a))  # e^x as two halves: finite up to x ~ 713, as I0 is
    scaled = b.fmul(b.fdiv(half, call("llvm.sqrt.f64", b.fmul(c(2 * math.pi), a))), asymptotic)
    large = b.select(b.fcmp_ordered("==", a, c(math.inf)), c(math.inf), b.fmul(half, scaled))
    b.ret(b.select(b.fcmp_ordered("<", a, c(_SWITCH)), power, large))
    return fn


def bessel_i0_function(module: ir.Module, element: ir.Type) -> ir.Function:
    """The module's scalar I0 on `element` (double or float), defined on first use."""
    f64 = module.globals.get(f"{NAME}_f64") or _define_f64(module)
    if element == F64:
        return f64
    return widened(module, f64, f"{NAME}_f32")


def widened(module: ir.Module, f64: ir.Function, name: str) -> ir.Function:
    """`name`(float) = (float) f64((double) x), defined once per module."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    fn = ir.Function(module, ir.FunctionType(F32, [F32]), name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.fptrunc(b.call(f64, [b.fpext(fn.args[0], F64)]), F32))
    return fn
