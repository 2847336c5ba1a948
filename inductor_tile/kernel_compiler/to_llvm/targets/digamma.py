"""`digamma` (psi, the derivative of lgamma) as one scalar function per module, for targets whose
math library has none (the C library, libdevice).

Computed in float64 (float32 arguments are widened and the result rounded once), from the
target's own `log` and `tan`:
- x < 1/2 by reflection: psi(x) = psi(1 - x) - pi / tan(pi r), r = x - trunc(x) (tan has period
  pi, and r keeps pi r exact for large |x|); negative integers give NaN, +0 gives -inf and
  -0 gives +inf (the sign of the pole's side), as torch does;
- y = x (or 1 - x) moved up to y >= 10 by psi(y) = psi(y + 1) - 1 / y, ten unrolled steps;
- there, the asymptotic series psi(y) = ln y - 1/(2y) - sum B_2k / (2k y^2k) to k = 7
  (the next term is below 1e-16 of the result).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from llvmlite import ir

from .widened import widened

F64 = ir.DoubleType()
NAME = "__tile_digamma"
_SHIFT_TO = 10.0
# B_2k / (2k) for k = 1..7 (Bernoulli numbers 1/6, -1/30, 1/42, -1/30, 5/66, -691/2730, 7/6)
_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)


def _define_f64(module: ir.Module, library: Callable[[str], str]) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(F64, [F64]), f"{NAME}_f64")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    (x,) = fn.args

    def c(v: float) -> ir.Constant:
        return ir.Constant(F64, v)

    def call(name: str, *args: ir.Value) -> ir.Value:
        callee = module.globals.get(name) or ir.Function(module, ir.FunctionType(F64, [F64] * len(args)), name)
        return b.call(callee, list(args))

    reflect = b.fcmp_ordered("<", x, c(0.5))
    y = b.select(reflect, b.fsub(c(1.0), x), x)
    shifted = c(0.0)  # sum of 1 / y over the steps taken
    for _ in range(int(_SHIFT_TO)):
        small = b.fcmp_ordered("<", y, c(_SHIFT_TO))
        shifted = b.select(small, b.fadd(shifted, b.fdiv(c(1.0), y)), shifted)
        y = b.select(small, b.fadd(y, c(1.0)), y)
    inv2 = b.fdiv(c(1.0), b.fmul(y, y))
    series = c(_SERIES[-1])
    for coefficient in reversed(_SERIES[:-1]):
        series = b.fadd(b.fmul(series, inv2), c(coefficient))
    asymptotic = b.fsub(b.fsub(call(library("log"), y), b.fdiv(c(0.5), y)), b.fmul(series, inv2))
    psi = b.fsub(asymptotic, shifted)
    trunc = call("llvm.trunc.f64", x)
    fraction = call("llvm.copysign.f64", b.fsub(x, trunc), x)  # -0 - -0 is +0: keep -0's pole side
    cot_term = b.fdiv(c(math.pi), call(library("tan"), b.fmul(c(math.pi), fraction)))
    result = b.select(reflect, b.fsub(psi, cot_term), psi)
    negative_integer = b.and_(b.fcmp_ordered("<", x, c(0.0)), b.fcmp_ordered("==", x, trunc))
    b.ret(b.select(negative_integer, c(math.nan), result))
    return fn


def digamma_function(module: ir.Module, element: ir.Type, library: Callable[[str], str]) -> ir.Function:
    """The module's scalar digamma on `element` (double or float), defined on first use; `library`
    names the target's float64 `log` and `tan` functions."""
    f64 = module.globals.get(f"{NAME}_f64") or _define_f64(module, library)
    if element == F64:
        return f64
    return widened(module, f64, f"{NAME}_f32")
