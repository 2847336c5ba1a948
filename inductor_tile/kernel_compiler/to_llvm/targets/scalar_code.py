"""A small builder for the scalar special functions a target's math library lacks: one internal LLVM
function per module, op and element type, written as arithmetic on `Value`s (Python operators), `select`
and `loop` (a while loop with phi nodes), with the target's library math (`call`) and LLVM intrinsics.

    def body(f: ScalarFunction, x: Value) -> Value:
        return f.select(x < 0.0, f.nan, f.call("exp", x))

Comparisons are ordered (false on NaN) except `!=`; `&`, `|`, `~` combine them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from llvmlite import ir

F32, F64 = ir.FloatType(), ir.DoubleType()
I1 = ir.IntType(1)
# math the functions may use that every target has as an LLVM intrinsic
_INTRINSICS = frozenset({"sqrt", "fabs", "floor", "trunc", "copysign", "fma"})


class Value:
    """A float of the function being built; Python numbers mix in as constants of its type."""

    def __init__(self, f: ScalarFunction, value: ir.Value):
        self.f, self.value = f, value

    def _other(self, other) -> ir.Value:
        return other.value if isinstance(other, Value) else ir.Constant(self.f.element, float(other))

    def _arith(self, name: str, other, reverse: bool = False) -> Value:
        a, b = self.value, self._other(other)
        return Value(self.f, getattr(self.f.b, name)(*((b, a) if reverse else (a, b))))

    def __add__(self, other): return self._arith("fadd", other)
    def __radd__(self, other): return self._arith("fadd", other, True)
    def __sub__(self, other): return self._arith("fsub", other)
    def __rsub__(self, other): return self._arith("fsub", other, True)
    def __mul__(self, other): return self._arith("fmul", other)
    def __rmul__(self, other): return self._arith("fmul", other, True)
    def __truediv__(self, other): return self._arith("fdiv", other)
    def __rtruediv__(self, other): return self._arith("fdiv", other, True)
    def __neg__(self): return Value(self.f, self.f.b.fneg(self.value))

    def _compare(self, op: str, other, ordered: bool = True) -> Condition:
        compare = self.f.b.fcmp_ordered if ordered else self.f.b.fcmp_unordered
        return Condition(self.f, compare(op, self.value, self._other(other)))

    def __lt__(self, other): return self._compare("<", other)
    def __le__(self, other): return self._compare("<=", other)
    def __gt__(self, other): return self._compare(">", other)
    def __ge__(self, other): return self._compare(">=", other)
    def __eq__(self, other): return self._compare("==", other)  # type: ignore[override]
    def __ne__(self, other): return self._compare("!=", other, ordered=False)  # type: ignore[override]
    __hash__ = None  # type: ignore[assignment]


class Condition:
    """An i1 of the function being built."""

    def __init__(self, f: ScalarFunction, value: ir.Value):
        self.f, self.value = f, value

    def __and__(self, other: Condition) -> Condition: return Condition(self.f, self.f.b.and_(self.value, other.value))
    def __or__(self, other: Condition) -> Condition: return Condition(self.f, self.f.b.or_(self.value, other.value))
    def __invert__(self) -> Condition: return Condition(self.f, self.f.b.not_(self.value))


class ScalarFunction:
    """`element`(element, ...) named `name` in `module`, internal; `library(op, element)` names the
    target's math function `op` ("exp", "log", "sin", ...) on `element`."""

    def __init__(self, module: ir.Module, name: str, element: ir.Type, arity: int,
                 library: Callable[[str, ir.Type], str]):
        self.module, self.element, self.library = module, element, library
        self.fn = ir.Function(module, ir.FunctionType(element, [element] * arity), name)
        self.fn.linkage = "internal"
        self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.args = [Value(self, a) for a in self.fn.args]
        self.nan, self.inf = self.c(math.nan), self.c(math.inf)

    def c(self, v: float) -> Value:
        return Value(self, ir.Constant(self.element, float(v)))

    def call(self, op: str, *args) -> Value:
        """The target's (or LLVM's) math function `op` of `args`."""
        values = [a.value if isinstance(a, Value) else ir.Constant(self.element, float(a)) for a in args]
        if op in _INTRINSICS:
            name = f"llvm.{op}.{'f32' if self.element == F32 else 'f64'}"
        else:
            name = self.library(op, self.element)
        callee = self.module.globals.get(name) or ir.Function(
            self.module, ir.FunctionType(self.element, [self.element] * len(values)), name)
        return Value(self, self.b.call(callee, values))

    def select(self, condition: Condition, a, b) -> Value:
        a = a if isinstance(a, Value) else self.c(a)
        b = b if isinstance(b, Value) else self.c(b)
        return Value(self, self.b.select(condition.value, a.value, b.value))

    def loop(self, initial: Sequence, condition: Callable[..., Condition],
             body: Callable[..., Sequence]) -> list[Value]:
        """`values = initial; while condition(*values): values = body(*values)`; the final values."""
        b = self.b
        before = b.block
        header, inside, after = (self.fn.append_basic_block(n) for n in ("loop", "body", "done"))
        b.branch(header)
        b.position_at_end(header)
        phis = []
        for v in initial:
            v = v if isinstance(v, Value) else self.c(v)
            phi = b.phi(self.element)
            phi.add_incoming(v.value, before)
            phis.append(phi)
        current = [Value(self, p) for p in phis]
        b.cbranch(condition(*current).value, inside, after)
        b.position_at_end(inside)
        updated = body(*current)
        for phi, v in zip(phis, updated):
            phi.add_incoming((v if isinstance(v, Value) else self.c(v)).value, b.block)
        b.branch(header)
        b.position_at_end(after)
        return current

    def ret(self, v: Value) -> ir.Function:
        self.b.ret(v.value)
        return self.fn


def define(module: ir.Module, name: str, element: ir.Type, arity: int, library: Callable[[str, ir.Type], str],
           body: Callable[..., Value]) -> ir.Function:
    """The module's function `name` on `element` built by `body(f, *args)`, defined on first use."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    f = ScalarFunction(module, name, element, arity, library)
    return f.ret(body(f, *f.args))


def widened(module: ir.Module, f64: ir.Function, name: str) -> ir.Function:
    """`name`(float, ...) = (float) f64((double) args...), defined once per module."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    arity = len(f64.args)
    fn = ir.Function(module, ir.FunctionType(F32, [F32] * arity), name)
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    b.ret(b.fptrunc(b.call(f64, [b.fpext(a, F64) for a in fn.args]), F32))
    return fn
