"""`python -m model_benchmarks.compile_times`: start-up time of compiled models, in fresh processes.

For each model and backend (``tile``, ``inductor``) two child processes run one after the other
with the same, initially empty cache directories (``TILE_CACHE_DIR``, ``TORCHINDUCTOR_CACHE_DIR``,
``TRITON_CACHE_DIR``): the first starts cold (nothing cached), the second warm (what the first
left on disk).  Each child builds the model (random weights), compiles it and times its first
call (``first call s``: compile + run, synchronized) and its whole life up to that point
(``process s``: interpreter start, imports, model build included).  The table also gives the
kernels compiled and the graph-cache hits of each run; a second table splits each first call into
phases (Dynamo's tracing, the backend, Inductor's lowering and codegen, guards, the first run, and
for tile the package import, kernel loads from the disk cache, compiles and compile workers).

    python -m model_benchmarks.compile_times --device cuda            # GPT-2, BERT, Llama, T5, fp16
    python -m model_benchmarks.compile_times --small --device cpu     # tiny versions, on a CPU

``--kernels``: the compile time of each hand-written suite kernel (tests/suite.py) instead,
from source with the disk cache off: front end + TTIR passes, the full pipeline to native code
for the CPU (TTGIR, LLVM O3, machine code), and to PTX for sm_90.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

#: GPT-2, BERT, Llama-style and T5 from the HuggingFace suite (model_benchmarks/models.py)
DEFAULT_MODELS = ("GPT2ForSequenceClassification", "BertForMaskedLM", "Llama-3.2-1B", "T5Small")


def suite_specializations():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import suite  # noqa: E402
    from inductor_tile.kernel_compiler import compiler

    seen: dict = {}
    original = compiler.compile_specialized

    def record(jit_fn, specs, target=None, num_warps=4, native=True, num_stages=3):
        seen.setdefault(jit_fn, specs)
        return compiler.CompiledKernel(jit_fn.__name__, specs, "cpu", num_warps)

    compiler.compile_specialized = record
    try:
        gen = torch.Generator().manual_seed(0)
        for case in suite.CASES.values():
            case(gen)
    finally:
        compiler.compile_specialized = original
        for kernel in seen:
            kernel.cache.clear()
            kernel.launch_cache.clear()
    return seen


def kernel_table() -> int:
    os.environ["TILE_CACHE_DISABLE"] = "1"
    from inductor_tile.kernel_compiler.compiler import compile_specialized

    specializations = suite_specializations()
    print(f"{'kernel':<24} {'TTIR s':>8} {'CPU native s':>13} {'PTX sm_90 s':>12}")
    for kernel, specs in specializations.items():
        times = []
        for target, native in (("cpu", None), ("cpu", True), ("cuda:90", False)):
            start = time.perf_counter()
            if native is None:
                from inductor_tile.kernel_compiler.frontend.code_generator import generate_ttir
                from inductor_tile.kernel_compiler.ir_builder import TTIRBuilder
                from inductor_tile.kernel_compiler.passes.pipeline import optimize_ttir

                optimize_ttir(generate_ttir(kernel, specs, TTIRBuilder()))
            else:
                compile_specialized(kernel, specs, target=target, num_warps=4, native=native)
            times.append(time.perf_counter() - start)
        print(f"{kernel.__name__:<24} {times[0]:>8.3f} {times[1]:>13.3f} {times[2]:>12.3f}")
    return 0


# ===--------------------------------------------------------------------------===
# Models in fresh processes
# ===--------------------------------------------------------------------------===
def child(args: argparse.Namespace) -> int:
    """One fresh process: build the model, compile it, time the first call; print one JSON line."""
    spawned = float(os.environ.get("COMPILE_TIMES_SPAWNED", time.time()))
    from . import models

    spec = models.find(args.model)
    device = args.device
    dtype = getattr(torch, args.precision)
    model = models.build_model(spec, small=args.small, device=device, dtype=dtype)
    inputs = models.model_inputs(spec, model, small=args.small, device=device)
    training = args.mode == "train"
    model.train(training)
    if args.prime:  # the parent's untimed first process: read what every run reads, compile nothing
        importlib.import_module("torch._inductor.compile_fx")
        import inductor_tile.backend  # noqa: F401

        with torch.no_grad():
            model(**inputs)
        print("COMPILE_TIMES {}")
        return 0
    import_s = 0.0
    if args.backend == "tile":
        started = time.perf_counter()
        import inductor_tile.backend  # noqa: F401 - registered by entry point too; import is part of the cost

        import_s = time.perf_counter() - started

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    sync()
    collections = GCTimer()
    profiler = None
    if args.profile_out:  # the first call under cProfile (its times then include the profiler's overhead)
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    start, start_cpu = time.perf_counter(), time.process_time()
    # Inductor's compile_fx, which both backends need: torch.compile imports it for backend="inductor" (its
    # time then fell in neither Dynamo phase), our backend at its entry (in the backend phase); imported
    # here first, its time is a column of its own and the phases compare like with like
    importlib.import_module("torch._inductor.compile_fx")

    inductor_import_s = time.perf_counter() - start
    from .backends import resolve_compiler  # the function itself: a source checkout has no entry point

    compiled = torch.compile(model, backend=resolve_compiler(args.backend))
    if training:
        out = compiled(**inputs)
        out.loss.backward()
    else:
        with torch.no_grad():
            out = compiled(**inputs)
    sync()
    first_call = time.perf_counter() - start
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(args.profile_out)
    collections.stop()
    # CPU time of this process (all its threads) in the first call: steadier than wall time on a busy machine
    row = {"first_call_s": first_call, "first_call_cpu_s": time.process_time() - start_cpu,
           "process_s": time.time() - spawned, "gc_s": collections.seconds, "gc_full": collections.full,
           "gc_full_s": collections.full_seconds, "gc_full_at": collections.full_at,
           # what a full collection walks now (counted after the timing): thousands of objects the collector tracks
           "gc_tracked_k": len(__import__("gc").get_objects()) / 1000}
    from torch._dynamo.utils import counters

    row["fx_graph_hits"] = counters["inductor"]["fxgraph_cache_hit"]
    row.update(phases(first_call - inductor_import_s), inductor_import_s=inductor_import_s)
    if args.backend == "tile":
        from inductor_tile import metrics
        from inductor_tile.codegen import compile_workers
        from inductor_tile.kernel_compiler.runtime import disk_cache

        row.update(kernels_generated=metrics.generated_kernels, kernels_compiled=disk_cache.stats.compiles,
                   kernels_from_disk=disk_cache.stats.hits, graph_cache_hits=metrics.graph_cache_hits,
                   import_s=import_s, kernel_load_s=getattr(disk_cache.stats, "load_seconds", None),  # older commits
                   kernel_compile_s=getattr(disk_cache.stats, "compile_seconds", None),
                   workers=len(compile_workers._pool.workers) if compile_workers._pool is not None else 0)
        try:  # older commits have no counters here
            from inductor_tile.kernel_compiler.runtime import tuning_db

            from inductor_tile.kernel_compiler.runtime import autotuner

            row.update(tuning_lookups=tuning_db.stats.lookups, tuning_lookup_s=tuning_db.stats.lookup_seconds,
                       tunings=autotuner.stats.tunings)  # keys benchmarked: a warm start should have none
        except (ImportError, AttributeError):
            pass
        try:
            from inductor_tile import tree_keys

            row.update(tree_keys_computed=tree_keys.stats["computed"])  # a warm start must show 0
        except ImportError:
            pass
    print("COMPILE_TIMES " + json.dumps(row), flush=True)
    return 0


class GCTimer:
    """Seconds the garbage collector ran (every generation) from construction to ``stop``, and the
    full (generation 2) collections apart: how many, their seconds, and where each began (``full_at``:
    seconds into the run, its duration, and the code whose allocation set it off).  A full collection
    walks every tracked object of the process (0.2-0.4 s in a model's first call); when one falls is
    decided by how many objects survived since the last (more than a quarter of those tracked), so one
    more or one less between two runs is a step of that size, not a trend."""

    def __init__(self):
        import gc

        self.seconds, self._started = 0.0, None
        self.full, self.full_seconds, self.full_at = 0, 0.0, []
        self._origin = time.perf_counter()
        self._gc = gc
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            took = time.perf_counter() - self._started
            self.seconds += took
            if info.get("generation") == 2:
                self.full += 1
                self.full_seconds += took
                self.full_at.append(f"{self._started - self._origin:.2f}s +{took:.2f}s {allocation_site()}")
            self._started = None

    def stop(self) -> None:
        if self._callback in self._gc.callbacks:
            self._gc.callbacks.remove(self._callback)


#: the packages an allocation site is named by (the innermost frame in one of them), most specific first
SITE_PACKAGES = ("inductor_tile", "torch/_inductor", "torch/_dynamo", "torch/_functorch", "torch/fx", "torch",
                 "transformers")


def allocation_site(depth: int = 80) -> str:
    """Where the running code is (a garbage collection starts at an allocation: this says whose): the
    innermost frame of a package in SITE_PACKAGES, the most specific one of that frame's path, as
    `package/file.py:line function`, followed by `(under ...)` and our innermost frame when that is
    further out (our code calling Inductor's)."""
    import sys as _sys

    frame = _sys._getframe(2)
    innermost, ours = None, None
    for _ in range(depth):
        if frame is None:
            break
        path = frame.f_code.co_filename.replace("\\", "/")
        package = next((p for p in SITE_PACKAGES if f"/{p}/" in path), None)
        if package is not None:
            where = f"{package}/{path.split(f'/{package}/', 1)[1]}:{frame.f_lineno} {frame.f_code.co_name}"
            innermost = innermost or where
            if package == "inductor_tile":
                ours = where
                break
        frame = frame.f_back
    if innermost is None:
        return "?"
    return innermost if ours in (None, innermost) else f"{innermost} (under {ours})"


#: Dynamo's and Inductor's own timers (torch._dynamo.utils.compilation_time_metrics) shown per phase
PHASE_TIMERS = {"trace_s": "bytecode_tracing", "backend_s": "OutputGraph.call_user_compiler",
                "lowering_s": "GraphLowering.run", "codegen_s": "Scheduler.codegen", "guards_s": "build_guards",
                # within the backend phase: Inductor's hash of torch's sources (part of the graph caches' keys;
                # tile reuses an earlier process's), and loading a cached graph (its wrapper module included)
                "torch_key_s": "inductor_codecache_torch_key", "graph_load_s": "AOTAutogradCache.inductor_load"}


def phases(first_call: float) -> dict[str, float]:
    """Where the first call went: Dynamo's tracing, the backend (AOTAutograd, the graph caches, Inductor's
    lowering and codegen), guards, and the rest (``run_s``: the first run, with kernel loads and waits
    for compiles at launch; a lazily compiled backward too)."""
    from torch._dynamo.utils import compilation_time_metrics as timers

    row = {name: sum(timers.get(key, ())) for name, key in PHASE_TIMERS.items()}
    row["run_s"] = max(0.0, first_call - sum(timers.get("_compile.compile_inner", ())))
    return row


def child_command(args: argparse.Namespace, model: str, backend: str) -> list[str]:
    cmd = [sys.executable, "-m", "model_benchmarks.compile_times", "--child", "--model", model, "--backend", backend,
           "--device", args.device, "--precision", args.precision, "--mode", args.mode]
    return cmd + (["--small"] if args.small else [])


def profile_path(args: argparse.Namespace, model: str, backend: str, run: str) -> Path | None:
    """Where a child's profile goes with ``--profile DIR``: ``DIR/<model>.<backend>.<cold|warm>.prof``."""
    return None if not args.profile else Path(args.profile) / f"{model}.{backend}.{run}.prof"


def profile_summary(path: Path, top: int = 25) -> str:
    """The functions of a profile with the most cumulative time: ours (inductor_tile) and all."""
    import io
    import pstats

    out = io.StringIO()
    stats = pstats.Stats(str(path), stream=out)
    stats.sort_stats("cumulative").print_stats("inductor_tile", top)
    stats.sort_stats("tottime").print_stats(top)
    return out.getvalue()


def run_child(cmd: list[str], cache_root: Path, timeout: float) -> dict:
    env = dict(os.environ, TILE_CACHE_DIR=str(cache_root / "tile"),
               TORCHINDUCTOR_CACHE_DIR=str(cache_root / "inductor"), TRITON_CACHE_DIR=str(cache_root / "triton"),
               COMPILE_TIMES_SPAWNED=repr(time.time()))
    env.pop("TILE_CACHE_DISABLE", None)
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f}s"}
    for line in done.stdout.splitlines():
        if line.startswith("COMPILE_TIMES "):
            return json.loads(line[len("COMPILE_TIMES "):])
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
    return {"error": tail[0][:200]}


def median_row(rows: list[dict]) -> dict:
    """One row for several runs of the same child: the median of each number, every run's list items
    (an error wins)."""
    import statistics

    errors = [row for row in rows if row.get("error")]
    if errors or len(rows) == 1:
        return (errors or rows)[0]
    merged = dict(rows[0])
    for key, value in rows[0].items():
        values = [row.get(key) for row in rows]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            middle = statistics.median(values)
            merged[key] = middle if isinstance(value, float) or middle != int(middle) else int(middle)
        elif all(isinstance(v, list) for v in values):  # each run's items, marked with the run's number
            merged[key] = [f"run {number}: {item}" for number, items in enumerate(values, 1) for item in items]
    merged["runs"] = len(rows)
    return merged


def _cell(row: dict, key: str, digits: int = 1) -> str:
    value = row.get(key)
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def table(results: list[tuple[str, str, dict, dict]]) -> str:
    """Markdown table: one row per model and backend, cold and warm side by side."""
    header = ("model", "backend", "cold first call s", "warm first call s", "cold process s", "warm process s",
              "kernels compiled cold/warm", "graph cache hits warm")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for model, backend, cold, warm in results:
        error = cold.get("error") or warm.get("error")
        if error:
            lines.append(f"| {model} | {backend} | error: {error} |" + " |" * (len(header) - 3))
            continue
        compiled = (f"{cold['kernels_compiled']}/{warm['kernels_compiled']}" if "kernels_compiled" in cold else "-")
        hits = warm.get("graph_cache_hits", warm.get("fx_graph_hits"))
        lines.append(f"| {model} | {backend} | {_cell(cold, 'first_call_s')} | {_cell(warm, 'first_call_s')} | "
                     f"{_cell(cold, 'process_s')} | {_cell(warm, 'process_s')} | {compiled} | {hits} |")
    return "\n".join(lines)


PHASE_COLUMNS = ("first_call_cpu_s", "import_s", "inductor_import_s", "trace_s", "backend_s", "torch_key_s",
                 "graph_load_s", "lowering_s", "codegen_s", "guards_s", "run_s", "gc_s", "gc_full", "gc_full_s", "kernel_load_s",
                 "kernel_compile_s", "tuning_lookup_s", "tunings", "workers")


def phase_table(results: list[tuple[str, str, dict, dict]]) -> str:
    """Markdown table: the first call of each run split into phases (seconds; ``workers``: compile
    worker processes started). ``first_call_cpu_s``: the CPU time of the first call (this process's
    threads, not its workers'); ``import_s`` (tile only) is before the first call, as the model build;
    ``inductor_import_s``: importing Inductor's compile_fx, the first thing in the first call;
    ``torch_key_s`` and ``graph_load_s`` are parts of ``backend_s`` (the key Inductor hashes from torch's
    sources, the cached graph's load);
    ``gc_s``: the garbage collector's time in the first call (in any phase), ``gc_full`` and ``gc_full_s``:
    its full collections (generation 2) and their part of it; ``tuning_lookup_s``: tile's
    tuning-database lookups (opening it included), within ``run_s``; ``tunings``: kernels it benchmarked
    (a warm start finds every choice in the database)."""
    header = ("model", "backend", "run") + PHASE_COLUMNS
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for model, backend, cold, warm in results:
        for label, row in (("cold", cold), ("warm", warm)):
            if row.get("error") or "run_s" not in row:
                continue
            cells = [_cell(row, column, 2) for column in PHASE_COLUMNS]
            lines.append(f"| {model} | {backend} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def full_collections(results: list[tuple[str, str, dict, dict]]) -> str:
    """One line per full garbage collection of each run: model, backend, run, and GCTimer's `full_at`; then
    per run the objects the collector tracked after the first call (what a full collection walks)."""
    lines, tracked = [], []
    for model, backend, cold, warm in results:
        for label, row in (("cold", cold), ("warm", warm)):
            for site in row.get("gc_full_at") or ():
                lines.append(f"{model} {backend} {label}: {site}")
            if row.get("gc_tracked_k") is not None:
                tracked.append(f"{model} {backend} {label} {row['gc_tracked_k']:.0f}k")
    return "\n".join(lines + (["objects tracked after the first call: " + ", ".join(tracked)] if tracked else []))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m model_benchmarks.compile_times",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", action="store_true", help="per-kernel compile times of the kernel suite instead")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS), help="comma-separated names (models.py)")
    parser.add_argument("--backends", default="tile,inductor")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--precision", default=None, help="float16 (default on cuda) / float32 / bfloat16")
    parser.add_argument("--mode", choices=("inference", "train"), default="inference")
    parser.add_argument("--small", action="store_true", help="tiny versions of the models (CPU-friendly)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per child process")
    parser.add_argument("--runs", type=int, default=1, help="warm processes per model and backend; the tables "
                        "give the median of each number (this machine may be shared: take 3 or more)")
    parser.add_argument("--profile", metavar="DIR", help="profile each first call with cProfile into "
                        "DIR/<model>.<backend>.<cold|warm>.prof and print the top of each warm one")
    parser.add_argument("--profile-out", help=argparse.SUPPRESS)
    parser.add_argument("--prime", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--backend", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.precision is None:
        args.precision = "float16" if args.device.startswith("cuda") else "float32"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.kernels:
        return kernel_table()
    if args.child:
        return child(args)
    from . import models

    names = [n for n in args.models.split(",") if n]
    models.resolve(names, args.small)  # unknown names stop here
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    results = []
    chosen = [b for b in args.backends.split(",") if b]
    for index, model in enumerate(names):
        if index == 0:  # untimed: the files every run reads (torch, transformers, CUDA libraries) into the OS cache
            run_child(child_command(args, model, chosen[0]) + ["--prime"], Path(tempfile.gettempdir()), args.timeout)
        with tempfile.TemporaryDirectory(prefix="compile-times-") as root:
            runs = {backend: {} for backend in chosen}
            for number, run in enumerate(["cold"] + ["warm"] * args.runs):
                # backends interleaved, their order alternating: drift of the machine falls on both alike
                for backend in chosen[::-1] if (index + number) % 2 else chosen:
                    profile = profile_path(args, model, backend, run)
                    cmd = child_command(args, model, backend)
                    row = run_child(cmd + (["--profile-out", str(profile)] if profile else []), Path(root) / backend,
                                    args.timeout)
                    runs[backend].setdefault(run, []).append(row)
        for backend in chosen:
            cold, warm = runs[backend]["cold"][0], median_row(runs[backend]["warm"])
            results.append((model, backend, cold, warm))
            print(f"{model} {backend}: cold {_cell(cold, 'first_call_s')} s, warm {_cell(warm, 'first_call_s')} s"
                  + (f" ({cold.get('error') or warm.get('error')})" if cold.get("error") or warm.get("error") else ""),
                  file=sys.stderr, flush=True)
    device = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"CPU ({os.cpu_count()} cores)"
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent).stdout.strip() or "?"
    except OSError:
        commit = "?"
    print(f"\n{args.mode}, {args.precision}, {'small models, ' if args.small else ''}{device}, torch {torch.__version__}, "
          f"commit {commit}, {time.strftime('%Y-%m-%d')}" + (f", warm: median of {args.runs} runs" if args.runs > 1 else "")
          + "\n")
    print(table(results))
    print("\nphases of the first call (s):\n")
    print(phase_table(results))
    sites = full_collections(results)
    if sites:
        print("\nfull garbage collections in the first calls (start, duration, whose allocation set it off):\n")
        print(sites)
    if args.profile:
        for model, backend, _, warm in results:
            path = profile_path(args, model, backend, "warm")
            if path is not None and path.exists():
                print(f"\nwarm first call of {model} with {backend} ({path}):\n{profile_summary(path)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
