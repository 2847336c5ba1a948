"""Which loop variables each scheduler node of a fused group gets: pointwise or reduction shape."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .common import Unsupported


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
