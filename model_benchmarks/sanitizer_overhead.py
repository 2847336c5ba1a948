"""`python -m model_benchmarks.sanitizer_overhead [--device cpu|cuda]`: the sanitizer's slowdown.

Times four kernels of `bench_kernels.py` (vector add, row softmax, layernorm, column sum)
compiled plainly and sanitized (`inductor_tile.config.sanitize`), in the same process, taking
turns; a sanitized launch includes reading its error record (a synchronization on GPUs), as it
does in use. Prints the median milliseconds per launch and the ratio, and the geometric mean.
"""

from __future__ import annotations

import argparse
from typing import Callable

import torch

import inductor_tile

from .bench_kernels import add_kernel, column_sum_kernel, layernorm_kernel, softmax_kernel
from .timing import geomean, interleaved, median, synchronize


def cases(device: torch.device, large: bool) -> dict[str, Callable[[], None]]:
    n = 1 << (24 if large else 22)
    rows, cols = (8192, 4096) if large else (2048, 1024)
    x, y, out = (torch.randn(n, device=device) for _ in range(3))
    a = torch.randn(rows, cols, device=device)
    b = torch.empty_like(a)
    w, bias = torch.randn(cols, device=device), torch.randn(cols, device=device)
    sums = torch.empty(cols, device=device)
    block = 1024 if device.type == "cuda" else 4096
    return {
        f"add fp32 {n}": lambda: add_kernel[(inductor_tile.cdiv(n, block),)](x, y, out, n, BLOCK=block),
        f"softmax fp32 {rows}x{cols}": lambda: softmax_kernel[(rows,)](b, a, a.stride(0), cols, BLOCK=cols),
        f"layernorm fp32 {rows}x{cols}": lambda: layernorm_kernel[(rows,)](a, w, bias, b, a.stride(0), cols, 1e-5,
                                                                          BLOCK=cols),
        f"column sum fp32 {rows}x{cols}": lambda: column_sum_kernel[(inductor_tile.cdiv(cols, 64),)](
            a, sums, rows, cols, a.stride(0), BM=32, BN=64),
    }


def sanitized(fn: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        with inductor_tile.config.patch(sanitize=True):
            fn()

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--small", action="store_true", help="smaller tensors (quick CPU runs)")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    torch.manual_seed(0)
    print(f"device {torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu'}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} CPU threads")
    print(f"{'kernel':<30} {'plain ms':>9} {'sanitized ms':>13} {'slowdown':>9}")
    ratios = []
    for name, fn in cases(device, large=not args.small).items():
        samples = interleaved({"plain": fn, "sanitized": sanitized(fn)}, device, args.repeats, warmup=2)
        synchronize(device)
        plain, checked = median(samples["plain"]), median(samples["sanitized"])
        ratios.append(checked / plain)
        print(f"{name:<30} {plain:>9.3f} {checked:>13.3f} {checked / plain:>8.2f}x")
    print(f"{'geomean':<30} {'':>9} {'':>13} {geomean(ratios):>8.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
