"""TFLOP/s of the tl.dot kernels of `dot_kernels.py` on an NVIDIA GPU (`python -m
model_benchmarks.gpu_kernels --dots`): the tile compiler, Triton (the same source, imports
swapped) and torch (cuBLAS for the matmul, SDPA for attention), in one process, each result
checked against torch first. On Hopper the tile compiler's dots run on wgmma where one or two
warpgroups can compute them (dot_wgmma.py); `TILE_WGMMA=0` keeps them on mma.sync.
Both compilers get the same num_stages (3, Triton's default; 4 too for two configs: cp.async rings).
FLOPs: 2 M N K for a matmul; causal attention counts the half of
q k^T and p v that the mask keeps, 2 * 2 * heads * seq^2 * head_dim / 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import torch

from . import dot_kernels

SOURCE = Path(__file__).with_name("dot_kernels.py")
#: (BLOCK_M, BLOCK_N, BLOCK_K, warps) of the matmul, each reported
MATMUL_CONFIGS = [(128, 128, 32, 4), (128, 128, 32, 8), (128, 64, 32, 4), (64, 128, 32, 4), (128, 64, 64, 4),
                  (128, 256, 32, 8), (128, 256, 64, 8)]
#: num_stages (cp.async ring slots, both compilers) of the matmul configs measured with more than the default 3
MATMUL_STAGES = {(128, 128, 32, 4): (3, 4), (128, 256, 64, 8): (3, 4)}
#: (BLOCK_M, BLOCK_N, BLOCK_K, warps) of the fp32 matmul (tl.dot's default input_precision: tf32 tensor cores)
TF32_CONFIGS = [(128, 128, 32, 4), (128, 64, 32, 4), (128, 256, 32, 8)]
#: (BLOCK_M, BLOCK_N, warps) of attention
ATTENTION_CONFIGS = [(64, 64, 4), (128, 64, 8)]


def _row(name: str, flops: float, bench: Callable, tile: Callable, triton: Callable | None, torch_fn: Callable) -> None:
    def tflops(fn: Callable | None) -> float:
        if fn is None:
            return float("nan")
        try:
            return flops / bench(fn) / 1e9
        except Exception as error:  # a config one compiler rejects: report, keep going
            print(f"  {name}: {type(error).__name__}: {error}")
            return float("nan")

    print(f"{name:<40} {tflops(tile):>10.1f} {tflops(triton):>12.1f} {tflops(torch_fn):>12.1f}")


def _checked(name: str, run: Callable, check: Callable) -> bool:
    """Run once and compare with torch; on any failure print it and skip the timing."""
    try:
        run()
        torch.cuda.synchronize()
        check()
        return True
    except Exception as error:
        print(f"{name}: not timed: {type(error).__name__}: {str(error)[:300]}")
        return False


def run_dot_benchmarks(bench: Callable, load_triton: Callable[[Path], Any], size: int = 4096) -> None:
    triton = load_triton(SOURCE)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print(f"{'kernel':<40} {'tile TF/s':>10} {'triton TF/s':>12} {'torch TF/s':>12}")
    g = torch.Generator(device="cuda").manual_seed(0)
    for dtype in (torch.float16, torch.bfloat16):
        a = torch.randn(size, size, device="cuda", dtype=dtype, generator=g)
        b = torch.randn(size, size, device="cuda", dtype=dtype, generator=g)
        c = torch.empty(size, size, device="cuda", dtype=dtype)
        ref = a @ b
        for (bm, bn, bk, warps), stages in ((config, s) for config in MATMUL_CONFIGS
                                            for s in MATMUL_STAGES.get(config, (3,))):
            def tile(m=dot_kernels, bm=bm, bn=bn, bk=bk, warps=warps, stages=stages):
                return m.matmul(a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps,
                                num_stages=stages)
            if not _checked(f"matmul {bm}x{bn}x{bk}", tile, lambda: torch.testing.assert_close(c, ref, atol=0.5, rtol=2e-2)):
                continue
            triton_run = None if triton is None else (lambda t=triton, bm=bm, bn=bn, bk=bk, warps=warps, stages=stages: t.matmul(
                a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps, num_stages=stages))
            suffix = "" if stages == 3 else f" {stages}st"
            _row(f"matmul {str(dtype)[6:]} {size}^3 {bm}x{bn}x{bk}/{warps}w{suffix}", 2 * size**3, bench, tile,
                 triton_run, lambda: torch.mm(a, b, out=c))
        # the Triton tutorial's form (pointer tiles advanced around the loop), at the first config
        bm, bn, bk, warps = MATMUL_CONFIGS[0]

        def tutorial(bm=bm, bn=bn, bk=bk, warps=warps):
            return dot_kernels.matmul_pointers(a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps)
        if _checked("matmul (tutorial form)", tutorial, lambda: torch.testing.assert_close(c, ref, atol=0.5, rtol=2e-2)):
            triton_run = None if triton is None else (lambda t=triton, bm=bm, bn=bn, bk=bk, warps=warps: t.matmul_pointers(
                a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps))
            _row(f"matmul {str(dtype)[6:]} {size}^3 tutorial {bm}x{bn}x{bk}/{warps}w", 2 * size**3, bench, tutorial,
                 triton_run, lambda: torch.mm(a, b, out=c))
    _tf32_rows(bench, triton, size, g)
    heads, seq = 32, 2048
    for head_dim in (64, 128):
        q, k, v = (torch.randn(heads, seq, head_dim, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
        o = torch.empty_like(q)
        scale = head_dim**-0.5
        ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)
        flops = 2 * 2 * heads * seq * seq * head_dim / 2
        for bm, bn, warps in ATTENTION_CONFIGS:
            def tile(m=dot_kernels, bm=bm, bn=bn, warps=warps):
                return m.attention(q, k, v, scale, o, BLOCK_M=bm, BLOCK_N=bn, num_warps=warps)
            if not _checked(f"attention d={head_dim} {bm}x{bn}", tile,
                            lambda: torch.testing.assert_close(o, ref, atol=1e-2, rtol=1e-2)):
                continue
            triton_run = None if triton is None else (lambda t=triton, bm=bm, bn=bn, warps=warps: t.attention(
                q, k, v, scale, o, BLOCK_M=bm, BLOCK_N=bn, num_warps=warps))
            _row(f"causal attention d={head_dim} s={seq} {bm}x{bn}/{warps}w", flops, bench, tile, triton_run,
                 lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale))


def _tf32_rows(bench: Callable, triton: Any, size: int, g: torch.Generator) -> None:
    """fp32 operands: both compilers' default tl.dot precision (tf32), cuBLAS with TF32 allowed."""
    a, b = (torch.randn(size, size, device="cuda", generator=g) for _ in range(2))
    c = torch.empty(size, size, device="cuda")
    ref = (a.double() @ b.double()).float()
    allowed = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        for bm, bn, bk, warps in TF32_CONFIGS:
            def tile(bm=bm, bn=bn, bk=bk, warps=warps):
                return dot_kernels.matmul(a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps)
            if not _checked(f"matmul tf32 {bm}x{bn}x{bk}", tile,
                            lambda: torch.testing.assert_close(c, ref, atol=0.5, rtol=1e-2)):
                continue
            triton_run = None if triton is None else (lambda t=triton, bm=bm, bn=bn, bk=bk, warps=warps: t.matmul(
                a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=warps))
            _row(f"matmul fp32 (tf32) {size}^3 {bm}x{bn}x{bk}/{warps}w", 2 * size**3, bench, tile, triton_run,
                 lambda: torch.mm(a, b, out=c))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allowed
