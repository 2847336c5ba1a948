"""`python -m model_benchmarks.cpu_profile [MODELS]`: where a compiled small model's CPU time goes.

Per model of the small suite and backend (Inductor: its C++ kernels, each recorded by
``cpp.enable_kernel_profile``; tile: each CPU launch timed by the clock, trampoline and kernel, not
the wrapper's LaunchSite), a few forwards under torch.profiler: the generated kernels ranked by their
time per forward (median per call times calls: a shared machine stretches single calls), then the
events with the most self time.  Use ``--threads 1`` on a shared machine.

``--suite``: speedup over eager of each backend in CPU time (``time.process_time``), rounds of
forwards interleaved with eager, as the small suite's table but steadier on a loaded machine.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import statistics
import time
from typing import Iterator

import torch

from . import backends, models, runner


#: wall time (us) of each tile launch while recording, by the kernel's entry name
_tile_times: dict[str, list[float]] | None = None


@contextlib.contextmanager
def _tile_launches_recorded() -> Iterator[None]:
    """Every CPU-target launch timed by the clock (a profiler range from Python costs more than
    a small kernel runs) while `_tile_times` is a dict: launches through `launch_addresses`, and
    those that a launch site hands straight to the kernel's trampoline (`CPUKernel.direct`, wrapped
    for the kernels created meanwhile)."""
    from inductor_tile.kernel_compiler.runtime import cpu_launcher

    original, original_init = cpu_launcher.CPUKernel.launch_addresses, cpu_launcher.CPUKernel.__init__

    def recorded(self, picked, grid):
        if _tile_times is None:
            return original(self, picked, grid)
        start = time.perf_counter()
        original(self, picked, grid)
        _tile_times.setdefault(f"tile::{self.name}", []).append((time.perf_counter() - start) * 1e6)

    def init(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        direct, key = self.direct, f"tile::{self.name}"
        if direct is None:
            return

        def timed(*values):
            if _tile_times is None:
                return direct(*values)
            start = time.perf_counter()
            direct(*values)
            _tile_times.setdefault(key, []).append((time.perf_counter() - start) * 1e6)

        self.direct = timed

    cpu_launcher.CPUKernel.launch_addresses = recorded
    cpu_launcher.CPUKernel.__init__ = init
    try:
        yield
    finally:
        cpu_launcher.CPUKernel.launch_addresses = original
        cpu_launcher.CPUKernel.__init__ = original_init


def _kernel_events(prof: torch.profiler.profile) -> list:
    """Inductor's C++ kernels (named graph_<i>_cpp_fused_...)."""
    return [e for e in prof.events() if "cpp_fused" in e.name]


def profile(name: str, backend_name: str, steps: int, top: int, show: int = 0) -> dict[str, float]:
    spec = models.resolve([name], True)[0]
    settings = runner.RunSettings(mode="inference", precision="fp32", amp=False, device=torch.device("cpu"),
                                  small=True, repeats=steps, warmup=3, cudagraphs=False, accuracy="cosine")
    run = runner.ModelRun(spec, settings)
    backend = backends.resolve([backend_name])[-1]
    import torch._inductor.config as inductor_config

    with backends.session(backend), _tile_launches_recorded(), \
            inductor_config.patch({"cpp.enable_kernel_profile": True}):
        step = run.step_fn(backends.compile_model(backend, run.model, cudagraphs=False))
        for _ in range(5):
            step()
        global _tile_times
        _tile_times = {}
        try:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                for _ in range(steps):
                    step()
            per_name = _tile_times
        finally:
            _tile_times = None
    for e in _kernel_events(prof):
        per_name.setdefault(e.name, []).append(e.cpu_time_total)
    # medians: a shared machine stretches single calls many times over
    cost = {k: statistics.median(v) * len(v) / steps for k, v in per_name.items()}
    total_step = sum(e.cpu_time_total for e in prof.events() if e.cpu_parent is None) / steps
    kernel_total = sum(cost.values())
    print(f"\n{name} {backend_name}: {total_step:.0f} us per forward (top-level events, mean), "
          f"generated kernels {kernel_total:.0f} us (medians) in {sum(map(len, per_name.values())) // steps} launches")
    ranked = sorted(cost.items(), key=lambda kv: -kv[1])
    for kname, us in ranked[:top]:
        print(f"  {us:8.1f} us  x{len(per_name[kname]) // steps:<3d} {kname[:110]}")
    print("  self time by event (means per forward):")
    for e in sorted(prof.key_averages(), key=lambda e: -e.self_cpu_time_total)[:top]:
        print(f"  {e.self_cpu_time_total / steps:8.1f} us  x{e.count // steps:<3d} {e.key[:110]}")
    if backend_name.startswith("tile") and show:
        from inductor_tile import metrics

        for kname, _ in ranked[:show]:
            key = kname.removeprefix("tile::").removesuffix("_grid")
            print(f"\n--- {key}: {metrics.launch_lines.get(key, '')}\n{metrics.kernel_sources.get(key, '')}")
    return {"step": total_step, "kernels": kernel_total}


def suite(names: list[str], backend_names: list[str], rounds: int, calls: int) -> None:
    """Speedup over eager in CPU time (``time.process_time``: every thread of this process, steadier
    than the wall clock on a shared machine): per model and backend, ``rounds`` rounds of ``calls``
    forwards, eager and the backend taking turns; speedup = median eager round / median backend round."""
    ratios: dict[str, list[float]] = {b: [] for b in backend_names}
    print(f"| model | eager us | {' | '.join(backend_names)} |\n| --- | --- |{' --- |' * len(backend_names)}")
    for name in names:
        spec = models.resolve([name], True)[0]
        settings = runner.RunSettings(mode="inference", precision="fp32", amp=False, device=torch.device("cpu"),
                                      small=True, repeats=rounds, warmup=3, cudagraphs=False, accuracy="cosine")
        run = runner.ModelRun(spec, settings)
        eager = run.step_fn(run.model)
        cells, eager_us = [], []
        for backend_name in backend_names:
            backend = backends.resolve([backend_name])[-1]
            with backends.session(backend):
                step = run.step_fn(backends.compile_model(backend, run.model, cudagraphs=False))
                samples: dict[str, list[float]] = {"eager": [], "compiled": []}
                for i in range(rounds + 2):
                    for key, fn in (("eager", eager), ("compiled", step)):
                        start = time.process_time()
                        for _ in range(calls):
                            fn()
                        if i >= 2:  # two rounds of warm-up
                            samples[key].append((time.process_time() - start) / calls * 1e6)
            e, c = statistics.median(samples["eager"]), statistics.median(samples["compiled"])
            eager_us.append(e)
            ratios[backend_name].append(e / c)
            cells.append(f"{e / c:.2f}x ({c:.0f} us)")
        print(f"| {name} | {statistics.mean(eager_us):.0f} | {' | '.join(cells)} |", flush=True)
    geo = [math.exp(statistics.mean(math.log(r) for r in ratios[b])) for b in backend_names]
    print(f"| geomean | | {' | '.join(f'{g:.2f}x' for g in geo)} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model_benchmarks.cpu_profile",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="?", default=",".join(models.SMALL_DEFAULT),
                        help="comma-separated (default: the small suite's)")
    parser.add_argument("--backends", default="inductor,tile")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--show", type=int, default=0, help="print the source and launch of the N slowest tile kernels")
    parser.add_argument("--suite", action="store_true",
                        help="speedups over eager in CPU time instead of the per-kernel profile")
    parser.add_argument("--rounds", type=int, default=15, help="--suite: timed rounds")
    parser.add_argument("--calls", type=int, default=10, help="--suite: forwards per round")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.suite:
        suite(args.models.split(","), args.backends.split(","), args.rounds, args.calls)
        return 0
    for model in args.models.split(","):
        for backend in args.backends.split(","):
            profile(model, backend, args.steps, args.top, args.show)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
