"""Handing a scheduler node to Inductor's own scheduling (C++ on the CPU, Triton on CUDA).

The graph was lowered for *our* backend features, not the fallback's, so a node can be one
that the fallback's scheduling never meets when it owns the device.  Known case: Inductor's
C++ backend declares ``REDUCE_TO_SINGLE_ELEMENT``, so CPU reductions are never split under
``backend="inductor"``; we declare no features, so Inductor splits large reductions into two
stages, and the second stage of a split welford (mean/variance, e.g. batch-norm statistics)
is a ``welford_combine`` of (mean, m2, weight) partials.  Inductor's C++ code for that
(torch 2.11-2.13) is wrong twice over: the vector kernel asserts that a reduced value is not
a tuple (issue 23's crash), and the scalar kernel builds each partial as
``Welford{mean, m2, weight}`` whose ``index`` (the count of combined items) stays 0, so
``welford_combine`` drops every partial but the last (a variance 1/splits of the truth).

``ADJUSTMENTS`` lists, per device type, what such a node needs, as data: a predicate on the
node, a context manager to generate it under, and why.  On top of that, a fallback that still
raises is retried once under the device's ``SAFE`` context (the C++ scalar kernel), logged
and counted, before any error reaches the user.

``EVERY_NODE`` lists what every fallback kernel of a device generates under, so that it
computes what our kernel of the node would.  Our kernels round an explicit low-precision
round trip (``x.to(float16).to(float32)``) as eager does; Inductor's C++ code, unless
``emulate_precision_casts`` is on, caches the fp32 value as the upcast of its fp16 cast and
skips the rounding.  A rounded value read by one of our kernels and by a fallback kernel then
has two values in one graph: seed 40250 of the fuzzer, a gradient ``g`` rounded through fp16,
``reverse_cumsum(g) - g`` (ours, the fallback) is 3e-4 where both sides are exactly equal.
Inductor's Triton code skips the rounding too, by a choice its lowering makes per cast; the
fallback's Triton code is generated with every such cast rounded (``_triton_rounds_casts``).
"""

from __future__ import annotations

import contextlib
import logging

log = logging.getLogger(__name__)


def reduction_type(snode) -> str | None:
    """The reduction a scheduler node computes (``None`` for a pointwise node)."""
    return getattr(getattr(getattr(snode, "node", None), "data", None), "reduction_type", None)


def _reduces_a_tuple(snode) -> bool:
    return reduction_type(snode) == "welford_combine"


def _scalar_cpp():
    """Inductor's C++ scalar kernels only (no vector ISA)."""
    import torch._inductor.config as inductor_config

    return inductor_config.patch({"cpp.simdlen": 0})


@contextlib.contextmanager
def _counted_welford_partials():
    """C++ welford partials that count: ``Welford{mean, m2, weight, weight != 0}``."""
    from torch._inductor.codegen import cpp

    original = cpp.reduction_combine

    def reduction_combine(reduction_type, var, next_value, *args, **kwargs):
        if reduction_type == "welford_combine" and isinstance(next_value, tuple):
            mean, m2, weight = next_value
            return f"welford_combine({var}, {{{mean}, {m2}, {weight}, static_cast<uint64_t>({weight} != 0)}})"
        return original(reduction_type, var, next_value, *args, **kwargs)

    cpp.reduction_combine = reduction_combine
    try:
        with _scalar_cpp():
            yield
    finally:
        cpp.reduction_combine = original


# device type -> [(does the node need it, context to generate it under, why)]
ADJUSTMENTS = {
    "cpu": [
        (_reduces_a_tuple, _counted_welford_partials,
         "a split welford's combine stage: C++ scalar kernel with counted partials"),
    ],
}


def _eager_precision_casts():
    """Inductor's C++ code keeps every fp32 -> fp16/bf16 -> fp32 rounding (no reuse of the fp32 value)."""
    import torch._inductor.config as inductor_config

    return inductor_config.patch({"emulate_precision_casts": True})


@contextlib.contextmanager
def _triton_rounds_casts():
    """Inductor's Triton code rounds every cast to fp16/bf16, then computes on in fp32.

    Its lowering decides per cast, when the graph is lowered, whether the Triton code rounds:
    ``to_dtype(x, float16, use_compute_types=True)`` (every cast unless ``emulate_precision_casts``
    was on for the whole compile) becomes ``x.to(tl.float32)``, the round trip skipped.  Our
    kernels round every such cast (as eager); so does the fallback's code generated under this,
    ``x.to(tl.float16).to(tl.float32)``, which is what Inductor writes under that flag (a float64
    value through float32 first, as eager and our kernels)."""
    import torch
    from torch._inductor.codegen import triton

    low = (torch.float16, torch.bfloat16)

    def rounding(original):
        def to_dtype(x, dtype, src_dtype=None, use_compute_types=True):
            if not use_compute_types or dtype not in low:
                return original(x, dtype, src_dtype, use_compute_types)
            if src_dtype == torch.float64:  # eager rounds float64 to float32 first (as codegen/ops.py does)
                x, src_dtype = f"{x}.to(tl.float32)", torch.float32
            rounded = original(x, dtype, src_dtype, False)
            compute = triton.triton_compute_type(dtype)
            return rounded if compute == triton.triton_store_type(dtype) else f"{rounded}.to({compute})"

        return staticmethod(to_dtype)

    # the overrides class and, in torch versions where it has its own, the kernel's
    classes = [c for c in (triton.TritonOverrides, getattr(triton, "TritonKernelOverrides", None))
               if c is not None and "to_dtype" in c.__dict__]
    saved = {c: c.__dict__["to_dtype"] for c in classes}
    for c, method in saved.items():
        c.to_dtype = rounding(getattr(method, "__func__", method))
    try:
        yield
    finally:
        for c, method in saved.items():
            c.to_dtype = method


# device type -> the contexts every fallback kernel of the device is generated under
EVERY_NODE = {
    "cpu": [_eager_precision_casts],
    "cuda": [_triton_rounds_casts],
}

# device type -> the context of the fallback's most conservative code (retried on an error)
SAFE = {
    "cpu": _scalar_cpp,
}


def adjustments_for(snode, device_type: str) -> list[tuple]:
    """The (context, why) pairs the node needs in the device's fallback."""
    return [(context, why) for applies, context, why in ADJUSTMENTS.get(device_type, ()) if applies(snode)]


def run_fallback(scheduling, snode, device_type: str, on_retry) -> None:
    """``scheduling.codegen_node(snode)`` then ``flush()``, under the node's adjustments; on an
    error, once more also under the device's ``SAFE`` context (``on_retry(error)`` is told first)."""

    def generate(contexts):
        with contextlib.ExitStack() as stack:
            for context in contexts:
                stack.enter_context(context())
            scheduling.codegen_node(snode)
            scheduling.flush()

    contexts = EVERY_NODE.get(device_type, []) + [context for context, _ in adjustments_for(snode, device_type)]
    safe = SAFE.get(device_type)
    try:
        generate(contexts)
        return
    except Exception as e:  # noqa: BLE001 - retried below, re-raised if the safe code fails too
        if safe is None or safe in contexts or not hasattr(scheduling, "reset_kernel_group"):
            raise
        on_retry(e)
    # the failed attempt stopped before its kernel joined the group (the C++ scheduling
    # builds every kernel of a node first): a fresh group drops its half-built arguments
    scheduling.reset_kernel_group()
    generate(contexts + [safe])
