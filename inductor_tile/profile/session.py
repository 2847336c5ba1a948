"""A profiling session: times every kernel launched while it is active.

- Tile kernels: ``JITFunction.run`` is replaced on the class while a session is active (and
  restored after), so launches outside a session cost nothing extra.  The replacement counts
  calls and the bytes of the tensor arguments (inputs read once, outputs written once), marks
  each launch in torch.profiler's trace, and on the CPU times the launch with the wall clock
  (launches that compiled first are counted but not timed).  On a GPU, kernel times come from
  torch.profiler (CUPTI), by kernel name.
- Inductor's own kernels (fallbacks: ``cpp_fused_*`` with Inductor's kernel profiling on, which a
  session turns on for graphs compiled inside it; ``triton_*`` on GPUs) and aten/extern calls
  (matmuls) inside compiled graphs come from torch.profiler's events.
- While a session is active the graph cache is off, so graphs compiled inside it run codegen
  and leave their source-line records (``registry``).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from dataclasses import dataclass, field

from . import registry

_FALLBACK_KERNEL = re.compile(r"^(?:graph_\d+_)?(cpp_fused\w*)$")  # Inductor's C++ kernels, profiled
_GRAPH_CALL = "## Call CompiledFxGraph"

_lock = threading.Lock()
_active: "Session | None" = None


@dataclass
class LaunchStats:
    name: str = ""  # the kernel's name (its GPU entry symbol)
    calls: int = 0
    timed_calls: int = 0
    seconds: float = 0.0  # CPU: wall time of the timed calls
    bytes: int = 0  # over all calls
    functions: dict = field(default_factory=dict)  # id -> the JITFunction (for its compiled kernels)


class Session:
    """Collects launches and torch.profiler events between ``start`` and ``stop``."""

    def __init__(self, device: str | None = None, trace: bool = True):
        import torch

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.trace = trace
        self.launches: dict[str, LaunchStats] = {}
        self.torch_profiler = None
        self.wall_seconds = 0.0
        self.first_graph = registry.last_graph_id + 1  # graphs numbered from here were compiled inside
        self._restore: list = []

    # -- start / stop -------------------------------------------------------------
    def start(self) -> None:
        global _active
        import torch
        import torch._inductor.config as inductor_config

        from .. import config
        from ..kernel_compiler.runtime.jit import JITFunction

        with _lock:
            if _active is not None:
                raise RuntimeError("inductor_tile.profile: another profiling session is active")
            _active = self
        saved_cache = config.graph_cache
        config.graph_cache = False
        # Inductor's C++ kernels (fallbacks) of graphs compiled now are marked in the trace
        kernel_profile = inductor_config.patch({"cpp.enable_kernel_profile": True}) \
            if hasattr(inductor_config.cpp, "enable_kernel_profile") else contextlib.nullcontext()
        kernel_profile.__enter__()
        original_run = JITFunction.run
        JITFunction.run = _profiled_run(original_run, self)

        def restore():
            JITFunction.run = original_run
            config.graph_cache = saved_cache
            kernel_profile.__exit__(None, None, None)

        self._restore.append(restore)
        activities = [torch.profiler.ProfilerActivity.CPU]
        if self.device == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        self.torch_profiler = torch.profiler.profile(activities=activities)
        self.torch_profiler.__enter__()
        self._pause_while_compiling([torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
        self._started = time.perf_counter()

    def _pause_while_compiling(self, activities) -> None:
        """torch.profiler collects nothing while Dynamo compiles (its fake-tensor ops would fill the
        trace and look like the model's own aten calls)."""
        try:
            from torch._dynamo.callback import callback_handler
        except ImportError:  # an older torch: compilations are recorded too
            return
        profiler = self.torch_profiler

        def pause(_args):
            with _quiet_stderr():
                profiler.toggle_collection_dynamic(False, activities)

        def resume(_args):
            with _quiet_stderr():
                profiler.toggle_collection_dynamic(True, activities)

        callback_handler.register_start_callback(pause)
        callback_handler.register_end_callback(resume)

        def remove():
            callback_handler.remove_start_callback(pause)
            callback_handler.remove_end_callback(resume)

        self._restore.append(remove)

    def stop(self) -> None:
        global _active
        import torch

        try:
            if self.device == "cuda":
                torch.cuda.synchronize()
            self.wall_seconds = time.perf_counter() - self._started
            self.torch_profiler.__exit__(None, None, None)
        finally:
            while self._restore:
                self._restore.pop()()
            with _lock:
                _active = None

    # -- what happened ------------------------------------------------------------
    def note_launch(self, key: str, fn, args: tuple, kwargs: dict, seconds: float | None) -> None:
        stats = self.launches.get(key)
        if stats is None:
            stats = self.launches[key] = LaunchStats(name=fn.__name__)
        stats.calls += 1
        stats.bytes += _tensor_bytes(args, kwargs)
        stats.functions[id(fn)] = fn
        if seconds is not None:
            stats.timed_calls += 1
            stats.seconds += seconds

    def graphs(self) -> set[int]:
        """The graphs that ran or were compiled in the session (``registry.graph_id``)."""
        found = set(range(self.first_graph, registry.last_graph_id + 1))
        for key in self.launches:
            info = registry.kernels.get(key)
            found.update(site.graph for site in info.sites) if info else None
        return found

    def fallbacks(self) -> list[registry.KernelInfo]:
        """The fallback records of the session's graphs."""
        graphs = self.graphs()
        return [info for info in registry.fallbacks if any(site.graph in graphs for site in info.sites)]

    def events(self) -> list:
        return list(self.torch_profiler.events() or []) if self.torch_profiler is not None else []


@contextlib.contextmanager
def _quiet_stderr():
    """Kineto prints a warning on stderr (file descriptor 2, not Python's warnings) for every
    toggle of CPU collection; the toggle is ours and expected, so its warning is dropped."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _tensor_bytes(args: tuple, kwargs: dict) -> int:
    total = 0
    for value in (*args, *kwargs.values()):
        nbytes = getattr(value, "nbytes", None)
        if nbytes is not None and hasattr(value, "data_ptr"):
            total += int(nbytes)
    return total


def launch_key(fn) -> str:
    """A launched kernel's key: ``registry.kernel_key`` for generated kernels (their module is
    ``inductor_tile_generated.<key>``), ``<module>.<name>`` for others."""
    module = fn.__module__ or ""
    if module.startswith("inductor_tile_generated."):
        return module.rsplit(".", 1)[-1]
    return f"{module}.{fn.__name__}"


def _profiled_run(original_run, session: Session):
    """``JITFunction.run`` that reports each launch to ``session``."""
    import torch

    timed = session.device != "cuda"

    def run(self, *args, grid, **kwargs):
        known = len(self.launch_cache)
        key = launch_key(self)
        with torch.profiler.record_function(key):  # marks the launch in the trace; GPU: owns its kernel
            start = time.perf_counter()
            result = original_run(self, *args, grid=grid, **kwargs)
            seconds = time.perf_counter() - start
        compiled_now = len(self.launch_cache) != known  # this launch compiled (or waited for) the kernel
        session.note_launch(key, self, args, kwargs, seconds if timed and not compiled_now else None)
        return result

    run.__wrapped__ = original_run
    return run


# -- turning events into rows ------------------------------------------------------
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
                line = getattr(finding, "line", None)
                found[f"{reason} (kernel line {line})" if line else reason] = None
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
            if event.device_type == DeviceType.CUDA:
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
        shown = stats.name if len(names[stats.name]) == 1 else f"{stats.name}#{key[len(stats.name) + 1:][:6]}"
        info = registry.kernels.get(key)
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
                for kernel in event.kernels:
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


def _tile_device_seconds(session: Session, events: list, kernel_seconds: dict[str, float]) -> dict[str, float]:
    """Device time of each launched tile kernel (by launch key); takes it out of ``kernel_seconds``.

    A kernel name launched under one key gets all the device time of that name.  Names shared by
    several kernels (two graphs' ``tile_poi_add_0``) are split by the kernels torch.profiler links
    to each launch's ``record_function`` range, or else in proportion to the calls.
    """
    by_name: dict[str, list[str]] = {}
    for key, stats in session.launches.items():
        by_name.setdefault(stats.name, []).append(key)
    linked: dict[str, float] = {}
    if any(len(keys) > 1 for keys in by_name.values()):
        for event in events:
            if event.name in session.launches:
                linked[event.name] = linked.get(event.name, 0.0) + sum(k.duration for k in event.kernels) / 1e6
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
