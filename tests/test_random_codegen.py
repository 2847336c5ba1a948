"""Inductor's random ops (load_seed, rand, randn, randint64) generated as tile kernels (tl.rand/tl.randn).

Eager's random bits are not reproduced (no backend does), so the checks are statistical, with
bounds of about five standard errors, plus exact consistency: dropout's kept values are the
input scaled by 1 / (1 - p), and its backward is zero exactly where its output is.
"""

from __future__ import annotations

import math

import pytest
import torch

from inductor_tile import metrics
from inductor_tile.backend import tile_backend

RANDOM_OPS = ("load_seed", "rand", "randn", "randint64")


def _compile(fn):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend)


def _random_fallbacks() -> list[str]:
    return [r for r in metrics.fallback_reasons if any(op in r for op in RANDOM_OPS)]


def _assert_generated_without_fallback():
    assert metrics.generated_kernels >= 1
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    sources = "\n".join(metrics.kernel_sources.values())
    assert "tl.rand" in sources or "tl.randn" in sources or "tl.randint4x" in sources, sources


def _nonzero_randn(*shape: int, seed: int, requires_grad: bool = False) -> torch.Tensor:
    """Normal samples pushed away from 0 (dropout's zeros must come from the mask only)."""
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
    x = torch.where(x.abs() < 1e-3, torch.full_like(x, 0.5), x)
    return x.requires_grad_(requires_grad)


# --- dropout ---------------------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_in_training_mode(p):
    run = _compile(lambda x: torch.nn.functional.dropout(x, p=p, training=True))
    x = _nonzero_randn(256, 1024, seed=3, requires_grad=True)
    out = run(x)
    _assert_generated_without_fallback()
    n = x.numel()
    dropped = out == 0
    assert abs(dropped.double().mean().item() - p) < 5 * math.sqrt(p * (1 - p) / n)
    kept = ~dropped
    torch.testing.assert_close(out[kept].double(), x[kept].detach().double() / (1 - p), rtol=1e-6, atol=0)

    # the backward uses the forward's mask: the gradient is zero exactly where the output is
    weights = _nonzero_randn(256, 1024, seed=4)
    (out * weights).sum().backward()
    assert torch.equal(x.grad == 0, dropped)
    torch.testing.assert_close(x.grad[kept].double(), weights[kept].double() / (1 - p), rtol=1e-6, atol=0)

    # a second call draws a new mask: two masks differ in 2 p (1 - p) of the elements
    second = run(x.detach()) == 0
    differ = (second != dropped).double().mean().item()
    assert abs(differ - 2 * p * (1 - p)) < 5 * math.sqrt(2 * p * (1 - p) / n)
    assert abs(second.double().mean().item() - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_dropout_layers_share_one_kernel_with_their_own_masks():
    """Each dropout reads its own seed (offset k into the graph's seed buffer); the offset is a
    kernel argument, so same-shaped layers (separated by matmuls: no fusion) run one kernel."""
    p = 0.5
    w = _nonzero_randn(256, 256, seed=7) / 16

    def layers(x):
        outs = []
        for _ in range(3):
            x = torch.nn.functional.dropout(x, p=p, training=True)
            outs.append(x)
            x = x @ w
        return outs

    run = _compile(layers)
    x = _nonzero_randn(512, 256, seed=6)
    outs = run(x)
    _assert_generated_without_fallback()
    sources = list(metrics.kernel_sources.values())
    assert len(sources) == 1 and metrics.reused_kernels == 2, sources
    assert "do_not_specialize=('load_seed_offset',)" in sources[0] and "+ load_seed_offset)" in sources[0]
    n = x.numel()
    inputs = [x, outs[0] @ w, outs[1] @ w]
    for inp, out in zip(inputs, outs):
        dropped = out == 0
        assert abs(dropped.double().mean().item() - p) < 5 * math.sqrt(p * (1 - p) / n)
        torch.testing.assert_close(out[~dropped].double(), inp[~dropped].double() / (1 - p), rtol=1e-5, atol=1e-6)
    # the three layers' masks are independent: no two agree beyond chance (1/2 of the elements)
    masks = [(out == 0).flatten() for out in outs]
    for a, b in ((0, 1), (0, 2), (1, 2)):
        agree = (masks[a] == masks[b]).double().mean().item()
        assert abs(agree - 0.5) < 5 * math.sqrt(0.25 / n)


def test_dropout_module_in_eval_mode_is_the_identity():
    layer = torch.nn.Dropout(0.4).eval()
    run = _compile(layer)
    x = _nonzero_randn(64, 128, seed=5)
    assert torch.equal(run(x), x)


# --- rand_like / randn_like / randint --------------------------------------------------------
N = 1 << 20


def test_rand_like_is_uniform_on_0_1():
    run = _compile(lambda x: torch.rand_like(x))
    x = torch.full((1024, 1024), float("nan"))
    u = run(x).double()
    _assert_generated_without_fallback()
    assert u.min().item() >= 0.0 and u.max().item() < 1.0
    assert abs(u.mean().item() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(u.var().item() - 1 / 12) < 5 * math.sqrt((1 / 80 - 1 / 144) / N)
    counts = torch.histc(u, bins=32, min=0.0, max=1.0)
    assert (counts - N / 32).abs().max().item() < 5 * math.sqrt(N / 32)
    assert not torch.equal(run(x), run(x)), "two calls drew the same numbers"


def test_randn_like_is_standard_normal():
    run = _compile(lambda x: torch.randn_like(x) * 2.0 + 1.0)
    x = torch.full((512, 2048), float("nan"))
    z = (run(x).double() - 1.0) / 2.0
    _assert_generated_without_fallback()
    assert abs(z.mean().item()) < 5 / math.sqrt(N)
    assert abs(z.var().item() - 1.0) < 5 * math.sqrt(2 / N)
    assert abs((z.abs() < 1).double().mean().item() - 0.682689492) < 5 * math.sqrt(0.6827 * 0.3173 / N)
    assert abs((z**4).mean().item() - 3.0) < 5 * math.sqrt(96 / N)


@pytest.mark.parametrize("low, high", [(0, 10), (-7, 5), (3, 2**40)])
def test_randint_is_uniform_on_low_high(low, high):
    run = _compile(lambda x: torch.randint(low, high, x.shape) + x)
    x = torch.zeros(1024, 256, dtype=torch.int64)
    r = run(x)
    _assert_generated_without_fallback()
    n = r.numel()
    assert r.dtype == torch.int64 and r.min().item() >= low and r.max().item() < high
    span = high - low
    mean, var = (low + high - 1) / 2, (span * span - 1) / 12
    assert abs(r.double().mean().item() - mean) < 5 * math.sqrt(var / n)
    if span <= 16:  # every value about equally often
        counts = torch.bincount(r.flatten() - low, minlength=span).double()
        assert (counts - n / span).abs().max().item() < 5 * math.sqrt(n / span)


# --- random numbers feeding a reduction ------------------------------------------------------
# (Inductor realizes every random tensor, so the draw is its own kernel; tl.rand on 2-D tiles with
# a [1, 1] seed is tested in test_random.py)
@pytest.mark.parametrize("columns", [300, 5000])  # persistent and looped reductions
def test_row_sums_of_rand(columns):
    run = _compile(lambda x: (torch.rand_like(x) * x).sum(dim=1))
    rows = 512
    x = torch.full((rows, columns), 2.0)
    sums = run(x).double()
    _assert_generated_without_fallback()
    assert any("tl.sum" in s for s in metrics.kernel_sources.values())
    # each row sums `columns` uniforms on [0, 2): mean `columns`, variance columns / 3
    assert (sums - columns).abs().max().item() < 6 * math.sqrt(columns / 3)
    grand = sums.mean().item()
    assert abs(grand - columns) < 5 * math.sqrt(columns / 3 / rows)


# --- tiny HuggingFace models in training mode with dropout on --------------------------------
def _hf_model_with_dropout(family: str) -> torch.nn.Module:
    transformers = pytest.importorskip("transformers")
    if family == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=96, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                      resid_pdrop=0.1, embd_pdrop=0.1, attn_pdrop=0.1, bos_token_id=0, eos_token_id=0)
        model = transformers.GPT2LMHeadModel(cfg)
    else:
        cfg = transformers.BertConfig(vocab_size=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=0.1,
                                      attention_probs_dropout_prob=0.1)
        model = transformers.BertForMaskedLM(cfg)
    model.config._attn_implementation = "eager"
    return model.train()


@pytest.mark.parametrize("family", ["gpt2", "bert"])
def test_tiny_models_with_dropout_have_no_random_fallback(family):
    torch.manual_seed(0)
    model = _hf_model_with_dropout(family)
    ids = torch.randint(1, 96, (2, 12), generator=torch.Generator().manual_seed(8))
    run = _compile(lambda ids: model(input_ids=ids).logits)
    logits = run(ids)
    logits.square().mean().backward()
    assert torch.isfinite(logits).all()
    assert metrics.generated_kernels >= 2
    assert _random_fallbacks() == [], metrics.fallback_reasons
    sources = "\n".join(metrics.kernel_sources.values())
    assert "tl.rand(" in sources, "dropout did not reach a tile kernel"
