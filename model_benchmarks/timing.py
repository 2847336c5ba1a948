"""Timing: one call at a time (device events on CUDA, the wall clock on the CPU), medians of
interleaved samples, geometric means."""

from __future__ import annotations

import math
import statistics
import time
from typing import Callable, Iterable

import torch


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_call_ms(fn: Callable[[], object], device: torch.device) -> float:
    """Milliseconds of one call of `fn`, from its start until the device has finished its work."""
    if device.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def interleaved(fns: dict[str, Callable[[], object]], device: torch.device, repeats: int,
                warmup: int) -> dict[str, list[float]]:
    """Samples (ms) of every function, taking turns: A B A B ... so that drifts in clocks,
    temperature or machine load hit all of them alike.  `warmup` untimed rounds first."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    synchronize(device)
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            samples[name].append(time_call_ms(fn, device))
    return samples


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def geomean(values: Iterable[float]) -> float:
    """Geometric mean of the positive finite values (nan when there are none)."""
    vals = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    if not vals:
        return float("nan")
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def bench_ms(fn: Callable[[], object], device: torch.device, samples: int = 15, target_ms: float = 5.0) -> float:
    """Median milliseconds per call of `fn`, timed over groups of back-to-back calls (about
    `target_ms` per group, so host launch costs overlap device work as in a real program)."""
    fn()
    synchronize(device)
    inner = max(1, min(1000, int(target_ms / max(time_call_ms(fn, device), 1e-3))))

    def group():
        for _ in range(inner):
            fn()

    return median(time_call_ms(group, device) / inner for _ in range(samples))


def kernel_ms(fn: Callable[[], object], calls: int = 20) -> tuple[float, float]:
    """(milliseconds of device kernels per call of `fn`, kernel launches per call), from
    torch.profiler's device timestamps: the kernels' own speed, without host overhead."""
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    total_us = sum(e.time_range.elapsed_us() for e in kernels)
    return total_us / 1e3 / calls, len(kernels) / calls
