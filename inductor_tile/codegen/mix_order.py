"""One kernel for a row reduction and column sums over the same rows (mix-order reductions).

Layer norm and RMSNorm backward reduce ``x`` and ``dy`` along each row (the input gradient)
and along each column (the weight and bias gradients: sums over all rows). Two kernels read
the inputs twice. Here each program runs over ``SPLIT`` consecutive rows, ``XBLOCK`` rows at a
time, with whole rows in one block (persistent); it computes the row group exactly as its own
kernel would, and adds each column sum's per-element value into a float32 accumulator: an
``[XBLOCK, RBLOCK]`` one added elementwise and reduced over its rows once after the loop
(``row_accumulators``), or a ``[1, RBLOCK]`` one that each step's rows are summed into. At the end
the program stores its partial sums to a workspace ``[column sums, programs, row length]``.

With ``rchunk`` (GPUs) the row tiles are ``[XBLOCK, RBLOCK // RCHUNK, RCHUNK]``: a row cut into chunks
of ``RCHUNK`` columns, one vector access of each of a warp's 32 lanes. The compiler spreads lanes along
the chunk and warps along the slowest dimension of equal contiguity first (``passes/coalesce.py``,
``layouts.blocked_for``): the rows. With ``XBLOCK`` = warps each row lies in one warp (its reductions
are warp shuffles, no barrier in the loop) and each thread keeps its columns' accumulators in registers;
with fewer rows than warps the chunks of a row are spread over ``warps // XBLOCK`` warps.

```
for xoffset in range(xstart, xstart + SPLIT, XBLOCK):
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    ... the row group's nodes ...
    colacc0 = colacc0 + tl.where(xmask, value, 0.0)
colsum0 = tl.sum(colacc0, 0)[None, :]
tl.store(ws_ptr + (0 * programs + pid) * rnumel + rindex, colsum0, mask=rmask)
```

Loads that do not depend on the row (a norm's weight) are made once, before the loop.
A column sum's node iterates (columns) x (rows): its loop body is called with its column
indices decoded from the kernel's ``rindex`` and its row indices from ``xindex``, so its loads
of the same input at the same element are the row group's loads (one read).

``WorkspaceSumSource`` is the second kernel: it sums the workspace over programs for every
column sum, stores each total in its buffer's dtype and runs the sums' pointwise epilogue
(the weight gradients' casts to float16) on the totals, in registers.
"""

from __future__ import annotations

import math
import re

import sympy
import torch
from torch.utils._sympy.functions import FloorDiv

from . import reductions
from .common import Unsupported, literal, tl_dtype
from .kernel import TileKernelSource, node_comment
from .ops import TileOps
from .plan import GroupPlan, NodePlan, _same_numel, _size, is_static

WORKSPACE = "ws_ptr"
# rows of whole chunks masked by chunk (MixOrderKernelSource._row_mask); False: by column, as other rows
# (the H200: layer norm backward 16384x768 fp16 1765 vs 1751 GB/s, RMSNorm 2246 vs 2229)
CHUNK_MASK = True


def _assemble_with_workspace(kernel: TileKernelSource, pointers: list) -> str:
    """The kernel's source with the workspace pointer appended to `pointers` (its inputs or outputs)."""
    kernel.args[WORKSPACE] = WORKSPACE
    pointers.append(WORKSPACE)
    try:
        return TileKernelSource._assemble(kernel)
    finally:
        pointers.pop()
        del kernel.args[WORKSPACE]


class ColumnSum:
    """One column sum of the kernel: its scheduler node, its loop body and sizes (the split
    cancelled: columns x all rows), and the buffer its final sum goes to."""

    def __init__(self, snode, body, xsizes: list, rsizes: list, target: str):
        self.snode, self.body, self.xsizes, self.rsizes, self.target = snode, body, xsizes, rsizes, target


class _ColumnOps(TileOps):
    """A column sum's body: its reduction accumulates into the program's partial sums."""

    def reduction(self, dtype, src_dtype, reduction_type, value):
        if reduction_type != "sum" or not isinstance(value, str):
            raise Unsupported(f"mix-order column reduction {reduction_type}")
        if not dtype.is_floating_point:  # the partials are float32
            raise Unsupported(f"mix-order column sum of {dtype}")
        return self.k.accumulate_column(value)

    def store_reduction(self, name, index, value):
        self.k.store_column(name, index, value)


class MixOrderKernelSource(TileKernelSource):
    """The row group's kernel (persistent), looping over ``split`` rows per program, that also
    accumulates the column sums ``columns`` into per-program partials (``WORKSPACE``)."""

    def __init__(self, plan: GroupPlan, columns: list[ColumnSum], name: str, launch, split: int,
                 elide: set[str] = frozenset(), row_accumulators: bool = False, rchunk: int = 0,
                 prefetch: bool = False):
        if plan.kind != "reduction" or not launch.persistent:
            raise Unsupported("mix-order: the row group must be a persistent reduction")
        if split % launch.xblock:
            raise Unsupported(f"mix-order: split {split} is not a multiple of XBLOCK {launch.xblock}")
        super().__init__(plan, name, launch, elide)
        self.columns = columns
        self.split = split
        if rchunk and (self.rblock % rchunk or not row_accumulators):
            raise Unsupported(f"mix-order: chunks of {rchunk} need row accumulators and RBLOCK {self.rblock} a multiple")
        self.rchunk = rchunk  # 0: [XBLOCK, RBLOCK] row tiles; else [XBLOCK, RBLOCK // RCHUNK, RCHUNK]
        # [XBLOCK, RBLOCK] accumulators, reduced over their rows after the loop (one row per step: the same)
        self.row_accumulators = row_accumulators or self.xblock == 1
        self.partials: list[str] = []  # accumulator variable per column sum, in workspace order
        self.targets: list[str] = []  # the buffer each partial's total goes to
        self._column: ColumnSum | None = None
        self.loop_at: int | None = None  # where a step's loads go (chunked rows; see _hoistable)
        self.prefetch = prefetch and bool(rchunk)  # the next step's loads made in this one (`_prefetch`)
        self._step_loads: list[str] = []
        self.loop_indent = ""
        self._to_loop = False

    @property
    def scalar_shape(self) -> str:
        return "[1, 1, 1]" if self.rchunk else super().scalar_shape

    def reduction(self, dtype, src_dtype, reduction_type, value):
        """Row reductions of chunked rows: over the chunk, then over the chunks, kept [XBLOCK, 1, 1]."""
        if not self.rchunk:
            return super().reduction(dtype, src_dtype, reduction_type, value)
        fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}.get(reduction_type)
        if fn is None or dtype == torch.bool or src_dtype == torch.bool or not isinstance(value, str):
            raise Unsupported(f"mix-order chunked rows: {reduction_type} of {dtype}")
        key = (reduction_type, dtype, src_dtype, value)
        if key not in self.reductions:
            acc_dtype = reductions.result_dtype(dtype, reduction_type)
            init = literal(reductions._identity(dtype, reduction_type), acc_dtype)
            if acc_dtype != src_dtype:
                value = self.define(f"{value}.to({tl_dtype(acc_dtype)})")
            masked = self.define(f"tl.where(rmask & xmask, {value}, {init})")
            # a row within one warp: its chunks first (adds in each thread), then one trip across lanes;
            # a row over several warps: each chunk across lanes first, then the chunks across warps
            if self.launch.num_warps <= self.xblock:
                chunks = f"{fn}({masked}, 1)[:, None, :]"
                self.reductions[key] = self.define(f"{fn}({chunks}, 2)[:, :, None]")
            else:
                self.reductions[key] = self.define(f"{fn}({fn}({masked}, 2), 1)[:, None, None]")
        return self.reductions[key]

    def store(self, name: str, index, value: str, reduced: bool = False, bounds: str | None = None,
              mode: str | None = None) -> None:
        """With chunks masked by chunk (`_row_mask`), a row's store takes 0 in the chunks past the row's end:
        the compiler folds the select in each slot, so nothing of those chunks is computed for the store."""
        if self._chunk_masked() and not reduced and mode is None and not self.masks:
            value = self.define(f"tl.where(rmask, {value}, 0)")
        super().store(name, index, value, reduced, bounds, mode)

    # -- the column sums ------------------------------------------------------------
    def accumulate_column(self, value: str) -> str:
        acc = f"colacc{len(self.partials)}"
        self.partials.append(acc)
        # rows past the end are left out; columns past the end are never stored, and where chunks past the
        # row's end are masked by chunk (`_row_mask`) they add -0.0, which the compiler folds (x + -0.0 is x)
        # so that their accumulators are constants, not registers
        if self._chunk_masked():
            masked = self.define(f"tl.where(xmask & rmask, {value}.to(tl.float32), -0.0)")
        else:
            masked = self.define(f"tl.where(xmask, {value}.to(tl.float32), 0.0)")
        addend = masked if self.row_accumulators else f"tl.sum({masked}, 0)[None, :]"
        self.emit(f"{acc} = {acc} + {addend}")
        return acc

    def _hoistable(self, name: str, expr) -> bool:
        """Loads of the same elements for every row (a norm's weight, at the columns' indices) are made
        once, before the loop over rows: not of a buffer the kernel writes (a later row would read it).
        With chunked rows, the loads of a step's rows are made first in the step (``loop_at``): a row over
        several warps has barriers in its reductions, which ptxas moves no load across."""
        self._to_loop = False
        if self.hoist_at is None or self.masks or name in self.written or name in self._writes:
            return False
        if expr.free_symbols <= set(self.rsyms) | self.size_args:
            return True
        self._to_loop = self.loop_at is not None and expr.free_symbols <= set(self.xsyms) | set(self.rsyms) | \
            self.size_args
        return self._to_loop

    def define(self, expr: str, hoist: bool = False) -> str:
        if not hoist or expr in self.cse:
            return super().define(expr, hoist)
        if not self._to_loop:  # before the loop: the step's first line moves down
            var = super().define(expr, hoist)
            if self.loop_at is not None:
                self.loop_at += 1
            return var
        outer = self.hoist_at, self.hoist_indent
        self.hoist_at, self.hoist_indent = self.loop_at, self.loop_indent
        try:
            var = super().define(expr, hoist)
            self._step_loads.append(var)
            return var
        finally:
            self.loop_at = self.hoist_at
            self.hoist_at, self.hoist_indent = outer

    def store_column(self, name: str, index, value: str) -> None:
        if value != self.partials[-1] or len(self.targets) != len(self.partials) - 1:
            raise Unsupported("mix-order: a column sum stores something else than its sum")
        flat = sum(sym * math.prod(self.plan.rsizes[i + 1:]) for i, sym in enumerate(self.rsyms))
        if not self._same_element(index, flat):  # the workspace holds the columns in row-major order
            raise Unsupported(f"mix-order: column sum {name} is stored at {index}, not row-major")
        self.targets.append(self._column.target)

    # -- whole kernel -------------------------------------------------------------
    def generate(self) -> str:
        from torch._inductor.virtualized import V

        plan = self.plan
        self.xsyms = [sympy.Symbol(f"x{i}", integer=True, nonnegative=True) for i in range(len(plan.xsizes))]
        self.rsyms = [sympy.Symbol(f"r{i}", integer=True, nonnegative=True) for i in range(len(plan.rsizes))]
        for column in self.columns:
            if not (_same_numel(column.xsizes, plan.rsizes) and _same_numel(column.rsizes, plan.xsizes)):
                raise Unsupported(f"mix-order: column sum over {column.xsizes} x {column.rsizes} does not "
                                  f"match rows {plan.xsizes} x {plan.rsizes}")
        if is_static(plan.rnumel):
            self.emit(f"rnumel = {plan.rnumel}")
        if self.rchunk:
            self.emit("rindex = (tl.arange(0, RBLOCK // RCHUNK) * RCHUNK)[None, :, None] + "
                      "tl.arange(0, RCHUNK)[None, None, :]")
        else:
            self.emit("rindex = tl.arange(0, RBLOCK)[None, :]")
        self.emit(self._row_mask())
        self._decode("rindex", [s.name for s in self.rsyms], plan.rsizes)
        head = len(self.lines)
        self.hoist_at, self.hoist_indent = head, "    " * self.indent
        self._writes = {self._real(dep.name) for node in plan.nodes for dep in node.snode.read_writes.writes}
        self.emit("xstart = tl.program_id(0) * SPLIT")
        self.emit("for xoffset in range(xstart, xstart + SPLIT, XBLOCK):")
        self.indent += 1
        self.emit(f"xindex = xoffset + tl.arange(0, XBLOCK)[:, {'None, None' if self.rchunk else 'None'}]")
        self.emit("xmask = xindex < xnumel")
        self._decode("xindex", [s.name for s in self.xsyms], plan.xsizes)
        if self.rchunk:
            self.loop_at, self.loop_indent = len(self.lines), "    " * self.indent
        for node in plan.nodes:
            self._emit_node(node, TileOps)
        for column in self.columns:
            self._column = column
            self.current = NodePlan(column.snode, "rpointwise", plan.xsizes, plan.rsizes)
            self.emit(node_comment(NodePlan(column.snode, "column sum", [], [])))
            args = [self._decoded(self.rsyms, plan.rsizes, column.xsizes),
                    self._decoded(self.xsyms, plan.xsizes, column.rsizes)]
            with V.set_ops_handler(_ColumnOps(self)):
                column.body(*args)
        self.current = self._column = None
        if self.prefetch:
            self._prefetch()
        self.indent -= 1
        if len(self.targets) != len(self.columns) or not self.partials:
            raise Unsupported("mix-order: a column sum did not store its sum")
        shape = "[XBLOCK, RBLOCK]" if self.row_accumulators else "[1, RBLOCK]"
        if self.rchunk:
            shape = "[XBLOCK, RBLOCK // RCHUNK, RCHUNK]"
        for i, acc in enumerate(self.partials):
            self.lines.insert(head + i, f"    {acc} = tl.zeros({shape}, tl.float32)")
        self.emit("programs = tl.num_programs(0)")
        for i, acc in enumerate(self.partials):
            total = f"tl.sum({acc}, 0)[None, :]" if self.row_accumulators and self.xblock > 1 else acc
            if self.rchunk:  # each warp's partials, combined once
                total = f"tl.sum({acc}, 0)[None, :, :]"
            self.emit(f"tl.store({WORKSPACE} + ({i} * programs + tl.program_id(0)) * rnumel + rindex, {total}, "
                      "mask=rmask)")
        self._check_int32()
        return self._assemble()

    def _row_mask(self) -> str:
        """The columns' mask. Chunked rows of a static length that is a multiple of ``RCHUNK`` (768 of RBLOCK
        1024) are masked by chunk, ``[1, chunks, 1]``: the chunk index is a constant in each of a thread's
        slots, so the compiler drops the chunks past the row's end (their loads, math and accumulators:
        a quarter of the registers and instructions at 768 columns), which it cannot see in
        ``rindex < rnumel``."""
        if self._chunk_masked():
            return f"rmask = (tl.arange(0, RBLOCK // RCHUNK) < {int(self.plan.rnumel) // self.rchunk})[None, :, None]"
        return "rmask = rindex < rnumel"

    def _chunk_masked(self) -> bool:
        rnumel = self.plan.rnumel
        return bool(self.rchunk and CHUNK_MASK and is_static(rnumel) and int(rnumel) % self.rchunk == 0
                    and int(rnumel) < self.rblock)

    def _prefetch(self) -> None:
        """Software pipelining of the step's loads (chunked rows, registers allowing): the first step's
        loads before the loop, each step loading the next one's rows (masked to the program's and the
        tensor's rows) before computing its own, which were loaded one step earlier, so that a warp's
        loads are in flight while it reduces, stores and accumulates.

        ```
        xindex = xstart + tl.arange(0, XBLOCK)[:, None, None]  ... tmp0 = tl.load(... x0 ...)
        for xoffset in range(xstart, xstart + SPLIT, XBLOCK):
            xindex_next = xindex + XBLOCK  ... tmp0_next = tl.load(... x0_next ...)
            ... the step, with tmp0 ...
            tmp0 = tmp0_next
        ```"""
        if not self._step_loads:
            return
        begin, end = self.loop_at - len(self._step_loads), self.loop_at
        step = [f"{self.loop_indent}{var} = " for var in self._step_loads]
        if [line[:len(head)] for line, head in zip(self.lines[begin:end], step)] != step:
            raise Unsupported("mix-order: the step's loads are not its first lines")
        columns = re.compile(r"\b(" + "|".join(sym.name for sym in self.rsyms) + r")\b")
        # row tiles only: a row's own values (a norm's mean and rstd, [XBLOCK, 1, 1]) carried across steps
        # would take the layout of their loads, not of the tiles they are broadcast into
        chosen = [i for i in range(begin, end) if self.rsyms and columns.search(self.lines[i])]
        if not chosen or any(re.search(r"\btmp\d+\b", self.lines[i].split(" = ", 1)[1]) for i in chosen):
            return  # an index or mask computed in the step: loaded in the step
        loads = [self.lines[i] for i in chosen]
        kept = [self.lines[i] for i in range(begin, end) if i not in chosen]
        names = [line.strip().split(" = ", 1)[0] for line in loads]
        head = next(i for i, line in enumerate(self.lines) if line.lstrip().startswith("for xoffset in range("))
        decode = self.lines[head + 1:begin]  # xindex, xmask, the row indices
        pattern = re.compile(r"\b(" + "|".join(["xindex", "xmask"] + [sym.name for sym in self.xsyms]) + r")\b")

        def renamed(line: str, suffix: str) -> str:
            return pattern.sub(lambda m: f"{m.group(1)}_{suffix}", line)

        outer = self.loop_indent[4:]
        first = [f"{outer}xindex_first = xstart + tl.arange(0, XBLOCK)[:, None, None]"]
        first += [outer + renamed(line, "first").lstrip() for line in decode[1:] + loads]
        ahead = [f"{self.loop_indent}xindex_next = xindex + XBLOCK",
                 f"{self.loop_indent}xmask_next = (xindex_next < xnumel) & (xindex_next < xstart + SPLIT)"]
        ahead += [renamed(line, "next") for line in decode[2:]]
        ahead += [renamed(line, "next").replace(f"{var} = ", f"{var}_next = ", 1) for var, line in zip(names, loads)]
        self.lines[begin:end] = ahead + kept
        self.lines[head:head] = first
        self.lines += [f"{self.loop_indent}{var} = {var}_next" for var in names]

    def _assemble(self) -> str:
        return _assemble_with_workspace(self, self.out_args)  # the partial sums: written

    def blocks(self) -> dict[str, int]:
        blocks = {"XBLOCK": self.xblock, "RBLOCK": self.rblock, "SPLIT": self.split}
        return {**blocks, "RCHUNK": self.rchunk} if self.rchunk else blocks

    def signature(self) -> tuple[dict[str, str], dict[str, int]]:
        sig, constexprs = super().signature()
        return {**sig, WORKSPACE: "*fp32"}, constexprs

    def programs(self):
        """The number of programs (each over ``split`` rows): a size expression."""
        xnumel = self.plan.xnumel
        if isinstance(xnumel, int):
            return -(-xnumel // self.split)
        return FloorDiv(xnumel + self.split - 1, self.split)


class WorkspaceSumSource(TileKernelSource):
    """The workspace's totals: for each column (``XBLOCK`` per program) and column sum, the sum over the
    mix-order kernel's programs (``RBLOCK`` per step), stored into the sum's buffer ``targets[i]`` in its
    dtype, then the pointwise nodes ``epilogue`` (over the columns) with the totals in registers."""

    def __init__(self, columns: list, programs, targets: list[str], epilogue: list, name: str, launch,
                 elide: set[str] = frozenset()):
        if launch.persistent:
            raise Unsupported("mix-order: the workspace sum loops over programs")
        plan = GroupPlan("reduction", list(columns), [programs])
        for snode in epilogue:
            sizes, rsizes = snode.get_ranges()
            sizes = [_size(s) for s in sizes]
            if rsizes or snode.is_reduction() or not _same_numel(sizes, plan.xsizes):
                raise Unsupported(f"mix-order: epilogue node {snode.get_name()} is not over the columns")
            plan.nodes.append(NodePlan(snode, "pointwise", sizes, []))
        super().__init__(plan, name, launch, elide)
        self.targets = targets

    def generate(self) -> str:
        from torch._inductor.virtualized import V

        plan = self.plan
        self.xsyms = [sympy.Symbol(f"x{i}", integer=True, nonnegative=True) for i in range(len(plan.xsizes))]
        self.rsyms = []
        self.emit("xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]")
        self.emit("xmask = xindex < xnumel")
        self._decode("xindex", [s.name for s in self.xsyms], plan.xsizes)
        accs = [f"wsacc{i}" for i in range(len(self.targets))]
        for acc in accs:
            self.emit(f"{acc} = tl.zeros([XBLOCK, RBLOCK], tl.float32)")
        self.emit("for roffset in range(0, rnumel, RBLOCK):")
        self.indent += 1
        self.emit("rindex = roffset + tl.arange(0, RBLOCK)[None, :]")
        self.emit("rmask = rindex < rnumel")
        for i, acc in enumerate(accs):  # the workspace: [column sums, programs (rnumel), columns (xnumel)]
            self.emit(f"{acc} = {acc} + tl.load({WORKSPACE} + ({i} * rnumel + rindex) * xnumel + xindex, "
                      "mask=xmask & rmask, other=0.0)")
        self.indent -= 1
        dtypes = self.__dict__.setdefault("var_dtypes", {})  # shared with the epilogue's ops (ops.py)
        flat = sum(sym * math.prod(plan.xsizes[i + 1:]) for i, sym in enumerate(self.xsyms))
        for acc, target in zip(accs, self.targets):
            total = self.define(f"tl.sum({acc}, 1)[:, None]")
            dtype = V.graph.get_dtype(target)
            if str(dtype) != "torch.float32":  # rounded once, as the sum's own kernel would
                total = self.define(f"{total}.to({tl_dtype(dtype)})")
            dtypes[total] = dtype
            self.store(target, flat, total, reduced=True)
        for node in plan.nodes:
            self._emit_node(node, TileOps)
        self.current = None
        self._check_int32()
        return self._assemble()

    def _assemble(self) -> str:
        return _assemble_with_workspace(self, self.in_args)  # the partial sums: read

    def signature(self) -> tuple[dict[str, str], dict[str, int]]:
        sig, constexprs = super().signature()
        return {**sig, WORKSPACE: "*fp32"}, constexprs
