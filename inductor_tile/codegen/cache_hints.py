"""Cache hints on the loads of generated GPU kernels, given where Inductor's Triton kernels give them.

A load's hint follows from its index and where it is read (``LoadHints.for_load``):

- broadcast (its index leaves out a loop dim of the kernel's tile over which it is read: a norm's
  weight in a row reduction, a bias in a pointwise kernel) or not coalesced (no tile dim along
  which it steps by one element: a transposed read, a gather): other lanes and programs read the
  same lines again, ``eviction_policy='evict_last'``;
- otherwise, read inside a reduction (persistent or looped): ``evict_last`` when the kernel loads
  the same buffer again later (a looped layer norm's first pass over its rows, whose second pass
  reads them again) and the load walks the reduced dims or is indirect, else ``evict_first``.
  That is known only once the whole kernel is generated: the line holds a placeholder until
  ``LoadHints.resolve``;
- with Inductor's ``config.triton.skip_l1_cache`` (``TORCHINDUCTOR_SKIP_L1=1``): a coalesced load
  outside reductions, not broadcast, of a buffer the kernel's nodes read once skips L1
  (``cache_modifier='.cg'``).

A load of one element (a constant index) gets none, as in Inductor.  Only GPU kernels (launched
with ``num_warps``) get hints: the CPU target ignores them, and its sources (hence its kernel cache)
stay as they were.  AMD ignores them too.  Stores get none (Inductor gives none).

``config.cache_hints`` (``TILE_CACHE_HINTS``) picks how many: ``on``, all of the above; ``weights``
(the default), only the first rule's loads that every row of a reduction shares (``_shared_by_rows``:
a norm's weight and bias, whose index walks the reduced dims and leaves out the rows); ``off``, none.  The rows'
``evict_first`` made layernorm 8192x1024 18% slower on an H200 (its rows no longer stayed in L2 from one
call to the next), and Inductor 2.11's persistent reductions give their rows no hint either.
"""

from __future__ import annotations

import collections
import re

import sympy

_DEFERRED = re.compile(r"'<deferred(\d+)>'")


def _is_one(size) -> bool:
    return sympy.sympify(size) == 1


def _flat_step(syms: list, sizes: list) -> dict | None:
    """The loop indices (of one tile dim's loops) at flat position 1: the innermost loop longer than
    one steps; None when the dim has one element."""
    point = {sym: 0 for sym in syms}
    for sym, size in reversed(list(zip(syms, sizes))):
        if not _is_one(size):
            point[sym] = 1
            return point
    return None


class LoadHints:
    """The hints of one kernel's loads (``kernel``: a ``TileKernelSource`` being generated)."""

    def __init__(self, kernel):
        self.k = kernel
        self.loads: collections.Counter = collections.Counter()  # buffer -> loads emitted so far
        self.deferred: list[tuple[str, int, bool]] = []  # (buffer, its loads then, walks r or indirect)

    def mode(self) -> str:
        """"on", "weights" or "off" (``config.cache_hints``; True and False read as "on" and "off");
        "off" for a kernel launched without ``num_warps`` (a CPU kernel)."""
        from .. import config

        mode = {True: "on", False: "off"}.get(config.cache_hints, config.cache_hints)
        return mode if self.k.launch.num_warps is not None else "off"

    def enabled(self) -> bool:
        return self.mode() != "off"

    # -- the kernel's tile ---------------------------------------------------------------
    def _inside_reduction(self) -> bool:
        node = self.k.current
        return self.k.two_d and node is not None and node.kind != "pointwise"

    def _tile_dims(self) -> list[tuple[list, list]]:
        """(loop symbols, sizes) of each dim of the kernel's tile: x (or y and x) and, in reductions, r."""
        k = self.k
        xsyms, xsizes = list(k.xsyms), list(k.plan.xsizes)
        if k.tiled:
            split = k.launch.ysplit
            dims = [(xsyms[:split], xsizes[:split]), (xsyms[split:], xsizes[split:])]
        else:
            dims = [(xsyms, xsizes)]
        if k.two_d:
            dims.append((list(k.rsyms), list(k.plan.rsizes)))
        return dims

    def _active_dims(self) -> list[tuple[list, list]]:
        """The tile dims a load sees where it is read: r only inside a reduction's nodes."""
        dims = self._tile_dims()
        return dims if not self.k.two_d or self._inside_reduction() else dims[:-1]

    @staticmethod
    def _broadcast(expr, dims) -> bool:
        used = expr.free_symbols
        return any(sym not in used and not _is_one(size) for syms, sizes in dims for sym, size in zip(syms, sizes))

    def _shared_by_rows(self, expr) -> bool:
        """Whether `expr` is a reduction kernel's index that walks the reduced dims (r) and none of its
        row dims (x): every row, in every program, reads the same elements (a norm's weight). Not in a
        kernel of one row (a loss summed over all its elements), which reads every element once."""
        if not self.k.two_d:
            return False
        used = expr.free_symbols
        rows = [sym for sym, size in zip(self.k.xsyms, self.k.plan.xsizes) if not _is_one(size)]
        return bool(rows) and bool(used & set(self.k.rsyms)) and not used & set(rows)

    def _coalesced(self, expr) -> bool:
        """Whether some tile dim's flat step moves the address by one element."""
        for syms, sizes in self._tile_dims():
            step = _flat_step(syms, sizes)
            if step is None:
                continue
            stride = sympy.expand(expr.subs(step) - expr.subs({sym: 0 for sym in syms}))
            if stride == 1:
                return True
        return False

    def _read_once(self, names: set[str]) -> bool:
        """Whether the kernel's nodes read the buffer (under any of `names`) once."""
        reads = sum(1 for node in self.k.plan.nodes for dep in node.snode.read_writes.reads if dep.name in names)
        return reads <= 1

    # -- hints -------------------------------------------------------------------------------
    def for_load(self, name: str, given_name: str, expr) -> str:
        """The hint arguments (``", eviction_policy=..."`` or "") of a new load of buffer `name` (asked
        for as `given_name`) at index `expr`; counts the load."""
        self.loads[name] += 1
        mode = self.mode()
        if mode == "off" or not expr.free_symbols:
            return ""
        k = self.k
        loop = set(k.xsyms) | set(k.rsyms)
        indirect = bool(expr.free_symbols - loop - k.size_args)
        if mode == "weights":
            return ", eviction_policy='evict_last'" if not indirect and self._shared_by_rows(expr) else ""
        broadcast = not indirect and self._broadcast(expr, self._active_dims())
        coalesced = self._coalesced(expr)
        if broadcast or not coalesced:
            return ", eviction_policy='evict_last'"
        if self._inside_reduction():
            walks = indirect or bool(expr.free_symbols & set(k.rsyms))
            self.deferred.append((name, self.loads[name], walks))
            return f", eviction_policy='<deferred{len(self.deferred) - 1}>'"
        from torch._inductor import config as inductor_config

        if inductor_config.triton.skip_l1_cache and self._read_once({name, given_name}):
            return ", cache_modifier='.cg'"
        return ""

    def resolve(self, lines: list[str]) -> list[str]:
        """`lines` with each deferred policy decided: evict_last for a load of a buffer loaded again
        after it (when it walks the reduced dims or is indirect), evict_first otherwise."""
        if not self.deferred:
            return lines

        def decide(match) -> str:
            name, loads_then, walks = self.deferred[int(match.group(1))]
            return "'evict_last'" if walks and self.loads[name] > loads_then else "'evict_first'"

        return [_DEFERRED.sub(decide, line) if "<deferred" in line else line for line in lines]
