"""The ops handler: each Inductor op of a node's loop body becomes one line of tile source.

Inductor replays a scheduler node's ``LoopBody`` under ``V.set_ops_handler(TileOps(kernel))``;
each method returns the name of the tile variable holding the result.  An op without a
method raises ``Unsupported`` (the node falls back to Inductor's own kernel).
"""

from __future__ import annotations

from .common import Unsupported, literal, tl_dtype


class TileOps:
    """Ops handler: each Inductor op becomes one line of tile-language source."""

    def __init__(self, kernel):  # a TileKernelSource
        self.k = kernel

    def __getattr__(self, name):
        raise Unsupported(f"op {name}")

    # -- values -------------------------------------------------------------------
    def constant(self, value, dtype):
        return self.k.define(f"tl.full({self.k.scalar_shape}, {literal(value, dtype)}, {tl_dtype(dtype)})")

    def index_expr(self, expr, dtype):
        src = self.k.index(expr)
        if not expr.free_symbols:
            return self.k.define(f"tl.full({self.k.scalar_shape}, {src}, {tl_dtype(dtype)})")
        return self.k.define(f"({src}).to({tl_dtype(dtype)})")

    def to_dtype(self, x, dtype, src_dtype=None, use_compute_types=True):
        return self.k.define(f"{x}.to({tl_dtype(dtype)})")

    # -- memory -------------------------------------------------------------------
    def load(self, name, index):
        return self.k.load(name, index)

    def store(self, name, index, value, mode=None):
        if mode is not None:
            raise Unsupported(f"store mode {mode}")
        self.k.store(name, index, value)

    def store_reduction(self, name, index, value):
        self.k.store(name, index, value, reduced=True)

    def masked(self, mask, body, other):
        self.k.masks.append(mask)
        try:
            result = body()
        finally:
            self.k.masks.pop()
        return self.k.define(f"tl.where({mask}, {result}, {literal(other)})")

    def reduction(self, dtype, src_dtype, reduction_type, value):
        return self.k.reduction(dtype, src_dtype, reduction_type, value)

    # -- arithmetic ---------------------------------------------------------------
    def _binary(op):
        def fn(self, a, b):
            return self.k.define(f"{a} {op} {b}")
        return fn

    add = _binary("+")
    sub = _binary("-")
    mul = _binary("*")
    truediv = _binary("/")
    eq = _binary("==")
    ne = _binary("!=")
    lt = _binary("<")
    le = _binary("<=")
    gt = _binary(">")
    ge = _binary(">=")
    logical_and = _binary("&")
    logical_or = _binary("|")
    bitwise_and = _binary("&")
    bitwise_or = _binary("|")
    bitwise_xor = _binary("^")
    del _binary

    def _math(fn_name):
        def fn(self, x):
            return self.k.define(f"tl.{fn_name}({x})")
        return fn

    exp = _math("exp")
    exp2 = _math("exp2")
    log = _math("log")
    log2 = _math("log2")
    sqrt = _math("sqrt")
    rsqrt = _math("rsqrt")
    sin = _math("sin")
    cos = _math("cos")
    abs = _math("abs")
    floor = _math("floor")
    ceil = _math("ceil")
    erf = _math("erf")
    sigmoid = _math("sigmoid")
    del _math

    def neg(self, x):
        return self.k.define(f"-{x}")

    def reciprocal(self, x):
        return self.k.define(f"1.0 / {x}")

    def square(self, x):
        return self.k.define(f"{x} * {x}")

    def logical_not(self, x):
        return self.k.define(f"{x} == 0")

    def where(self, cond, a, b):
        return self.k.define(f"tl.where({cond}, {a}, {b})")

    def relu(self, x):
        # relu(nan) is nan in torch: compare so that nan keeps x
        return self.k.define(f"tl.where({x} < 0, 0, {x})")

    def maximum(self, a, b):
        # NaN-propagating like torch.maximum
        return self.k.define(f"tl.where(({a} > {b}) | ({a} != {a}), {a}, {b})")

    def minimum(self, a, b):
        return self.k.define(f"tl.where(({a} < {b}) | ({a} != {a}), {a}, {b})")

    def isnan(self, x):
        return self.k.define(f"{x} != {x}")
