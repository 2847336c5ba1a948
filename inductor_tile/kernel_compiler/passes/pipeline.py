"""The TTIR optimisation pipeline and the TTIR -> TTGIR stage: flat lists of passes, read top to bottom."""

from __future__ import annotations

import os

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from ..ir.context import make_context
from .accelerate_matmul import AccelerateMatmulPass
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

PIPELINE: list[ModulePass] = [
    # Remove no-op shape ops and push splats outward first, so that constants behind
    # broadcasts/reshapes become visible as `splat(constant)` to the folder.
    CanonicalizePass(),
    # Evaluate arithmetic on constants (index math on BLOCK sizes, masks like `x < 0`).
    ConstantFoldPass(),
    # Merge the duplicates the frontend emits (splats of the same scalar, the same
    # make_range, repeated offsets) before LICM, so each hoisted value is hoisted once.
    CommonSubexpressionEliminationPass(),
    # One load where two read the same pointers under masks that differ by conjuncts (the shared
    # pointers and mask leaves are CSE's results).
    MergeMaskedLoadsPass(),
    # Selects nested in another select's branch on a condition that branch decides (Inductor's
    # index-heavy kernels nest `where`s on a few conditions many times over).
    FoldKnownSelectsPass(),
    # Move loop-invariant pure ops (pointer bases, ranges, masks of invariant bounds)
    # out of scf.for; loads and stores stay.
    LoopInvariantCodeMotionPass(),
    # Hoisting and merging expose new patterns (addptr chains, selects on constants).
    CanonicalizePass(),
    # Finally drop everything left unused: folded constants, dead loads.
    DeadCodeEliminationPass(),
]


#: TILE_VERIFY's values: after every pass, after each pipeline (the test suite's setting: tests/conftest.py)
VERIFY_EACH_PASS, VERIFY_AT_END = "1", "end"


def verifies(generated: bool) -> bool:
    """Whether a pipeline verifies the IR it made (once, at its end) for a kernel: always for kernels
    users write (an error of theirs that the front end lets through shows there, not in the lowering);
    for the torch.compile backend's generated kernels (`generated`) only under TILE_VERIFY (`end` or
    `1`) or TILE_DEBUG=1.  Their code comes from our codegen, whose every kernel the test suite compiles
    verified, and verifying costs a cold start ~8% of each kernel's compile (1.07 of 13 CPU s over the
    155 recorded kernels of model_benchmarks.nvidia_compile_stages)."""
    if not generated:
        return True
    return os.environ.get("TILE_VERIFY") in (VERIFY_EACH_PASS, VERIFY_AT_END) or os.environ.get("TILE_DEBUG") == "1"


def optimize_ttir(module: ModuleOp, ctx: Context | None = None, verify: bool = True) -> ModuleOp:
    """Run `PIPELINE` on `module` in place and return it, verified unless `verify` is False (see
    `verifies`). With the environment variable TILE_VERIFY=1 the module is verified after every pass."""
    ctx = ctx or make_context()
    verify_each = os.environ.get("TILE_VERIFY") == VERIFY_EACH_PASS
    for module_pass in PIPELINE:
        module_pass.apply(ctx, module)
        if verify_each:
            _verify(module, f"after {module_pass.name}")
    if verify or verify_each:
        _verify(module, "after the TTIR pipeline")
    return module


#: shared memory (bytes) left beside the cp.async rings for the exchanges inside the loop
EXCHANGE_MARGIN = 8192


#: TILE_PIPELINE's words (comma-separated): "1" rings; "sync" rings whose wgmma dots wait in their own
#: iteration; "nofence" no proxy fence after each cp.async wait; "padded" wgmma slots in padded core
#: matrices instead of swizzled rows; "accsync" a dot on a rescaled accumulator waits for itself;
#: "resident" a loop-invariant wgmma a (attention's q) read from a one-slot ring, not registers (the
#: default for one warpgroup: see `resident_operands`). Any of them turns the rings on; e.g. "sync,padded".
PIPELINE_WORDS = ("1", "sync", "nofence", "padded", "accsync", "resident")


def pipeline_modes(mma_version: int = 3) -> frozenset[str]:
    """The words of TILE_PIPELINE (an unknown one is an error pointing at the variable); unset: rings
    ({"1"}) for Hopper's wgmma dots (`mma_version` 3), none for mma.sync."""
    setting = os.environ.get("TILE_PIPELINE", "").strip()
    if not setting:
        return frozenset({"1"}) if mma_version >= 3 else frozenset()
    words = frozenset(w.strip() for w in setting.split(",") if w.strip())
    unknown = words - set(PIPELINE_WORDS) - {"0"}
    if unknown:
        raise ValueError(f"TILE_PIPELINE={os.environ['TILE_PIPELINE']!r}: unknown {sorted(unknown)}; "
                         f"use 0 or a comma-separated list of {', '.join(PIPELINE_WORDS)}")
    return words - {"0"}


def resident_operands(num_warps: int) -> bool:
    """Whether loop-invariant wgmma a operands (attention's q) are read from a one-slot ring: by default
    for one warpgroup (H200, causal attention s=2048 fp16, TFLOP/s registers / ring: d128 64x64/4w
    282 / 289, Triton 292; d64 213 / 213) but not for two (d128 128x64/8w 255-260 / 247-249: q's ring
    costs the k/v rings room); with TILE_PIPELINE set, only where it names "resident"."""
    if not os.environ.get("TILE_PIPELINE", "").strip():
        return num_warps <= 4
    return "resident" in pipeline_modes()


def async_copy_stages(num_stages: int, mma_version: int) -> int:
    """The stages of the cp.async rings for a launch's `num_stages` (tensor-core targets only; 1: none,
    the operands are prefetched through registers instead). On by default for wgmma (H100, session 13:
    fp16/bf16 4096^3 matmuls 340-357 -> 470-620 TFLOP/s, causal attention d=64 133 -> 176; Triton
    531-682 / 201-206); TILE_PIPELINE=0 turns them off, =1 on for mma.sync too (untimed there), and
    each word of `PIPELINE_WORDS` changes them (to time what each costs: to_llvm/dot_async.py)."""
    if mma_version < 2 or not pipeline_modes(mma_version):
        return 1
    return num_stages


def ttgir_pipeline(num_warps: int, threads_per_warp: int, mma_version: int = 0,
                   num_stages: int = 3, shared_limit: int = 166912, amd_arch: str = "") -> list[ModulePass]:
    """The TTGIR passes for a launch of `num_warps` warps of `threads_per_warp` lanes; `mma_version`
    2 puts fp16/bf16 dots on tensor cores (mma.sync, NVIDIA sm_80+), 3 also lets Hopper's wgmma compute
    the dots a warpgroup can (sm_90 unless TILE_WGMMA=0), 0 keeps every dot on FMAs. `num_stages` >= 2
    copies the dot operands of loops that many iterations ahead into shared memory (cp.async), in
    at most `shared_limit` bytes (the target's) less a margin for the exchanges inside the loop.
    `amd_arch` (an AMD architecture with MFMA or WMMA) puts fp16/bf16 dots on its matrix cores instead."""
    stages = async_copy_stages(num_stages, mma_version)
    return [
        # Pointer tiles stepped around loops of dots become functions of the loop index, and
        # loops of dots load the next iteration's operands while this one computes (TTIR still;
        # with cp.async rings, only the loads that will not go into a ring).
        *([PointerInductionPass(), PipelineLoadsPass(ring_num_warps=num_warps if stages >= 2 else 0,
                                                  num_warps=num_warps, mma_version=mma_version)]
          if mma_version >= 2 else []),
        # Every tensor gets a layout (one element per thread, reductions as slices) and every
        # op's operands are converted to the layout it needs: the IR is correct from here on.
        ConvertToTTGIRPass(num_warps=num_warps, threads_per_warp=threads_per_warp),
        # Dots that tensor cores can compute take the mma layouts (before coalescing, so the
        # layout passes below see the final dot layouts).
        *([AccelerateMatmulPass(mma_version)] if mma_version >= 2 else []),
        *([AccelerateMatmulPass(amd_arch=amd_arch)] if amd_arch else []),
        # Loads and stores take the layout of their widest aligned access; needs every tensor
        # to have a layout already, and converts around the memory ops to keep the IR correct.
        CoalescePass(),
        # Spread the coalesced layouts to the ops around them and rebuild cheap index math in
        # place, so that most of the conversions inserted so far disappear.
        RemoveLayoutConversionsPass(),
        # Rebuilt splats and ranges are duplicates of each other (one per converted use).
        CommonSubexpressionEliminationPass(),
        # The producers that were rebuilt in another layout are now unused.
        DeadCodeEliminationPass(),
        # Loads feeding dots in loops go through rings of shared-memory slots, filled by cp.async
        # num_stages - 1 iterations ahead (needs the final layouts).
        *([PipelineAsyncCopiesPass(stages, shared_limit - EXCHANGE_MARGIN,
                                   dots_in_flight="sync" not in pipeline_modes(),
                                   rescaled_in_flight="accsync" not in pipeline_modes(),
                                   resident=resident_operands(num_warps)),
           CommonSubexpressionEliminationPass(), DeadCodeEliminationPass()]
          if stages >= 2 else []),
    ]


def make_ttgir(module: ModuleOp, num_warps: int, threads_per_warp: int, ctx: Context | None = None,
               mma_version: int = 0, num_stages: int = 3, shared_limit: int = 166912, amd_arch: str = "",
               verify: bool = True) -> ModuleOp:
    """Turn the (optimized) TTIR `module` into TTGIR in place and return it, verified unless `verify`
    is False (see `verifies`). For the CPU target pass num_warps=1, threads_per_warp=1: one thread holds
    the whole tile. With TILE_VERIFY=1 the module is verified after every pass."""
    ctx = ctx or make_context()
    verify_each = os.environ.get("TILE_VERIFY") == VERIFY_EACH_PASS
    for module_pass in ttgir_pipeline(num_warps, threads_per_warp, mma_version, num_stages, shared_limit, amd_arch):
        module_pass.apply(ctx, module)
        if verify_each:
            _verify(module, f"after {module_pass.name}")
    if verify or verify_each:
        _verify(module, "after the TTGIR pipeline")
    return module


def _verify(module: ModuleOp, where: str) -> None:
    try:
        module.verify()
    except VerifyException as error:
        raise VerifyException(f"{where}: {error}") from error
