"""The TTIR optimisation pipeline: one flat list of passes, read top to bottom."""

from __future__ import annotations

import os

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from ..ir.context import make_context
from .canonicalize import CanonicalizePass
from .constant_fold import ConstantFoldPass
from .cse import CommonSubexpressionEliminationPass
from .dce import DeadCodeEliminationPass
from .licm import LoopInvariantCodeMotionPass

PIPELINE: list[ModulePass] = [
    # Remove no-op shape ops and push splats outward first, so that constants behind
    # broadcasts/reshapes become visible as `splat(constant)` to the folder.
    CanonicalizePass(),
    # Evaluate arithmetic on constants (index math on BLOCK sizes, masks like `x < 0`).
    ConstantFoldPass(),
    # Merge the duplicates the frontend emits (splats of the same scalar, the same
    # make_range, repeated offsets) before LICM, so each hoisted value is hoisted once.
    CommonSubexpressionEliminationPass(),
    # Move loop-invariant pure ops (pointer bases, ranges, masks of invariant bounds)
    # out of scf.for; loads and stores stay.
    LoopInvariantCodeMotionPass(),
    # Hoisting and merging expose new patterns (addptr chains, selects on constants).
    CanonicalizePass(),
    # Finally drop everything left unused: folded constants, dead loads.
    DeadCodeEliminationPass(),
]


def optimize_ttir(module: ModuleOp, ctx: Context | None = None) -> ModuleOp:
    """Run `PIPELINE` on `module` in place and return it, verified. With the environment
    variable TILE_VERIFY=1 the module is also verified after every pass."""
    ctx = ctx or make_context()
    verify_each = os.environ.get("TILE_VERIFY") == "1"
    for module_pass in PIPELINE:
        module_pass.apply(ctx, module)
        if verify_each:
            _verify(module, f"after {module_pass.name}")
    _verify(module, "after the TTIR pipeline")
    return module


def _verify(module: ModuleOp, where: str) -> None:
    try:
        module.verify()
    except VerifyException as error:
        raise VerifyException(f"{where}: {error}") from error
