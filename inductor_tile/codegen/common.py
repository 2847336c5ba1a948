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
    torch.bool: "tl.int1",
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
    torch.bool: "i1", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32", torch.float64: "fp64",
    torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64", torch.uint8: "u8",
}

_INT32_LIMIT = 2**31 - 1


def tl_dtype(dtype: torch.dtype) -> str:
    if dtype not in _TL_DTYPES:
        raise Unsupported(f"dtype {dtype}")
    return _TL_DTYPES[dtype]


def literal(value, dtype: torch.dtype | None = None) -> str:
    """A Python number as tile source, converted to `dtype` if given (bools are True/False)."""
    if dtype == torch.bool or (dtype is None and isinstance(value, bool)):
        return "True" if value else "False"
    if dtype is not None and not dtype.is_floating_point:
        if isinstance(value, float) and not math.isfinite(value):
            raise Unsupported(f"{value} as {dtype}")
        return str(int(value))
    value = float(value)
    if math.isnan(value):
        return 'float("nan")'
    if math.isinf(value):
        return 'float("inf")' if value > 0 else 'float("-inf")'
    return repr(value)


def _is_identity(e) -> bool:
    return type(e).__name__ == "Identity" and isinstance(e, sympy.Function) and len(e.args) == 1


def _sizes_known(e: sympy.Expr, relation: str) -> bool:
    """Whether ``e > 0`` (``relation`` ">") or ``e >= 0`` (">=") holds for every size the
    compiled graph accepts: the ShapeEnv's value ranges of the size symbols and its guards
    (e.g. a dynamic dim is at least 2; a 3x3 convolution's input at least 3).  Symbols it
    does not know (loop indices) make the answer False."""
    from torch._inductor.virtualized import V

    from torch.utils._sympy.value_ranges import bound_sympy

    sizevars = getattr(V.graph, "sizevars", None)  # outside a compile V.graph is a null handler
    if not e.free_symbols or sizevars is None:  # constants: sympy decided already; no graph: no ranges
        return False
    ranges = sizevars.shape_env.var_to_range
    if e.free_symbols - set(ranges):  # a loop index or another symbol the ShapeEnv does not bound
        return False
    cache = V.graph.__dict__.setdefault("_tile_sizes_known", {})
    if (e, relation) not in cache:
        try:
            known = sizevars.statically_known_gt(e, 0) if relation == ">" else sizevars.statically_known_geq(e, 0)
            if not known:  # interval arithmetic bounds each term alone: s0*s1 - 2*s0 is unknown, s0*(s1 - 2) >= 0
                lower = bound_sympy(sympy.factor(e), ranges).lower
                known = lower > 0 if relation == ">" else lower >= 0
        except Exception:  # noqa: BLE001 - an expression the range analysis cannot evaluate
            known = False
        cache[e, relation] = bool(known)
    return cache[e, relation]


# torch's bitwise functions of integer size expressions (by class name) -> the tile operator
_BITWISE = {"BitwiseFn_bitwise_and": "&", "BitwiseFn_bitwise_or": "|", "BitwiseFn_bitwise_xor": "^"}


def _power_of_two(e) -> bool:
    return isinstance(e, sympy.Integer) and int(e) >= 2 and int(e) & (int(e) - 1) == 0


def index_to_source(expr: sympy.Expr, wide: bool = False) -> str:
    """Integer index arithmetic as tile source.

    Symbols are tile variables (loop indices, indirect indices, sizes); arithmetic is int32
    unless `wide`, where every symbol is widened to int64 first.  Plain negative terms are
    fine in signed arithmetic.  FloorDiv, ModularIndexing and PythonMod round toward minus
    infinity; the language's `//` and `%` truncate (as C does), so a dividend that is not
    provably non-negative gets the floor-rounding form; divisors must be provably positive
    (by sympy's assumptions or, for size expressions such as ``s0 - 2``, by the ShapeEnv).
    TruncToInt/FloorToInt/CeilToInt/RoundToInt of a float size expression (interpolation's scale
    factors, ``round(s0 * 0.4)``) compute it in float64, as the host does, then round.  Bitwise
    and/or/xor of sizes are the tile operators; a power of two to a symbolic exponent is a shift.
    """
    from torch.utils._sympy.functions import (CeilDiv, CeilToInt, FloorDiv, FloorToInt, ModularIndexing,
                                              PowByNatural, PythonMod, RoundToInt, TruncToInt, Where)
    from torch.utils._sympy.functions import Mod as NonnegativeMod

    # Identity only keeps sympy from reordering a term; it hides the term's sign from sympy.
    # Matched by name: torch versions define it in more than one place (torch 2.11's lowering
    # of cat/slice made one that isinstance against torch.utils._sympy's missed)
    expr = expr.replace(_is_identity, lambda e: e.args[0])

    def known_nonnegative(e) -> bool:
        return bool(e.is_nonnegative or (e.is_integer and e.is_positive)) or _sizes_known(e, ">=")

    def positive(e) -> str:
        if (e.is_integer and e.is_positive) or _sizes_known(e, ">"):
            return visit(e)
        if _sizes_known(e, ">="):
            # a size that is 0 only when a dim is empty (x[:, 2:] of a width-2 input); no element
            # is then addressed through it, and the quotient of a masked lane stays defined
            return f"tl.maximum({visit(e)}, 1)"
        raise Unsupported(f"division of an index by a possibly non-positive {e} in {expr}")

    def floor_mod(a, b) -> str:
        """a mod b in [0, b) for b > 0."""
        if known_nonnegative(a):
            return f"({visit(a)} % {positive(b)})"
        a_src, b_src = visit(a), positive(b)
        return f"((({a_src} % {b_src}) + {b_src}) % {b_src})"

    def floor_div(a, b) -> str:
        if known_nonnegative(a):
            return f"({visit(a)} // {positive(b)})"
        # a - (a mod b) is a multiple of b, so truncating division is exact there
        return f"(({visit(a)} - {floor_mod(a, b)}) // {positive(b)})"

    def visit(e) -> str:
        if isinstance(e, sympy.Integer):
            v = int(e)
            if not wide and not -(2**31) <= v < 2**31:
                raise Unsupported(f"index constant {v} does not fit in int32: {expr}")
            return str(v) if v >= 0 else f"({v})"
        if e is sympy.true or e is sympy.false:
            return str(bool(e))
        if isinstance(e, sympy.Symbol):
            return f"{e.name}.to(tl.int64)" if wide else e.name
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(visit(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            if e.args[0] == -1:
                return "(-" + visit(sympy.Mul(*e.args[1:])) + ")"
            return "(" + " * ".join(visit(a) for a in e.args) + ")"
        if isinstance(e, sympy.Pow) and isinstance(e.exp, sympy.Integer) and int(e.exp) > 0:
            return "(" + " * ".join([visit(e.base)] * int(e.exp)) + ")"
        if isinstance(e, FloorDiv):
            return floor_div(*e.args)
        if isinstance(e, CeilDiv):  # ceil(a / b) = -floor(-a / b)
            return f"(-{floor_div(-e.args[0], e.args[1])})"
        if isinstance(e, PowByNatural) and isinstance(e.args[1], sympy.Integer) and int(e.args[1]) > 0:
            return "(" + " * ".join([visit(e.args[0])] * int(e.args[1])) + ")"
        if isinstance(e, PowByNatural) and _power_of_two(e.args[0]):  # 2**k of a size k: a shift
            bits = int(e.args[0]).bit_length() - 1
            return f"(1 << {visit(e.args[1] * bits)})"
        if isinstance(e, ModularIndexing):
            x, div, mod = e.args
            if div == 1:
                return floor_mod(x, mod)
            quotient = FloorDiv(x, div)
            if known_nonnegative(x):  # the quotient is too, whatever sympy makes of it
                return f"({floor_div(x, div)} % {positive(mod)})"
            return floor_mod(quotient, mod)
        # sympy's Mod has Python's sign rule too; torch's Mod is for non-negative dividends
        if isinstance(e, (PythonMod, sympy.Mod, NonnegativeMod)):
            return floor_mod(*e.args)
        if isinstance(e, (TruncToInt, FloorToInt, CeilToInt, RoundToInt)):  # a float size expression made an int
            value = float_index_to_source(e.args[0])  # float64, as the host computes it
            if isinstance(e, RoundToInt):  # Python's round(): halfway cases to even
                value = f"tl.extra.libdevice.nearbyint({value})"
            elif not isinstance(e, TruncToInt):
                value = f"tl.{'floor' if isinstance(e, FloorToInt) else 'ceil'}({value})"
            return f"({value}).to({'tl.int64' if wide else 'tl.int32'})"  # truncates, as C's cast
        if type(e).__name__ in ("Min", "Max"):  # sympy's and torch's own
            fn = "tl.minimum" if type(e).__name__ == "Min" else "tl.maximum"
            args = [visit(a) for a in e.args]
            out = args[0]
            for a in args[1:]:
                out = f"{fn}({out}, {a})"
            return out
        if isinstance(e, sympy.Abs):
            return f"tl.abs({visit(e.args[0])})"
        if type(e).__name__ in _BITWISE and len(e.args) == 2:  # a size's `s0 & 6` (classes made per torch version)
            return f"({visit(e.args[0])} {_BITWISE[type(e).__name__]} {visit(e.args[1])})"
        if _is_identity(e):  # one the replacement above could not reach (inside a relational, say)
            return visit(e.args[0])
        if isinstance(e, Where):
            return f"tl.where({visit(e.args[0])}, {visit(e.args[1])}, {visit(e.args[2])})"
        if isinstance(e, sympy.core.relational.Relational) and e.rel_op in ("<", "<=", ">", ">=", "==", "!="):
            return f"({visit(e.lhs)} {e.rel_op} {visit(e.rhs)})"
        if isinstance(e, (sympy.And, sympy.Or)):
            op = " & " if isinstance(e, sympy.And) else " | "
            return "(" + op.join(visit(a) for a in e.args) + ")"
        raise Unsupported(f"index expression {type(e).__name__}: {expr}")

    return visit(sympy.expand(expr) if not expr.has(FloorDiv, ModularIndexing) else expr)


def float_index_to_source(expr: sympy.Expr) -> str:
    """A float-valued size expression (``FloatTrueDiv(n, n - 1.0)``, ``Max(0.0, s0 * s1)``,
    Bessel's correction of a variance over symbolic sizes) as float64 tile source.

    Eager computes these on the host as Python floats (doubles); integer subterms are exact
    int64 index arithmetic converted once, float arithmetic is float64 like Python's.
    """
    from torch.utils._sympy.functions import FloatPow, FloatTrueDiv, IntTrueDiv, ToFloat, TruncToFloat, TruncToInt

    def visit(e) -> str:
        if e.is_integer and not e.atoms(sympy.Float):
            return f"({index_to_source(e, wide=True)}).to(tl.float64)" if e.free_symbols else f"{float(e)!r}"
        if isinstance(e, (sympy.Float, sympy.Rational)):
            return literal(float(e))
        if isinstance(e, (FloatTrueDiv, IntTrueDiv)):
            return f"({visit(e.args[0])} / {visit(e.args[1])})"
        if isinstance(e, ToFloat):
            return visit(e.args[0])
        if isinstance(e, (TruncToFloat, TruncToInt)):  # toward zero, as C's cast: an int64 round trip
            return f"({visit(e.args[0])}).to(tl.int64).to(tl.float64)"
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(visit(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            return "(" + " * ".join(visit(a) for a in e.args) + ")"
        if isinstance(e, (FloatPow, sympy.Pow)) and isinstance(e.args[1], sympy.Integer) and int(e.args[1]) > 0:
            return "(" + " * ".join([visit(e.args[0])] * int(e.args[1])) + ")"
        if isinstance(e, (sympy.Pow, FloatPow)) and e.args[1] == -1:
            return f"(1.0 / {visit(e.args[0])})"
        if type(e).__name__ in ("Min", "Max"):
            fn = "tl.minimum" if type(e).__name__ == "Min" else "tl.maximum"
            out, *rest = [visit(a) for a in e.args]
            for a in rest:
                out = f"{fn}({out}, {a})"
            return out
        raise Unsupported(f"float index expression {type(e).__name__}: {expr}")

    return visit(expr)


def without_precomputed_sizes(expr):
    """`expr` with Inductor's precomputed size symbols (``ps0``: a size expression the wrapper
    computes once on the host) replaced by their expressions of the graph's size symbols, which
    are what a kernel receives."""
    from torch._inductor.virtualized import V
    from torch.utils._sympy.symbol import SymT, symbol_is_type

    if not any(symbol_is_type(sym, SymT.PRECOMPUTED_SIZE) for sym in expr.free_symbols):
        return expr
    return expr.subs(V.graph.sizevars.inv_precomputed_replacements)
