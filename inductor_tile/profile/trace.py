"""Who launched each device kernel, read from torch.profiler's Chrome trace (``trace.json``).

torch.profiler (Kineto, CUPTI) gives every device event (categories "kernel", "gpu_memset",
"gpu_memcpy") the ``correlation`` id of the host call that issued it (``cudaLaunchKernel``,
``cuLaunchKernelEx``, ``cudaMemsetAsync``: categories "cuda_runtime" and "cuda_driver"; its
"ac2g" flow arrows draw the same link).  The host ranges that enclose that call in time on its
thread (aten ops "cpu_op", ``record_function`` ranges "user_annotation") launched the event:
the profiler's tile launch range, or the aten op a compiled graph called (``aten::addmm``
around cuBLAS' kernel and its workspace memset), or eager code.

The driver API calls matter: cuBLAS (nvjet) and cuDNN launch with ``cuLaunchKernelEx``, which
torch.profiler's Python events (``FunctionEvent.kernels``) do not link to their aten op.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field

DEVICE_CATEGORIES = ("kernel", "gpu_memset", "gpu_memcpy")
HOST_CALL_CATEGORIES = ("cuda_runtime", "cuda_driver")
HOST_RANGE_CATEGORIES = ("cpu_op", "user_annotation")


@dataclass
class HostRange:
    """An aten op or ``record_function`` range on a host thread."""

    name: str
    uid: int  # tells two calls of one op apart


@dataclass
class DeviceEvent:
    """A kernel, memset or memcpy on the device, and the host ranges around its launch."""

    name: str
    category: str  # "kernel", "gpu_memset", "gpu_memcpy"
    seconds: float
    launchers: list[HostRange] = field(default_factory=list)  # outermost first; [] when not linked


def load(path: str) -> dict:
    """A Chrome trace file (``trace.json`` or ``trace.json.gz``)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def _category(event: dict) -> str:
    return str(event.get("cat", "")).lower()


def _complete(trace: dict, categories) -> list[dict]:
    return [e for e in trace.get("traceEvents", ()) if e.get("ph") == "X" and _category(e) in categories]


def device_total_seconds(trace: dict) -> float:
    """torch.profiler's total device time: every kernel, memset and memcpy, as the trace has them."""
    return sum(float(e.get("dur", 0.0)) for e in _complete(trace, DEVICE_CATEGORIES)) / 1e6


def _enclosing_ranges(trace: dict) -> dict[int, list[HostRange]]:
    """For each host runtime/driver call (by its correlation id) the host ranges around it, outermost first."""
    by_thread: dict[tuple, list[dict]] = {}
    for event in _complete(trace, HOST_CALL_CATEGORIES + HOST_RANGE_CATEGORIES):
        by_thread.setdefault((event.get("pid"), event.get("tid")), []).append(event)
    found: dict[int, list[HostRange]] = {}
    uid = 0
    for events in by_thread.values():
        # a parent starts no later than its children and lasts longer: sorted, a stack finds them
        events.sort(key=lambda e: (float(e["ts"]), -float(e.get("dur", 0.0))))
        stack: list[tuple[float, HostRange]] = []  # (end time, range)
        for event in events:
            start = float(event["ts"])
            end = start + float(event.get("dur", 0.0))
            while stack and stack[-1][0] <= start:
                stack.pop()
            if _category(event) in HOST_CALL_CATEGORIES:
                correlation = (event.get("args") or {}).get("correlation")
                if correlation is not None:
                    found[correlation] = [r for _, r in stack]
                continue
            uid += 1
            stack.append((end, HostRange(event.get("name", ""), uid)))
    return found


def device_events(trace: dict) -> list[DeviceEvent]:
    """Every device event of the trace with the host ranges around its launch."""
    launchers = _enclosing_ranges(trace)
    found = []
    for event in _complete(trace, DEVICE_CATEGORIES):
        correlation = (event.get("args") or {}).get("correlation")
        found.append(DeviceEvent(event.get("name", ""), _category(event), float(event.get("dur", 0.0)) / 1e6,
                                 launchers.get(correlation, [])))
    return found
