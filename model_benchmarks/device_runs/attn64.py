"""h-attn64 A/B: causal attention s=2048 fp16 (32 heads), TFLOP/s of tile's TILE_PIPELINE variants and Triton,
one process, variants interleaved over ROUNDS rounds; each variant checked against SDPA first."""
import os
import sys

import torch

from model_benchmarks import dot_kernels
from model_benchmarks.dot_bench import SOURCE
from model_benchmarks.gpu_kernels import bench
from inductor_tile.tools.triton_source import load_as_triton

ROUNDS = 2
VARIANTS = [v for v in os.environ.get("ATTN64_VARIANTS", "default,nofence,resident,resident+nofence").split(",")]
CONFIGS = [(64, 64, 64, 4), (64, 128, 64, 8), (128, 64, 64, 4), (128, 128, 64, 8)]  # d, BLOCK_M, BLOCK_N, warps
kernel = dot_kernels.attention_fwd_kernel
caches = {}


def use(variant):
    """TILE_PIPELINE for `variant` (read when compiling) and its own in-memory caches (they ignore it)."""
    if variant == "default":
        os.environ.pop("TILE_PIPELINE", None)
    else:
        os.environ["TILE_PIPELINE"] = variant.replace("+", ",")
    kernel.cache, kernel.launch_cache = caches.setdefault(variant, ({}, {}))


def swap(variant):
    kernel.cache, kernel.launch_cache = caches[variant]


triton = load_as_triton(SOURCE)
print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
g = torch.Generator(device="cuda").manual_seed(0)
heads, seq = 32, 2048
results = {}
shared = {}
for d, bm, bn, w in CONFIGS:
    q, k, v = (torch.randn(heads, seq, d, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
    o = torch.empty_like(q)
    scale = d**-0.5
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)
    flops = 2 * 2 * heads * seq * seq * d / 2
    runs = {}
    for variant in VARIANTS:
        def run(variant=variant):
            swap(variant)
            return dot_kernels.attention(q, k, v, scale, o, BLOCK_M=bm, BLOCK_N=bn, num_warps=w)
        try:
            o.fill_(float("nan"))
            use(variant)
            run()
            torch.cuda.synchronize()
            torch.testing.assert_close(o, ref, atol=1e-2, rtol=1e-2)
            runs[variant] = run
            shared[(d, bm, w, variant)] = max(getattr(c, "shared_bytes", 0) for c in kernel.cache.values())
        except Exception as error:  # report and go on
            print(f"d{d} {bm}x{bn}/{w}w {variant}: {type(error).__name__}: {str(error)[:200]}", flush=True)
    if triton is not None:
        def run_triton():
            return triton.attention(q, k, v, scale, o, BLOCK_M=bm, BLOCK_N=bn, num_warps=w)
        o.fill_(float("nan"))
        run_triton()
        torch.cuda.synchronize()
        torch.testing.assert_close(o, ref, atol=1e-2, rtol=1e-2)
        runs["triton"] = run_triton
    for _ in range(ROUNDS):
        for name, fn in runs.items():
            results.setdefault((d, bm, bn, w, name), []).append(flops / bench(fn) / 1e9)
names = VARIANTS + ["triton"]
print(f"{'config':<18}" + "".join(f"{n:>18}" for n in names))
for d, bm, bn, w in CONFIGS:
    row = [results.get((d, bm, bn, w, n)) for n in names]
    print(f"d{d} {bm}x{bn}/{w}w".ljust(18) + "".join(
        f"{' / '.join(f'{x:.0f}' for x in r):>18}" if r else f"{'n.a.':>18}" for r in row))
print("shared bytes:", {f"d{d} {bm}/{w}w {v}": b for (d, bm, w, v), b in shared.items() if v in ("default", "resident")})
