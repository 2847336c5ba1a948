"""`erfinv` on the CPU, where the C math library has none: one scalar function per module.

Computed in float64 (float32 arguments are widened and the result rounded once):
- a first guess x0 of erfinv(|y|): Winitzki's closed form
  sqrt(sqrt(t^2 - L / A) - t) with L = log1p(-y^2), t = 2 / (pi A) + L / 2, A = 0.147
  (relative error below 2e-3), or for |y| < 0.03, where that form cancels, the series
  sqrt(pi) / 2 |y| (1 + pi y^2 / 12);
- two Halley steps on f(x) = erf(x) - |y|: with u = f / f' (f' = 2 / sqrt(pi) e^-x^2),
  x <- x - u / (1 + x u); each step cubes the relative error, so 2e-3 becomes ~1e-16.
  Above |y| = 1/2, f is computed as (1 - |y|) - erfc(x): 1 - |y| is exact there and erfc
  keeps its relative accuracy, so the tail toward |y| -> 1 does not cancel.
The sign of y is put back last (erfinv(-0) = -0); |y| = 1 gives +-inf, |y| > 1 and NaN give NaN.
"""

from __future__ import annotations

import math

from llvmlite import ir

from .widened import widened

F64 = ir.DoubleType()
_A = 0.147
_SMALL = 0.03  # below, the series first guess (Winitzki's form loses digits to cancellation)
_HALLEY_STEPS = 2
NAME = "__tile_cpu_erfinv"


def _declare(module: ir.Module, name: str, arity: int = 1) -> ir.Function:
    return module.globals.get(name) or ir.Function(module, ir.FunctionType(F64, [F64] * arity), name)


def _define_f64(module: ir.Module) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(F64, [F64]), f"{NAME}_f64")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    (y,) = fn.args

    def c(v: float) -> ir.Constant:
        return ir.Constant(F64, v)

    def call(name: str, *args: ir.Value) -> ir.Value:
        return b.call(_declare(module, name, len(args)), list(args))

    a = call("llvm.fabs.f64", y)
    log_term = call("log1p", b.fneg(b.fmul(a, a)))
    t = b.fadd(c(2.0 / (math.pi * _A)), b.fmul(c(0.5), log_term))
    inner = call("llvm.sqrt.f64", b.fsub(b.fmul(t, t), b.fdiv(log_term, c(_A))))
    winitzki = call("llvm.sqrt.f64", b.fsub(inner, t))
    series = b.fmul(b.fmul(a, c(math.sqrt(math.pi) / 2)), b.fadd(c(1.0), b.fmul(c(math.pi / 12), b.fmul(a, a))))
    x = b.select(b.fcmp_ordered("<", a, c(_SMALL)), series, winitzki)
    near_one = b.fcmp_ordered(">", a, c(0.5))
    for _ in range(_HALLEY_STEPS):
        residual = b.select(near_one, b.fsub(b.fsub(c(1.0), a), call("erfc", x)), b.fsub(call("erf", x), a))
        slope = b.fmul(c(2.0 / math.sqrt(math.pi)), call("exp", b.fneg(b.fmul(x, x))))
        u = b.fdiv(residual, slope)
        x = b.fsub(x, b.fdiv(u, b.fadd(c(1.0), b.fmul(x, u))))
    result = b.select(b.fcmp_ordered("==", a, c(1.0)), c(math.inf), x)
    b.ret(call("llvm.copysign.f64", result, y))
    return fn


def erfinv_function(module: ir.Module, element: ir.Type) -> ir.Function:
    """The module's scalar erfinv on `element` (double or float), defined on first use."""
    f64 = module.globals.get(f"{NAME}_f64") or _define_f64(module)
    if element == F64:
        return f64
    return widened(module, f64, f"{NAME}_f32")
