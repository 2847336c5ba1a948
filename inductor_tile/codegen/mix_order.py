"""One kernel for a row reduction and column sums over the same rows (mix-order reductions).

Layer norm and RMSNorm backward reduce ``x`` and ``dy`` along each row (the input gradient)
and along each column (the weight and bias gradients: sums over all rows). Two kernels read
the inputs twice. Here each program runs over ``SPLIT`` consecutive rows, ``XBLOCK`` rows at a
time, with whole rows in one block (persistent); it computes the row group exactly as its own
kernel would, and adds each column sum's per-element value into a ``[1, RBLOCK]`` float32
accumulator. At the end the program stores its partial sums to a workspace
``[column sums, programs, row length]``; the wrapper sums the workspace over programs.

```
for xoffset in range(pid * SPLIT, pid * SPLIT + SPLIT, XBLOCK):
    xindex = xoffset + tl.arange(0, XBLOCK)[:, None]
    ... the row group's nodes ...
    colacc0 = colacc0 + tl.sum(tl.where(xmask & rmask, value, 0.0), 0)[None, :]
tl.store(ws_ptr + (0 * programs + pid) * rnumel + rindex, colacc0, mask=rmask)
```

A column sum's node iterates (columns) x (rows): its loop body is called with its column
indices decoded from the kernel's ``rindex`` and its row indices from ``xindex``, so its loads
of the same input at the same element are the row group's loads (one read).
"""

from __future__ import annotations

import math

import sympy
from torch.utils._sympy.functions import FloorDiv

from .common import Unsupported
from .kernel import TileKernelSource, node_comment
from .ops import TileOps
from .plan import GroupPlan, NodePlan, _same_numel, is_static

WORKSPACE = "ws_ptr"


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
        return self.k.accumulate_column(value)

    def store_reduction(self, name, index, value):
        self.k.store_column(name, index, value)


class MixOrderKernelSource(TileKernelSource):
    """The row group's kernel (persistent), looping over ``split`` rows per program, that also
    accumulates the column sums ``columns`` into per-program partials (``WORKSPACE``)."""

    def __init__(self, plan: GroupPlan, columns: list[ColumnSum], name: str, launch, split: int,
                 elide: set[str] = frozenset()):
        if plan.kind != "reduction" or not launch.persistent:
            raise Unsupported("mix-order: the row group must be a persistent reduction")
        if split % launch.xblock:
            raise Unsupported(f"mix-order: split {split} is not a multiple of XBLOCK {launch.xblock}")
        super().__init__(plan, name, launch, elide)
        self.columns = columns
        self.split = split
        self.partials: list[str] = []  # accumulator variable per column sum, in workspace order
        self.targets: list[str] = []  # the buffer each partial's total goes to
        self._column: ColumnSum | None = None

    # -- the column sums ------------------------------------------------------------
    def accumulate_column(self, value: str) -> str:
        acc = f"colacc{len(self.partials)}"
        self.partials.append(acc)
        masked = self.define(f"tl.where(xmask & rmask, {value}.to(tl.float32), 0.0)")
        # one row per step (GPUs' long rows): the row is the [1, RBLOCK] addend itself
        addend = masked if self.xblock == 1 else f"tl.sum({masked}, 0)[None, :]"
        self.emit(f"{acc} = {acc} + {addend}")
        return acc

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
        self.emit("rindex = tl.arange(0, RBLOCK)[None, :]")
        self.emit("rmask = rindex < rnumel")
        self._decode("rindex", [s.name for s in self.rsyms], plan.rsizes)
        head = len(self.lines)
        self.emit("xstart = tl.program_id(0) * SPLIT")
        self.emit("for xoffset in range(xstart, xstart + SPLIT, XBLOCK):")
        self.indent += 1
        self.emit("xindex = xoffset + tl.arange(0, XBLOCK)[:, None]")
        self.emit("xmask = xindex < xnumel")
        self._decode("xindex", [s.name for s in self.xsyms], plan.xsizes)
        for node in plan.nodes:
            self.current = node
            self.emit(node_comment(node))
            with V.set_ops_handler(TileOps(self)):
                node.snode._body(*self._loop_args(node))
        for column in self.columns:
            self._column = column
            self.current = NodePlan(column.snode, "rpointwise", plan.xsizes, plan.rsizes)
            self.emit(node_comment(NodePlan(column.snode, "column sum", [], [])))
            args = [self._decoded(self.rsyms, plan.rsizes, column.xsizes),
                    self._decoded(self.xsyms, plan.xsizes, column.rsizes)]
            with V.set_ops_handler(_ColumnOps(self)):
                column.body(*args)
        self.current = self._column = None
        self.indent -= 1
        if len(self.targets) != len(self.columns) or not self.partials:
            raise Unsupported("mix-order: a column sum did not store its sum")
        for i, acc in enumerate(self.partials):
            self.lines.insert(head + i, f"    {acc} = tl.zeros([1, RBLOCK], tl.float32)")
        self.emit("programs = tl.num_programs(0)")
        for i, acc in enumerate(self.partials):
            self.emit(f"tl.store({WORKSPACE} + ({i} * programs + tl.program_id(0)) * rnumel + rindex, {acc}, "
                      "mask=rmask)")
        self._check_int32()
        return self._assemble()

    def _assemble(self) -> str:
        self.args[WORKSPACE] = WORKSPACE
        self.out_args.append(WORKSPACE)
        try:
            return super()._assemble()
        finally:
            self.out_args.pop()
            del self.args[WORKSPACE]

    def blocks(self) -> dict[str, int]:
        return {"XBLOCK": self.xblock, "RBLOCK": self.rblock, "SPLIT": self.split}

    def signature(self) -> tuple[dict[str, str], dict[str, int]]:
        sig, constexprs = super().signature()
        return {**sig, WORKSPACE: "*fp32"}, constexprs

    def programs(self):
        """The number of programs (each over ``split`` rows): a size expression."""
        xnumel = self.plan.xnumel
        if isinstance(xnumel, int):
            return -(-xnumel // self.split)
        return FloorDiv(xnumel + self.split - 1, self.split)
