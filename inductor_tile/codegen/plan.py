"""Which loop variables each scheduler node of a fused group gets: pointwise or reduction shape.

Loop sizes are Python ints when static, sympy expressions over the graph's size symbols
(``s0``, ``s1``, ... of ``V.graph.sizevars``) under dynamic shapes.  ``hint`` and ``bound``
turn a size into the integers the block-size heuristics need.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import sympy

from .common import Unsupported


def _size(value):
    """A loop size: an int when static, else a sympy expression over backed size symbols."""
    expr = sympy.sympify(value)
    if expr.is_Integer:
        return int(expr)
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols

    if free_unbacked_symbols(expr):
        raise Unsupported(f"data-dependent (unbacked) size {expr}")
    return expr


def is_static(size) -> bool:
    return isinstance(size, int)


def hint(size) -> int:
    """The size's value for the example inputs Inductor compiles with (for heuristics only)."""
    if is_static(size):
        return size
    from torch._inductor.virtualized import V

    sizevars = V.graph.sizevars
    get = getattr(sizevars, "optimization_hint", None) or sizevars.size_hint  # the name differs across torch versions
    return int(get(size))


def bound(size) -> int | None:
    """A static upper bound of the size (its value when static), None when it is unbounded."""
    if is_static(size):
        return size
    from torch._inductor.virtualized import V

    try:
        upper = V.graph.sizevars.shape_env.bound_sympy(size).upper
    except Exception:  # no shape env or value ranges: treat as unbounded
        return None
    if isinstance(upper, (int, sympy.Integer)) and not isinstance(upper, bool):
        value = int(upper)
        return value if value < 2**31 else None
    return None


@dataclass
class NodePlan:
    """One scheduler node inside a kernel: which loop variables its body gets."""

    snode: object
    kind: str  # "pointwise" (over the x dims), "rpointwise" (over x and r dims), "reduction"
    xsizes: list
    rsizes: list  # [] for an rpointwise node whose sizes do not split into rows x reduced
    # elements ([4096] next to a [64] x [64] reduction): its indices decode the flat one


@dataclass
class GroupPlan:
    kind: str  # "pointwise" or "reduction"
    xsizes: list  # ints, or sympy expressions under dynamic shapes
    rsizes: list
    nodes: list[NodePlan] = field(default_factory=list)

    @property
    def xnumel(self):
        return math.prod(self.xsizes)

    @property
    def rnumel(self):
        return math.prod(self.rsizes)

    @property
    def is_static(self) -> bool:
        return all(is_static(s) for s in self.xsizes + self.rsizes)


def _numel(sizes: list):
    return sympy.expand(sympy.sympify(math.prod(sizes)))


def _same_numel(a: list, b: list) -> bool:
    return a == b or sympy.expand(_numel(a) - _numel(b)) == 0


def _split_at(sizes: list, rsizes: list) -> int | None:
    """The k such that ``sizes[k:]`` covers exactly the reduced elements (None: no such split)."""
    want = _numel(rsizes)
    for k in range(len(sizes), -1, -1):
        if sympy.expand(_numel(sizes[k:]) - want) == 0:
            return k
    return None


def plan_group(snodes) -> GroupPlan:
    """Decide how the nodes of one fused group share a kernel, or raise Unsupported.

    Every node iterates over the same elements in row-major order: pointwise groups need
    every node over the same number of elements; reduction groups need every reduction
    over the same (sizes, reduction sizes), and pointwise nodes over the reduction's
    output elements or over output x reduced elements (split between the two where a dim
    boundary does, else flat). A node whose sizes differ from the kernel's (``[64]`` next to
    ``[2, 32]``) gets its indices decoded from the flat one. Symbolic sizes compare as
    expressions.
    """
    ranges = []
    for snode in snodes:
        if not hasattr(snode, "_body") or snode.is_template() or snode.is_extern():
            raise Unsupported(f"{type(snode).__name__} is not a loop node")
        sizes, rsizes = snode.get_ranges()
        ranges.append(([_size(s) for s in sizes], [_size(s) for s in rsizes], snode.is_reduction()))
    reductions = [(x, r) for x, r, is_red in ranges if is_red]
    if not reductions:
        first = ranges[0][0]
        if any(not _same_numel(x, first) for x, _, _ in ranges):
            raise Unsupported(f"pointwise nodes over different numbers of elements: "
                              f"{' vs '.join(str(x) for x, _, _ in ranges)}")
        plan = GroupPlan("pointwise", first, [])
        plan.nodes = [NodePlan(s, "pointwise", x, []) for s, (x, _, _) in zip(snodes, ranges)]
        return plan
    xs, rs = reductions[0]
    if any(not (_same_numel(x, xs) and _same_numel(r, rs)) for x, r in reductions):
        raise Unsupported(f"reductions over different numbers of rows or reduced elements: "
                          f"{' vs '.join(f'{x} x {r}' for x, r in reductions)}")
    plan = GroupPlan("reduction", xs, rs)
    for snode, (x, r, is_red) in zip(snodes, ranges):
        if is_red:
            plan.nodes.append(NodePlan(snode, "reduction", x, r))
        elif not r and _same_numel(x, xs):
            plan.nodes.append(NodePlan(snode, "pointwise", x, []))
        elif not r and rs and x == xs + rs:
            plan.nodes.append(NodePlan(snode, "rpointwise", xs, rs))
        elif not r and rs and (k := _split_at(x, rs)) is not None and _same_numel(x[:k], xs):
            plan.nodes.append(NodePlan(snode, "rpointwise", x[:k], x[k:]))
        elif not r and rs and _same_numel(x, xs + rs):
            plan.nodes.append(NodePlan(snode, "rpointwise", x, []))
        else:
            raise Unsupported(f"pointwise node over {x} does not match the reduction's loops {xs} x {rs}")
    return plan
