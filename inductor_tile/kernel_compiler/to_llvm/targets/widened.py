"""float32 special functions computed by their float64 versions (erfinv, digamma, Bessel I): one
definition per module, rounding once at the end."""

from __future__ import annotations

from llvmlite import ir

F32, F64 = ir.FloatType(), ir.DoubleType()


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
