"""Counters of what the torch.compile backend did, for tests and benchmarks.

- ``generated_kernels``: tile kernels emitted into compiled graphs, one per fused group (as
  Inductor's ``generated_kernel_count``), including groups that reuse an identical kernel.
- ``reused_kernels``: groups whose code equals an earlier group's in the same graph: they
  launch that kernel instead of compiling their own (a model's repeated layers).
- ``fallback_kernels``: scheduler nodes handed to Inductor's own kernels instead.
- ``fallback_reasons``: why, one entry per fallback.
- ``graph_cache_hits``, ``graph_cache_misses``: compiled graphs (forward, backward) loaded from the
  graph cache (``graph_cache.py``) or compiled and stored; a hit generates and compiles nothing.
- ``fallback_retries``: fallbacks whose first attempt Inductor's codegen refused, retried with
  its safe code (the C++ scalar kernel); the error, one entry per retry.
- ``compiled_graphs``: graphs Dynamo handed to the backend (each forward and each recompilation).
- ``eager_graphs``: graphs (Dynamo's, or AOTAutograd's forward/backward) that could not be compiled and
  run eagerly instead (``config.eager_fallback``), one entry with the error each.
- ``recompiles``: one entry per recompilation, with Dynamo's guard failure (why the earlier graphs
  did not serve the new inputs: new sizes, an int32 size guard, a dtype).
- ``kernel_sources``: the tile-language source of each generated kernel, by name.
- ``launch_lines``: each generated kernel's launch, by name, written as ``name[grid](args, XBLOCK=.., num_warps=..)``
  (the wrapper itself launches through a `LaunchSite`: ``name_launch0.run(grid, args)``).
- ``template_choices``: each matmul template decision (``scheduler/matmul_templates.py``): the op,
  its sizes and dtype, template or aten, and the timings it was based on.
- ``mix_order_kernels``: kernels that compute a row reduction and column sums of the same input
  together (``config.mix_order``, ``scheduler/mix_order.py``).
- ``template_kernels``: each generated matmul template kernel, its block config and epilogue size.
"""

from __future__ import annotations

generated_kernels: int = 0
reused_kernels: int = 0
fallback_kernels: int = 0
fallback_reasons: list[str] = []
graph_cache_hits: int = 0
graph_cache_misses: int = 0
fallback_retries: list[str] = []
compiled_graphs: int = 0
eager_graphs: list[str] = []
recompiles: list[str] = []
kernel_sources: dict[str, str] = {}
launch_lines: dict[str, str] = {}
template_choices: list[str] = []
template_kernels: list[str] = []
mix_order_kernels: int = 0


def reset() -> None:
    global mix_order_kernels
    mix_order_kernels = 0
    global generated_kernels, reused_kernels, fallback_kernels, graph_cache_hits, graph_cache_misses, compiled_graphs
    generated_kernels = 0
    graph_cache_hits = 0
    graph_cache_misses = 0
    reused_kernels = 0
    fallback_kernels = 0
    fallback_reasons.clear()
    fallback_retries.clear()
    eager_graphs.clear()
    compiled_graphs = 0
    recompiles.clear()
    kernel_sources.clear()
    launch_lines.clear()
    template_choices.clear()
    template_kernels.clear()
