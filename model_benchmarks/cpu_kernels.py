"""`python -m model_benchmarks.cpu_kernels`: CPU-target throughput next to torch, same process.

Times a 2^24-element fp32 add and a 4096x4096 fp32 row softmax with the tile compiler's
CPU target and with torch (eager), median of repeated runs after warm-up, and prints
GB/s (bytes that must move: inputs read once, outputs written once).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable

import torch

import inductor_tile

from .bench_kernels import add_kernel, softmax_kernel


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

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"{'kernel':<24} {'tile ms':>9} {'tile GB/s':>10} {'torch ms':>9} {'torch GB/s':>11}")
    for name, nbytes, t, e in rows:
        print(f"{name:<24} {t * 1e3:>9.2f} {nbytes / t / 1e9:>10.2f} {e * 1e3:>9.2f} {nbytes / e / 1e9:>11.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
