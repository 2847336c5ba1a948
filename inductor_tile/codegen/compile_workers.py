"""Compiling kernels given as source text in worker processes, into the disk cache.

The compiler's front end, passes and lowering are Python and hold the GIL, so compile
threads run them one at a time.  A model's graph has tens to hundreds of kernels; worker
processes compile them side by side.  A worker only fills the on-disk cache: the launch
then loads the binary from there (milliseconds) in the process that owns the device.

Workers are plain subprocesses (``python -m inductor_tile.codegen.compile_worker``)
talking pickles over their stdin/stdout, as Inductor's compile workers are separate
programs: ``multiprocessing``'s spawn would re-import the user's main script in every
worker.  They start when Inductor begins lowering a tile graph (``start_at_lowering``), that is
once the graph cache has missed: a process whose graphs all come from the cache starts none.  When
nothing can come from the graph cache (off, or empty) they start before tracing instead.  They
import the compiler while the parent is still busy with lowering and codegen, exit when their stdin
closes (at the latest when this process exits) and never touch a GPU: a ``cuda`` target
reaches them with its capability spelled out.

``TILE_COMPILE_WORKERS`` (``inductor_tile.config.compile_workers``) sets their number;
0 keeps compiling on threads of this process.  A worker that fails or dies only costs
time: its task's future carries the error and the launch compiles the kernel itself.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from concurrent.futures import Future
from typing import Any

from ..thread_switch import ThreadSwitch

log = logging.getLogger("inductor_tile")

_HEADER = struct.Struct("<Q")
#: how a worker is started
WORKER_COMMAND = [sys.executable, "-m", "inductor_tile.codegen.compile_worker"]


def write_message(stream: Any, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def read_message(stream: Any) -> Any:
    """The next message, or None at the end of the stream."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def arg_specs(described: list[tuple]) -> list:
    """The ArgSpecs of `(name, signature type or "constexpr", constexpr value, divisible_by_16,
    equal_to_1)` descriptions (what a task carries: plain values pickle anywhere)."""
    from ..kernel_compiler.frontend.specialization import spec_from_signature

    return [spec_from_signature(name, type_string, value, divisible_by_16=div16, equal_to_1=one)
            for name, type_string, value, div16, one in described]


class _Worker:
    """One worker process and the thread that feeds it tasks, one at a time."""

    def __init__(self, pool: "WorkerPool", index: int):
        self.pool = pool
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        env.pop("TILE_COMPILE_WORKERS", None)
        self.process = subprocess.Popen(WORKER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env, cwd=os.getcwd())
        self.thread = threading.Thread(target=self._serve, name=f"tile-compile-worker-{index}", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            item = self.pool.tasks.get()
            if item is None:
                return
            task, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                write_message(self.process.stdin, task)
                reply = read_message(self.process.stdout)
            except (OSError, ValueError) as e:
                reply = None
                log.debug("compile worker pipe failed: %s", e)
            if reply is None:
                code = self.process.poll()
                reason = f"compile worker exited (status {code}) while compiling {task[0]}"
                future.set_exception(RuntimeError(reason))
                self.pool.fail(reason)
                return
            status, detail = reply
            if status == "ok":
                future.set_result(detail)
            else:
                future.set_exception(RuntimeError(f"compile worker failed on {task[0]}: {detail}"))

    def close(self) -> None:
        try:
            if self.process.stdin:
                self.process.stdin.close()
        except OSError:
            pass


class WorkerPool:
    """A fixed number of compile workers sharing one task queue."""

    def __init__(self, workers: int):
        self.tasks: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        self.broken = False
        self.pid = os.getpid()  # a forked child must not write into its parent's pipes
        self.workers = [_Worker(self, i) for i in range(workers)]

    def submit(self, task: tuple) -> Future:
        future: Future = Future()
        with self.lock:
            if self.broken:
                future.set_exception(RuntimeError("the compile workers have stopped"))
            else:
                self.tasks.put((task, future))
        return future

    def fail(self, reason: str) -> None:
        """A worker died: no new tasks, and the queued ones fail now (the launches compile them)."""
        with self.lock:
            self.broken = True
            while True:
                try:
                    item = self.tasks.get_nowait()
                except queue.Empty:
                    return
                if item is not None and item[1].set_running_or_notify_cancel():
                    item[1].set_exception(RuntimeError(f"not compiled: {reason}"))

    def close(self) -> None:
        for _ in self.workers:
            self.tasks.put(None)
        for worker in self.workers:
            worker.close()


_lock = threading.Lock()
_pool: WorkerPool | None = None
_restarts = 0
MAX_POOL_RESTARTS = 3  # pools replaced after a worker died, per process; then threads


def pool(workers: int) -> WorkerPool | None:
    """The process-wide pool (started on first use), or None when workers are off or broken."""
    global _pool
    if workers <= 0:
        return None
    global _restarts
    with _lock:
        if _pool is not None and _pool.broken:
            if not _pool.workers or _restarts >= MAX_POOL_RESTARTS:  # cannot start, or keeps dying: threads
                return None
            # a worker died (killed, out of memory): its tasks compiled in the launching process;
            # later graphs get a fresh pool
            log.info("inductor_tile: restarting the compile workers after a worker died")
            _pool.close()
            _pool = None
            _restarts += 1
        if _pool is None or _pool.pid != os.getpid():
            try:
                _pool = WorkerPool(workers)
            except OSError as e:  # cannot start processes here: threads it is, from now on
                log.warning("inductor_tile: compile workers could not start (%s); compiling on threads", e)
                _pool = WorkerPool(0)
                _pool.broken = True
                return None
            atexit.register(_pool.close)
        return _pool


#: environment variables a task sets in its worker besides the code flags: a worker started while one
#: of these was set (by a test, or a user's context manager) must not keep it for later tasks
TASK_ENV_FLAGS = ("TILE_CACHE_DISABLE", "TILE_DUMP_IR", "TILE_INTERPRET", "TILE_VERIFY")


def start_early() -> None:
    """Start the worker pool now if generated kernels will compile in workers (called as a graph's
    lowering begins, or before tracing on a first run, so that the workers' start-up overlaps with
    Inductor's work and our codegen)."""
    from .. import config
    from ..kernel_compiler.runtime import disk_cache

    if config.precompile and config.compile_workers > 0 and disk_cache.cache_dir() is not None:
        pool(config.compile_workers)


def start_if_nothing_cached() -> None:
    """Start the pool before AOTAutograd traces a graph when no graph can come from the graph cache
    (it is off, or holds no compiled graph at all: a first run), so that the workers' start-up also
    overlaps with tracing; otherwise they wait for ``start_at_lowering``."""
    from .. import graph_cache
    from ..kernel_compiler.runtime import disk_cache

    root = disk_cache.cache_dir()
    if root is None:
        return
    if not graph_cache.enabled() or not (graph_cache.graphs_dir(root) / "fxgraph").is_dir():
        start_early()


_lowering = ThreadSwitch()


@contextlib.contextmanager
def start_at_lowering():
    """While a tile graph compiles (the backend's inner compile): start the pool (``start_early``) when
    Inductor begins lowering the graph, i.e. after its graph-cache lookup missed.  A hit loads the
    compiled graph and its kernels from disk and needs no compiler processes."""
    _install_lowering_hook()
    with _lowering.set():
        yield


def _install_lowering_hook() -> None:
    """Wrap ``GraphLowering.run`` once per process; it starts the pool only inside ``start_at_lowering``
    in the same thread, so ``backend="inductor"`` compiles are untouched."""
    from torch._inductor.graph import GraphLowering

    with _lock:
        run = GraphLowering.run
        if getattr(run, "_tile_starts_workers", False):
            return

        def run_starting_workers(self, *args, **kwargs):
            if _lowering.get():
                start_early()
            return run(self, *args, **kwargs)

        run_starting_workers._tile_starts_workers = True
        run_starting_workers.__wrapped__ = run
        GraphLowering.run = run_starting_workers


def compile_source(name: str, source: str, specs: list[tuple], target: str, num_warps: int,
                   workers: int) -> Future | None:
    """Start compiling kernel `name` of `source` for `specs` in a worker; None if there is none.

    `specs`: one `(name, signature type or "constexpr", constexpr value, divisible_by_16,
    equal_to_1)` per parameter. The future's result is True once the binary is in the disk
    cache.
    """
    from .. import config
    from ..kernel_compiler.runtime import disk_cache

    if disk_cache.cache_dir() is None:  # a worker's compile would be lost
        return None
    if target == "cuda":
        from ..kernel_compiler.to_llvm.targets import capability_of

        target = f"cuda:{capability_of(target)}"
    workers_pool = pool(workers)
    if workers_pool is None:
        return None
    # the settings the compile depends on, as they are now (a pool outlives the environment
    # it was started in): code flags, where the cache is, and that it is on
    env = {flag: os.environ.get(flag) for flag in (*disk_cache.CODE_ENV_FLAGS, *TASK_ENV_FLAGS)}
    env["TILE_CACHE_DIR"] = str(disk_cache.cache_dir())
    env["TILE_SANITIZE"] = "1" if config.sanitize else "0"  # the setting, however it was made
    # a worker whose compiler is not this process's would store the kernel under a key never looked up here
    return workers_pool.submit((name, source, specs, target, num_warps, env, disk_cache.compiler_fingerprint()))
