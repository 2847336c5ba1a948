"""`python -m model_benchmarks.gpu_kernels`: GB/s of memory-bound kernels on an NVIDIA GPU,
and TFLOP/s of the tl.dot kernels (`--dots`: matmul beside cuBLAS, causal attention beside SDPA) and of
the backend's matmul templates with fused epilogues (`--templates`: eager, Inductor and tile max-autotune).

Each kernel (vector add, row softmax, layernorm, column sum; inputs far larger than L2)
runs with the tile compiler, with Triton (the same source, imports swapped) and with
torch eager, in one process: CUDA-event timing of groups of back-to-back launches (so host launch costs are hidden),
median of the groups after warm-up.
GB/s counts the bytes that must move (inputs read once, outputs written once). The
device-copy bandwidth is measured first as the ceiling.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any, Callable

import torch

from inductor_tile.tools.triton_source import load_as_triton

from . import bench_kernels as tile_kernels

SOURCE = Path(__file__).with_name("bench_kernels.py")
#: (rows per step, columns per program, warps) tried for the column sum, reported each
COLUMN_SUM_CONFIGS = [(64, 32, 4), (128, 16, 8), (256, 16, 8), (64, 64, 8), (32, 128, 8)]


def triton_kernels(source: Path = SOURCE) -> Any | None:
    """`source` (bench_kernels.py) with `inductor_tile` swapped for `triton` (None if Triton is missing)."""
    return load_as_triton(source)


def bench(fn: Callable[[], Any], samples: int = 15, target_ms: float = 5.0) -> float:
    """Median milliseconds per call of `fn`, from CUDA events around groups of back-to-back calls.

    A group is long enough (about `target_ms`) that the GPU never waits for the host between
    calls, so host-side launch costs are hidden as they are in a real model.
    """
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    inner = max(1, min(200, int(target_ms / max(start.elapsed_time(end), 1e-3))))
    times = []
    for _ in range(samples):
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / inner)
    return statistics.median(times)


def cases(k: Any, size: int) -> dict[str, tuple[int, Callable[[], Any], Callable[[], Any], Callable[[], None]]]:
    """name -> (bytes moved, run with module k, torch eager, check)."""
    g = torch.Generator(device="cuda").manual_seed(0)
    out: dict[str, Any] = {}

    n = size * size
    x, y = torch.randn(n, device="cuda", generator=g), torch.randn(n, device="cuda", generator=g)
    z = torch.empty_like(x)
    out["add fp32"] = (3 * n * 4, lambda: k.add_kernel[((n + 1023) // 1024,)](x, y, z, n, BLOCK=1024),
                       lambda: torch.add(x, y), lambda: torch.testing.assert_close(z, x + y))

    a = torch.randn(size, size, device="cuda", generator=g, dtype=torch.float16)
    sm = torch.empty_like(a)
    block = 1 << (size - 1).bit_length()
    out["softmax fp16"] = (2 * a.numel() * 2,
                           lambda: k.softmax_kernel[(size,)](sm, a, a.stride(0), size, BLOCK=block, num_warps=16),
                           lambda: torch.softmax(a, -1),
                           lambda: torch.testing.assert_close(sm, torch.softmax(a.float(), -1).half(), atol=1e-3, rtol=1e-2))

    w = torch.randn(size, device="cuda", generator=g, dtype=torch.float16)
    b = torch.randn(size, device="cuda", generator=g, dtype=torch.float16)
    ln = torch.empty_like(a)
    out["layernorm fp16"] = (2 * a.numel() * 2,
                             lambda: k.layernorm_kernel[(size,)](a, w, b, ln, a.stride(0), size, 1e-5, BLOCK=block,
                                                                 num_warps=16),
                             lambda: torch.nn.functional.layer_norm(a, (size,), w, b, 1e-5),
                             lambda: torch.testing.assert_close(
                                 ln, torch.nn.functional.layer_norm(a.float(), (size,), w.float(), b.float(), 1e-5).half(),
                                 atol=1e-2, rtol=1e-2))

    c = torch.randn(size, size, device="cuda", generator=g)
    cs = torch.empty(size, device="cuda")
    for bm, bn, warps in COLUMN_SUM_CONFIGS:
        out[f"column sum fp32 {bm}x{bn}/{warps}w"] = (
            c.numel() * 4 + size * 4,
            lambda bm=bm, bn=bn, warps=warps: k.column_sum_kernel[((size + bn - 1) // bn,)](
                c, cs, size, size, c.stride(0), BM=bm, BN=bn, num_warps=warps),
            lambda: c.sum(0),
            lambda: torch.testing.assert_close(cs, c.sum(0), atol=1e-2, rtol=1e-4))
    return out


def dump_ptx(directory: Path, triton: Any | None) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("add_kernel", "softmax_kernel", "layernorm_kernel", "column_sum_kernel"):
        for compiled in getattr(tile_kernels, name).cache.values():
            if "ptx" in compiled.asm:
                (directory / f"tile_{name}.ptx").write_text(compiled.asm["ptx"])
        if triton is None:
            continue
        try:  # Triton's cache layout is internal and changes between versions
            for device_cache in getattr(triton, name).device_caches.values():
                for compiled in device_cache[0].values():
                    (directory / f"triton_{name}.ptx").write_text(compiled.asm["ptx"])
        except (AttributeError, KeyError, TypeError, IndexError) as e:
            print(f"could not read Triton's PTX for {name}: {e}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=8192, help="square problem size (default 8192)")
    parser.add_argument("--dump", metavar="DIR", help="write each kernel's PTX (tile and Triton) to DIR")
    parser.add_argument("--dots", action="store_true", help="only the tl.dot kernels (TFLOP/s)")
    parser.add_argument("--templates", action="store_true",
                        help="only the matmul templates with fused epilogues: eager, Inductor and tile max-autotune")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to measure")
        return 1
    if args.dots:
        from .dot_bench import run_dot_benchmarks

        run_dot_benchmarks(bench, triton_kernels)
        return 0
    if args.templates:
        from .template_bench import run_template_benchmarks

        run_template_benchmarks(bench)
        return 0
    src = torch.empty(args.size * args.size * 4, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = bench(lambda: dst.copy_(src))
    copy_gbs = 2 * src.numel() / copy_ms / 1e6
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; device copy {copy_gbs:.0f} GB/s")
    triton = triton_kernels()
    tile_cases = cases(tile_kernels, args.size)
    triton_cases = cases(triton, args.size) if triton is not None else {}
    print(f"{'kernel':<28} {'tile GB/s':>10} {'% copy':>7} {'triton GB/s':>12} {'torch GB/s':>11}")
    for name, (nbytes, run, eager, check) in tile_cases.items():
        run()
        torch.cuda.synchronize()
        check()
        tile = nbytes / bench(run) / 1e6
        torch_gbs = nbytes / bench(eager) / 1e6
        triton_gbs = float("nan")
        if name in triton_cases:
            _, triton_run, _, triton_check = triton_cases[name]
            triton_run()
            triton_check()
            triton_gbs = nbytes / bench(triton_run) / 1e6
        print(f"{name:<28} {tile:>10.0f} {100 * tile / copy_gbs:>6.0f}% {triton_gbs:>12.0f} {torch_gbs:>11.0f}")
    if args.dump:
        dump_ptx(Path(args.dump), triton)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
