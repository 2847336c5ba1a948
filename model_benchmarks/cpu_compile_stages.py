"""`python -m model_benchmarks.cpu_compile_stages`: where the CPU target's compile time goes, per kernel.

Two steps:

    python -m model_benchmarks.cpu_compile_stages --record /tmp/kernels.pkl   # run the small models once
    python -m model_benchmarks.cpu_compile_stages --replay /tmp/kernels.pkl --runs 3

``--record`` compiles the small suite's models (``--models``, default GPT-2) with ``backend="tile"`` on
the CPU and keeps every specialization compiled: the generated kernel's source and its parameter specs.
``--heuristics cuda`` shapes the kernels (blocks, warps, the configs reductions are tuned among) as the
CUDA device would (codegen/heuristics.py), still running them on the CPU: what the NVIDIA target's
replay (``model_benchmarks.nvidia_compile_stages``) compiles.
``--replay`` compiles each of them again from source, the disk cache off, in ``--runs`` fresh processes,
and prints, per kernel, the median CPU seconds of the compiling thread in each stage
(CompiledKernel.stage_seconds: front end, TTIR passes, TTGIR passes, LLVM IR generation, llvmlite
parse + verify, O3, machine code, MCJIT load + launcher; each text stage's printing included).
The first compile of a process also imports the compiler and initializes LLVM: that is timed apart
("warm-up", a compile of a tiny kernel that is not counted).  ``--profile N`` prints cProfile's top N
functions of one run (cumulative time).
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

STAGES = ("frontend", "ttir", "ttgir", "to_llvm", "parse", "optimize", "codegen", "load")


def record(path: str, model_names: list[str], heuristics: str = "cpu") -> int:
    """Compile the models once with every tile compile recorded as (kernel name, source, specs, num_warps).
    `heuristics`: "cpu", or "cuda" for the blocks, warps and tuning candidates a CUDA device gets."""
    import torch

    os.environ["TILE_CACHE_DISABLE"] = "1"
    from inductor_tile.codegen import heuristics as shapes
    from inductor_tile.kernel_compiler import compiler
    from . import backends, models

    recorded: dict[tuple, tuple] = {}
    original = compiler.compile_specialized

    def recording(jit_fn, specs, target=None, num_warps=4, **kwargs):
        if (target or "cpu") == "cpu":
            key = (jit_fn.src, tuple(s.key() for s in specs), num_warps)
            with open(jit_fn.filename) as f:  # the generated module (its imports too), not just the function
                recorded.setdefault(key, (jit_fn.__name__, f.read(), list(specs), num_warps))
        return original(jit_fn, specs, target=target, num_warps=num_warps, **kwargs)

    compiler.compile_specialized = recording
    is_gpu = shapes.is_gpu
    if heuristics == "cuda":
        shapes.is_gpu = lambda device_type: True
    try:
        for name in model_names:
            spec = models.SPECS[name]
            model = models.build_model(spec, small=True, device="cpu", dtype=torch.float32).eval()
            inputs = models.make_inputs(spec, model.config, small=True, device="cpu")
            torch._dynamo.reset()
            with torch.no_grad():
                torch.compile(model, backend=backends.resolve_compiler("tile"))(**inputs)
    finally:
        compiler.compile_specialized = original
        shapes.is_gpu = is_gpu
    with open(path, "wb") as f:
        pickle.dump(list(recorded.values()), f)
    print(f"recorded {len(recorded)} kernel specializations of {', '.join(model_names)} ({heuristics} heuristics) "
          f"in {path}")
    return 0


_WARM_UP_SOURCE = '''
import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def warm_up_kernel(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + i, tl.exp(tl.load(x_ptr + i, mask=i < n)) + 1.0, mask=i < n)
'''


def warm_up_compile(target: str) -> None:
    """Compile a tiny kernel for `target` (not counted: the process's first compile imports and starts things)."""
    from inductor_tile.codegen.runtime import load_kernel
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

    warm_up = load_kernel("warm_up_kernel", _WARM_UP_SOURCE)
    compile_specialized(warm_up, [spec_from_signature("x_ptr", "*fp32", divisible_by_16=True),
                                  spec_from_signature("n", "i32"), spec_from_signature("BLOCK", "constexpr", 8)],
                        target=target, num_warps=1, load=target == "cpu")


def compile_recorded(path: str, target: str, profile_top: int = 0, save_dir: str | None = None,
                     text_stage: str = "asm") -> dict:
    """Compile every kernel of `path` for `target` in this process: {name: {stage: CPU s, "total", ...}}.
    CPU s of this thread, plus those of the child processes (ptxas) in "children" and in "total".
    `save_dir`: each kernel's `asm[text_stage]` written there (to compare compiler versions).
    "gc": the CPU s of Python's cyclic collector inside the compile (part of the stages' time)."""
    import gc
    import resource

    from inductor_tile.codegen.runtime import load_kernel
    from inductor_tile.kernel_compiler.compiler import compile_specialized

    with open(path, "rb") as f:
        kernels = pickle.load(f)
    profiler = None
    if profile_top:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    result = {}
    collecting = [0.0, 0.0]  # CPU s in the collector so far, start of the collection under way

    def collector(phase: str, info: dict) -> None:
        if phase == "start":
            collecting[1] = time.thread_time()
        else:
            collecting[0] += time.thread_time() - collecting[1]

    gc.callbacks.append(collector)
    for index, (name, source, specs, num_warps) in enumerate(kernels):
        fn = load_kernel(name, source)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        collected = collecting[0]
        started = time.thread_time()
        kernel = compile_specialized(fn, specs, target=target, num_warps=num_warps, load=target == "cpu")
        elapsed = time.thread_time() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        stages = dict(kernel.stage_seconds)
        stages["children"] = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
        stages["total"] = elapsed + stages["children"]
        stages["gc"] = collecting[0] - collected
        stages["llir_lines"] = kernel.asm["llir"].count("\n")
        label = f"{index:02d} {name}"
        result[label] = stages
        if save_dir:
            os.makedirs(save_dir, exist_ok=True)
            with open(os.path.join(save_dir, f"{index:02d}.{text_stage}"), "w") as out:
                out.write(kernel.asm[text_stage])
    gc.callbacks.remove(collector)
    if profiler is not None:
        import pstats

        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(profile_top)
    return result


def replay_once(path: str, profile_top: int = 0) -> dict:
    """Compile every recorded kernel in this process; {"warm_up": s, "kernels": {name: {stage: s}}}."""
    os.environ["TILE_CACHE_DISABLE"] = "1"
    start = time.thread_time()
    from inductor_tile.kernel_compiler import compiler

    compiler.STAGE_CLOCK = time.thread_time  # CPU time of this thread: steadier than wall time on a shared machine
    warm_up_compile("cpu")
    result = {"warm_up": time.thread_time() - start}
    result["kernels"] = compile_recorded(path, "cpu", profile_top)
    return result


def child_results(module: str, args: list[str], runs: int, profile_top: int) -> list[dict] | None:
    """Run `python -m <module> --child ... <args>` `runs` times (fresh processes); their JSON results,
    or None (the error printed) if one failed."""
    results = []
    for run in range(runs):
        cmd = [sys.executable, "-m", module, *args, "--profile", str(profile_top if run == 0 else 0)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            print(done.stderr[-4000:], file=sys.stderr)
            return None
        if profile_top and run == 0:
            print(done.stderr, file=sys.stderr)
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return results


def replay(path: str, runs: int, profile_top: int) -> int:
    results = child_results("model_benchmarks.cpu_compile_stages", ["--child", path], runs, profile_top)
    if results is None:
        return 1
    print(table(results))
    return 0


def table(results: list[dict], stages: tuple[str, ...] = STAGES, once: str = "imports + LLVM start + one tiny kernel",
          ) -> str:
    """Median over runs of each stage per kernel, sum / mean / max rows, and the warm-up."""
    columns = (*stages, "total")
    lines = [f"| kernel | {' | '.join(columns)} | LLVM IR lines |", "|---" * (len(columns) + 2) + "|"]
    sums = dict.fromkeys(columns, 0.0)
    maxima = dict.fromkeys(columns, 0.0)
    for name in results[0]["kernels"]:
        cells = []
        for column in columns:
            value = statistics.median(r["kernels"][name].get(column, 0.0) for r in results)
            sums[column] += value
            maxima[column] = max(maxima[column], value)
            cells.append(f"{value:.3f}")
        lines.append(f"| {name} | {' | '.join(cells)} | {results[0]['kernels'][name]['llir_lines']} |")
    count = len(results[0]["kernels"])
    lines.append(f"| sum of {count} | {' | '.join(f'{sums[c]:.2f}' for c in columns)} | |")
    lines.append(f"| mean | {' | '.join(f'{sums[c] / count:.3f}' for c in columns)} | |")
    lines.append(f"| max | {' | '.join(f'{maxima[c]:.3f}' for c in columns)} | |")
    collector = sum(statistics.median(r["kernels"][name].get("gc", 0.0) for r in results) for name in results[0]["kernels"])
    warm_up = statistics.median(r["warm_up"] for r in results)
    lines.append(f"\nCPU s of the compiling thread, median of {len(results)} fresh processes (Python's collector: "
                 f"{collector:.2f} s of the total); {once}: {warm_up:.2f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--record", metavar="PATH")
    parser.add_argument("--models", default="GPT2ForSequenceClassification")
    parser.add_argument("--heuristics", choices=("cpu", "cuda"), default="cpu",
                        help="--record: shape kernels as for this device")
    parser.add_argument("--replay", metavar="PATH")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    parser.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(replay_once(args.child, args.profile)))
        return 0
    if args.record:
        return record(args.record, args.models.split(","), args.heuristics)
    if args.replay:
        return replay(args.replay, args.runs, args.profile)
    parser.error("--record PATH or --replay PATH")
    return 2


if __name__ == "__main__":
    sys.exit(main())
