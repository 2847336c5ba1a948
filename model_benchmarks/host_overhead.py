"""`python -m model_benchmarks.host_overhead MODEL`: how much of a compiled model's step is host work.

For each backend (same process, inference under no_grad): the median step time with the GPU
synchronized after each step, the median host time of a step (the call returns before the GPU
finishes: what Python, the wrappers and the launches cost), and with ``--profile N`` the N
functions that take the most host time in tile's steps (cProfile, tottime).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root

from model_benchmarks import backends as backend_defs  # noqa: E402
from model_benchmarks import models  # noqa: E402


def _step_times(fn, steps: int) -> tuple[float, float]:
    """(median synchronized step ms, median host ms of a step)."""
    synced, host = [], []
    for _ in range(steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        host.append(time.perf_counter() - start)
        torch.cuda.synchronize()
        synced.append(time.perf_counter() - start)
    return statistics.median(synced) * 1e3, statistics.median(host) * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model_benchmarks.host_overhead",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--backends", default="inductor,tile")
    parser.add_argument("--precision", default="fp16", choices=("fp16", "bf16", "fp32"))
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--profile", type=int, default=0, help="print the N costliest host functions of tile's steps")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("host_overhead needs a CUDA device", file=sys.stderr)
        return 2
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[args.precision]
    spec = models.resolve([args.model], False)[0]
    model = models.build_model(spec, False, device="cuda", dtype=dtype).eval()
    inputs = models.model_inputs(spec, model, False, device="cuda")
    rows = []
    for backend in backend_defs.resolve(args.backends.split(",")):
        torch._dynamo.reset()
        with backend_defs.session(backend), torch.no_grad():
            compiled = backend_defs.compile_model(backend, model, cudagraphs=False)
            for _ in range(3):
                compiled(**inputs)
            synced, host = _step_times(lambda: compiled(**inputs), args.steps)
            rows.append((backend.name, synced, host))
            if args.profile and backend.name == "tile":
                profiler = cProfile.Profile()
                profiler.enable()
                for _ in range(10):
                    compiled(**inputs)
                profiler.disable()
                torch.cuda.synchronize()
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(args.profile)
                profile_text = out.getvalue()
    print(f"{args.model} {args.precision} inference, {torch.cuda.get_device_name()}, median of {args.steps} steps")
    print("| backend | step ms (synchronized) | host ms per step |")
    print("| --- | --- | --- |")
    for name, synced, host in rows:
        print(f"| {name} | {synced:.2f} | {host:.2f} |")
    if args.profile and any(r[0] == "tile" for r in rows):
        print("tile, 10 steps:")
        print("\n".join(line for line in profile_text.splitlines()[:args.profile + 12] if line.strip()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
