"""TTIR and TTGIR passes, one per file; `PASSES` maps each pass's CLI name to its class."""

from __future__ import annotations

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_pipeline

from .accelerate_matmul import AccelerateMatmulPass
from .broadcast_compare_operands import BroadcastCompareOperandsPass
from .canonicalize import CanonicalizePass
from .coalesce import CoalescePass
from .constant_fold import ConstantFoldPass
from .convert_to_ttgir import ConvertToTTGIRPass
from .cse import CommonSubexpressionEliminationPass
from .dce import DeadCodeEliminationPass
from .fold_known_selects import FoldKnownSelectsPass
from .licm import LoopInvariantCodeMotionPass
from .merge_masked_loads import MergeMaskedLoadsPass
from .pipeline_async_copies import PipelineAsyncCopiesPass
from .pipeline_loads import PipelineLoadsPass
from .pointer_induction import PointerInductionPass
from .remove_layout_conversions import RemoveLayoutConversionsPass
from .sanitize import SanitizePass
from .test_print_axis_info import TestPrintAxisInfoPass

PASSES: dict[str, type[ModulePass]] = {
    pass_class.name: pass_class
    for pass_class in (
        CanonicalizePass,
        ConstantFoldPass,
        CommonSubexpressionEliminationPass,
        MergeMaskedLoadsPass,
        FoldKnownSelectsPass,
        DeadCodeEliminationPass,
        LoopInvariantCodeMotionPass,
        SanitizePass,  # TILE_SANITIZE=1, before the TTIR pipeline
        BroadcastCompareOperandsPass,  # CPU target
        # TTGIR
        ConvertToTTGIRPass,
        CoalescePass,
        RemoveLayoutConversionsPass,
        TestPrintAxisInfoPass,
        AccelerateMatmulPass,  # NVIDIA sm_80+
        PipelineLoadsPass,  # GPUs, before convert-to-ttgir
        PointerInductionPass,  # GPUs, before pipeline-loads
        PipelineAsyncCopiesPass,  # NVIDIA sm_80+, last
    )
}


def get_pass(name: str) -> ModulePass:
    """An instance of the pass called `name` (e.g. "constant-fold")."""
    if name not in PASSES:
        raise KeyError(f"unknown pass {name!r}; known passes: {', '.join(sorted(PASSES))}")
    return PASSES[name]()


def parse_pass_pipeline(spec: str) -> list[ModulePass]:
    """The passes of an mlir-opt style spec, options in braces:
    `convert-to-ttgir{num-warps=4 threads-per-warp=32},coalesce,cse`."""
    passes: list[ModulePass] = []
    for arg_spec in parse_pipeline(spec):
        if arg_spec.name not in PASSES:
            raise KeyError(f"unknown pass {arg_spec.name!r}; known passes: {', '.join(sorted(PASSES))}")
        passes.append(PASSES[arg_spec.name].from_spec(arg_spec))
    return passes


__all__ = ["PASSES", "get_pass", "parse_pass_pipeline"]
