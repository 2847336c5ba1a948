"""Shared pieces of the codegen: errors, dtype names, literals, index expressions."""

from __future__ import annotations

import math

import sympy
import torch


class Unsupported(Exception):
    """This group cannot become a tile kernel (the message says why)."""


class NeedsBuffer(Exception):
    """A buffer we meant to keep out of memory is read back from memory (its name)."""


_TL_DTYPES = {
    torch.float16: "tl.float16",
    torch.bfloat16: "tl.bfloat16",
    torch.float32: "tl.float32",
    torch.float64: "tl.float64",
    torch.int8: "tl.int8",
    torch.int16: "tl.int16",
    torch.int32: "tl.int32",
    torch.int64: "tl.int64",
    torch.uint8: "tl.uint8",
}

_TYPE_STRINGS = {
    torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32", torch.float64: "fp64",
    torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64", torch.uint8: "u8",
}

_INT32_LIMIT = 2**31 - 1


def tl_dtype(dtype: torch.dtype) -> str:
    if dtype not in _TL_DTYPES:
        raise Unsupported(f"dtype {dtype}")
    return _TL_DTYPES[dtype]


def literal(value, dtype: torch.dtype | None = None) -> str:
    if isinstance(value, bool) or dtype == torch.bool:
        raise Unsupported("bool constant")
    if dtype is not None and not dtype.is_floating_point:
        return str(int(value))
    value = float(value)
    if math.isnan(value):
        return 'float("nan")'
    if math.isinf(value):
        return 'float("inf")' if value > 0 else 'float("-inf")'
    return repr(value)


def index_to_source(expr: sympy.Expr) -> str:
    """Integer index arithmetic over non-negative tile variables, as tile source."""
    from torch.utils._sympy.functions import FloorDiv, ModularIndexing

    def visit(e) -> str:
        if isinstance(e, sympy.Integer):
            if int(e) < 0:
                raise Unsupported(f"negative term in index {expr}")
            return str(int(e))
        if isinstance(e, sympy.Symbol):
            return e.name
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(visit(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            return "(" + " * ".join(visit(a) for a in e.args) + ")"
        if isinstance(e, sympy.Pow) and isinstance(e.exp, sympy.Integer) and int(e.exp) > 0:
            return "(" + " * ".join([visit(e.base)] * int(e.exp)) + ")"
        if isinstance(e, FloorDiv):
            return f"({visit(e.args[0])} // {visit(e.args[1])})"
        if isinstance(e, ModularIndexing):
            x, div, mod = (visit(a) for a in e.args)
            return f"(({x} // {div}) % {mod})" if div != "1" else f"({x} % {mod})"
        raise Unsupported(f"index expression {type(e).__name__}: {expr}")

    return visit(sympy.expand(expr) if not expr.has(FloorDiv, ModularIndexing) else expr)
