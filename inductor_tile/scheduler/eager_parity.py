"""Lowerings of Inductor's whose result is not eager's, replaced while we lower a graph.

Each entry of ``_replacements()`` is data: the aten overload, a predicate on the lowering's
arguments, what is lowered instead, and why (logged at debug level when it applies).  Outside
our compiles (and where the predicate says no) Inductor's own lowering runs unchanged.

- ``var_mean`` over no elements: Inductor's welford returns a mean of 0 (its
  ``WelfordReduction.create`` answers an empty reduction with constants); eager's mean of
  nothing is NaN.  Such a node is aten's ``var_mean`` (nothing to compute anyway).
- ``avg_pool2d/3d`` backward with ``ceil_mode`` and ``count_include_pad``: where ceil mode adds
  a last window that runs past the padded input, Inductor divides its gradient by the whole
  kernel volume, eager by the part of the window inside input and padding (the forward is
  right).  ``backend="inductor"`` shares the error (torch 2.11-2.13); aten's backward runs.
  Its one-entry ``padding=(1,)`` (2-D pools) is widened to one entry per dim, which Inductor's
  lowering asserts (``backend="inductor"`` raises with ``dynamic=True``).
- ``adaptive_avg_pool2d`` to an output size that ``dynamic=True`` made symbolic: Inductor's lowering
  guards the input's sizes to ints but not the output's, and raises comparing its window with
  25 (``backend="inductor"`` too); the output size is guarded to ints as well.
- ``logcumsumexp`` of float32 on the CPU: eager's CPU kernel carries the running value in
  float64 (``at::acc_type<float, false>``), so each output is rounded once; a float32 scan
  loses up to a few ulp, which the backward, ``exp(logcumsumexp(log|g| - out) + x)``, turns into
  relative errors of 1e-3 around x = 1e4.  Our scan runs in float64 and rounds once, as eager.
"""

from __future__ import annotations

import contextlib
import logging
import threading

from ..thread_switch import ThreadSwitch

log = logging.getLogger(__name__)
_lock = threading.RLock()
_active = ThreadSwitch()


def _arg(args, kwargs, index: int, name: str, default=None):
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else default


# ===--------------------------------------------------------------------------===
# var_mean over an empty reduction
# ===--------------------------------------------------------------------------===
def _empty_var_mean(args, kwargs) -> bool:
    from torch._inductor.virtualized import V

    x = args[0]
    size = x.get_size()
    if not size:
        return False
    dims = _arg(args, kwargs, 1, "dim")
    if isinstance(dims, int):
        dims = [dims]
    axes = dims or range(len(size))  # None or [] reduce every dim
    return any(V.graph.sizevars.statically_known_equals(size[d % len(size)], 0) for d in axes)


def _aten_handler(overload):
    def lower(original, *args, **kwargs):
        from torch._inductor.lowering import fallback_handler

        return fallback_handler(overload, add_to_fallback_set=False)(*args, **kwargs)

    return lower


# ===--------------------------------------------------------------------------===
# avg_pool backward with ceil mode (and one-element size lists)
# ===--------------------------------------------------------------------------===
def _pool_args(args, kwargs, n: int):
    """The backward's arguments with kernel/stride/padding as `n`-element lists (``padding=(1,)``
    of a 2-D pool means 1 on every side; Inductor's lowering asserts `n` entries), the rest by name."""
    names = ("ceil_mode", "count_include_pad", "divisor_override")
    rest = {name: _arg(args, kwargs, 5 + i, name, default) for i, (name, default) in
            enumerate(zip(names, (False, True, None)))}

    def full(values, default):
        values = list(values) or list(default)
        return values * n if len(values) == 1 else values

    kernel_size = full(_arg(args, kwargs, 2, "kernel_size"), ())
    stride = full(_arg(args, kwargs, 3, "stride", ()), kernel_size)
    padding = full(_arg(args, kwargs, 4, "padding", ()), [0] * n)
    return args[0], args[1], kernel_size, stride, padding, rest


def _ceil_window_counts_padding(x, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                divisor_override) -> bool:
    """Ceil mode adds a window and the divisor counts padding: Inductor's divisor is wrong there."""
    if not ceil_mode or not count_include_pad or divisor_override is not None:
        return False
    from torch._inductor.lowering import pooling_size

    n = len(kernel_size)
    spatial = x.get_size()[-n:]
    try:
        return any(pooling_size(spatial[i], i, kernel_size, stride, padding, True)[1] for i in range(n))
    except Exception:  # noqa: BLE001 - sizes it cannot decide: aten's backward is right either way
        return True


def _avg_pool_backward(overload, n: int):
    def lower(original, *args, **kwargs):
        grad, x, kernel_size, stride, padding, rest = _pool_args(args, kwargs, n)
        full = (grad, x, kernel_size, stride, padding, rest["ceil_mode"], rest["count_include_pad"],
                rest["divisor_override"])
        if _ceil_window_counts_padding(x, kernel_size, stride, padding, **rest):
            return _aten_handler(overload)(original, *full)
        return original(*full)

    return lower


def _always(args, kwargs) -> bool:
    return True


# ===--------------------------------------------------------------------------===
# adaptive_avg_pool2d to a symbolic output size
# ===--------------------------------------------------------------------------===
def _symbolic_output_size(args, kwargs) -> bool:
    return any(not isinstance(s, int) for s in _arg(args, kwargs, 1, "output_size", ()))


def _output_size_guarded(original, *args, **kwargs):
    """The lowering guards the input's sizes to ints but compares the window of a symbolic output
    size with 25 (a TypeError: the graph ran eagerly); the output size is guarded to ints too."""
    from torch._inductor.virtualized import V

    x, output_size = args[0], _arg(args, kwargs, 1, "output_size")
    return original(x, [V.graph.sizevars.guard_int(s) for s in output_size])


# ===--------------------------------------------------------------------------===
# logcumsumexp in float64 on the CPU
# ===--------------------------------------------------------------------------===
def _float32_on_cpu(args, kwargs) -> bool:
    import torch

    x = args[0]
    return x.get_dtype() == torch.float32 and x.get_device().type == "cpu" and len(x.get_size()) > 0


def _in_float64(original, *args, **kwargs):
    import torch
    from torch._inductor.lowering import to_dtype

    wide = to_dtype(args[0], torch.float64, copy=False)
    return to_dtype(original(wide, *args[1:], **kwargs), torch.float32, copy=False)


def _replacements():
    import torch

    aten = torch.ops.aten
    return [
        (aten.var_mean.correction, _empty_var_mean, _aten_handler(aten.var_mean.correction),
         "var_mean over no elements: eager's mean is NaN, Inductor's welford gives 0"),
        (aten.avg_pool2d_backward.default, _always, _avg_pool_backward(aten.avg_pool2d_backward.default, 2),
         "avg_pool2d backward: one padding entry per dim; ceil mode with count_include_pad to aten"),
        (aten.avg_pool3d_backward.default, _always, _avg_pool_backward(aten.avg_pool3d_backward.default, 3),
         "avg_pool3d backward: one padding entry per dim; ceil mode with count_include_pad to aten"),
        (aten._adaptive_avg_pool2d.default, _symbolic_output_size, _output_size_guarded,
         "adaptive_avg_pool2d to a symbolic output size: guarded to ints, as the input's sizes are"),
        (aten.logcumsumexp.default, _float32_on_cpu, _in_float64,
         "logcumsumexp of float32 on the CPU: eager accumulates in float64"),
    ]


def _wrapped(original, applies, replacement, why: str):
    def lowering(*args, **kwargs):
        if _active.get() and applies(args, kwargs):
            log.debug("tile: lowering replaced: %s", why)
            return replacement(original, *args, **kwargs)
        return original(*args, **kwargs)

    lowering._tile_eager_parity = original
    return lowering


def _install() -> None:
    """Wrap each listed lowering once; a wrapper acts only in a thread inside ``eager_parity``."""
    from torch._inductor.lowering import lowerings

    with _lock:
        for overload, applies, replacement, why in _replacements():
            current = lowerings.get(overload)
            if current is not None and not hasattr(current, "_tile_eager_parity"):
                lowerings[overload] = _wrapped(current, applies, replacement, why)


@contextlib.contextmanager
def eager_parity():
    """While this thread lowers a graph for us: the replacements above apply."""
    _install()
    with _active.set():
        yield
