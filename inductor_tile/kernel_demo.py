"""`python -m inductor_tile.kernel_demo`: compile and run a few hand-written example kernels, print what they did.

For each kernel: the cold compile time (Python source to native code for this CPU), the
time of a launch, the largest error against torch, and the size of its IR. `--show-ir NAME`
prints every stage of one kernel (TTIR, TTGIR, LLVM IR).
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

import torch

import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


@inductor_tile.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + cols, num / tl.sum(num, axis=0), mask=cols < n_cols)


@inductor_tile.jit
def rmsnorm_kernel(x_ptr, w_ptr, out_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += x * x
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / N + eps)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=cols < N)
        tl.store(out_ptr + row * stride + cols, x * rstd * w, mask=cols < N)


def _run_add(gen: torch.Generator) -> tuple[Callable[[], None], torch.Tensor, torch.Tensor]:
    n = 100_000
    x, y = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
    out = torch.full((n,), float("nan"))
    return lambda: add_kernel[(inductor_tile.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024), out, x.double() + y.double()


def _run_softmax(gen: torch.Generator) -> tuple[Callable[[], None], torch.Tensor, torch.Tensor]:
    x = torch.randn(64, 1000, generator=gen, dtype=torch.float32)
    out = torch.full_like(x, float("nan"))
    return lambda: softmax_kernel[(64,)](out, x, x.stride(0), 1000, BLOCK=1024), out, torch.softmax(x.double(), 1)


def _run_rmsnorm(gen: torch.Generator) -> tuple[Callable[[], None], torch.Tensor, torch.Tensor]:
    x, w = torch.randn(32, 3000, generator=gen), torch.randn(3000, generator=gen)
    out = torch.full_like(x, float("nan"))
    xd = x.double()
    ref = xd * torch.rsqrt(xd.pow(2).mean(1, keepdim=True) + 1e-6) * w.double()
    return lambda: rmsnorm_kernel[(32,)](x, w, out, x.stride(0), 3000, 1e-6, BLOCK=512), out, ref


EXAMPLES = {"vector_add": (add_kernel, _run_add), "softmax": (softmax_kernel, _run_softmax),
            "rmsnorm": (rmsnorm_kernel, _run_rmsnorm)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inductor_tile.kernel_demo", description=__doc__.splitlines()[0])
    parser.add_argument("--show-ir", choices=sorted(EXAMPLES), help="print the TTIR of one example kernel")
    args = parser.parse_args(argv)
    gen = torch.Generator().manual_seed(0)
    print(f"inductor_tile {inductor_tile.__version__}, torch {torch.__version__}")
    print(f"{'kernel':<12} {'compile (s)':>11} {'run (ms)':>9} {'max abs err':>12} {'TTIR lines':>10}  result")
    for name, (kernel, setup) in EXAMPLES.items():
        launch, out, ref = setup(gen)
        start = time.perf_counter()
        launch()  # first launch compiles
        first = time.perf_counter() - start
        compiled = next(iter(kernel.cache.values()))
        start = time.perf_counter()
        launch()
        run = time.perf_counter() - start
        err = (out.double() - ref).abs().max().item()
        ok = "ok" if err < 1e-4 else "MISMATCH"
        print(f"{name:<12} {compiled.compile_seconds:>11.3f} {run * 1e3:>9.1f} {err:>12.2e} "
              f"{len(compiled.asm['ttir'].splitlines()):>10}  {ok} (first launch {first:.2f}s)")
        if args.show_ir == name:
            for stage, text in compiled.asm.items():
                print(f"--- {stage} ---\n{text}")
    print("Compiled for this CPU with the tile compiler (TILE_INTERPRET=1 runs the interpreter instead).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
