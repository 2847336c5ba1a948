"""`python -m model_benchmarks.micro` (or `python -m model_benchmarks micro`): memory-bound
kernels written as small torch functions, under eager, Inductor and tile, in GB/s next to the
device's measured copy bandwidth.

Each function is compiled with ``torch.compile(fn, backend=...)``; GB/s counts the bytes that
must move (each input read once, each output written once).  Default sizes are far above L2 on
a GPU (8192 x 8192); ``--small`` (the default on a CPU) uses 1024 x 512.  Timing: device events
(CUDA) or the wall clock (CPU) around groups of back-to-back calls, median of the groups.
"""

from __future__ import annotations

import argparse
import csv
import datetime
from pathlib import Path

import torch
import torch._inductor.config
import torch.nn.functional as F

from . import report, timing
from .backends import resolve_compiler

BACKENDS = ("eager", "inductor", "tile")
KERNELS = ("softmax", "layernorm", "rmsnorm", "bias_gelu", "column_sum", "pointwise")


def softmax(x):
    return torch.softmax(x, -1)


def layernorm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def rmsnorm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w


def bias_gelu(x, b):
    return F.gelu(x + b)


def column_sum(x):
    return x.sum(0)


def pointwise_chain(x, y, z):  # add + relu + mul
    return torch.relu(x + y) * z


def cases(rows: int, cols: int, half: torch.dtype, device: torch.device):
    """"<kernel> <dtype>" -> (function, inputs, bytes moved, tolerance); KERNELS names the kernels."""
    g = torch.Generator(device=device).manual_seed(0)

    def rand(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g, device=device, dtype=dtype)

    x16 = rand(rows, cols, dtype=half)
    x32 = rand(rows, cols)
    w16, b16 = rand(cols, dtype=half), rand(cols, dtype=half)
    big16, big32 = x16.numel() * x16.element_size(), x32.numel() * 4
    vec16 = cols * x16.element_size()
    htol = 2e-2 if half != torch.float32 else 1e-4
    h = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}[half]
    return {
        f"softmax {h}": (softmax, (x16,), 2 * big16, htol),
        f"layernorm {h}": (layernorm, (x16, w16, b16), 2 * big16 + 2 * vec16, htol),
        f"rmsnorm {h}": (rmsnorm, (x16, w16), 2 * big16 + vec16, htol),
        f"bias_gelu {h}": (bias_gelu, (x16, b16), 2 * big16 + vec16, htol),
        "column_sum fp32": (column_sum, (x32,), big32 + cols * 4, 1e-3),
        "pointwise fp32": (pointwise_chain, (x32, rand(rows, cols), rand(rows, cols)), 4 * big32, 1e-4),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m model_benchmarks.micro", description=__doc__.splitlines()[0])
    p.add_argument("--small", action="store_true", help="1024 x 512 (default on a CPU)")
    p.add_argument("--size", help="ROWSxCOLS (default 8192x8192; --small 1024x512)")
    p.add_argument("--dtype", choices=["fp16", "bf16", "fp32"], default=None,
                   help="dtype of the normalization/activation kernels (default fp16 on CUDA, fp32 on the CPU)")
    p.add_argument("--device", default=None, help="cuda or cpu (default: cuda if available)")
    p.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated (default: %(default)s)")
    p.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated (default: %(default)s)")
    p.add_argument("--samples", type=int, default=15, help="timed groups per kernel (default: %(default)s)")
    p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's)")
    p.add_argument("--out", type=Path, help="output directory (default: model_benchmarks/results/<device>-<date>-micro)")
    p.add_argument("--update-benchmarks-md", action="store_true", help="also rewrite this run's section of BENCHMARKS.md")
    args = p.parse_args(argv)

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if args.threads:
        torch.set_num_threads(args.threads)
    small = args.small or device.type == "cpu"
    rows, cols = map(int, (args.size or ("1024x512" if small else "8192x8192")).lower().split("x"))
    dtype_name = args.dtype or ("fp16" if device.type == "cuda" else "fp32")
    half = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[dtype_name]
    names = [b.strip() for b in args.backends.split(",") if b.strip()]
    for n in names:
        if n not in BACKENDS:
            raise SystemExit(f"--backends: unknown {n!r}; known: {', '.join(BACKENDS)}")
    kernels = [k.strip() for k in args.kernels.split(",") if k.strip()]
    for k in kernels:
        if k not in KERNELS:
            raise SystemExit(f"--kernels: unknown {k!r}; known: {', '.join(KERNELS)}")

    torch._inductor.config.fx_graph_cache = False  # compile every time, as tile does
    import inductor_tile.config

    inductor_tile.config.graph_cache = False
    env = report.environment(device)
    src = torch.empty(rows * cols * 4, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    copy_gbs = 2 * src.numel() / timing.bench_ms(lambda: dst.copy_(src), device, args.samples) / 1e6

    results = []
    for kernel, (fn, inputs, nbytes, tol) in cases(rows, cols, half, device).items():
        if kernel.split()[0] not in kernels:
            continue
        expected = fn(*inputs)
        for backend in names:
            row = dict(kernel=kernel, backend=backend, size=f"{rows}x{cols}", ms=None, gbs=None, copy_pct=None,
                       check="", reason="")
            try:
                torch._dynamo.reset()
                compiled = fn if backend == "eager" else torch.compile(fn, backend=resolve_compiler(backend))
                got = compiled(*inputs)
                torch.testing.assert_close(got.float(), expected.float(), atol=tol, rtol=tol)
                row["check"] = "ok"
            except AssertionError as exc:
                row["check"] = "mismatch"
                row["reason"] = " ".join(str(exc).split())[:200]
            except Exception as exc:
                row["check"] = "error"
                row["reason"] = f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
            if row["check"] != "error":
                ms = timing.bench_ms(lambda: compiled(*inputs), device, args.samples)
                row.update(ms=ms, gbs=nbytes / ms / 1e6, copy_pct=100 * nbytes / ms / 1e6 / copy_gbs)
            print(f"{kernel:16s} {backend:9s} " + (f"{row['gbs']:8.1f} GB/s {row['copy_pct']:5.0f}% of copy"
                                                 if row["gbs"] else "") + f"  {row['check']} {row['reason']}")
            results.append(row)
        torch._dynamo.reset()

    out = args.out or (Path(__file__).resolve().parent / "results" /
                       f"{report.slug(env['device'] if device.type == 'cuda' else 'cpu')}-"
                       f"{datetime.date.today().isoformat()}-micro")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "micro.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(results[0]))
        writer.writeheader()
        writer.writerows(results)
    md = markdown(results, names, env, copy_gbs, rows, cols, args.samples, device)
    (out / "micro.md").write_text(md)
    if args.update_benchmarks_md:
        report.update_benchmarks_md(f"micro {report.slug(env['device'])} {rows}x{cols} {dtype_name}", md)
    print(md)
    print(f"wrote {out / 'micro.csv'}, {out / 'micro.md'}")
    return 0


def markdown(results, names, env, copy_gbs, rows, cols, samples, device) -> str:
    timer = "CUDA events" if device.type == "cuda" else "wall clock"
    lines = [f"### Kernel micro-benchmarks, {env['device']}", "", "| | |", "| --- | --- |"]
    for key, value in env.items():
        lines.append(f"| {key} | {value} |")
    lines += [f"| size | {rows} x {cols} |",
              f"| timing | {timer} around groups of back-to-back calls, median of {samples} groups |",
              f"| device copy | {copy_gbs:.1f} GB/s (read + write) |", "",
              "GB/s (percent of the device copy); bytes = each input read once, each output written once.", "",
              "| kernel | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
    by_kernel: dict[str, dict[str, dict]] = {}
    for r in results:
        by_kernel.setdefault(r["kernel"], {})[r["backend"]] = r
    for kernel, cells in by_kernel.items():
        out = []
        for n in names:
            r = cells[n]
            text = f"{r['gbs']:.1f} ({r['copy_pct']:.0f}%)" if r["gbs"] else ""
            if r["check"] != "ok":
                text = (text + " " if text else "") + r["check"]
            out.append(text)
        lines.append(f"| {kernel} | " + " | ".join(out) + " |")
    problems = [r for r in results if r["check"] != "ok"]
    if problems:
        lines += ["", "Problems:", ""] + [f"- {r['kernel']} / {r['backend']}: {r['check']}: {r['reason']}"
                                          for r in problems]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
