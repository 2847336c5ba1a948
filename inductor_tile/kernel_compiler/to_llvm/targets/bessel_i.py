"""The modified Bessel functions of order 0 and 1, plain (`cyl_bessel_i0`, `cyl_bessel_i1`: torch.i0,
torch.special.i1; on the CPU, whose C library has none) and scaled by e^-|x| (`i0e`, `i1e`: on the CPU
and NVIDIA, whose libdevice has none): one scalar function per module, order and scaling, built on the
target's float64 `exp`.

Computed in float64 on a = |x| (I0 is even, I1 odd; float32 arguments are widened and the result
rounded once):
- a < 20: the power series (a/2)^n sum_k (a^2 / 4)^k / (k! (k + n)!), 45 terms (the last below
  1e-17 of the sum);
- above: the asymptotic series e^a / sqrt(2 pi a) sum_k c_k / a^k with c_0 = 1 and
  c_k = -c_(k-1) (4n^2 - (2k - 1)^2) / (8k), 30 terms (at a = 20 they fall below 1e-17 before diverging).
e^a is applied as two halves, so results stay finite as long as I_n is (a up to ~713; torch's i0 overflows
to inf from 709.8, where e^a does); +-inf give +-inf (torch: NaN), NaN stays NaN. Scaled: the power
series times e^-a, the asymptotic series without e^a; +-inf give +-0.
"""

from __future__ import annotations

import math

from collections.abc import Callable

from llvmlite import ir

from .widened import widened

F64 = ir.DoubleType()
NAME = "__tile_bessel_i"
_SWITCH = 20.0
_POWER_TERMS = 45
_ASYMPTOTIC_TERMS = 30


def _name(order: int, scaled: bool) -> str:
    return f"{NAME}{order}{'e' if scaled else ''}"


def _define_f64(module: ir.Module, order: int, scaled: bool, library: Callable[[str], str]) -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(F64, [F64]), f"{_name(order, scaled)}_f64")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def c(v: float) -> ir.Constant:
        return ir.Constant(F64, v)

    def call(name: str, *args: ir.Value) -> ir.Value:
        callee = module.globals.get(name) or ir.Function(module, ir.FunctionType(F64, [F64] * len(args)), name)
        return b.call(callee, list(args))

    x = fn.args[0]
    a = call("llvm.fabs.f64", x)
    quarter_square = b.fmul(c(0.25), b.fmul(a, a))
    term = power = b.fmul(c(0.5), a) if order == 1 else c(1.0)
    for k in range(1, _POWER_TERMS + 1):
        term = b.fmul(term, b.fmul(quarter_square, c(1.0 / (k * (k + order)))))
        power = b.fadd(power, term)
    inverse = b.fdiv(c(1.0), a)
    term = asymptotic = c(1.0)
    for k in range(1, _ASYMPTOTIC_TERMS + 1):
        term = b.fmul(term, b.fmul(inverse, c(-(4 * order * order - (2 * k - 1) ** 2) / (8 * k))))
        asymptotic = b.fadd(asymptotic, term)
    root = call("llvm.sqrt.f64", b.fmul(c(2 * math.pi), a))
    if scaled:
        power = b.fmul(power, call(library("exp"), b.fneg(a)))
        large = b.select(b.fcmp_ordered("==", a, c(math.inf)), c(0.0), b.fdiv(asymptotic, root))
    else:
        half = call(library("exp"), b.fmul(c(0.5), a))
        large = b.select(b.fcmp_ordered("==", a, c(math.inf)), c(math.inf),
                         b.fmul(half, b.fmul(b.fdiv(half, root), asymptotic)))
    result = b.select(b.fcmp_ordered("<", a, c(_SWITCH)), power, large)
    b.ret(call("llvm.copysign.f64", result, x) if order == 1 else result)
    return fn


def bessel_i_function(module: ir.Module, order: int, scaled: bool, element: ir.Type,
                      library: Callable[[str], str]) -> ir.Function:
    """The module's scalar I_order (order 0 or 1; times e^-|x| if `scaled`) on `element` (double or
    float), defined on first use; `library` names the target's float64 `exp`."""
    name = _name(order, scaled)
    f64 = module.globals.get(f"{name}_f64") or _define_f64(module, order, scaled, library)
    if element == F64:
        return f64
    return widened(module, f64, f"{name}_f32")

