"""Tile-language source for one fused group of Inductor scheduler nodes.

Each scheduler node carries a ``LoopBody``: Inductor's define-by-run loop IR.  Calling
it with index symbols under an ops handler replays its ``ops.load`` / ``ops.add`` /
``ops.reduction`` / ``ops.store`` calls; ``TileOps`` below answers each call with one
line of tile-language Python and the name of the variable that holds the result.

Two kernel shapes:

- pointwise: ``xindex`` is a 1-D tile of XBLOCK flat positions over the group's
  iteration space; every node's loop variables are decoded from it (row-major).
- reduction: ``xindex`` is [XBLOCK, 1] (output rows), ``rindex`` is [1, RBLOCK]
  (reduced elements).  If the reduction fits one block (``config.max_rblock``) the
  whole group runs straight-line ("persistent"); otherwise every node that iterates
  over the reduced dimension gets its own loop over RBLOCK chunks.

Anything this module cannot express raises ``Unsupported``; the scheduling class then
hands the node to Inductor's own CPU kernels, so a gap never turns into a wrong result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import sympy
import torch

from .. import config


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


def _literal(value, dtype: torch.dtype | None = None) -> str:
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


def _static_int(value) -> int:
    try:
        return int(value)
    except TypeError:
        raise Unsupported(f"symbolic size {value}") from None


@dataclass
class NodePlan:
    """One scheduler node inside a kernel: which loop variables its body gets."""

    snode: object
    kind: str  # "pointwise" (over the x dims), "rpointwise" (over x and r dims), "reduction"
    xsizes: list[int]
    rsizes: list[int]


@dataclass
class GroupPlan:
    kind: str  # "pointwise" or "reduction"
    xsizes: list[int]
    rsizes: list[int]
    nodes: list[NodePlan] = field(default_factory=list)

    @property
    def xnumel(self) -> int:
        return math.prod(self.xsizes)

    @property
    def rnumel(self) -> int:
        return math.prod(self.rsizes)


def plan_group(snodes) -> GroupPlan:
    """Decide how the nodes of one fused group share a kernel, or raise Unsupported.

    Pointwise groups need every node over the same loop sizes.  Reduction groups need
    every reduction over the same (sizes, reduction sizes); pointwise nodes in them
    iterate over the reduction's output sizes or over output + reduced sizes.
    """
    ranges = []
    for snode in snodes:
        if not hasattr(snode, "_body") or snode.is_template() or snode.is_extern():
            raise Unsupported(f"{type(snode).__name__} is not a loop node")
        sizes, rsizes = snode.get_ranges()
        ranges.append(([_static_int(s) for s in sizes], [_static_int(s) for s in rsizes], snode.is_reduction()))
    reductions = [(x, r) for x, r, is_red in ranges if is_red]
    if not reductions:
        first = ranges[0][0]
        if any(x != first for x, _, _ in ranges):
            raise Unsupported("pointwise nodes over different loop sizes")
        plan = GroupPlan("pointwise", first, [])
        plan.nodes = [NodePlan(s, "pointwise", first, []) for s in snodes]
        return plan
    xs, rs = reductions[0]
    if any((x, r) != (xs, rs) for x, r in reductions):
        raise Unsupported("reductions over different loop sizes")
    plan = GroupPlan("reduction", xs, rs)
    for snode, (x, r, is_red) in zip(snodes, ranges):
        if is_red:
            plan.nodes.append(NodePlan(snode, "reduction", xs, rs))
        elif x == xs and not r:
            plan.nodes.append(NodePlan(snode, "pointwise", xs, []))
        elif x == xs + rs and not r and rs:
            plan.nodes.append(NodePlan(snode, "rpointwise", xs, rs))
        else:
            raise Unsupported("pointwise node does not match the reduction's loops")
    return plan


class TileOps:
    """Ops handler: each Inductor op becomes one line of tile-language source."""

    def __init__(self, kernel: "TileKernelSource"):
        self.k = kernel

    def __getattr__(self, name):
        raise Unsupported(f"op {name}")

    # -- values -------------------------------------------------------------------
    def constant(self, value, dtype):
        return self.k.define(f"tl.full({self.k.scalar_shape}, {_literal(value, dtype)}, {tl_dtype(dtype)})")

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
        return self.k.define(f"tl.where({mask}, {result}, {_literal(other)})")

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


_REDUCE_INIT = {"sum": 0, "max": float("-inf"), "min": float("inf")}


class TileKernelSource:
    """Builds the source of one kernel for a planned group of nodes."""

    xsyms: list = []
    rsyms: list = []

    def __init__(self, plan: GroupPlan, name: str, elide: set[str] = frozenset(), max_elems: int | None = None):
        self.plan = plan
        self.max_elems = max_elems  # None: config's block sizes; else a cap (kernels with gathers)
        self.gather = False  # some load/store is not contiguous along the tile's fast dimension
        self.elide = set(elide)  # buffers read only inside this kernel: not stored
        self.elided: set[str] = set()
        self.name = name
        self.lines: list[str] = []
        self.indent = 1
        self.cse: dict[str, str] = {}
        self.stored: dict[tuple[str, str], str] = {}
        self.written: dict[str, set[str]] = {}
        self.masks: list[str] = []
        self.args: dict[str, str] = {}  # buffer name -> kernel argument name
        self.in_args: list[str] = []
        self.out_args: list[str] = []
        self.counter = 0
        self.current: NodePlan | None = None
        self.persistent = True
        self.rblock = 1
        self.xblock = 1

    # -- small helpers ------------------------------------------------------------
    @property
    def two_d(self) -> bool:
        return self.plan.kind == "reduction"

    @property
    def scalar_shape(self) -> str:
        return "[1, 1]" if self.two_d else "[1]"

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def define(self, expr: str) -> str:
        if expr in self.cse:
            return self.cse[expr]
        var = f"tmp{self.counter}"
        self.counter += 1
        self.emit(f"{var} = {expr}")
        self.cse[expr] = var
        return var

    def index(self, expr) -> str:
        return index_to_source(sympy.sympify(expr))

    def _note_access(self, index) -> None:
        """Record whether an access is a gather (strided or broadcast along the fast dim).

        The CPU target turns a gather into one vector gather over the whole tile, whose
        LLVM compile time grows steeply with the tile size: such kernels get small tiles.
        """
        index = sympy.sympify(index)
        if self.two_d:
            fast, syms, sizes = self.rsyms, self.xsyms + self.rsyms, self.plan.xsizes + self.plan.rsizes
            if index.free_symbols <= set(fast):  # a [1, RBLOCK] row, shared by all rows
                syms, sizes = self.rsyms, self.plan.rsizes
        else:
            fast, syms, sizes = self.xsyms, self.xsyms, self.plan.xsizes
        if not index.free_symbols & set(fast):
            return
        flat = sum(sym * math.prod(sizes[i + 1:]) for i, sym in enumerate(syms))
        if sympy.expand(index - flat).free_symbols:
            self.gather = True

    def mask(self, reduced: bool = False, index=None) -> str:
        if not reduced and self.current is not None and self.current.kind != "pointwise":
            used = sympy.sympify(index).free_symbols if index is not None else None
            if used is not None and used and used <= set(self.rsyms):
                base = "rmask"  # the access is one [1, RBLOCK] row: no need to widen it
            elif used is not None and used <= set(self.xsyms):
                base = "xmask"
            else:
                base = "xmask & rmask"
        else:
            base = "xmask"
        return " & ".join([base] + [f"({m})" for m in self.masks])

    @staticmethod
    def _real(name: str) -> str:
        from torch._inductor.virtualized import V

        return V.graph.scheduler.mutation_real_name.get(name, name)

    def _arg(self, real: str, out: bool) -> str:
        from torch._inductor.virtualized import V

        if real not in self.args:
            dtype = V.graph.get_dtype(real)
            tl_dtype(dtype)  # raises on dtypes we cannot pass
            self.args[real] = f"out_ptr{len(self.out_args)}" if out else f"in_ptr{len(self.in_args)}"
            (self.out_args if out else self.in_args).append(real)
        elif out and real in self.in_args:
            raise Unsupported(f"buffer {real} is both read and written")
        return self.args[real]

    # -- memory -------------------------------------------------------------------
    def load(self, name: str, index) -> str:
        name = self._real(name)
        idx = self.index(index)
        self._note_access(index)
        key = (name, idx)
        if key in self.stored and not self.masks:
            return self.stored[key]
        if name in self.elide:
            raise NeedsBuffer(name)
        if name in self.written:
            if idx not in self.written[name]:
                raise Unsupported(f"{name} is read at another index than it is written")
            ptr = self.args[name]
        else:
            ptr = self._arg(name, out=False)
        return self.define(f"tl.load({ptr} + {idx}, mask={self.mask(index=index)}, other=0)")

    def store(self, name: str, index, value: str, reduced: bool = False) -> None:
        if self.masks:
            raise Unsupported("store inside a masked block")
        name = self._real(name)
        idx = self.index(index)
        if not reduced:
            self._note_access(index)
        if name in self.elide:
            self.elided.add(name)
        else:
            ptr = self._arg(name, out=True)
            self.emit(f"tl.store({ptr} + {idx}, {value}, mask={self.mask(reduced)})")
        self.stored[(name, idx)] = value
        self.written.setdefault(name, set()).add(idx)

    def reduction(self, dtype, src_dtype, reduction_type, value):
        if reduction_type == "welford_reduce" and self.persistent and dtype.is_floating_point:
            return self._welford(dtype, src_dtype, value)
        if reduction_type not in _REDUCE_INIT:
            raise Unsupported(f"reduction {reduction_type}" + ("" if self.persistent else " in a looped reduction"))
        if dtype == torch.bool or src_dtype == torch.bool:
            raise Unsupported("bool reduction")
        tdt = tl_dtype(dtype)
        init = _REDUCE_INIT[reduction_type]
        if not dtype.is_floating_point and reduction_type != "sum":
            info = torch.iinfo(dtype)
            init = info.min if reduction_type == "max" else info.max
        v = self.define(f"{value}.to({tdt})") if dtype != src_dtype else value
        fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}[reduction_type]
        init_src = _literal(init, dtype)
        if self.persistent:
            masked = self.define(f"tl.where(rmask & xmask, {v}, {init_src})")
            return self.define(f"{fn}({masked}, 1)[:, None]")
        # looped: accumulate elementwise into an [XBLOCK, RBLOCK] accumulator
        acc = f"acc{self.counter}"
        self.counter += 1
        self.acc_inits.append(f"{acc} = tl.full([XBLOCK, RBLOCK], {init_src}, {tdt})")
        masked = self.define(f"tl.where(rmask & xmask, {v}, {init_src})")
        if reduction_type == "sum":
            self.emit(f"{acc} = {acc} + {masked}")
        else:
            op = ">" if reduction_type == "max" else "<"
            self.emit(f"{acc} = tl.where(({acc} {op} {masked}) | ({acc} != {acc}), {acc}, {masked})")
        self.acc_finals.append(f"{fn}({acc}, 1)[:, None]")
        return ("__acc__", len(self.acc_finals) - 1)

    def _welford(self, dtype, src_dtype, value):
        """(mean, m2, count) of each row, two-pass inside the block (persistent only)."""
        tdt = tl_dtype(dtype)
        v = self.define(f"{value}.to({tdt})") if dtype != src_dtype else value
        n = self.plan.rnumel
        total = self.define(f"tl.sum(tl.where(rmask & xmask, {v}, 0.0), 1)[:, None]")
        mean = self.define(f"{total} / {float(n)!r}")
        dev = self.define(f"tl.where(rmask & xmask, {v} - {mean}, 0.0)")
        m2 = self.define(f"tl.sum({dev} * {dev}, 1)[:, None]")
        weight = self.define(f"tl.full([1, 1], {float(n)!r}, {tdt})")
        return (mean, m2, weight)

    # -- whole kernel -------------------------------------------------------------
    def _decode(self, flat: str, symbols: list[str], sizes: list[int]) -> None:
        """Row-major decode of a flat tile index into loop variables."""
        strides = [math.prod(sizes[i + 1:]) for i in range(len(sizes))]
        for i, (sym, size, st) in enumerate(zip(symbols, sizes, strides)):
            expr = flat if st == 1 else f"({flat} // {st})"
            if i > 0:
                expr = f"({expr} % {size})"
            self.emit(f"{sym} = {expr}")

    def generate(self) -> str:
        from torch._inductor.virtualized import V

        plan = self.plan
        xnumel, rnumel = plan.xnumel, plan.rnumel
        if xnumel * max(rnumel, 1) > _INT32_LIMIT:
            raise Unsupported("more than 2**31 elements (int32 indexing)")
        self.xsyms = xsyms = [sympy.Symbol(f"x{i}", integer=True, nonnegative=True) for i in range(len(plan.xsizes))]
        self.rsyms = rsyms = [sympy.Symbol(f"r{i}", integer=True, nonnegative=True) for i in range(len(plan.rsizes))]
        pow2 = lambda n: 1 if n <= 1 else 1 << (n - 1).bit_length()  # noqa: E731
        if plan.kind == "pointwise":
            self.xblock = min(self.max_elems or config.pointwise_block, pow2(xnumel))
            self.emit("xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)")
            self.emit("xmask = xindex < xnumel")
            self._decode("xindex", [s.name for s in xsyms], plan.xsizes)
        else:
            self.persistent = pow2(rnumel) <= min(config.max_rblock, self.max_elems or config.max_rblock)
            if not self.persistent:
                self.elide = set()  # values do not outlive the loop that made them
            if self.persistent:
                self.rblock = pow2(rnumel)
                self.xblock = max(1, min(pow2(xnumel), (self.max_elems or config.max_block_elems) // self.rblock))
            else:  # a loop-carried accumulator: keep it small (the CPU target holds it in registers)
                elems = min(config.loop_block_elems, self.max_elems or config.loop_block_elems)
                self.rblock = min(pow2(config.loop_rblock), elems)
                self.xblock = max(1, min(pow2(xnumel), elems // self.rblock))
            self.emit("xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]")
            self.emit("xmask = xindex < xnumel")
            self._decode("xindex", [s.name for s in xsyms], plan.xsizes)
            if self.persistent:
                self.emit("rindex = tl.arange(0, RBLOCK)[None, :]")
                self.emit("rmask = rindex < rnumel")
                self._decode("rindex", [s.name for s in rsyms], plan.rsizes)
        for node in plan.nodes:
            self.current = node
            self.emit(f"# {node.snode.get_name()} ({node.kind})")
            args = [xsyms, rsyms] if node.kind == "reduction" else [xsyms + rsyms if node.kind == "rpointwise" else xsyms, []]
            looped = plan.kind == "reduction" and not self.persistent and node.kind != "pointwise"
            if looped:
                self._run_looped(node, args, rsyms)
            else:
                with V.set_ops_handler(TileOps(self)):
                    node.snode._body(*args)
        self.current = None
        return self._assemble()

    def _run_looped(self, node: NodePlan, args, rsyms) -> None:
        from torch._inductor.virtualized import V

        # values computed in an earlier loop are not visible inside this one
        outer_cse, outer_stored = dict(self.cse), dict(self.stored)
        self.acc_inits, self.acc_finals = [], []
        head = len(self.lines)
        self.emit("for roffset in range(0, rnumel, RBLOCK):")
        self.indent += 1
        self.emit("rindex = roffset + tl.arange(0, RBLOCK)[None, :]")
        self.emit("rmask = rindex < rnumel")
        self._decode("rindex", [s.name for s in rsyms], self.plan.rsizes)
        self.cse, self.stored = dict(outer_cse), dict(outer_stored)
        pending: list[tuple[str, object, object]] = []
        kernel = self

        class LoopOps(TileOps):
            def store_reduction(self, name, index, value):
                pending.append((name, index, value))

        with V.set_ops_handler(LoopOps(self)):
            node.snode._body(*args)
        self.indent -= 1
        for i, line in enumerate(self.acc_inits):
            self.lines.insert(head + i, "    " * self.indent + line)
        self.cse, self.stored = outer_cse, outer_stored
        for name, index, value in pending:
            if not (isinstance(value, tuple) and value[0] == "__acc__"):
                raise Unsupported("looped reduction stores a non-reduction value")
            result = kernel.define(self.acc_finals[value[1]])
            kernel.store(name, index, result, reduced=True)

    def _assemble(self) -> str:
        params = [self.args[n] for n in self.in_args] + [self.args[n] for n in self.out_args]
        params += ["xnumel"] + (["rnumel"] if self.two_d else [])
        params += ["XBLOCK: tl.constexpr"] + (["RBLOCK: tl.constexpr"] if self.two_d else [])
        header = [
            "import inductor_tile",
            "import inductor_tile.language as tl",
            "",
            "",
            "@inductor_tile.jit",
            f"def {self.name}({', '.join(params)}):",
        ]
        return "\n".join(header + self.lines) + "\n"

    def call_args(self) -> list[str]:
        return list(self.in_args) + list(self.out_args)

    def signature(self) -> tuple[dict[str, str], dict[str, int]]:
        """Argument types (Triton type strings) and constexpr values of the kernel."""
        from torch._inductor.virtualized import V

        sig = {self.args[n]: "*" + _TYPE_STRINGS[V.graph.get_dtype(n)] for n in self.call_args()}
        sig["xnumel"] = "i32"
        consts = {"XBLOCK": self.xblock}
        if self.two_d:
            sig["rnumel"] = "i32"
            consts["RBLOCK"] = self.rblock
        return sig, consts
