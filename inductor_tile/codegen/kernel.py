"""Tile-language source for one fused group of Inductor scheduler nodes.

Each scheduler node carries a ``LoopBody``: Inductor's define-by-run loop IR.  Calling
it with index symbols under an ops handler replays its ``ops.load`` / ``ops.add`` /
``ops.reduction`` / ``ops.store`` calls; ``TileOps`` below answers each call with one
line of tile-language Python and the name of the variable that holds the result.

Two kernel shapes:

- pointwise: ``xindex`` is a 1-D tile of XBLOCK flat positions over the group's
  iteration space; every node's loop variables are decoded from it (row-major).
  Tiled (``launch.ysplit``, chosen after a first 1-D pass when ``transposed_split`` finds a
  transposed access): ``yindex`` [YBLOCK, 1] runs over the loop dims before the split,
  ``xindex`` [1, XBLOCK] over the rest, so an access contiguous along the last dim before
  the split and one contiguous along the last dim are both coalesced (the compiler's
  coalescing gives each its own layout and converts between them).
- reduction: ``xindex`` is [XBLOCK, 1] (output rows), ``rindex`` is [1, RBLOCK]
  (reduced elements).  If the reduction fits one block the whole group runs
  straight-line ("persistent"); otherwise every node that iterates over the reduced
  dimension gets its own loop over RBLOCK chunks.  Block sizes and the persistent /
  looped choice come from a ``heuristics.LaunchConfig``.

Dynamic shapes: loop sizes may be sympy expressions over the graph's size symbols
(``s0``, ``s1``, ...).  Every size symbol the kernel's decode or index expressions use
becomes an int argument named like the symbol, after the pointers; the wrapper passes
the values it has in scope.  Indices are int32: each kernel records the symbolic sizes
that must stay below 2**31 (``int32_guards``), which become shape guards once the kernel
is accepted.

Anything this module cannot express raises ``Unsupported``; the scheduling class then
hands the node to Inductor's own CPU kernels, so a gap never turns into a wrong result.
"""

from __future__ import annotations

import math

import sympy
from torch.utils._sympy.functions import FloorDiv, ModularIndexing

from . import cache_hints, reductions, scans
from .common import (_INT32_LIMIT, _TYPE_STRINGS, NeedsBuffer, Unsupported, index_to_source, tl_dtype,
                     without_precomputed_sizes)
from .heuristics import LaunchConfig, candidates
from .index_equal import same_address
from .index_simplify import with_loop_ranges
from .ops import TileOps
from .plan import GroupPlan, NodePlan, hint, is_static, plan_group

__all__ = ["NeedsBuffer", "TileKernelSource", "Unsupported", "plan_group"]

# the element types tl.atomic_add takes (32/64-bit integers and floats)
_ATOMIC_ADD_DTYPES = ("torch.float16", "torch.bfloat16", "torch.float32", "torch.float64", "torch.int32",
                      "torch.int64")


def node_comment(node) -> str:
    """`# buf3 (pointwise): add, mul_1`: the scheduler node whose code follows and the FX nodes it
    came from (performance warnings name them: kernel_compiler/diagnostics/perf_warnings.py)."""
    origins = sorted(origin.name for origin in getattr(node.snode.node, "origins", ()) or ())
    return f"# {node.snode.get_name()} ({node.kind})" + (f": {', '.join(origins)}" if origins else "")


def _step(index, sym):
    """How much `index` grows when `sym` grows by one (0 when it does not use `sym`)."""
    return sympy.expand(index.subs(sym, sym + 1) - index)


def _tile_strides(expr, syms, sizes, strides) -> list:
    """`strides` of `expr` along `syms`, where a dim that moves the address by less than one element
    per step counts as contiguous (1): `h // 2` of grouped-query attention's repeated heads steps by 0
    and 1 in turn, and a tile along it still reads consecutive addresses."""
    out = list(strides)
    at_zero = {sym: 0 for sym in syms}
    for i, (sym, size) in enumerate(zip(syms, sizes)):
        if out[i] == 0 and sym in expr.free_symbols and isinstance(size, int) and size > 1:
            period = min(size, 64)
            step = (expr.subs({**at_zero, sym: period}) - expr.subs(at_zero)) / period
            if 0 < step <= 1:
                out[i] = 1
    return out


class TileKernelSource:
    """Builds the source of one kernel for a planned group of nodes."""

    xsyms: list = []
    rsyms: list = []

    def __init__(self, plan: GroupPlan, name: str, launch: LaunchConfig, elide: set[str] = frozenset()):
        self.plan = plan
        self.launch = launch
        self.gather = False  # some load/store is not contiguous along the tile's fast dimension
        self.column_gathers_only = True  # ... and every such access is a column sum's (see _note_access)
        self.strided_reduction = False  # a reduction's input steps by more than one element along the reduced dim
        self.elide = set(elide)  # buffers read only inside this kernel: not stored
        self.elided: set[str] = set()
        self.name = name
        self.lines: list[str] = []
        self.indent = 1
        self.cse: dict[str, str] = {}
        self.stored: dict[tuple[str, str], str] = {}
        self.reductions: dict[tuple, object] = {}  # (type, dtypes, value) -> result, per loop
        self.written: dict[str, set[str]] = {}
        self.draws_random = False  # some node draws Philox random numbers (heuristics.for_random_numbers)
        self.hoist_at: int | None = None  # where hoisted loads go (GPU persistent reductions; see _hoistable)
        self.hoist_indent = ""
        self.atomic_args: list[str] = []  # pointer arguments added to atomically: autotuning restores them
        self.index_exprs: dict[str, object] = {}  # index source -> its sympy expression
        self.masks: list[str] = []
        self.args: dict[str, str] = {}  # buffer name -> kernel argument name
        self.in_args: list[str] = []
        self.out_args: list[str] = []
        self.counter = 0
        self.current: NodePlan | None = None
        self.persistent = launch.persistent or plan.kind != "reduction"
        self.rblock = launch.rblock if plan.kind == "reduction" else 1
        self.xblock = launch.xblock
        self.size_args: set[sympy.Symbol] = set()  # graph size symbols the source names
        # random seeds: each node's offset into the graph's seed buffer is an argument, not a
        # constant, so that a model's layers (one seed each) share one kernel (as in Inductor)
        self.seed_offsets: dict[int, str] = {}  # offset -> argument name
        self.int32_guards: list = []  # symbolic sizes that must stay below 2**31
        self.accesses: list = []  # index expressions of the loads and stores over the tile
        self.load_hints = cache_hints.LoadHints(self)  # eviction policies of GPU loads

    # -- small helpers ------------------------------------------------------------
    @property
    def two_d(self) -> bool:
        return self.plan.kind == "reduction"

    @property
    def tiled(self) -> bool:
        return self.launch.ysplit > 0

    @property
    def scalar_shape(self) -> str:
        return "[1, 1]" if self.two_d or self.tiled else "[1]"

    def numels(self) -> dict:
        """The kernel's size parameters (after the size symbols) and their loop sizes."""
        sizes = self.plan.xsizes
        if self.tiled:
            k = self.launch.ysplit
            return {"ynumel": math.prod(sizes[:k]), "xnumel": math.prod(sizes[k:])}
        if self.two_d:
            return {"xnumel": self.plan.xnumel, "rnumel": self.plan.rnumel}
        return {"xnumel": self.plan.xnumel}

    def blocks(self) -> dict[str, int]:
        """The kernel's block-size constexprs."""
        if self.tiled:
            return {"YBLOCK": self.launch.yblock, "XBLOCK": self.xblock}
        return {"XBLOCK": self.xblock, **({"RBLOCK": self.rblock} if self.two_d else {})}

    def transposed_split(self) -> int:
        """For a 1-D pointwise kernel, after `generate`: the split k of the loop dims that makes
        every access coalesced in a [YBLOCK, XBLOCK] tile over (dims[:k], dims[k:]), or 0.

        Some access steps along the last loop dim while it is contiguous along an earlier dim k - 1:
        a transpose (attention's head permute, where another access is contiguous along the last
        dim), or a loop order that strides every access (a channels-last tensor walked in NCHW
        order, as Inductor may order a squeeze-excitation product after trying to fuse it with the
        channel means: a 1-D kernel then loads and stores 2 bytes in every 192 on EfficientNet).
        Both sides of the tile must be at least 16 long (the rows' side: its contiguous dim), so a CNN's
        stem copy of NCHW images to channels-last (runs of 3 channels) stays 1-D, which measured faster.
        """
        if self.plan.kind != "pointwise" or self.tiled or not self.plan.is_static or len(self.xsyms) < 2:
            return 0
        from torch._inductor.virtualized import V

        split = 0
        for expr in self.accesses:
            if not expr.free_symbols & set(self.xsyms) or expr.free_symbols - set(self.xsyms):
                continue  # broadcast, or indirect: no stride to speak of
            try:
                strides = V.graph.sizevars.stride_hints(expr, self.xsyms)
                strides = _tile_strides(expr, self.xsyms, self.plan.xsizes, strides)
            except Exception:  # noqa: BLE001 - an index sympy cannot step: leave the kernel 1-D
                return 0
            if strides[-1] not in (0, 1) and 1 in strides[:-1]:
                split = split or 1 + max(i for i, s in enumerate(strides[:-1]) if s == 1)
        if not split:
            return 0
        sizes = self.plan.xsizes
        return split if sizes[split - 1] >= 16 and math.prod(sizes[split:]) >= 16 else 0

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def define(self, expr: str, hoist: bool = False) -> str:
        """A variable for `expr` (the same one for the same expression); `hoist`: defined at the top of
        the kernel (`hoist_at`) rather than here."""
        if expr in self.cse:
            return self.cse[expr]
        var = f"tmp{self.counter}"
        self.counter += 1
        if hoist:
            self.lines.insert(self.hoist_at, f"{self.hoist_indent}{var} = {expr}")
            self.hoist_at += 1
        else:
            self.emit(f"{var} = {expr}")
        self.cse[expr] = var
        return var

    def _hoistable(self, name: str, expr) -> bool:
        """Whether a load of buffer `name` at `expr` may move to the top of the kernel, as Inductor's
        Triton kernels load everything first: on a GPU the weights of a norm then load with its rows
        instead of after its reductions, whose barriers keep ptxas from moving loads up. Only loads
        of persistent reductions, outside masked blocks, of buffers this kernel does not write,
        at indices of the loop variables and sizes alone (an indirect index is computed here); in a
        looped reduction the loads of a row's own elements (a batch norm's per-channel scale in
        EfficientNet's channels-last means), above the loops, as Inductor's kernels load them, so
        that the arithmetic on them leaves the loop too (loop-invariant code motion)."""
        if self.hoist_at is None or self.masks or name in self.written:
            return False
        if not self.persistent and self.plan.kind == "reduction":  # looped: above the loops, by row only
            return bool(expr.free_symbols) and expr.free_symbols <= set(self.xsyms) | self.size_args
        return expr.free_symbols <= set(self.xsyms) | set(self.rsyms) | self.size_args

    def index(self, expr) -> str:
        expr = self.simplified(expr)
        self._note_size_symbols(expr)
        source = index_to_source(expr)
        self.index_exprs[source] = expr
        return source

    def simplified(self, expr):
        """`expr` with Inductor's precomputed sizes expanded, simplified with the ranges of the kernel's
        loop variables (`index_simplify.with_loop_ranges`), so that one element has one spelling."""
        expr = without_precomputed_sizes(sympy.sympify(expr))
        return with_loop_ranges(expr, self._ranges())

    def _ranges(self) -> dict:
        """Each loop variable's range (the kernel's sizes)."""
        return {**dict(zip(self.xsyms, self.plan.xsizes)), **dict(zip(self.rsyms, self.plan.rsizes))}

    def _same_element(self, a, b) -> bool:
        """Whether index expressions `a` and `b` address the same element for every loop index."""
        from torch._inductor.virtualized import V

        diff = sympy.expand(sympy.sympify(a) - sympy.sympify(b))
        if diff == 0 or V.graph.sizevars.simplify_with_ranges(diff, self._ranges()) == 0:
            return True
        try:
            return same_address(a, b, self._ranges())  # digits of a split row (index_equal.py)
        except Exception:  # noqa: BLE001 - an expression the rewrite cannot take: not shown equal
            return False

    def _note_size_symbols(self, expr) -> None:
        """Size symbols in ``expr`` become kernel arguments; other symbols are tile variables."""
        from torch._inductor.virtualized import V
        from torch.utils._sympy.symbol import SymT, symbol_is_type

        loop = set(self.xsyms) | set(self.rsyms)
        shape_env = V.graph.sizevars.shape_env
        # backed symbols and their example values (renamed in newer torch)
        backed = shape_env.backed_var_to_val if hasattr(shape_env, "backed_var_to_val") else shape_env.var_to_val
        for sym in expr.free_symbols - loop:
            if sym in backed:
                self.size_args.add(sym)
            elif symbol_is_type(sym, (SymT.SIZE, SymT.UNBACKED_INT, SymT.PRECOMPUTED_SIZE, SymT.UNBACKED_FLOAT)):
                raise Unsupported(f"size symbol {sym} without a value at compile time")

    def seed_offset_arg(self, offset: int) -> str:
        """The argument that passes the seed buffer offset `offset` (one per distinct offset)."""
        if offset not in self.seed_offsets:
            n = len(self.seed_offsets)
            self.seed_offsets[offset] = f"load_seed_offset{n if n else ''}"
        return self.seed_offsets[offset]

    def seed_offset_names(self) -> list[str]:
        return list(self.seed_offsets.values())

    def _note_access(self, index) -> None:
        """Record whether an access is a gather (strided or broadcast along the fast dim).

        The CPU target turns a gather into one vector gather over the whole tile, whose
        LLVM compile time grows steeply with the tile size: such kernels get small tiles.
        A GPU only cares whether the reduced dimension is strided in memory (a column sum
        wants many columns per program); broadcast operands and decoded indices do not
        change its tile shape.
        """
        index = sympy.sympify(index)
        r_step = _step(index, self.rsyms[-1]) if self.two_d and self.rsyms else sympy.Integer(0)
        strided = bool(r_step.is_Integer and abs(int(r_step)) > 1)
        if strided and not self._in_epilogue():
            self.strided_reduction = True
        if self.two_d:
            fast, syms, sizes = self.rsyms, self.xsyms + self.rsyms, self.plan.xsizes + self.plan.rsizes
            if index.free_symbols <= set(fast):  # a [1, RBLOCK] row, shared by all rows
                syms, sizes = self.rsyms, self.plan.rsizes
        else:
            fast, syms, sizes = self.xsyms, self.xsyms, self.plan.xsizes
        if not index.free_symbols & set(fast):
            return
        flat = sum(sym * math.prod(sizes[i + 1:]) for i, sym in enumerate(syms))
        if sympy.expand(index - flat).free_symbols & set(syms):  # an offset (even symbolic) is no gather
            self.gather = True
            # a column sum's access: consecutive along the fastest loop dim, strided along the reduced one
            self.column_gathers_only &= strided and bool(self.xsyms) and _step(index, self.xsyms[-1]) == 1

    def _in_epilogue(self) -> bool:
        """Whether the node being generated is a pointwise node after a reduction of the group. Its
        strided accesses (a rotary embedding's transposed store after an RMSNorm) do not make the row
        reduction a column sum: only a reduction's or its prologue's inputs choose the tile shape."""
        node = self.current
        if node is None or node.kind == "reduction":
            return False
        for other in self.plan.nodes:
            if other is node:
                return False
            if other.kind == "reduction":
                return True
        return False

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

    def input_arg(self, name: str) -> str:
        """The pointer argument of buffer `name`, read by this kernel."""
        return self._arg(self._real(name), out=False)

    # -- memory -------------------------------------------------------------------
    def load(self, name: str, index) -> str:
        given_name, name = name, self._real(name)
        index = self.simplified(index)  # the access as generated (one spelling per element)
        idx = self.index(index)
        self._note_access(index)
        if name in self.written and idx not in self.written[name]:
            # nodes over other sizes (decoded indices) may spell the same element differently
            idx = next((w for w in self.written[name] if self._same_element(self.index_exprs[w], index)), idx)
        key = (name, idx)
        if key in self.stored:  # also inside a masked block: the value is a full tile (a store is never masked)
            return self.stored[key]
        if name in self.elide:
            raise NeedsBuffer(name)
        if name in self.written:
            if idx not in self.written[name]:
                raise Unsupported(f"{name} is read at another index than it is written")
            ptr = self.args[name]
        else:
            ptr = self._arg(name, out=False)
        expr = sympy.sympify(index)
        hoist = self._hoistable(name, expr)
        if expr.free_symbols:
            self.accesses.append(expr)
        elif not self.masks:
            # one element for the whole tile: a scalar load (always in bounds) broadcast, not a
            # masked load of the same address in every lane (a gather on the CPU target)
            scalar = self._load_line(f"tl.load({ptr} + {idx}", name, given_name, expr, hoist)
            return self.define(f"tl.broadcast_to({scalar}, {self.scalar_shape})", hoist)
        return self._load_line(f"tl.load({ptr} + {idx}, mask={self.mask(index=index)}, other=0", name, given_name,
                               expr, hoist)

    def _load_line(self, call: str, name: str, given_name: str, expr, hoist: bool) -> str:
        """The variable of load `call` (without its closing parenthesis), with its cache hints
        (cache_hints.py); one load per element and mask, whatever hints it was emitted with."""
        plain = call + ")"
        if plain not in self.cse:
            self.cse[plain] = self.define(call + self.load_hints.for_load(name, given_name, expr) + ")", hoist)
        return self.cse[plain]

    def store(self, name: str, index, value: str, reduced: bool = False, bounds: str | None = None,
              mode: str | None = None) -> None:
        """Store `value`; `bounds` (from the ops handler) also masks it: indirect indices in range.
        `mode="atomic_add"` adds `value` atomically instead (scatter_add, index_add, embedding backward)."""
        if self.masks:
            raise Unsupported("store inside a masked block")
        if mode is not None:
            self._atomic_add(name, index, value, reduced, bounds, mode)
            return
        name = self._real(name)
        index = self.simplified(index)
        idx = self.index(index)
        if not reduced:
            self._note_access(index)
            self.accesses.append(index)
        if name in self.elide:
            self.elided.add(name)
        else:
            ptr = self._arg(name, out=True)
            mask = self.mask(reduced) if bounds is None else f"{self.mask(reduced)} & ({bounds})"
            address = f"{ptr} + {idx}"
            if not sympy.sympify(index).free_symbols:  # one element (a 0-d output): a block of its address
                address += f" + tl.zeros_like({mask}).to(tl.int32)"
            self.emit(f"tl.store({address}, {value}, mask={mask})")
        self.stored[(name, idx)] = value
        self.written.setdefault(name, set()).add(idx)

    def _atomic_add(self, name: str, index, value: str, reduced: bool, bounds: str | None, mode: str) -> None:
        """`tl.atomic_add` into the buffer (which stays in memory: other programs add to it too). The
        value is not remembered for later loads, which must see every program's additions."""
        from torch._inductor.virtualized import V

        if mode != "atomic_add":
            raise Unsupported(f"store mode {mode}")
        name = self._real(name)
        dtype = V.graph.get_dtype(name)
        if str(dtype) not in _ATOMIC_ADD_DTYPES:
            raise Unsupported(f"atomic_add on {dtype}")
        if name in self.elide:
            raise NeedsBuffer(name)
        index = self.simplified(index)
        idx = self.index(index)
        if not reduced:
            self._note_access(index)
        ptr = self._arg(name, out=True)
        if ptr not in self.atomic_args:
            self.atomic_args.append(ptr)
        mask = self.mask(reduced) if bounds is None else f"{self.mask(reduced)} & ({bounds})"
        self.emit(f"tl.atomic_add({ptr} + {idx}, {value}, mask={mask}, sem='relaxed')")
        self.written.setdefault(name, set()).add(idx)

    def reduction(self, dtype, src_dtype, reduction_type, value):
        if reduction_type == "welford_reduce" and self.persistent and not is_static(self.plan.rnumel):
            # the persistent form divides by the row length as a static float (looped ones count)
            raise Unsupported("persistent welford over a symbolic reduction size")
        # nodes of one reduction (welford's mean and m2 are two nodes) share its accumulators
        key = (reduction_type, dtype, src_dtype, value)
        if key not in self.reductions:
            self.reductions[key] = reductions.reduction(self, dtype, src_dtype, reduction_type, value)
        return self.reductions[key]

    # -- whole kernel -------------------------------------------------------------
    def _decode(self, flat: str, symbols: list[str], sizes: list) -> None:
        """Row-major decode of a flat tile index into loop variables (sizes may be symbolic)."""
        strides = [math.prod(sizes[i + 1:]) for i in range(len(sizes))]
        for i, (sym, size, st) in enumerate(zip(symbols, sizes, strides)):
            expr = flat if st == 1 else f"({flat} // {self.index(st)})"
            if i > 0:
                expr = f"({expr} % {self.index(size)})"
            self.emit(f"{sym} = {expr}")

    def _check_int32(self) -> None:
        """Indices are int32: the iteration space and every buffer must stay below 2**31.

        Static sizes are checked here; symbolic ones against their hints here and, once the
        kernel is accepted, by guards (``int32_guards``), so a larger input recompiles.
        """
        from torch._inductor.virtualized import V

        sizes = [self.plan.xnumel * (self.plan.rnumel if self.two_d else 1)]
        for name in self.in_args + self.out_args:
            try:
                sizes.append(V.graph.get_buffer(name).get_layout().storage_size())
            except Exception as e:  # noqa: BLE001 - nothing to bound the indices with
                raise Unsupported(f"cannot bound the size of {name}: {type(e).__name__}") from None
        for size in sizes:
            size = sympy.sympify(size)
            if size.is_Integer:
                if int(size) > _INT32_LIMIT:
                    raise Unsupported("more than 2**31 elements (int32 indexing)")
                continue
            if hint(size) > _INT32_LIMIT:
                raise Unsupported("more than 2**31 elements (int32 indexing)")
            if size not in self.int32_guards:
                self.int32_guards.append(size)

    def generate(self) -> str:
        plan = self.plan
        self.xsyms = xsyms = [sympy.Symbol(f"x{i}", integer=True, nonnegative=True) for i in range(len(plan.xsizes))]
        self.rsyms = rsyms = [sympy.Symbol(f"r{i}", integer=True, nonnegative=True) for i in range(len(plan.rsizes))]
        if self.tiled:
            k = self.launch.ysplit
            self.emit("xprograms = (xnumel + XBLOCK - 1) // XBLOCK")
            self.emit("yindex = (tl.program_id(0) // xprograms) * YBLOCK + tl.arange(0, YBLOCK)[:, None]")
            self.emit("xindex = (tl.program_id(0) % xprograms) * XBLOCK + tl.arange(0, XBLOCK)[None, :]")
            self.emit("xmask = (yindex < ynumel) & (xindex < xnumel)")
            self._decode("yindex", [s.name for s in xsyms[:k]], plan.xsizes[:k])
            self._decode("xindex", [s.name for s in xsyms[k:]], plan.xsizes[k:])
        elif plan.kind == "pointwise":
            self.emit("xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)")
            self.emit(self._mask_line("xmask", "xindex < xnumel", "[XBLOCK]", plan.xnumel, self._xblocks()))
            self._decode("xindex", [s.name for s in xsyms], plan.xsizes)
        else:
            if not self.persistent:
                self.elide = set()  # values do not outlive the loop that made them
            if is_static(plan.rnumel):  # as Inductor: a known trip count (unrolled loops, folded masks)
                self.emit(f"rnumel = {plan.rnumel}")
            self.emit("xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]")
            self.emit(self._mask_line("xmask", "xindex < xnumel", "[XBLOCK, 1]", plan.xnumel, self._xblocks()))
            self._decode("xindex", [s.name for s in xsyms], plan.xsizes)
            if not self.persistent and self.launch.num_warps is not None:  # a row's own loads before the loops
                self.hoist_at, self.hoist_indent = len(self.lines), "    " * self.indent
            if self.persistent:
                self.emit("rindex = tl.arange(0, RBLOCK)[None, :]")
                self.emit(self._mask_line("rmask", "rindex < rnumel", "[1, RBLOCK]", plan.rnumel, self._rblocks()))
                self._decode("rindex", [s.name for s in rsyms], plan.rsizes)
                if self.launch.num_warps is not None:  # a GPU's kernel: loads first (see _hoistable)
                    self.hoist_at, self.hoist_indent = len(self.lines), "    " * self.indent
        looped = plan.kind == "reduction" and not self.persistent
        for nodes in self._loop_phases(plan.nodes) if looped else [[node] for node in plan.nodes]:
            if looped and nodes[0].kind != "pointwise":
                self._run_looped(nodes, rsyms)
                continue
            self._emit_node(nodes[0], TileOps)
        self.current = None
        self._check_int32()
        return self._assemble()

    def _mask_line(self, name: str, bound: str, shape: str, numel, blocks: list[int]) -> str:
        """``name = <bound>``, or an all-true mask where every block lies inside a static `numel`
        (a multiple of each of `blocks`, every block size the kernel may be launched with): its loads
        and stores are then plain vector accesses, not masked ones (half the instructions of a small
        CPU pointwise kernel; on a GPU no per-element selects by the row mask: a 768-wide fp16
        layer norm on one warp, sm_90, 345 -> 280 SASS instructions, Inductor's kernel 268)."""
        if is_static(numel) and all(int(numel) % block == 0 for block in blocks):
            return f"{name} = tl.full({shape}, True, tl.int1)  # every block is whole"
        return f"{name} = {bound}"

    def _launches(self) -> list[LaunchConfig]:
        """Every launch this kernel may get: its own, and on a GPU each autotuning candidate (a superset
        of the configs tuned when autotuning is on; the CPU target's launches are never tuned)."""
        if self.launch.num_warps is None:
            return [self.launch]
        return [self.launch, *candidates("cuda", self.launch, self.plan.kind == "reduction")]

    def _xblocks(self) -> list[int]:
        return [launch.xblock for launch in self._launches()]

    def _rblocks(self) -> list[int]:
        return [launch.rblock for launch in self._launches()]

    def _emit_node(self, node: NodePlan, ops: type) -> None:
        """The node's loop body, under its comment, through the ops handler `ops` (it becomes `current`)."""
        from torch._inductor.virtualized import V

        self.current = node
        self.emit(node_comment(node))
        with V.set_ops_handler(ops(self)):
            node.snode._body(*self._loop_args(node))

    def _loop_args(self, node: NodePlan) -> list:
        """The index expressions a node's loop body is called with: the kernel's variables, or
        for a node over other sizes (same elements), its indices decoded from the flat one."""
        if node.kind == "rpointwise" and not node.rsizes:  # flat over rows x reduced elements
            both = self._decoded(self.xsyms + self.rsyms, self.plan.xsizes + self.plan.rsizes, node.xsizes)
            return [both, []]
        xs = self._decoded(self.xsyms, self.plan.xsizes, node.xsizes)
        if node.kind == "reduction":
            return [xs, self._decoded(self.rsyms, self.plan.rsizes, node.rsizes)]
        if node.kind == "rpointwise":
            return [xs + self._decoded(self.rsyms, self.plan.rsizes, node.rsizes), []]
        return [xs, []]

    @staticmethod
    def _decoded(syms: list, sizes: list, node_sizes: list) -> list:
        """Row-major indices over `node_sizes` of the element that `syms` (over `sizes`) address."""
        if list(node_sizes) == list(sizes):
            return list(syms)
        from torch._inductor.virtualized import V

        flat = sum(sym * math.prod(sizes[i + 1:]) for i, sym in enumerate(syms))
        ranges = dict(zip(syms, sizes))
        out = []
        for j, size in enumerate(node_sizes):
            stride = math.prod(node_sizes[j + 1:])
            if len(node_sizes) == 1:
                out.append(flat)
            elif j == 0:
                out.append(V.graph.sizevars.simplify_with_ranges(FloorDiv(flat, stride), ranges))
            else:
                out.append(V.graph.sizevars.simplify_with_ranges(ModularIndexing(flat, stride, size), ranges))
        return out

    @staticmethod
    def _loop_phases(nodes: list[NodePlan]) -> list[list[NodePlan]]:
        """Split a looped kernel's nodes into runs that share one loop over the reduced dim.

        A node over the reduced dim joins the open loop unless it reads a row result that
        a reduction of that loop produces (known only once the loop is done). Layernorm
        thus reads its input twice (statistics, then normalization), not once per node.
        Pointwise nodes (over rows only) run between loops, each alone.
        """
        phases: list[list[NodePlan]] = []
        produced: set[str] = set()
        for node in nodes:
            reads = {dep.name for dep in node.snode.read_writes.reads}
            open_loop = phases and phases[-1][0].kind != "pointwise"
            if node.kind != "pointwise" and open_loop and not reads & produced:
                phases[-1].append(node)
            else:
                phases.append([node])
                produced = set()
            if node.kind == "reduction":
                produced |= set(node.snode.get_buffer_names())
        return phases

    def _run_looped(self, nodes: list[NodePlan], rsyms) -> None:
        # values computed in an earlier loop are not visible inside this one
        outer_cse, outer_stored = dict(self.cse), dict(self.stored)
        self.acc_inits, self.acc_finals = [], []
        self.reductions = {}
        head = len(self.lines)
        self.emit("for roffset in range(0, rnumel, RBLOCK):")
        self.indent += 1
        self.emit("rindex = roffset + tl.arange(0, RBLOCK)[None, :]")
        self.emit(self._mask_line("rmask", "rindex < rnumel", "[1, RBLOCK]", self.plan.rnumel, self._rblocks()))
        self._decode("rindex", [s.name for s in rsyms], self.plan.rsizes)
        self.cse, self.stored = dict(outer_cse), dict(outer_stored)
        pending: list[tuple[str, object, object]] = []
        kernel = self

        class LoopOps(TileOps):
            def store_reduction(self, name, index, value):
                pending.append((name, index, value))

        for node in nodes:
            self._emit_node(node, LoopOps)
        self.indent -= 1
        self.reductions = {}
        for i, line in enumerate(self.acc_inits):
            self.lines.insert(head + i, "    " * self.indent + line)
        self.cse, self.stored = outer_cse, outer_stored
        for name, index, value in pending:
            if not (isinstance(value, tuple) and value[0] == "__acc__"):
                raise Unsupported("looped reduction stores a non-reduction value")
            result = kernel.define(self.acc_finals[value[1]])
            kernel.store(name, index, result, reduced=True)

    def _assemble(self) -> str:
        self.lines = self.load_hints.resolve(self.lines)
        params = [self.args[n] for n in self.in_args] + [self.args[n] for n in self.out_args]
        params += self.size_arg_names() + self.seed_offset_names() + list(self.numels())
        params += [f"{name}: tl.constexpr" for name in self.blocks()]
        # offsets are not specialized (divisible by 16, equal to 1): one binary for every layer
        options = [f"do_not_specialize={tuple(self.seed_offset_names())!r}"] if self.seed_offsets else []
        options += ["debug=True"] if getattr(self, "debug_asserts", False) else []  # index checks compiled in
        options = f"({', '.join(options)})" if options else ""
        header = [
            "import inductor_tile",
            "import inductor_tile.language as tl",
            *scans.helper_sources(self),  # the combine functions of its scans
            "",
            "",
            f"@inductor_tile.jit{options}",
            f"def {self.name}({', '.join(params)}):",
        ]
        return "\n".join(header + self.lines) + "\n"

    def call_args(self) -> list[str]:
        """Buffer names, in the order of the kernel's pointer parameters."""
        return list(self.in_args) + list(self.out_args)

    def size_arg_names(self) -> list[str]:
        """The size symbols the kernel takes (after the pointers), named as in the wrapper."""
        return sorted(s.name for s in self.size_args)

    def signature(self) -> tuple[dict[str, str], dict[str, int]]:
        """Argument types (Triton type strings) and constexpr values of the kernel."""
        from torch._inductor.virtualized import V

        sig = {self.args[n]: "*" + _TYPE_STRINGS[V.graph.get_dtype(n)] for n in self.call_args()}
        sig.update({name: "i32" for name in self.size_arg_names() + self.seed_offset_names() + list(self.numels())})
        return sig, self.blocks()
