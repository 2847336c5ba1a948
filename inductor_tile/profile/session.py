"""A profiling session: times every kernel launched while it is active.

- Tile kernels: ``JITFunction.run`` and ``LaunchSite.__call__`` (the generated wrappers' launch
  path) are replaced on their classes while a session is active (and restored after), so
  launches outside a session cost nothing extra.  The replacements count
  calls and the bytes of the tensor arguments (each whole, once: the bound used where the
  compile-time byte model has no number), marks
  each launch in torch.profiler's trace, and on the CPU times the launch with the wall clock
  (launches that compiled first are counted but not timed).  On a GPU, kernel times come from
  torch.profiler (CUPTI): the device events launched inside each launch's range (``trace``).
- Inductor's own kernels (fallbacks: ``cpp_fused_*`` with Inductor's kernel profiling on, which a
  session turns on for graphs compiled inside it; ``triton_*`` on GPUs) and aten/extern calls
  (matmuls) inside compiled graphs come from torch.profiler's events.
- While a session is active the graph cache is off, so graphs compiled inside it run codegen
  and leave their source-line records (``registry``).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field

from . import registry


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

    def __init__(self, device: str | None = None):
        import torch

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
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
        try:
            self._start(torch, inductor_config, config, JITFunction)
        except BaseException:
            self._undo()
            raise

    def _start(self, torch, inductor_config, config, JITFunction) -> None:
        saved_cache = config.graph_cache
        config.graph_cache = False
        # Inductor's C++ kernels (fallbacks) of graphs compiled now are marked in the trace
        kernel_profile = inductor_config.patch({"cpp.enable_kernel_profile": True}) \
            if hasattr(inductor_config.cpp, "enable_kernel_profile") else contextlib.nullcontext()
        kernel_profile.__enter__()
        original_run = JITFunction.run
        JITFunction.run = _profiled_run(original_run, self)
        site_class = _launch_site_class()
        original_call = site_class.__call__ if site_class is not None else None
        if site_class is not None:
            site_class.__call__ = _profiled_site_call(original_call, self)

        def restore():
            JITFunction.run = original_run
            if site_class is not None:
                site_class.__call__ = original_call
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
        """torch.profiler collects nothing while Dynamo compiles a frame (its fake-tensor ops would fill
        the trace; ``rows`` ignores them anyway, as they run outside any compiled graph's call).

        Only Dynamo's own compiles pause it: toggling inside a lazy backward compile (in autograd's
        backward pass) leaves a RecordFunction callback behind after the profiler stops (torch
        2.13: "Requested callback is not found", and every later profile records each op twice)."""
        try:
            from torch._dynamo.callback import CallbackTrigger, callback_handler
        except ImportError:  # an older torch: compilations are recorded too
            return
        profiler = self.torch_profiler
        paused = []

        def pause(args):
            if getattr(args, "callback_trigger", None) == CallbackTrigger.DYNAMO:
                with _quiet_stderr():
                    profiler.toggle_collection_dynamic(False, activities)
                paused.append(True)

        def resume(_args):
            if paused:
                paused.pop()
                with _quiet_stderr():
                    profiler.toggle_collection_dynamic(True, activities)

        callback_handler.register_start_callback(pause)
        callback_handler.register_end_callback(resume)

        def remove():
            callback_handler.remove_start_callback(pause)
            callback_handler.remove_end_callback(resume)

        self._restore.append(remove)

    def stop(self) -> None:
        import torch

        try:
            if self.device == "cuda":
                torch.cuda.synchronize()
            self.wall_seconds = time.perf_counter() - self._started
            self.torch_profiler.__exit__(None, None, None)
        finally:
            self._undo()

    def _undo(self) -> None:
        """Put back what ``start`` changed (the launch method, settings, compile callbacks)."""
        global _active
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
            if info is not None:
                found.update(site.graph for site in info.sites)
        return found

    def fallbacks(self) -> list[registry.KernelInfo]:
        """The fallback records of the session's graphs."""
        graphs = self.graphs()
        return [info for info in registry.fallbacks if any(site.graph in graphs for site in info.sites)]

    def write_trace(self, path: str) -> None:
        """The Chrome trace into ``path`` (torch.profiler exports once: later calls copy that file)."""
        import shutil

        shutil.copyfile(self._exported_trace(), path)

    def _exported_trace(self) -> str:
        import atexit
        import tempfile

        if getattr(self, "_trace_file", None) is None:
            handle, self._trace_file = tempfile.mkstemp(prefix="inductor_tile_trace_", suffix=".json")
            os.close(handle)
            atexit.register(_remove_quietly, self._trace_file)
            self.torch_profiler.export_chrome_trace(self._trace_file)
        return self._trace_file

    def trace(self) -> dict:
        """The Chrome trace, parsed (exported once, like ``write_trace``)."""
        if getattr(self, "_trace", None) is None:
            from .trace import load

            self._trace = load(self._exported_trace())
        return self._trace

    def events(self) -> list:
        return list(self.torch_profiler.events() or []) if self.torch_profiler is not None else []


def _launch_site_class():
    """``runtime.launch_site.LaunchSite`` (generated wrappers launch through it), if this version has it."""
    try:
        from ..kernel_compiler.runtime.launch_site import LaunchSite
    except ImportError:
        return None
    return LaunchSite


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


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
    """The bytes of the tensor arguments, each whole and once (a tensor passed twice, as input and
    output, counts once): what a launch can touch when nothing better is known."""
    seen = set()
    total = 0
    for value in (*args, *kwargs.values()):
        nbytes = getattr(value, "nbytes", None)
        if nbytes is not None and hasattr(value, "data_ptr"):
            where = (value.data_ptr(), int(nbytes))
            if where not in seen:
                seen.add(where)
                total += int(nbytes)
    return total


def launch_key(fn) -> str:
    """A launched kernel's key: ``registry.kernel_key`` for generated kernels (their module is
    ``inductor_tile_generated.<key>``), ``<module>.<name>`` for others."""
    module = fn.__module__ or ""
    if module.startswith("inductor_tile_generated."):
        return module.rsplit(".", 1)[-1]
    return f"{module}.{fn.__name__}"


_inside_site = threading.local()  # a LaunchSite's launch is being reported: its general path's run is not


def _launch_reporter(session: Session):
    """``report(fn, args, kwargs, launch)``: runs ``launch()`` (one launch of JITFunction ``fn``) inside
    a ``record_function`` range named by its key, and reports it to ``session``."""
    import torch

    timed = session.device != "cuda"

    def report(fn, args, kwargs, launch):
        known = len(fn.launch_cache)
        key = launch_key(fn)
        with torch.profiler.record_function(key):  # marks the launch in the trace; GPU: owns its kernel
            start = time.perf_counter()
            result = launch()
            seconds = time.perf_counter() - start
        compiled_now = len(fn.launch_cache) != known  # this launch compiled (or waited for) the kernel
        session.note_launch(key, fn, args, kwargs, seconds if timed and not compiled_now else None)
        return result

    return report


def _profiled_run(original_run, session: Session):
    """``JITFunction.run`` that reports each launch to ``session``."""
    report = _launch_reporter(session)

    def run(self, *args, grid, **kwargs):
        if getattr(_inside_site, "active", False):  # a LaunchSite reports this launch itself
            return original_run(self, *args, grid=grid, **kwargs)
        return report(self, args, kwargs, lambda: original_run(self, *args, grid=grid, **kwargs))

    run.__wrapped__ = original_run
    return run


def _profiled_site_call(original_call, session: Session):
    """``LaunchSite.__call__`` (the generated wrappers' launch, whose fast path skips ``run``) that
    reports each launch to ``session``."""
    report = _launch_reporter(session)

    def call(self, grid, *args):
        def launch():
            _inside_site.active = True
            try:
                return original_call(self, grid, *args)
            finally:
                _inside_site.active = False

        return report(self.jit_fn, args, {}, launch)

    call.__wrapped__ = original_call
    return call
