"""A finished session's rows: one per kernel or aten call, from its launches and torch.profiler's events.

- Tile kernels: the session's launch counts; bytes from the compile-time model (``bytes_model``)
  or the tensor arguments; time from the wall clock (CPU) or from the device events launched
  inside each launch's ``record_function`` range (GPU, read from the Chrome trace: ``trace``).
- aten/extern calls made by a compiled graph itself: their CPU time, or on a GPU the time of every
  device event launched inside them (cuBLAS' kernels and memsets, cuDNN's attention kernel).
- Inductor's kernels (fallbacks): ``cpp_fused_*`` ranges on the CPU, ``triton_*`` kernels on a GPU,
  with the reasons of the fallback records whose FX nodes they are named after.
- GPU events outside compiled graphs: rows of kind "other" (eager code), named by the aten op that
  launched them, or by the kernel's own name.
On a GPU each device event of the trace is in exactly one row: the rows add up to torch.profiler's
device total.
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
    bytes_bound: bool = False  # ``bytes`` is only an upper bound (gathers, whole tensors): so is the roofline
    info: registry.KernelInfo | None = None
    findings: list[str] = field(default_factory=list)  # compile-time performance findings
    roofline: float | None = None  # achieved / copy bandwidth
    diagnosis: str = ""
    key: str = ""  # tile kernels: the launch key (``launch_key``), their label in the trace
    kernels: dict[str, tuple[int, float]] = field(default_factory=dict)  # GPU: device events by name: (count, seconds)

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
    if session.device == "cuda":
        return gpu_rows(session.trace(), session.launches, session.graphs())
    return _cpu_rows(session)


def _tile_rows(launches: dict[str, LaunchStats], seconds_of) -> dict[str, Row]:
    """One row per launched tile kernel; ``seconds_of(key, stats)`` gives (seconds, timed calls)."""
    names: dict[str, list[str]] = {}
    for key, stats in launches.items():
        names.setdefault(stats.name, []).append(key)
    rows = {}
    for key, stats in launches.items():
        seconds, timed_calls = seconds_of(key, stats)
        shown = stats.name if len(names[stats.name]) == 1 else _distinct_name(stats.name, key)
        info = registry.kernels.get(key) or _hand_written_info(stats)
        row = Row(shown, "tile", timed_calls, seconds, info=info, findings=_findings(stats), key=key)
        row.bytes, row.bytes_bound = _tile_bytes(info, stats, timed_calls)
        rows[key] = row
    return rows


def _tile_bytes(info: registry.KernelInfo | None, stats: LaunchStats, calls: int) -> tuple[int, bool]:
    """(bytes of ``calls`` launches, whether that is only an upper bound): the compile-time model
    (``bytes_model``) where the backend recorded one for fixed shapes, else every tensor argument
    whole, once (an upper bound)."""
    per_call = info.bytes_per_call if info is not None else None
    if per_call is not None:
        return per_call * calls, info.bytes_bound
    return (stats.bytes * calls // stats.calls if stats.calls else 0), True


def _cpu_rows(session: Session) -> list[Row]:
    from torch.autograd import DeviceType

    rows = _tile_rows(session.launches, lambda key, stats: (stats.seconds, stats.timed_calls))
    graphs = session.graphs()  # the graphs that ran: their extern calls and fallbacks are shown
    # aten/extern calls of compiled graphs, and Inductor's own kernels (fallbacks)
    for event in session.events():
        if event.device_type != DeviceType.CPU:
            continue
        name = event.name
        if name in registry.externs and _in_compiled_graph_top_level(event):
            _add(rows, name, "extern", event.cpu_time_total / 1e6, registry.externs[name].in_graphs(graphs))
        elif _FALLBACK_KERNEL.match(name) and _in_compiled_graph_top_level(event):
            _add(rows, _FALLBACK_KERNEL.match(name).group(1), "fallback", event.cpu_time_total / 1e6, None)
    return _finish(rows, graphs)


def _finish(rows: dict, graphs: set[int]) -> list[Row]:
    result = sorted(rows.values(), key=lambda r: r.seconds, reverse=True)
    for row in result:
        if row.kind == "fallback" and row.info is None:
            row.info = _fallback_info(row.name, graphs)
    return result


def gpu_rows(trace: dict, launches: dict[str, LaunchStats], graphs: set[int]) -> list[Row]:
    """Rows from a GPU session's Chrome trace: every device event (kernel, memset, memcpy) counted
    once, in the row of what launched it (``attribute``)."""
    from .trace import device_events

    tile_names: dict[str, list[str]] = {}
    for key, stats in launches.items():
        tile_names.setdefault(stats.name, []).append(key)
    generated: dict[str, list[registry.KernelInfo]] = {}  # tile kernels by name, for unlinked launches
    for info in registry.kernels.values():
        generated.setdefault(info.name, []).append(info)
    found: dict[tuple[str, str], Row] = {}
    uids: dict[tuple[str, str], set] = {}
    for event in device_events(trace):
        kind, name, uid = attribute(event, launches, tile_names)
        if kind == "other" and name == event.name and len(generated.get(name, ())) == 1:
            kind = "tile"  # a generated kernel launched where the session did not see it (CUDA graph replays)
        row = found.get((kind, name))
        if row is None:
            row = found[(kind, name)] = Row(name, kind, 0, 0.0)
        row.seconds += event.seconds
        calls, seconds = row.kernels.get(event.name, (0, 0.0))
        row.kernels[event.name] = (calls + 1, seconds + event.seconds)
        seen = uids.setdefault((kind, name), set())
        seen.add(uid if uid is not None else ("event", len(seen)))
        row.calls = len(seen)
    device = {key: row for (kind, key), row in found.items() if kind == "tile" and key in launches}
    rows = _tile_rows(launches, lambda key, stats: (device[key].seconds if key in device else 0.0, stats.calls))
    for key, row in rows.items():
        if key in device:
            row.kernels = device[key].kernels
    for (kind, name), row in found.items():
        if kind == "tile" and name in launches:
            continue
        if kind == "extern" and name in registry.externs:
            row.info = registry.externs[name].in_graphs(graphs)
        elif kind == "tile":
            row.info = generated[name][0]
        rows[f"{kind}:{name}"] = row
    return _finish(rows, graphs)


def attribute(event, launches, tile_names: dict[str, list[str]]) -> tuple[str, str, int | None]:
    """(kind, row name, call id) of a device event (``trace.DeviceEvent``): a tile launch range
    around its launch makes it that tile kernel's; in a compiled graph, the outermost aten op
    around it (the graph's extern call: ``aten::_scaled_dot_product_cudnn_attention`` owns the
    cuDNN kernel its ``aten::_cudnn_attention_forward`` launched) makes it that op's, else a
    ``triton_*`` kernel is Inductor's (a fallback); outside compiled graphs it is eager code,
    "other", named by its outermost aten op where it has one."""
    ranges = event.launchers
    for host in reversed(ranges):
        if host.name in launches:
            return "tile", host.name, host.uid
    graph = max((i for i, host in enumerate(ranges) if host.name.startswith(_GRAPH_CALL)), default=None)
    inside = ranges[graph + 1:] if graph is not None else ranges
    op = next((host for host in inside if host.name.startswith("aten::")), None)
    if graph is not None:
        if op is not None:
            return "extern", op.name, op.uid
        if event.name.startswith("triton_"):
            return "fallback", event.name, None
    keys = tile_names.get(event.name, [])
    if not ranges and len(keys) == 1:  # not linked to its launch: by its name
        return "tile", keys[0], None
    if op is not None:
        return "other", op.name, op.uid
    return "other", event.name, None


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
