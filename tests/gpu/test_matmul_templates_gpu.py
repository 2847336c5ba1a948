"""Matmul templates on CUDA: GPT-2-sized fp16 mm, addmm + gelu and bmm through the template (forced)
match float64 references, and timed against cuBLAS (``matmul_templates="on"``) the template wins
for at least one shape."""

import pytest
import torch

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from inductor_tile.scheduler import matmul_templates

pytestmark = pytest.mark.gpu

TOKENS, HIDDEN, MLP, HEADS, SEQ = 512, 768, 3072, 12, 256


def _compile(fn, **kwargs):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend, **kwargs)


def _rand(*shape, seed=0, scale=1.0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", dtype=torch.float16, generator=g) * scale


def _check(out, ref):
    """fp16 outputs (accumulated in fp32): within a few fp16 roundings of the largest value."""
    assert out.device.type == "cuda" and not out.isnan().any()
    error = ((out.double() - ref).abs().max() / ref.abs().max()).item()
    assert error <= 4e-3, f"relative error {error:.3g}"


def mm(x, w):
    return x @ w.t()


def linear_gelu(x, w, b):
    return torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b), approximate="tanh")


def linear_residual(h, w, b, x):
    return torch.nn.functional.linear(h, w, b) + x


def scores(q, k):
    return torch.bmm(q, k.transpose(1, 2)) * 0.125


CASES = {
    "mm": (mm, lambda: (_rand(TOKENS, HIDDEN), _rand(HIDDEN, HIDDEN, seed=1, scale=0.03))),
    "addmm+gelu": (linear_gelu, lambda: (_rand(TOKENS, HIDDEN), _rand(MLP, HIDDEN, seed=1, scale=0.03),
                                         _rand(MLP, seed=2))),
    "addmm+residual": (linear_residual, lambda: (_rand(TOKENS, MLP), _rand(HIDDEN, MLP, seed=1, scale=0.02),
                                                 _rand(HIDDEN, seed=2), _rand(TOKENS, HIDDEN, seed=3))),
    "bmm*scale": (scores, lambda: (_rand(HEADS, SEQ, 64), _rand(HEADS, SEQ, 64, seed=1))),
}


@pytest.mark.parametrize("case", CASES)
def test_gpt2_sized_templates_match_float64(case, monkeypatch):
    monkeypatch.setattr(matmul_templates, "_choices", {})
    fn, make = CASES[case]
    inputs = make()
    with config.patch(matmul_templates="force"):
        out = _compile(fn)(*inputs)
    _check(out, fn(*[x.double() for x in inputs]))
    assert len(metrics.template_kernels) == 1, (metrics.template_kernels, metrics.fallback_reasons)
    assert metrics.generated_kernels == 1  # the epilogue is fused into the template's kernel
    (source,) = metrics.kernel_sources.values()
    assert "tl.dot(" in source


def test_template_chosen_for_some_shape(monkeypatch):
    """Timed against cuBLAS (aten + one pass over the output where an epilogue follows), the template
    wins at least one of these shapes; every result is right whichever kernel was chosen."""
    monkeypatch.setattr(matmul_templates, "_choices", {})
    shapes = [  # (tokens, in, out): GPT-2 layers at small batches, and a memory-bound one (K = 16)
        (128, HIDDEN, HIDDEN), (TOKENS, HIDDEN, MLP), (64, MLP, HIDDEN), (4096, 16, 4096)]
    choices = []
    for tokens, k, n in shapes:
        inputs = (_rand(tokens, k), _rand(n, k, seed=1, scale=k**-0.5), _rand(n, seed=2))
        with config.patch(matmul_templates="on"):
            out = _compile(linear_gelu)(*inputs)
        _check(out, linear_gelu(*[x.double() for x in inputs]))
        choices += metrics.template_choices
    print("\n".join(choices))
    assert any(": template" in c for c in choices), choices


def test_max_autotune_mode_turns_templates_on(monkeypatch):
    """``mode="max-autotune"`` (CUDA graphs included) times the template against cuBLAS; the compiled
    function stays right over repeated calls (CUDA-graph replays)."""
    monkeypatch.setattr(matmul_templates, "_choices", {})
    inputs = (_rand(TOKENS, HIDDEN), _rand(MLP, HIDDEN, seed=1, scale=0.03), _rand(MLP, seed=2))
    compiled = _compile(linear_gelu, mode="max-autotune")
    ref = linear_gelu(*[x.double() for x in inputs])
    for _ in range(3):
        _check(compiled(*inputs).clone(), ref)
    assert len(metrics.template_choices) == 1, metrics.template_choices
