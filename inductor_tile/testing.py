"""Benchmarking helpers: `do_bench`, with the meaning Triton's `triton.testing.do_bench` has."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    import torch

__all__ = ["do_bench"]

_L2_FLUSH_BYTES = 256 * 1024 * 1024
_flush_buffers: dict[Any, torch.Tensor] = {}


def _default_device() -> str:
    import torch  # imported when used: a compile worker imports no torch (tests/test_cold_start.py)

    return "cuda" if torch.cuda.is_available() else "cpu"


def _summarize(times: list[float], quantiles: Sequence[float] | None, return_mode: str) -> Any:
    import torch

    t = torch.tensor(times, dtype=torch.float64)
    if quantiles is not None:
        result = torch.quantile(t, torch.tensor(list(quantiles), dtype=torch.float64)).tolist()
        return result[0] if len(result) == 1 else result
    if return_mode == "all":
        return times
    if return_mode == "min":
        return float(t.min())
    if return_mode == "max":
        return float(t.max())
    if return_mode == "mean":
        return float(t.mean())
    if return_mode == "median":
        return float(t.median())
    raise ValueError(f"return_mode must be one of min, max, mean, median, all; got {return_mode!r}")


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, quantiles: Sequence[float] | None = None,
             return_mode: str = "mean", device: str | None = None, grad_to_none: Sequence[torch.Tensor] | None = None
             ) -> Any:
    """Time `fn()` in milliseconds.

    `fn` runs once, then about `warmup` ms worth of warm-up runs, then about `rep` ms worth of
    timed runs (at least one of each). On CUDA each run is timed with CUDA events and the L2
    cache is flushed before it (a 256 MB buffer is written); on the CPU each run is timed with
    `time.perf_counter`. Returns the runs' `return_mode` ("mean", "median", "min", "max", or
    "all" for the list) or, given `quantiles`, those quantiles (a list, or one float for one).
    """
    if return_mode not in ("min", "max", "mean", "median", "all"):
        raise ValueError(f"return_mode must be one of min, max, mean, median, all; got {return_mode!r}")
    device = device or _default_device()
    if str(device).startswith("cuda"):
        return _bench_cuda(fn, warmup, rep, quantiles, return_mode, grad_to_none)
    return _bench_cpu(fn, warmup, rep, quantiles, return_mode, grad_to_none)


def _clear_grads(grad_to_none: Sequence[torch.Tensor] | None) -> None:
    for tensor in grad_to_none or ():
        tensor.grad = None


def _bench_cpu(fn, warmup, rep, quantiles, return_mode, grad_to_none) -> Any:
    fn()
    start = time.perf_counter()
    for _ in range(5):
        fn()
    estimate_ms = max((time.perf_counter() - start) * 1e3 / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    for _ in range(n_warmup):
        fn()
    times = []
    for _ in range(n_repeat):
        _clear_grads(grad_to_none)
        begin = time.perf_counter()
        fn()
        times.append((time.perf_counter() - begin) * 1e3)
    return _summarize(times, quantiles, return_mode)


def _bench_cuda(fn, warmup, rep, quantiles, return_mode, grad_to_none) -> Any:
    import torch

    device = torch.cuda.current_device()
    cache = _flush_buffers.get(device)
    if cache is None:
        cache = _flush_buffers[device] = torch.empty(_L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    fn()
    torch.cuda.synchronize()
    start_event, end_event = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start_event.record()
    for _ in range(5):
        cache.zero_()
        fn()
    end_event.record()
    torch.cuda.synchronize()
    estimate_ms = max(start_event.elapsed_time(end_event) / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(1, int(rep / estimate_ms))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for _ in range(n_warmup):
        fn()
    for i in range(n_repeat):
        _clear_grads(grad_to_none)
        cache.zero_()  # flush L2
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return _summarize(times, quantiles, return_mode)
