"""``torch.compile(model, backend="tile")``: Inductor's front end, our kernels.

The backend runs Inductor's ``compile_fx`` (Dynamo graph -> AOTAutograd -> decompositions
-> lowering to loop IR -> scheduler) with ``TileScheduling`` registered as the device
codegen for the device types in ``config.devices`` (``cpu`` and ``cuda``), so
every fused pointwise/reduction group becomes a tile-language kernel; matmul/conv stay
aten calls (under ``mode="max-autotune"``, mm/addmm/bmm may become tile matmul templates with
their epilogue fused: ``scheduler.matmul_templates``), and what we cannot generate runs as
Inductor's own kernel (see ``scheduler.scheduling``).

Isolation from ``backend="inductor"`` in the same process:

- the registration is swapped in only around each graph's code generation (our
  ``inner_compile``, which also runs the lazily compiled backward graph), and the previous
  ``device_codegens`` entry is restored afterwards, so Inductor's own compilations never see
  our scheduling;
- Inductor's FX-graph and AOTAutograd caches, whose keys do not know our codegen, work for
  our compiles in a directory of our own with our identity in their keys (``graph_cache.py``),
  so neither backend is handed the other's code and Inductor's directory is never touched.

Registered by name through the ``torch_dynamo_backends`` entry point in pyproject.toml.
Importing this module does not import torch._inductor.
"""

from __future__ import annotations

import contextlib
import logging
import threading

log = logging.getLogger(__name__)

_lock = threading.RLock()


def _clear_feature_caches() -> None:
    # older torch versions cache get_backend_features per device; our registration
    # must not leak through (or be hidden by) that cache
    from torch._inductor.codegen import common

    for fn_name in ("get_backend_features",):
        fn = getattr(common, fn_name, None)
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()


@contextlib.contextmanager
def tile_codegen_registered(devices=None):
    """Register TileScheduling for ``devices`` (default ``config.devices``); restore on exit."""
    from torch._inductor.codegen import common
    from torch._inductor.codegen.wrapper import PythonWrapperCodegen

    from . import config
    from .scheduler.scheduling import TileScheduling

    devices = tuple(config.devices if devices is None else devices)
    with _lock:
        common.init_backend_registration()  # make sure the built-in entries exist to be saved
        names = ("device_codegens", "custom_backend_passes", "custom_backend_codegen_configs")
        tables = [getattr(common, t) for t in names if hasattr(common, t)]  # the last is newer than 2.11
        missing = object()
        saved = [{d: table.get(d, missing) for d in devices} for table in tables]
        previous_fallbacks = dict(TileScheduling.fallback_for)
        try:
            for device in devices:
                original = common.device_codegens.get(device)
                if original is not None and original.scheduling is not TileScheduling:
                    TileScheduling.fallback_for[device] = original.scheduling
                cpp_wrapper = getattr(original, "cpp_wrapper_codegen", None)
                common.register_backend_for_device(device, TileScheduling, PythonWrapperCodegen, cpp_wrapper)
            _clear_feature_caches()
            yield
        finally:
            for table, entries in zip(tables, saved):
                for device, value in entries.items():
                    if value is missing:
                        table.pop(device, None)
                    else:
                        table[device] = value
            TileScheduling.fallback_for.clear()
            TileScheduling.fallback_for.update(previous_fallbacks)
            _clear_feature_caches()


def _triton_only_fusions_off():
    """Inductor's scheduler pairs some reductions itself on GPUs (mix-order: a row reduction
    with column sums of the same input; nested reductions) and hands the pair to
    ``codegen_mix_order_reduction``/``codegen_nested_reduction``, which only its Triton
    codegen has. Our fusion policy decides what shares a kernel, so those pairings are off."""
    import torch._inductor.config as inductor_config

    from .scheduler import mix_order

    # with ours on, Inductor's switch is on too: its lowering then records how it split column sums
    wanted = {"mix_order_reduction": mix_order.enabled(), "nested_reduction": False}
    return inductor_config.patch({f"triton.{k}": v for k, v in wanted.items() if hasattr(inductor_config.triton, k)})


_inlining = threading.local()


def _realize_every_op(original_run_node):
    """``GraphLowering.run_node`` that materializes each lowered op's output (no inlining).

    Inductor's lowering returns a pointwise op as an unrealized ``Pointwise`` that its
    consumers inline; realizing it turns it into a buffer of its own, as if every op were
    a kernel boundary before fusion.  Views stay views (they have no computation).
    Active only in the thread that is compiling with ``config.inlining`` off.
    """
    from torch._inductor import ir

    def run_node(self, n):
        result = original_run_node(self, n)
        if getattr(_inlining, "off", False) and isinstance(result, ir.TensorBox):
            box = result.data
            if isinstance(box, ir.StorageBox) and isinstance(box.data, (ir.Pointwise, ir.Reduction)):
                result.realize()
        return result

    run_node.__wrapped__ = original_run_node
    return run_node


@contextlib.contextmanager
def _inlining_disabled():
    """While compiling with ``config.inlining`` off: every lowered op becomes a buffer."""
    from torch._inductor.graph import GraphLowering

    with _lock:
        installed = GraphLowering.run_node
        if not hasattr(installed, "__wrapped__"):
            GraphLowering.run_node = _realize_every_op(installed)
        _inlining.off = True
        try:
            yield
        finally:
            _inlining.off = False
            if not hasattr(installed, "__wrapped__"):
                GraphLowering.run_node = installed


def _tile_inner_compile(gm, example_inputs, **kwargs):
    from torch._inductor.compile_fx import compile_fx_inner

    from . import config

    from .codegen.compile_workers import start_at_lowering
    from .graph_cache import tile_caches
    from .scheduler.mix_order import pairing as mix_order_pairing
    from .scheduler.eager_parity import eager_parity
    from .scheduler.scan_gate import scans_gated
    from .scheduler.matmul_templates import lowered as matmul_templates_lowered

    with contextlib.ExitStack() as stack:
        # compile workers start when lowering begins (a graph-cache miss), and start up while Inductor
        # lowers and schedules the graph; a graph loaded from the cache starts none
        stack.enter_context(start_at_lowering())
        stack.enter_context(tile_caches())
        stack.enter_context(_triton_only_fusions_off())
        stack.enter_context(mix_order_pairing())  # only with config.mix_order on
        stack.enter_context(tile_codegen_registered())
        stack.enter_context(scans_gated())  # Scan/Sort nodes only where our codegen takes them
        stack.enter_context(eager_parity())  # lowerings of Inductor's that differ from eager
        stack.enter_context(matmul_templates_lowered())  # mm/addmm/bmm as tile templates where chosen
        if not config.inlining:
            stack.enter_context(_inlining_disabled())
        try:
            return compile_fx_inner(gm, example_inputs, **kwargs)
        except Exception as error:  # noqa: BLE001 - Inductor's passes failed on this graph
            if not config.eager_fallback or _dynamo_control_flow(error):
                raise
            from torch._functorch.aot_autograd import make_boxed_func

            _note_eager_graph("an AOTAutograd graph", error)
            return make_boxed_func(gm.forward)  # the graph's ATen ops, one by one


def _dynamo_control_flow(error: Exception) -> bool:
    """Exceptions Dynamo expects from a backend to restart or skip its analysis: never swallowed."""
    from torch._dynamo import exc

    return isinstance(error, (exc.RestartAnalysis, exc.SkipFrame))


def _note_eager_graph(which: str, error: Exception) -> None:
    """Count and report a graph that runs eagerly because it could not be compiled."""
    from . import metrics

    first = (str(error).strip().splitlines() or [""])[0][:300]
    reason = f"{type(error).__name__}: {first}"
    metrics.eager_graphs.append(reason)
    log.warning("tile: %s could not be compiled and runs eagerly (TILE_EAGER_FALLBACK=0 raises instead): %s",
                which, reason)


def _note_compile(gm) -> None:
    """Count the graph in ``metrics``; a recompilation (Dynamo's guards failed on new inputs:
    new sizes, one of our int32 size guards, a changed dtype) is logged with Dynamo's reason."""
    from . import metrics

    metrics.compiled_graphs += 1
    try:
        from torch._dynamo.utils import get_metrics_context
        from torch._guards import CompileContext

        compile_id = CompileContext.current_compile_id()
        if compile_id is None or not getattr(compile_id, "frame_compile_id", 0):
            return
        reason = getattr(get_metrics_context(), "_metrics", {}).get("recompile_reason") or "unknown guard failure"
    except Exception:  # noqa: BLE001 - Dynamo internals differ across torch versions; counting is enough
        return
    metrics.recompiles.append(f"{compile_id}: {reason}")
    log.info("tile: recompiling (%s) after a guard failure: %s", compile_id, reason)


def tile_backend(gm, example_inputs, mode=None, options=None, **kwargs):
    """The torch.compile backend: ``torch.compile(fn, backend="tile", mode=..., options=...)``.

    ``mode`` and ``options`` mean what they mean for Inductor (``options`` are
    ``torch._inductor.config`` settings).
    """
    import torch._inductor
    from torch._inductor.compile_fx import compile_fx

    from .codegen.compile_workers import start_if_nothing_cached
    from .graph_cache import tile_caches

    if mode is not None and options:
        raise RuntimeError("tile backend: give either mode or options, not both")
    config_patches = dict(options or {})
    if mode is not None and mode != "default":
        config_patches.update(torch._inductor.list_mode_options(mode))
    _note_compile(gm)
    from . import config

    from . import sdpa_masks  # attention rewrites, before AOTAutograd picks each attention's kernel

    if config.sdpa_row_masks:
        sdpa_masks.drop_key_constant_masks(gm)
    if config.sdpa_causal_masks:
        sdpa_masks.causal_masks_to_flag(gm)
    if config.sdpa_strided_masks:
        sdpa_masks.contiguous_float_masks(gm)
    if config.perf_warnings:
        sdpa_masks.warn_unfused_masks(gm)
    start_if_nothing_cached()  # a first run: compile workers start up while AOTAutograd traces
    try:
        with tile_caches():
            return compile_fx(gm, example_inputs, inner_compile=_tile_inner_compile, config_patches=config_patches)
    except Exception as error:  # noqa: BLE001 - AOTAutograd or Inductor failed before any kernel existed
        if not config.eager_fallback or _dynamo_control_flow(error):
            raise
        _note_eager_graph("a Dynamo graph", error)
        return gm.forward  # as backend="eager"


__all__ = ["tile_backend", "tile_codegen_registered"]
