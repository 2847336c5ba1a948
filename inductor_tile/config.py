"""Settings of the torch.compile backend (``backend="tile"``).

Read at compile time, so changing them affects the next compilation.  Environment
variables give the defaults:

- ``devices`` (``TILE_DEVICES``, default ``cpu,cuda``): device types that get tile
  kernels; others keep Inductor's own codegen.
- ``fusion`` (``TILE_FUSION``, default on): let the scheduler put producer->consumer
  chains (vertical) and independent nodes over the same iteration space (horizontal)
  into one kernel.  Off: one kernel per scheduler node.
- ``inlining`` (``TILE_INLINING``, default on): Inductor's lowering inlines pointwise
  producers into their consumers (the producer's expression is recomputed inside the
  consumer's loop).  Off: every lowered op's output is realized as a buffer of its own
  (the "no inlining" column of the TorchInductor ablation); fusion may still put the
  producer and its consumer into one kernel when they iterate alike.
- ``autotune`` (``TILE_AUTOTUNE``, default ``reductions``): on GPUs, generated reduction kernels
  are benchmarked among 2-5 block-size / num_warps configs at their first launch (every candidate
  precompiled in parallel; results persist in the tuning database, so a later process times
  nothing; later launches go through the chosen config's launch site), as Inductor does;
  ``1``: every generated kernel; ``0``: the heuristic's choice is used directly (as on the CPU,
  where there is one candidate).
- ``precompile`` (``TILE_PRECOMPILE``, default on): each generated kernel starts compiling in
  a background thread as soon as Inductor has generated it, so a graph's kernels compile in
  parallel; off: each compiles at its first launch.
- ``compile_workers`` (``TILE_COMPILE_WORKERS``; default half the cores up to 8, 0 below 4
  cores): those early compiles run in that many worker processes, which fill the disk cache
  (the compiler's Python stages hold the GIL, so threads run them one at a time); 0: threads.
- ``progress`` (``TILE_PROGRESS``, default on): while generated kernels compile for more than a
  second, one updating line on stderr says how many are done (only on a terminal, and not when
  the ``inductor_tile`` logger is set above WARNING).
- ``eager_fallback`` (``TILE_EAGER_FALLBACK``, default on): a graph whose compilation raises
  (Inductor's lowering or its symbolic-shape reasoning fails on it) runs eagerly, with a warning that
  names the error; off: the error propagates, as with ``backend="inductor"``.
- ``graph_cache`` (``TILE_GRAPH_CACHE``, default on): compiled graphs are stored on disk beside the
  kernel cache and reused by later processes (``graph_cache.py``); off: every process compiles anew.
- ``elide_local_buffers`` (``TILE_ELIDE_LOCAL_BUFFERS``, default on): a buffer written and
  read only inside one fused kernel is kept in registers, never allocated.
- ``tiled_pointwise`` (``TILE_TILED_POINTWISE``: ``gpu`` (default), ``on``, ``off``): a pointwise
  kernel that reads or writes some buffer transposed (contiguous along another loop dimension
  than the others, as attention's head permutes do) runs over 2-D [YBLOCK, XBLOCK] tiles, so
  that every access is coalesced along one side of the tile; ``gpu``: on GPUs only (on the
  CPU target a tile is one vector and a transposed access a gather either way).
- ``perf_warnings`` (``TILE_PERF_WARNINGS``, default off): every kernel compiled (or loaded
  from the cache) shows its performance findings as an ``inductor_tile.PerformanceWarning`` each, at
  the kernel's source line (``kernel_compiler/diagnostics/perf_warnings.py``); ``backend="tile"`` also
  warns, at the model's line, of each CUDA attention whose mask sends it to the math implementation
  (``sdpa_masks.warn_unfused_masks``).
- ``matmul_templates`` (``TILE_MATMUL_TEMPLATES``: ``auto`` (default), ``on``, ``off``, ``force``):
  ``mm``/``addmm``/``bmm`` as tile-language matmul kernels with the pointwise epilogue that follows
  them fused in (``scheduler/matmul_templates.py``), chosen per shape by timing them against the aten
  kernel; ``auto``: only under ``mode="max-autotune"`` (as Inductor's templates); ``on``: always
  timed; ``force``: the template wherever it fits, untimed (tests); ``off``: aten kernels.
- ``scans`` (``TILE_SCANS``: ``on`` (default), ``cpu``, ``off``): cumsum/cumprod/logcumsumexp/
  cummax/cummin and sort/argsort as generated kernels (``codegen/scans.py``); ``cpu``: on the CPU
  target only (Inductor's Triton kernels serve on GPUs); ``off``: Inductor's kernels everywhere.
- ``sanitize`` (``TILE_SANITIZE``, default off): kernels are compiled with run-time checks of
  every load, store and atomic against the storage of the tensor argument the pointer came from,
  and of integer division by zero; a violation raises ``inductor_tile.SanitizerError`` after the
  launch (``kernel_compiler/passes/sanitize.py``, ``runtime/sanitizer.py``). Read at each launch.
- ``mix_order`` (``TILE_MIX_ORDER``, ``gpu`` / ``on`` / ``off``, default ``gpu``): a row reduction and column
  sums over the same input (layer norm / RMSNorm backward: the input gradient and the weight/bias gradients)
  become one kernel that reads the input once and writes per-program partial column sums, and a second
  that sums them and applies the sums' epilogue (``scheduler/mix_order.py``, ``mix_order_totals.py``,
  ``codegen/mix_order.py``); ``gpu``: on GPUs for rows of at least 1024 columns (on an H200, 1.12-1.31x
  the two kernels at 1024-4096 columns, 0.96x at 768); ``on``: every device and row length; ``off``: a kernel
  over the rows and one over the columns.
- ``mix_order_step`` (``TILE_MIX_ORDER_STEP``, 4096 or 8192): on GPUs, the elements of each input a
  program of the mix-order kernel loads per loop step, 8 a thread: 4096 gives 16-warp programs, two
  per SM; 8192 gives 32-warp programs, one per SM (half the workspace; rows of 8192 take 8192 either way).
- ``mix_order_warp_rows`` (``TILE_MIX_ORDER_WARP_ROWS``, default on): on GPUs the mix-order kernel's rows are
  ``[XBLOCK, RBLOCK // RCHUNK, RCHUNK]`` tiles, one warp a row up to 1024 columns (no barrier in the row loop);
  off: ``[XBLOCK, RBLOCK]`` tiles with rows across warps. ``mix_order_prefetch`` (``TILE_MIX_ORDER_PREFETCH``,
  default on): with warp rows, the next step's rows load during this one where a lane holds few of them.
- ``sdpa_row_masks`` (``TILE_SDPA_ROW_MASKS``, default on): ``scaled_dot_product_attention`` with a
  mask broadcast along the keys (last stride 0), which CUDA's fused kernels refuse (the math
  implementation then runs in fp32), becomes attention without the mask followed by zeroing the
  rows the mask removes, the same result (``sdpa_masks.py``); off: the graph as Dynamo traced it.
- ``sdpa_causal_masks`` (``TILE_SDPA_CAUSAL_MASKS``, default on): a bool attention
  mask computed in the graph from shapes alone that is exactly the lower triangle (a decoder's causal mask
  under torch.compile) becomes ``is_causal=True`` without a mask, on CUDA (``sdpa_masks.py``), so the
  attention kernel skips the blocks above the diagonal and reads no mask; off: the graph as traced.
- ``sdpa_strided_masks`` (``TILE_SDPA_STRIDED_MASKS``, default on): a float attention mask whose key
  dimension is strided (T5's permuted position bias), which CUDA's fused kernels refuse, is passed
  contiguous, with -inf raised to the lowest finite value and fully masked rows zeroed after, the
  math implementation's result (``sdpa_masks.py``); off: the graph as traced.
- ``cache_hints`` (``TILE_CACHE_HINTS``): cache hints on generated GPU kernels' loads
  (``codegen/cache_hints.py``; CPU kernels never get them). ``weights`` (the default): a reduction
  kernel's loads that every row shares (a norm's weight and bias) get ``eviction_policy='evict_last'``,
  as in Inductor's kernels (on an H200 layernorm 16384x768 fp16 3529 -> 3942 GB/s, level with Inductor;
  8192x1024 +6%; other norms unchanged); ``on``: every hint Inductor's
  Triton kernels give (also pointwise kernels' broadcast or uncoalesced loads, ``evict_first``/
  ``evict_last`` on the rows of reductions: on an H200 layernorm 2-18% slower at four of six shapes,
  8192x1024 the most); ``off``: none.
- ``online_softmax_lean`` (``TILE_ONLINE_SOFTMAX_LEAN``, default on; ``0`` the selects): a looped online softmax (the
  max and sum of exp of a softmax/log-softmax row longer than a persistent block, on CUDA: cross-entropy
  over a vocabulary) updates its running max and sum with max/min instead of selects
  (``codegen/reductions.py``): sm_90 PTX of the fp16 cross-entropy loop drops from about 20 to 14 instructions an
  element; H200 fp16 kernel time: cross-entropy 8192x32000 2372 -> 2765 GB/s, 4096x50257 1876 -> 2167, the
  backwards 2133 -> 2250 and 1735 -> 1785 (Inductor 1485, 1285, 1586, 1331).
- ``gpu_persistent_rblock`` (``TILE_GPU_PERSISTENT_RBLOCK``, default 16384; 32768 or 65536): the longest row a
  CUDA reduction holds in one block (persistent, 16 warps, untuned) rather than looping over it
  (``codegen/heuristics.py``): cross-entropy rows of 32000 read their logits once in 16-byte loads, also
  in the backward (which loops over them twice). 32768 measured on an H200 (fp16 kernel time): cross-entropy
  8192x32000 2372 -> 2293 GB/s, its backward 2133 -> 2241, 50257 columns and softmax over 32768 unchanged:
  no clear gain, so 16384 stays.
- ``max_rblock`` (``TILE_MAX_RBLOCK``): the largest reduction that is done in one block
  (persistent); longer reductions loop over blocks of this size.
- ``max_block_elems``: the most elements one program holds (XBLOCK * RBLOCK).
- ``loop_rblock``, ``loop_block_elems``: the same for reductions that loop.
"""

from __future__ import annotations

import contextlib
import os


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() not in ("0", "false", "off", "no")


def _env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """A setting among `choices` from the environment; 1/true/yes mean "on", 0/false/no "off"."""
    value = os.environ.get(name, "").strip().lower() or default
    value = {"1": "on", "true": "on", "yes": "on", "0": "off", "false": "off", "no": "off"}.get(value, value)
    if value not in choices:
        import warnings

        warnings.warn(f"{name}={os.environ[name]!r} is not one of {', '.join(choices)}; using {default!r}",
                      stacklevel=2)
        return default
    return value


# device types whose Inductor codegen we replace (TILE_DEVICES=cpu keeps Inductor's Triton on GPUs)
devices: tuple[str, ...] = tuple(d.strip() for d in os.environ.get("TILE_DEVICES", "cpu,cuda").split(",") if d.strip())
fusion: bool = _env_flag("TILE_FUSION", True)
inlining: bool = _env_flag("TILE_INLINING", True)
# False, True (every generated kernel) or "reductions" (reductions only, as Inductor's default: it
# benchmarks its reduction configs at the first launch and takes pointwise ones from heuristics)
autotune: bool | str = ("reductions" if os.environ.get("TILE_AUTOTUNE", "reductions").strip().lower()
                        in ("reductions", "") else _env_flag("TILE_AUTOTUNE", False))
precompile: bool = _env_flag("TILE_PRECOMPILE", True)
# worker processes that precompile generated kernels into the disk cache (codegen/compile_workers.py);
# 0: background threads of this process (the GIL lets one compile's Python run at a time)
# (default: half the cores up to 8, none below 4 cores)
compile_workers: int = int(os.environ.get("TILE_COMPILE_WORKERS")
                           or (min(8, (os.cpu_count() or 1) // 2) if (os.cpu_count() or 1) >= 4 else 0))
graph_cache: bool = _env_flag("TILE_GRAPH_CACHE", True)
# a graph that Inductor's passes cannot compile (a lowering error, a symbolic-shape bug) runs eagerly
# with a warning instead of raising; off (TILE_EAGER_FALLBACK=0): the error propagates
eager_fallback: bool = _env_flag("TILE_EAGER_FALLBACK", True)
progress: bool = _env_flag("TILE_PROGRESS", True)
elide_local_buffers: bool = _env_flag("TILE_ELIDE_LOCAL_BUFFERS", True)
perf_warnings: bool = _env_flag("TILE_PERF_WARNINGS", False)
sanitize: bool = _env_flag("TILE_SANITIZE", False)
tiled_pointwise: str = _env_choice("TILE_TILED_POINTWISE", "gpu", ("gpu", "on", "off"))
matmul_templates: str = _env_choice("TILE_MATMUL_TEMPLATES", "auto", ("auto", "on", "off", "force"))
scans: str = _env_choice("TILE_SCANS", "on", ("on", "cpu", "off"))
mix_order: str = _env_choice("TILE_MIX_ORDER", "gpu", ("gpu", "on", "off"))
mix_order_step: int = int(_env_choice("TILE_MIX_ORDER_STEP", "4096", ("4096", "8192")))
mix_order_warp_rows: bool = _env_flag("TILE_MIX_ORDER_WARP_ROWS", True)
mix_order_prefetch: bool = _env_flag("TILE_MIX_ORDER_PREFETCH", True)
sdpa_row_masks: bool = _env_flag("TILE_SDPA_ROW_MASKS", True)
sdpa_causal_masks: bool = _env_flag("TILE_SDPA_CAUSAL_MASKS", True)
sdpa_strided_masks: bool = _env_flag("TILE_SDPA_STRIDED_MASKS", True)
cache_hints: str = _env_choice("TILE_CACHE_HINTS", "weights", ("weights", "on", "off"))
online_softmax_lean: bool = _env_flag("TILE_ONLINE_SOFTMAX_LEAN", True)
gpu_persistent_rblock: int = int(_env_choice("TILE_GPU_PERSISTENT_RBLOCK", "16384", ("16384", "32768", "65536")))
# Block sizes of the CPU target.  A tile is one LLVM vector there, and LLVM's code generation
# time grows steeply with the vector width: 256 elements keep a kernel's compile under a second
# (1024 took ~3x longer for a tiny GPT-2, measured 2026-11-21) at little run-time cost, since
# the native grid loop makes programs cheap.  GPU block sizes come from codegen heuristics.
max_rblock: int = int(os.environ.get("TILE_MAX_RBLOCK", "256"))
max_block_elems: int = 256
# looped reductions: RBLOCK and the most elements of the loop-carried accumulator
loop_rblock: int = 128
loop_block_elems: int = 256
# kernels with gathers (strided/broadcast accesses) use tiles of at most this many elements:
# the CPU target's gather code takes compile time that grows steeply with the tile size
gather_block_elems: int = 128
pointwise_block: int = 256


@contextlib.contextmanager
def patch(**changes):
    """Temporarily change settings: ``with inductor_tile.config.patch(fusion=False): ...``."""
    module = globals()
    for key in changes:
        if key not in module or key.startswith("_"):
            raise AttributeError(f"inductor_tile.config has no setting {key!r}")
    saved = {key: module[key] for key in changes}
    module.update(changes)
    try:
        yield
    finally:
        module.update(saved)
