"""TTIR passes, one per file; `PASSES` maps each pass's CLI name to its class."""

from __future__ import annotations

from xdsl.passes import ModulePass

from .canonicalize import CanonicalizePass
from .constant_fold import ConstantFoldPass
from .cse import CommonSubexpressionEliminationPass
from .dce import DeadCodeEliminationPass
from .licm import LoopInvariantCodeMotionPass

PASSES: dict[str, type[ModulePass]] = {
    pass_class.name: pass_class
    for pass_class in (
        CanonicalizePass,
        ConstantFoldPass,
        CommonSubexpressionEliminationPass,
        DeadCodeEliminationPass,
        LoopInvariantCodeMotionPass,
    )
}


def get_pass(name: str) -> ModulePass:
    """An instance of the pass called `name` (e.g. "constant-fold")."""
    if name not in PASSES:
        raise KeyError(f"unknown pass {name!r}; known passes: {', '.join(sorted(PASSES))}")
    return PASSES[name]()


__all__ = ["PASSES", "get_pass"]
