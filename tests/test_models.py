"""Models under torch.compile(backend="tile") on the CPU: forward and backward match eager.

Blocks written by hand (MLP, norms + activations, attention, embedding + cross-entropy, a long
pointwise chain with reductions along different axes) and tiny HuggingFace models built from
configs with random weights (nothing is downloaded).  Everything runs in float64 so that the
comparison with eager is tight: a wrong index or a wrong op shows up far above rounding.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from inductor_tile import metrics
from inductor_tile.backend import tile_backend

RTOL = ATOL = 1e-9


def _seeded(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _grads(module: nn.Module, inputs) -> list[torch.Tensor]:
    grads = [p.grad for p in module.parameters() if p.grad is not None]
    grads += [t.grad for t in inputs if isinstance(t, torch.Tensor) and t.grad is not None]
    return grads


def _check_forward_backward(module: nn.Module, make_inputs, loss_fn=lambda out: out.square().mean(), tol=RTOL):
    """Compile ``module``, run forward + backward, compare output and every gradient with eager."""
    torch._dynamo.reset()
    metrics.reset()
    module = module.double()
    results = []
    for compiled in (False, True):
        module.zero_grad(set_to_none=True)
        inputs = make_inputs()
        run = torch.compile(module, backend=tile_backend) if compiled else module
        out = run(*inputs)
        loss_fn(out).backward()
        results.append((out.detach(), [g.clone() for g in _grads(module, inputs)]))
    (ref, ref_grads), (out, grads) = results
    torch.testing.assert_close(out, ref, rtol=tol, atol=tol)
    assert len(grads) == len(ref_grads) > 0
    for g, r in zip(grads, ref_grads):
        torch.testing.assert_close(g, r, rtol=tol, atol=tol)
    assert metrics.generated_kernels >= 2, "forward and backward should each generate tile kernels"


def _randn(*shape, seed=0, requires_grad=False):
    t = torch.randn(*shape, generator=_seeded(seed), dtype=torch.float64)
    return t.requires_grad_(requires_grad)


class MLP(nn.Module):
    def __init__(self, d=48, hidden=96):
        super().__init__()
        self.up, self.down = nn.Linear(d, hidden), nn.Linear(hidden, d)

    def forward(self, x):
        return self.down(torch.relu(self.up(x))) + x


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.rand(d, generator=_seeded(7)) + 0.5), eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class NormBlock(nn.Module):
    """LayerNorm -> Linear -> GELU and RMSNorm -> gated SiLU (LLaMA's MLP)."""

    def __init__(self, d=64):
        super().__init__()
        self.ln, self.rms = nn.LayerNorm(d), RMSNorm(d)
        self.fc, self.gate, self.up = nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, 2 * d)
        self.down = nn.Linear(2 * d, d)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc(self.ln(x))) + x
        g = self.rms(h)
        return self.down(torch.nn.functional.silu(self.gate(g)) * self.up(g)) + h


class Attention(nn.Module):
    """Softmax attention written out (no fused SDPA), with a causal mask."""

    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads, self.qkv, self.out = heads, nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        y = scores.softmax(-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class EmbeddingClassifier(nn.Module):
    def __init__(self, vocab=50, d=24, classes=11):
        super().__init__()
        self.emb, self.head = nn.Embedding(vocab, d), nn.Linear(d, classes)

    def forward(self, ids, labels):
        logits = self.head(torch.tanh(self.emb(ids)).mean(1))
        return nn.functional.cross_entropy(logits, labels)


def long_chain(x, y):
    """Many pointwise ops, with reductions along rows, along columns and over everything."""
    a = torch.sigmoid(x) * y + torch.exp(-x.abs())
    b = torch.where(a > 0.5, a - x, torch.relu(y) * 0.25)
    c = b / (1.0 + b.square()) + torch.sqrt(a.abs() + 1.0)
    rows = c.amax(1, keepdim=True)
    cols = (c * x).sum(0, keepdim=True)
    d = torch.log(torch.exp(c - rows) + 1.0) * cols.sigmoid()
    return d + d.mean() - torch.minimum(a, b).amin(0)


def test_mlp():
    _check_forward_backward(MLP(), lambda: (_randn(5, 7, 48, seed=1, requires_grad=True),))


def test_norm_gelu_silu_block():
    _check_forward_backward(NormBlock(), lambda: (_randn(3, 9, 64, seed=2, requires_grad=True),))


def test_causal_attention():
    _check_forward_backward(Attention(), lambda: (_randn(2, 12, 32, seed=3, requires_grad=True),))


def test_embedding_cross_entropy():
    ids = torch.randint(0, 50, (6, 9), generator=_seeded(4))
    labels = torch.randint(0, 11, (6,), generator=_seeded(5))
    _check_forward_backward(EmbeddingClassifier(), lambda: (ids, labels), loss_fn=lambda loss: loss)


def test_long_pointwise_chain_with_reductions():
    class Chain(nn.Module):
        def forward(self, x, y):
            return long_chain(x, y)

    _check_forward_backward(
        Chain(), lambda: (_randn(19, 45, seed=6, requires_grad=True), _randn(19, 45, seed=7, requires_grad=True))
    )


# --- tiny HuggingFace models ------------------------------------------------------------------

VOCAB, SEQ, BATCH = 96, 12, 2


def _hf_model(family: str) -> nn.Module:
    transformers = pytest.importorskip("transformers")
    common = dict(vocab_size=VOCAB)
    if family == "gpt2":
        cfg = transformers.GPT2Config(
            n_embd=32, n_layer=2, n_head=4, n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
            bos_token_id=0, eos_token_id=0, **common,
        )
        model = transformers.GPT2LMHeadModel(cfg)
    elif family == "bert":
        cfg = transformers.BertConfig(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
            max_position_embeddings=64, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **common,
        )
        model = transformers.BertForMaskedLM(cfg)
    elif family == "t5":
        cfg = transformers.T5Config(
            d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, dropout_rate=0.0,
            decoder_start_token_id=0, pad_token_id=0, **common,
        )
        model = transformers.T5ForConditionalGeneration(cfg)
    elif family == "llama":
        cfg = transformers.LlamaConfig(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
            intermediate_size=64, max_position_embeddings=64, **common,
        )
        model = transformers.LlamaForCausalLM(cfg)
    else:
        raise ValueError(family)
    model.config._attn_implementation = "eager"  # attention written out: our kernels see it
    return model


class LogitsOf(nn.Module):
    """A HuggingFace model as tensors in, logits out (what the comparison needs)."""

    def __init__(self, model, encoder_decoder: bool):
        super().__init__()
        self.model, self.encoder_decoder = model, encoder_decoder

    def forward(self, ids):
        if self.encoder_decoder:
            return self.model(input_ids=ids, decoder_input_ids=ids).logits
        return self.model(input_ids=ids).logits


@pytest.mark.parametrize("family", ["gpt2", "bert", "t5", "llama"])
def test_tiny_huggingface_model(family):
    torch.manual_seed(0)
    model = LogitsOf(_hf_model(family), encoder_decoder=family == "t5")
    ids = torch.randint(1, VOCAB, (BATCH, SEQ), generator=_seeded(8))
    # LLaMA and T5 compute their norms and rotary tables in float32 whatever the model's dtype:
    # compiled and eager round those float32 islands differently (~1e-7), so the bound is looser
    _check_forward_backward(model, lambda: (ids,), tol=1e-5)
