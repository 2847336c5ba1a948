"""`python -m model_benchmarks.profile_kernels MODEL`: where a compiled model's GPU time goes.

Compiles one model of the suite with each backend given, profiles a few steps (forward passes, or
with ``--mode training`` forward, backward and Adam steps; ``--amp`` for autocast) with torch.profiler and prints the kernels that take the most GPU time, so that a model slower
under ``tile`` than under ``inductor`` can be explained kernel by kernel.
"""

from __future__ import annotations

import argparse

import torch

from . import models, runner


def _compile(backend: str, model):
    if backend == "eager":
        return model
    if backend == "tile":
        from inductor_tile.backend import tile_backend

        return torch.compile(model, backend=tile_backend)
    return torch.compile(model, backend=backend)


def profile(name: str, backend: str, precision: str, top: int, small: bool, steps: int = 3,
            show: int = 0, mode: str = "inference", amp: bool = False) -> None:
    spec = models.resolve([name], small)[0]
    settings = runner.RunSettings(mode=mode, precision=precision, amp=amp, device=torch.device("cuda"),
                                  small=small, repeats=steps, warmup=2, cudagraphs=False, accuracy="cosine")
    run = runner.ModelRun(spec, settings)
    torch._dynamo.reset()
    if backend == "tile":
        from inductor_tile import metrics

        metrics.reset()
    step = run.step_fn(_compile(backend, run.model))
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    run.reset_weights()
    events = [e for e in prof.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]
    total = sum(e.device_time_total for e in events) / steps
    print(f"\n{name} {backend} {precision}: {total / 1e3:.2f} ms of GPU time per {'step' if mode == 'training' else 'forward'}")
    ranked = sorted(events, key=lambda e: -e.device_time_total)
    for e in ranked[:top]:
        print(f"  {e.device_time_total / steps / 1e3:8.3f} ms  x{e.count // steps:<4d} {e.key[:110]}")
    if backend == "tile" and show:
        from inductor_tile import metrics

        for e in [e for e in ranked if e.key in metrics.kernel_sources][:show]:
            print(f"\n--- {e.key}: {metrics.launch_lines.get(e.key, '')}\n{metrics.kernel_sources[e.key]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model_benchmarks.profile_kernels", description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--backends", default="inductor,tile")
    parser.add_argument("--precision", default="fp16", choices=("fp16", "bf16", "fp32"))
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--mode", default="inference", choices=("inference", "training"))
    parser.add_argument("--amp", action="store_true", help="autocast to --precision with fp32 weights")
    parser.add_argument("--show", type=int, default=0, help="print the source and launch of the N slowest tile kernels")
    args = parser.parse_args(argv)
    for backend in args.backends.split(","):
        profile(args.model, backend, args.precision, args.top, args.small, show=args.show,
                mode=args.mode, amp=args.amp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
