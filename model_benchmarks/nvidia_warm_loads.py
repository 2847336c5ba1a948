"""`python -m model_benchmarks.nvidia_warm_loads`: the host cost of a warm start's NVIDIA kernel loads, per kernel.

A warm start (graphs from the graph cache, kernels from the disk cache) still does some work per
kernel at its first launch: import the generated kernel's module (the `@jit` function), hash its
source (the disk cache key), read and check the cache entry, build the launcher and load the binary
into the driver.  This times that path for recorded kernels (nvidia_compile_stages ``--record``),
without a GPU when there is none (a fake driver stands in for `cuda.bindings`: every step but the
driver's own work runs):

    python -m model_benchmarks.nvidia_compile_stages --record /tmp/nv.pkl        # the 4 small models' kernels
    python -m model_benchmarks.nvidia_warm_loads --fill /tmp/nv.pkl --cache /tmp/nvcache   # compile into a cache
    python -m model_benchmarks.nvidia_warm_loads --load /tmp/nv.pkl --cache /tmp/nvcache --runs 5 [--profile 30]

``--load`` runs ``--runs`` fresh processes; each loads every recorded kernel once and reports the
CPU seconds of each step, summed over the kernels (median over the processes): ``module`` (the
generated module's import: `load_kernel`, once a source), ``key`` (`disk_cache.kernel_key`, the source's
hash at its first specialization), ``entry`` (reading and checking the entry), ``runner`` (the launcher,
the binary loaded: with the real driver on a GPU machine, ``--driver real``), and their ``total``.
``--any-compiler`` (with both ``--fill`` and ``--load``) keys the entries without the compiler's fingerprint, so
that edits to the compiler keep a filled cache usable (to compare two versions, fill a cache with each: their
kernels' source keys may differ; .probe/warm.sh of h-warm does).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import time
from typing import Any

STEPS = ("module", "key", "entry", "runner", "total")


class FakeDriver:
    """The calls of `cuda.bindings.driver` that loading and launching make, doing nothing (counted)."""

    def __init__(self):
        self.calls: dict[str, int] = {}

    class CUstream(int):
        pass

    class CUfunction_attribute:
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

    class CUdevice_attribute:
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def cuInit(self, flags):
        return (0,)

    def cuDeviceGet(self, ordinal):
        return 0, ordinal

    def cuDevicePrimaryCtxRetain(self, device):
        return 0, 1

    def cuCtxGetCurrent(self):
        return 0, 1

    def cuCtxSetCurrent(self, ctx):
        return (0,)

    def cuModuleLoadData(self, image):
        self._count("cuModuleLoadData")
        return 0, object()

    def cuModuleUnload(self, module):
        return (0,)

    def cuModuleGetFunction(self, module, name):
        self._count("cuModuleGetFunction")
        return 0, object()

    def cuFuncGetAttribute(self, attribute, fn):
        return 0, (1024 if attribute == self.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK else 0)

    def cuFuncSetAttribute(self, fn, attribute, value):
        return (0,)

    def cuDeviceGetAttribute(self, attribute, device):
        return 0, 227 * 1024

    def cuLaunchKernel(self, *args):
        self._count("cuLaunchKernel")
        return (0,)


def install_fake_driver(set_attribute: Any = setattr) -> FakeDriver:
    """Route the NVIDIA launcher's driver calls to a FakeDriver (a process without a GPU); `set_attribute`:
    how (a test's monkeypatch.setattr, undone after it)."""
    import torch

    from inductor_tile.kernel_compiler.runtime import cuda_launcher

    fake = FakeDriver()
    set_attribute(cuda_launcher, "_driver", lambda: fake)
    set_attribute(cuda_launcher, "_current_device", lambda: 0)
    set_attribute(cuda_launcher, "_current_raw_stream", lambda device: 0)
    set_attribute(torch.cuda, "init", lambda: None)
    return fake


def fill(path: str, target: str) -> int:
    """Compile every recorded kernel for `target` into the disk cache (TILE_CACHE_DIR), as compile workers do."""
    from inductor_tile.codegen.runtime import load_kernel
    from inductor_tile.kernel_compiler.compiler import compile_specialized

    with open(path, "rb") as f:
        kernels = pickle.load(f)
    start = time.perf_counter()
    for name, source, specs, num_warps in kernels:
        compile_specialized(load_kernel(name, source), specs, target=target, num_warps=num_warps, load=False)
    print(f"{len(kernels)} kernels for {target} in the cache ({time.perf_counter() - start:.1f} s)")
    return 0


def load_once(path: str, target: str, driver: str, profile_top: int = 0) -> dict:
    """Load every recorded kernel from the disk cache in this process: CPU s per step, summed."""
    from inductor_tile.codegen.runtime import load_kernel
    from inductor_tile.kernel_compiler import compiler
    from inductor_tile.kernel_compiler.runtime import disk_cache

    fake = install_fake_driver() if driver == "fake" else None
    with open(path, "rb") as f:
        kernels = pickle.load(f)
    clock = time.thread_time
    # the process's one-time costs, apart: the first load's imports, the fingerprints, the driver's start
    from inductor_tile.codegen import runtime

    start = clock()
    name, source, specs, num_warps = kernels[0]
    compiler.compile_specialized(load_kernel(name, source), specs, target=target, num_warps=num_warps)
    once = clock() - start
    runtime._loaded.clear()  # the timed loads import every kernel's module afresh
    profiler = None
    if profile_top:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    sums = dict.fromkeys(STEPS, 0.0)
    compiled_before = disk_cache.stats.compiles
    for name, source, specs, num_warps in kernels:  # each step as compile_specialized takes it on a cache hit
        start = clock()
        fn = load_kernel(name, source)  # a source's first specialization imports it, the others find it loaded
        sums["module"] += clock() - start
        start = clock()
        key = disk_cache.kernel_key(fn, specs, num_warps, target)  # the source's hash at its first specialization
        sums["key"] += clock() - start
        start = clock()
        texts = getattr(compiler, "LAUNCH_TEXTS", None)  # what compile_specialized reads (older versions: all)
        entry = disk_cache.load(key) if texts is None else disk_cache.load(key, texts=texts)
        sums["entry"] += clock() - start
        if entry is None:
            raise SystemExit(f"{name}: not in the cache (run --fill first with the same TILE_CACHE_DIR)")
        start = clock()
        compiler._from_cache_entry(fn, specs, target, num_warps, entry)
        sums["runner"] += clock() - start
    sums["total"] = sum(sums[step] for step in STEPS if step != "total")
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(profile_top)
    if disk_cache.stats.compiles != compiled_before:
        raise SystemExit("some kernels compiled instead of loading: the cache does not match this compiler")
    return {"kernels": len(kernels), "once": once, "steps": sums, "driver_calls": fake.calls if fake else {}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fill", metavar="PATH", help="compile the recorded kernels into --cache")
    parser.add_argument("--load", metavar="PATH", help="time loading them from --cache")
    parser.add_argument("--cache", required=True, help="the disk cache directory (TILE_CACHE_DIR)")
    parser.add_argument("--target", default="cuda:90")
    parser.add_argument("--driver", choices=("fake", "real"), default=None,
                        help="the CUDA driver (default: real when torch sees a GPU)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile's top N of the first run")
    parser.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--any-compiler", action="store_true", help="entries keyed without the compiler's fingerprint")
    args = parser.parse_args(argv)
    os.environ["TILE_CACHE_DIR"] = args.cache
    if args.any_compiler:
        from inductor_tile.kernel_compiler.runtime import disk_cache

        disk_cache.compiler_fingerprint = lambda: "any"
    os.environ.pop("TILE_CACHE_DISABLE", None)
    if args.driver is None:
        import torch

        args.driver = "real" if torch.cuda.is_available() else "fake"
    if args.child:
        print(json.dumps(load_once(args.child, args.target, args.driver, args.profile)))
        return 0
    if args.fill:
        return fill(args.fill, args.target)
    if not args.load:
        parser.error("--fill PATH or --load PATH")
    results = []
    for run in range(args.runs):
        cmd = [sys.executable, "-m", "model_benchmarks.nvidia_warm_loads", "--child", args.load, "--cache", args.cache,
               "--target", args.target, "--driver", args.driver, *(["--any-compiler"] if args.any_compiler else []), "--profile", str(args.profile if run == 0 else 0)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            print(done.stderr[-4000:], file=sys.stderr)
            return 1
        if args.profile and run == 0:
            print(done.stderr, file=sys.stderr)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    count = results[0]["kernels"]
    print(f"{count} kernels loaded from the disk cache for {args.target}, {args.driver} driver; CPU s of the loading "
          f"thread summed over the kernels, median of {len(results)} processes")
    print("| " + " | ".join(STEPS) + " | per kernel (total) | first kernel (one-time) |")
    print("|---" * (len(STEPS) + 2) + "|")
    medians = {step: statistics.median(r["steps"][step] for r in results) for step in STEPS}
    once = statistics.median(r["once"] for r in results)
    print("| " + " | ".join(f"{medians[s]:.3f}" for s in STEPS) + f" | {1000 * medians['total'] / count:.2f} ms | "
          f"{once:.3f} |")
    print(f"driver calls (one process): {results[0]['driver_calls']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
