"""`python -m model_benchmarks.micro` (or `python -m model_benchmarks micro`): memory-bound
kernels written as small torch functions, under eager, Inductor and tile, in GB/s next to the
device's measured copy bandwidth.

Each function (model_benchmarks/micro_cases.py) is compiled with ``torch.compile(fn, backend=...)``;
GB/s counts the bytes that must move (each input read once, each output written once).  Default
sizes are far above L2 on a GPU (8192 x 8192); ``--small`` (the default on a CPU) uses 1024 x 512;
``--sweep`` runs each kernel at the shapes real models have; ``--kernels all`` runs every kernel.  Timing: device events
(CUDA) or the wall clock (CPU) around groups of back-to-back calls, median of the groups.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import logging
import datetime
from pathlib import Path

import torch
import torch._inductor.config

from . import report, timing
from .backends import resolve_compiler
from .micro_cases import CASES, DEFAULT, SWEEP

BACKENDS = ("eager", "inductor", "tile", "tile-tuned")  # tile-tuned: tile with config.autotune on
KERNELS = tuple(CASES)


def shapes_for(kernel: str, args, small: bool) -> list[tuple[int, int]]:
    if args.sweep:
        return SWEEP[kernel]
    rows, cols = map(int, (args.size or ("1024x512" if small else "8192x8192")).lower().split("x"))
    return [(rows, cols)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m model_benchmarks.micro", description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="1024 x 512 (default on a CPU)")
    p.add_argument("--size", help="ROWSxCOLS (default 8192x8192; --small 1024x512)")
    p.add_argument("--dtype", choices=["fp16", "bf16", "fp32"], default=None,
                   help="dtype of the normalization/activation kernels (default fp16 on CUDA, fp32 on the CPU)")
    p.add_argument("--device", default=None, help="cuda or cpu (default: cuda if available)")
    p.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated (default: %(default)s)")
    p.add_argument("--kernels", default=",".join(DEFAULT),
                   help="comma-separated, or 'all' (default: %(default)s); known: " + ", ".join(KERNELS))
    p.add_argument("--sweep", action="store_true", help="each kernel at the shapes of real models (ignores --size)")
    p.add_argument("--samples", type=int, default=15, help="timed groups per kernel (default: %(default)s)")
    p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    p.add_argument("--out", type=Path, help="output directory (default: model_benchmarks/results/<device>-<date>-micro)")
    p.add_argument("--update-benchmarks-md", action="store_true", help="also rewrite this run's section of BENCHMARKS.md")
    args = p.parse_args(argv)

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if args.threads:
        torch.set_num_threads(args.threads)
    small = args.small or device.type == "cpu"
    dtype_name = args.dtype or ("fp16" if device.type == "cuda" else "fp32")
    half = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype_name]
    names = [b.strip() for b in args.backends.split(",") if b.strip()]
    for n in names:
        if n not in BACKENDS:
            raise SystemExit(f"--backends: unknown {n!r}; known: {', '.join(BACKENDS)}")
    kernels = list(KERNELS) if args.kernels == "all" else [k.strip() for k in args.kernels.split(",") if k.strip()]
    for k in kernels:
        if k not in KERNELS:
            raise SystemExit(f"--kernels: unknown {k!r}; known: {', '.join(KERNELS)}")

    torch._inductor.config.fx_graph_cache = False  # compile every time, as tile does
    import inductor_tile.config

    inductor_tile.config.graph_cache = False
    env = report.environment(device)
    src = torch.empty((1 << 28) if device.type == "cuda" else (1 << 24), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    copy_gbs = 2 * src.numel() / timing.bench_ms(lambda: dst.copy_(src), device, args.samples) / 1e6
    del src, dst

    results = []
    for kernel in kernels:
        case = CASES[kernel]
        dtype = torch.float32 if case.fp32 else half
        for rows, cols in shapes_for(kernel, args, small):
            results += run_case(case, rows, cols, dtype, device, names, args.samples, copy_gbs)

    out = args.out or (Path(__file__).resolve().parent / "results" /
                       f"{report.slug(env['device'] if device.type == 'cuda' else 'cpu')}-"
                       f"{datetime.date.today().isoformat()}-micro")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "micro.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(results[0]))
        writer.writeheader()
        writer.writerows(results)
    md = markdown(results, names, env, copy_gbs, args.samples, device)
    (out / "micro.md").write_text(md)
    if args.update_benchmarks_md:
        what = "sweep" if args.sweep else shapes_for(kernels[0], args, small)[0]
        what = what if isinstance(what, str) else f"{what[0]}x{what[1]}"
        report.update_benchmarks_md(f"micro {report.slug(env['device'])} {what} {dtype_name}", md)
    print(md)
    print(f"wrote {out / 'micro.csv'}, {out / 'micro.md'}")
    return 0


def run_case(case, rows, cols, dtype, device, names, samples, copy_gbs) -> list[dict]:
    """One kernel at one shape under every backend: check against eager, then time."""
    g = torch.Generator(device=device).manual_seed(0)
    inputs, nbytes = case.inputs(rows, cols, dtype, device, g)
    expected = case.fn(*inputs)
    dname = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}[dtype]
    tol = 1e-3 if dtype == torch.float32 else 2e-2
    rows_out = []
    for backend in names:
        row = dict(kernel=f"{case.name} {dname}", backend=backend, size=f"{rows}x{cols}", ms=None, gbs=None,
                   copy_pct=None, kernel_ms=None, kernel_gbs=None, kernel_pct=None, launches=None, check="", reason="")
        try:
            torch._dynamo.reset()
            compiler = resolve_compiler("tile" if backend == "tile-tuned" else backend)
            compiled = case.fn if backend == "eager" else torch.compile(case.fn, backend=compiler)
            with _tuned(backend == "tile-tuned"):
                got = compiled(*inputs)
            if case.check is not None:
                case.check(got, expected, inputs)
            else:
                torch.testing.assert_close(_floats(got), _floats(expected), atol=tol, rtol=tol)
            row["check"] = "ok"
        except AssertionError as exc:
            row["check"] = "mismatch"
            row["reason"] = " ".join(str(exc).split())[:200]
        except Exception as exc:
            row["check"] = "error"
            row["reason"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
        if row["check"] != "error":
            ms = timing.bench_ms(lambda: compiled(*inputs), device, samples)
            row.update(ms=ms, gbs=nbytes / ms / 1e6, copy_pct=100 * nbytes / ms / 1e6 / copy_gbs)
            if device.type == "cuda":
                kms, launches = timing.kernel_ms(lambda: compiled(*inputs))
                row.update(kernel_ms=kms, kernel_gbs=nbytes / kms / 1e6, kernel_pct=100 * nbytes / kms / 1e6 / copy_gbs,
                           launches=launches)
        print(f"{row['kernel']:22s} {row['size']:>12s} {backend:10s} "
              + (f"{row['gbs']:7.1f} GB/s {row['copy_pct']:4.0f}% of copy" if row["gbs"] else "")
              + (f" | kernels {row['kernel_gbs']:7.1f} GB/s {row['kernel_pct']:4.0f}% ({row['launches']:g} launches)"
                 if row["kernel_gbs"] else "")
              + f"  {row['check']} {row['reason']}", flush=True)
        rows_out.append(row)
    torch._dynamo.reset()
    return rows_out


@contextlib.contextmanager
def _tuned(on: bool):
    """Compile and first-launch with the autotuner on, logging its choices."""
    if not on:
        yield
        return
    from inductor_tile import config

    log = logging.getLogger("inductor_tile")  # the autotuner's logger
    if not logging.getLogger().handlers:
        logging.basicConfig(format="  %(message)s")
    level = log.level
    log.setLevel(logging.INFO)
    try:
        with config.patch(autotune=True):
            yield
    finally:
        log.setLevel(level)


def _floats(value):
    if isinstance(value, (tuple, list)):
        return tuple(_floats(v) for v in value)
    return value.float()


def markdown(results, names, env, copy_gbs, samples, device) -> str:
    timer = "CUDA events" if device.type == "cuda" else "wall clock"
    lines = [f"### Kernel micro-benchmarks, {env['device']}", "", "| | |", "| --- | --- |"]
    for key, value in env.items():
        lines.append(f"| {key} | {value} |")
    ratio = "tile" in names and "inductor" in names
    lines += [f"| timing | {timer} around groups of back-to-back calls, median of {samples} groups |",
              f"| device copy | {copy_gbs:.1f} GB/s (read + write) |", "",
              "GB/s (percent of the device copy); bytes = each input read once, each output written once."]
    by_kernel: dict[tuple[str, str], dict[str, dict]] = {}
    for r in results:
        by_kernel.setdefault((r["kernel"], r["size"]), {})[r["backend"]] = r
    metrics = [("gbs", "copy_pct", "Per call (CUDA events around back-to-back calls: host work included)")]
    if any(r["kernel_gbs"] for r in results):
        metrics.insert(0, ("kernel_gbs", "kernel_pct", "Kernel time only (torch.profiler: the sum of the device "
                                                       "kernels of a call, host overhead excluded)"))
    for gbs, pct, title in metrics:
        lines += ["", f"{title}:", ""] if len(metrics) > 1 else [""]
        lines += ["| kernel | size | " + " | ".join(names) + (" | tile / inductor |" if ratio else " |"),
                  "| --- | --- |" + " --- |" * (len(names) + ratio)]
        for (kernel, size), cells in by_kernel.items():
            out = []
            for n in names:
                r = cells[n]
                text = f"{r[gbs]:.1f} ({r[pct]:.0f}%)" if r[gbs] else ""
                if r["check"] != "ok":
                    text = (text + " " if text else "") + r["check"]
                out.append(text)
            if ratio:
                t, i = cells["tile"][gbs], cells["inductor"][gbs]
                out.append(f"{t / i:.2f}x" if t and i else "")
            lines.append(f"| {kernel} | {size} | " + " | ".join(out) + " |")
    problems = [r for r in results if r["check"] != "ok"]
    if problems:
        lines += ["", "Problems:", ""] + [f"- {r['kernel']} {r['size']} / {r['backend']}: {r['check']}: {r['reason']}"
                                          for r in problems]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
