"""Matmul templates with fused epilogues (`python -m model_benchmarks.gpu_kernels --templates`).

GPT-2-sized fp16 linear layers with the epilogue that follows them in a model (bias + gelu, a
residual add, a scaled attention score bmm), each timed in one process as: torch eager, Inductor
`max-autotune-no-cudagraphs` (its Triton templates against cuBLAS), tile with the same mode (our
templates timed against cuBLAS, `inductor_tile.config.matmul_templates="auto"`), and tile with
the template forced (`matmul_templates="force"`: the template's own speed even where cuBLAS
wins). CUDA graphs stay off for every column, so the timings compare kernels; groups of
back-to-back calls hide host launch costs. Each compiled result is checked against eager first.
TFLOP/s counts the matmul's 2 M N K (times the batch) only. The last column lists what tile chose.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

MODE = "max-autotune-no-cudagraphs"


def linear_gelu(x, w, b):
    return torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b), approximate="tanh")


def linear_residual(h, w, b, x):
    return torch.nn.functional.linear(h, w, b) + x


def linear(x, w, b):
    return torch.nn.functional.linear(x, w, b)


def attention_scores(q, k):
    return torch.matmul(q, k.transpose(-1, -2)) * 0.125


def cases(tokens: int = 2048, seq: int = 512, hidden: int = 768, device: str = "cuda"
          ) -> list[tuple[str, Callable, Callable[[], tuple], float]]:
    """(name, function, inputs, matmul FLOPs); GPT-2's sizes by default."""
    g = torch.Generator(device=device).manual_seed(0)

    def rand(*shape, scale=1.0):
        return torch.randn(*shape, device=device, dtype=torch.float16, generator=g) * scale

    mlp, heads = 4 * hidden, hidden // 64
    return [
        (f"linear+gelu {tokens}x{hidden}->{mlp}", linear_gelu,
         lambda: (rand(tokens, hidden), rand(mlp, hidden, scale=0.03), rand(mlp)), 2 * tokens * hidden * mlp),
        (f"linear+residual {tokens}x{mlp}->{hidden}", linear_residual,
         lambda: (rand(tokens, mlp), rand(hidden, mlp, scale=0.02), rand(hidden), rand(tokens, hidden)),
         2 * tokens * hidden * mlp),
        (f"linear qkv {tokens}x{hidden}->{3 * hidden}", linear,
         lambda: (rand(tokens, hidden), rand(3 * hidden, hidden, scale=0.03), rand(3 * hidden)),
         2 * tokens * hidden * 3 * hidden),
        (f"q k^T * scale {heads}x{seq}x64x{seq}", attention_scores,
         lambda: (rand(tokens // seq, heads, seq, 64), rand(tokens // seq, heads, seq, 64)),
         2 * (tokens // seq) * heads * seq * seq * 64),
    ]


def _compiled(fn: Callable, backend: str, mode: str | None, templates: str | None) -> Callable:
    import inductor_tile

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend, mode=mode)
    if templates is None:
        return compiled

    def run(*args):
        with inductor_tile.config.patch(matmul_templates=templates, graph_cache=False):  # compile: choices shown
            return compiled(*args)

    return run


def run_template_benchmarks(bench: Callable[[Callable[[], Any]], float], **sizes) -> None:
    """One row per case of `cases(**sizes)`; `bench(fn)` gives milliseconds per call."""
    from inductor_tile import metrics

    device = sizes.get("device", "cuda")
    name = torch.cuda.get_device_name() if device == "cuda" else device
    print(f"device: {name}, torch {torch.__version__}; mode {MODE}, fp16; ms (TFLOP/s)")
    columns = ["eager", "inductor", "tile", "tile forced"]
    print(f"{'case':<34} " + " ".join(f"{c:>16}" for c in columns) + "  tile chose")
    for name, fn, make_inputs, flops in cases(**sizes):
        inputs = make_inputs()
        reference = fn(*[x.double() for x in inputs])
        runs = {
            "eager": lambda fn=fn: fn,
            "inductor": lambda fn=fn: _compiled(fn, "inductor", MODE, None),
            "tile": lambda fn=fn: _compiled(fn, "tile", MODE, "auto"),
            "tile forced": lambda fn=fn: _compiled(fn, "tile", None, "force"),
        }
        cells, chose = [], ""
        for column, build in runs.items():
            metrics.reset()
            try:
                compiled = build()
                out = compiled(*inputs)
                if device == "cuda":
                    torch.cuda.synchronize()
                error = ((out.double() - reference).abs().max() / reference.abs().max()).item()
                if not error <= 1e-2:
                    raise AssertionError(f"relative error {error:.3g}")
                ms = bench(lambda: compiled(*inputs))
                cells.append(f"{ms:>7.3f} ({flops / ms / 1e9:>5.0f})")
            except Exception as e:  # a backend that fails a case: report it, go on
                print(f"  {name} / {column}: {type(e).__name__}: {str(e)[:300]}")
                cells.append(f"{'failed':>16}")
            if column == "tile":
                chose = "; ".join(metrics.template_choices) or "no matmul choice"
        print(f"{name:<34} " + " ".join(f"{c:>16}" for c in cells) + f"  {chose}")
