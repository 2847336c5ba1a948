"""A finished session's rows: one per kernel or aten call, from its launches and torch.profiler's events.

- Tile kernels: the session's launch counts and bytes; time from the wall clock (CPU) or from the
  device kernels of their name (GPU; a name two kernels share is split by the kernels torch.profiler
  links to each launch's ``record_function`` range).
- aten/extern calls (``registry.externs``) made by a compiled graph itself: their CPU time, or on
  a GPU the time of the device kernels linked to them.
- Inductor's kernels (fallbacks): ``cpp_fused_*`` ranges on the CPU, ``triton_*`` kernels on a GPU,
  with the reasons of the fallback records whose FX nodes they are named after.
- GPU kernels that none of these claim: rows of kind "other" (memsets, eager code).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from . import registry
from .session import LaunchStats, Session

_FALLBACK_KERNEL = re.compile(r"^(?:graph_\d+_)?(cpp_fused\w*)$")  # Inductor's C++ kernels, profiled
_GRAPH_CALL = "## Call CompiledFxGraph"


@dataclass
class Row:
    """One kernel (or aten op) of the profile."""

    name: str
    kind: str  # "tile", "fallback", "extern", "other"
    calls: int
    seconds: float
    bytes: int = 0  # over all calls (tile kernels only)
    info: registry.KernelInfo | None = None
    findings: list[str] = field(default_factory=list)  # compile-time performance findings
    roofline: float | None = None  # achieved / copy bandwidth
    diagnosis: str = ""
    key: str = ""  # tile kernels: the launch key (``launch_key``), their label in the trace

    @property
    def mean_seconds(self) -> float:
        return self.seconds / self.calls if self.calls else 0.0

    @property
    def bytes_per_second(self) -> float | None:
        return self.bytes / self.seconds if self.bytes and self.seconds > 0 else None


def _ancestors(event):
    parent = getattr(event, "cpu_parent", None)
    while parent is not None:
        yield parent
        parent = getattr(parent, "cpu_parent", None)


def _in_compiled_graph_top_level(event) -> bool:
    """An aten op called by a compiled graph itself (not inside another aten op)."""
    inside = False
    for parent in _ancestors(event):
        if parent.name.startswith("aten::"):
            return False
        inside = inside or parent.name.startswith(_GRAPH_CALL)
    return inside


def _kernels_of(event) -> list:
    """The device kernels torch.profiler links to a CPU event (without the GPU-side span of the
    event itself, which a ``record_function`` range also gets)."""
    return [k for k in event.kernels if k.name != event.name]


def _device_seconds(event) -> float:
    return (event.time_range.end - event.time_range.start) / 1e6


def _findings(stats: LaunchStats) -> list[str]:
    """The performance findings (issue 22.1's ``CompiledKernel.perf_findings``) of the kernels launched."""
    from concurrent.futures import Future

    found: dict[str, None] = {}
    for fn in stats.functions.values():
        for compiled in list(getattr(fn, "cache", {}).values()):
            if isinstance(compiled, Future) or compiled is None:
                continue
            for finding in getattr(compiled, "perf_findings", None) or ():
                reason = getattr(finding, "reason", str(finding))
                line, file = getattr(finding, "line", 0), getattr(finding, "file", "")
                where = f"{os.path.basename(file)}:{line}" if file and line else f"kernel line {line}" if line else ""
                found[f"{reason} ({where})" if where else reason] = None
    return list(found)


def collect_rows(session: Session) -> list[Row]:
    """The session's rows, slowest first."""
    from torch.autograd import DeviceType

    events = session.events()
    rows: dict[str, Row] = {}
    gpu = session.device == "cuda"
    kernel_seconds: dict[str, float] = {}  # device kernels by name (GPU)
    kernel_calls: dict[str, int] = {}
    if gpu:
        for event in events:
            # kernels, memsets and copies; not the GPU-side spans of record_function ranges
            if event.device_type == DeviceType.CUDA and not getattr(event, "is_user_annotation", False):
                kernel_seconds[event.name] = kernel_seconds.get(event.name, 0.0) + _device_seconds(event)
                kernel_calls[event.name] = kernel_calls.get(event.name, 0) + 1
        tile_seconds = _tile_device_seconds(session, events, kernel_seconds)
    # tile kernels: our launch counts; time from the device (GPU) or the wall clock (CPU)
    names = {}
    for key, stats in session.launches.items():
        names.setdefault(stats.name, []).append(key)
    for key, stats in session.launches.items():
        if gpu:
            seconds, timed_calls = tile_seconds.get(key, 0.0), stats.calls
        else:
            seconds, timed_calls = stats.seconds, stats.timed_calls
        shown = stats.name if len(names[stats.name]) == 1 else _distinct_name(stats.name, key)
        info = registry.kernels.get(key) or _hand_written_info(stats)
        row = Row(shown, "tile", timed_calls, seconds, info=info, findings=_findings(stats))
        row.bytes = stats.bytes * timed_calls // stats.calls if stats.calls else 0
        row.key = key
        rows[key] = row
    graphs = session.graphs()  # the graphs that ran: their extern calls and fallbacks are shown
    # aten/extern calls of compiled graphs, and Inductor's own kernels (fallbacks)
    for event in events:
        if event.device_type != DeviceType.CPU:
            continue
        name = event.name
        if name in registry.externs and _in_compiled_graph_top_level(event):
            seconds = event.cpu_time_total / 1e6
            if gpu:
                seconds = 0.0
                for kernel in _kernels_of(event):
                    seconds += kernel.duration / 1e6
                    kernel_seconds[kernel.name] = kernel_seconds.get(kernel.name, 0.0) - kernel.duration / 1e6
            _add(rows, name, "extern", seconds, registry.externs[name].in_graphs(graphs))
        elif not gpu and _FALLBACK_KERNEL.match(name) and _in_compiled_graph_top_level(event):
            _add(rows, _FALLBACK_KERNEL.match(name).group(1), "fallback", event.cpu_time_total / 1e6, None)
    if gpu:  # device kernels neither launched here nor claimed by an aten op of a compiled graph
        generated = {}  # tile kernels by name, for launches the session did not see (CUDA graph replays)
        for info in registry.kernels.values():
            generated.setdefault(info.name, []).append(info)
        for name, seconds in kernel_seconds.items():
            if seconds > 1e-9:
                known = generated.get(name, [])
                kind = "tile" if len(known) == 1 else "fallback" if name.startswith("triton_") else "other"
                row = _add(rows, name, kind, seconds, known[0] if len(known) == 1 else None)
                row.calls = kernel_calls.get(name, row.calls)
    result = sorted(rows.values(), key=lambda r: r.seconds, reverse=True)
    for row in result:
        if row.kind == "fallback":
            row.info = _fallback_info(row.name, graphs)
    return result


def _distinct_name(name: str, key: str) -> str:
    """A kernel's name where two launched kernels share it: ``name#<source hash>`` for generated
    kernels (key ``<name>_<hash>``), ``<module>.<name>`` for hand-written ones."""
    if key.startswith(name + "_"):
        return f"{name}#{key[len(name) + 1:][:6]}"
    return key


def _hand_written_info(stats: LaunchStats) -> registry.KernelInfo | None:
    """A kernel the backend did not generate: its source line is its own definition."""
    for fn in stats.functions.values():
        filename, line = getattr(fn, "filename", None), getattr(fn, "first_line", None)
        if filename and line and not (fn.__module__ or "").startswith("inductor_tile_generated."):
            where = registry.SourceLine(os.path.abspath(filename), int(line))
            return registry.KernelInfo(stats.name, "tile", [registry.Site([], [where], {where: 1})])
    return None


def _tile_device_seconds(session: Session, events: list, kernel_seconds: dict[str, float]) -> dict[str, float]:
    """Device time of each launched tile kernel (by launch key); takes it out of ``kernel_seconds``.

    A kernel name launched under one key gets all the device time of that name.  Names shared by
    several kernels (two graphs' ``tile_poi_add_0``) are split by the kernels torch.profiler links
    to each launch's ``record_function`` range, or else in proportion to the calls.
    """
    from torch.autograd import DeviceType

    by_name: dict[str, list[str]] = {}
    for key, stats in session.launches.items():
        by_name.setdefault(stats.name, []).append(key)
    linked: dict[str, float] = {}
    if any(len(keys) > 1 for keys in by_name.values()):
        for event in events:
            if event.name in session.launches and event.device_type == DeviceType.CPU:
                linked[event.name] = linked.get(event.name, 0.0) + sum(k.duration for k in _kernels_of(event)) / 1e6
    seconds: dict[str, float] = {}
    for name, keys in by_name.items():
        total = kernel_seconds.pop(name, 0.0)
        if len(keys) == 1:
            seconds[keys[0]] = total
        elif sum(linked.get(k, 0.0) for k in keys) > 0.95 * total:
            seconds.update({k: linked.get(k, 0.0) for k in keys})
        else:
            calls = sum(session.launches[k].calls for k in keys) or 1
            seconds.update({k: total * session.launches[k].calls / calls for k in keys})
    return seconds


def _add(rows: dict, name: str, kind: str, seconds: float, info) -> Row:
    row = rows.get(name)
    if row is None:
        row = rows[name] = Row(name, kind, 0, 0.0, info=info)
    row.calls += 1
    row.seconds += seconds
    return row


def _fallback_info(kernel_name: str, graphs: set[int]) -> registry.KernelInfo | None:
    """The fallback records whose FX nodes Inductor named this kernel after (cpp_fused_<ops>_N)."""
    infos = [info.in_graphs(graphs) for info in registry.fallbacks if any(site.graph in graphs for site in info.sites)]
    if not infos:
        return None
    merged = registry.KernelInfo(kernel_name, "fallback")
    for info in infos:
        ops = {n.rstrip("0123456789").rstrip("_") for n in info.nodes}
        if any(op and op in kernel_name for op in ops):
            merged.sites.extend(info.sites)
            merged.reasons.extend(r for r in info.reasons if r not in merged.reasons)
    return merged if merged.sites else None
