"""`python -m model_benchmarks.cpu_kernels`: CPU-target throughput next to torch, same process.

Times a 2^24-element fp32 add, a 4096x4096 fp32 row softmax and float32 math over 2^20
elements (exp, erf, sin, cos, log: the CPU target's vector polynomials, torch's Sleef) with
the tile compiler's CPU target and with torch (eager), median of repeated runs after warm-up,
and prints GB/s (bytes that must move: inputs read once, outputs written once). Last, the
host cost of one launch of a 16-element kernel next to torch.add's.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

import torch

import inductor_tile
import inductor_tile.language as tl

from .bench_kernels import add_kernel, softmax_kernel

MATH = ("exp", "erf", "sin", "cos", "log")


@inductor_tile.jit
def math_kernel(x_ptr, out_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=1.0)
    if FN == "exp":
        y = tl.exp(x)
    elif FN == "erf":
        y = tl.erf(x)
    elif FN == "sin":
        y = tl.sin(x)
    elif FN == "cos":
        y = tl.cos(x)
    else:
        y = tl.log(x)
    tl.store(out_ptr + offsets, y, mask=mask)


def median_seconds(fn: Callable[[], None], repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    rows = []

    n = 1 << 24
    x, y = torch.randn(n), torch.randn(n)
    out = torch.empty(n)
    block = 4096
    tile = median_seconds(lambda: add_kernel[(inductor_tile.cdiv(n, block),)](x, y, out, n, BLOCK=block), args.repeats)
    eager = median_seconds(lambda: torch.add(x, y, out=out), args.repeats)
    torch.testing.assert_close(out, x + y)
    rows.append(("add fp32 2^24", 3 * n * 4, tile, eager))

    M = N = 4096
    a = torch.randn(M, N)
    b = torch.empty(M, N)
    tile = median_seconds(lambda: softmax_kernel[(M,)](b, a, a.stride(0), N, BLOCK=N), args.repeats)
    eager = median_seconds(lambda: torch.softmax(a, 1), args.repeats)  # allocates its output
    softmax_kernel[(M,)](b, a, a.stride(0), N, BLOCK=N)
    torch.testing.assert_close(b, torch.softmax(a, 1))
    rows.append(("softmax fp32 4096x4096", 2 * M * N * 4, tile, eager))

    n = 1 << 20
    x = torch.randn(n) * 4
    positive = x.abs() + 1e-3
    out = torch.empty(n)
    block = 256
    for fn in MATH:
        source = positive if fn == "log" else x
        launch = (lambda fn=fn, source=source: math_kernel[(inductor_tile.cdiv(n, block),)](
            source, out, n, FN=fn, BLOCK=block))
        tile = median_seconds(launch, args.repeats)
        torch_fn = getattr(torch, fn)
        eager = median_seconds(lambda: torch_fn(source, out=out), args.repeats)
        launch()
        torch.testing.assert_close(out, torch_fn(source.double()).float(), rtol=1e-6, atol=1e-6)
        rows.append((f"{fn} fp32 2^20", 2 * n * 4, tile, eager))

    tiny, tiny_out = torch.randn(16), torch.empty(16)
    site = add_kernel.launcher(BLOCK=16)
    calls = 2000
    tile = median_seconds(lambda: [site((1, 1, 1), tiny, tiny, tiny_out, 16) for _ in range(calls)], 5) / calls
    eager = median_seconds(lambda: [torch.add(tiny, tiny, out=tiny_out) for _ in range(calls)], 5) / calls

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'kernel':<24} {'tile ms':>9} {'tile GB/s':>10} {'torch ms':>9} {'torch GB/s':>11}")
    for name, nbytes, t, e in rows:
        print(f"{name:<24} {t * 1e3:>9.2f} {nbytes / t / 1e9:>10.2f} {e * 1e3:>9.2f} {nbytes / e / 1e9:>11.2f}")
    print(f"one launch of a 16-element add (a generated wrapper's call site): {tile * 1e6:.2f} us; "
          f"torch.add(out=): {eager * 1e6:.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
