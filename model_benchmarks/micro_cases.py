"""The memory-bound kernels of transformer models, as small torch functions, for
`python -m model_benchmarks micro`.

Each case builds its inputs for a (rows, cols) shape and counts the bytes that must move:
each input read once, each output written once.  ``SWEEP`` lists the shapes real models
have (rows from 64 to 50k; BERT/GPT-2/Llama widths, attention rows, vocabularies).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import torch
import torch.nn.functional as F

aten = torch.ops.aten


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    fn: Callable
    # (rows, cols, half dtype, device, generator) -> (inputs, bytes moved)
    inputs: Callable
    fp32: bool = False  # runs in fp32 whatever --dtype says
    # (got, expected, inputs) -> None, raising AssertionError; None: torch.testing.assert_close
    check: Callable | None = None


def _nbytes(*tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def _rand(g, device, dtype, *shape):
    return torch.randn(*shape, generator=g, device=device, dtype=dtype)


# ---- the functions ---------------------------------------------------------------------------

def softmax(x):
    return torch.softmax(x, -1)


def masked_softmax(scores, mask):  # BERT: scores [B, H, S, S] + additive mask [B, 1, 1, S]
    return torch.softmax(scores + mask, -1)


def softmax_dropout(x):  # attention probabilities in training
    return F.dropout(torch.softmax(x, -1), p=0.1, training=True)


def layernorm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)


def layernorm_backward(grad, x, mean, rstd, w, b):
    return aten.native_layer_norm_backward(grad, x, [x.shape[-1]], mean, rstd, w, b, [True, True, True])


def rmsnorm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w


def rmsnorm_backward(grad, x, w):  # d/dx of x * rsqrt(mean(x^2) + eps) * w, and d/dw
    xf, gf = x.float(), grad.float() * w.float()
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    dx = rstd * (gf - xf * rstd.pow(2) * (gf * xf).mean(-1, keepdim=True))
    dw = (grad.float() * xf * rstd).sum(0)
    return dx.to(x.dtype), dw.to(w.dtype)


def bias_gelu(x, b):
    return F.gelu(x + b)


def bias_gelu_backward(grad, x, b):  # the input grad and the bias grad (a column sum)
    dx = aten.gelu_backward(grad, x + b)
    return dx, dx.float().sum(0).to(b.dtype)


def column_sum(x):
    return x.sum(0)


def cross_entropy(logits, target):  # HF: the loss in fp32
    return F.cross_entropy(logits.float(), target)


def cross_entropy_backward(logits, target, grad):
    lsm = torch.log_softmax(logits.float(), -1)
    total = torch.tensor(float(target.numel()), device=logits.device)
    g = aten.nll_loss_backward(grad, lsm, target, None, 1, -100, total)
    return aten._log_softmax_backward_data(g, lsm, 1, torch.float32).to(logits.dtype)


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), -1)


def rotary(q, cos, sin):  # q [B, H, S, D]; cos/sin [S, D]
    return q * cos + _rotate_half(q) * sin


def head_permute(x, heads):  # [B, S, H * D] -> [B, H, S, D] contiguous
    b, s, hd = x.shape
    return x.view(b, s, heads, hd // heads).transpose(1, 2).contiguous()


def pointwise_chain(x, y, z):  # add + relu + mul
    return torch.relu(x + y) * z


# ---- inputs -------------------------------------------------------------------------------------

HEADS = 12
HEAD_DIM = 64


def _two_d(rows, cols, half, device, g):
    x = _rand(g, device, half, rows, cols)
    return (x,), 2 * _nbytes(x)


def _masked(rows, cols, half, device, g):
    batch = max(1, rows // (HEADS * cols))
    scores = _rand(g, device, half, batch, HEADS, cols, cols)
    mask = torch.where(torch.rand(batch, 1, 1, cols, generator=g, device=device) < 0.1, -1e4, 0.0).to(half)
    return (scores, mask), 2 * _nbytes(scores) + _nbytes(mask)


def _norm(rows, cols, half, device, g):
    x, w, b = _rand(g, device, half, rows, cols), _rand(g, device, half, cols), _rand(g, device, half, cols)
    return (x, w, b), 2 * _nbytes(x) + _nbytes(w, b)


def _norm_backward(rows, cols, half, device, g):
    x, w, b = _rand(g, device, half, rows, cols), _rand(g, device, half, cols), _rand(g, device, half, cols)
    grad = _rand(g, device, half, rows, cols)
    xf = x.float()
    mean, rstd = xf.mean(-1, keepdim=True), torch.rsqrt(xf.var(-1, unbiased=False, keepdim=True) + 1e-5)
    return (grad, x, mean, rstd, w, b), 3 * _nbytes(x) + _nbytes(mean, rstd) + 3 * _nbytes(w)


def _rms(rows, cols, half, device, g):
    x, w = _rand(g, device, half, rows, cols), _rand(g, device, half, cols)
    return (x, w), 2 * _nbytes(x) + _nbytes(w)


def _rms_backward(rows, cols, half, device, g):
    x, w, grad = _rand(g, device, half, rows, cols), _rand(g, device, half, cols), _rand(g, device, half, rows, cols)
    return (grad, x, w), 3 * _nbytes(x) + 2 * _nbytes(w)


def _bias(rows, cols, half, device, g):
    x, b = _rand(g, device, half, rows, cols), _rand(g, device, half, cols)
    return (x, b), 2 * _nbytes(x) + _nbytes(b)


def _bias_backward(rows, cols, half, device, g):
    grad, x, b = _rand(g, device, half, rows, cols), _rand(g, device, half, rows, cols), _rand(g, device, half, cols)
    return (grad, x, b), 3 * _nbytes(x) + 2 * _nbytes(b)


def _column(rows, cols, half, device, g):
    x = _rand(g, device, half, rows, cols)
    return (x,), _nbytes(x) + cols * x.element_size()


def _logits(rows, cols, half, device, g):
    logits = _rand(g, device, half, rows, cols)
    target = torch.randint(0, cols, (rows,), generator=g, device=device)
    return (logits, target), _nbytes(logits, target)


def _logits_backward(rows, cols, half, device, g):
    (logits, target), nbytes = _logits(rows, cols, half, device, g)
    grad = torch.rand((), generator=g, device=device) + 0.5
    return (logits, target, grad), nbytes + _nbytes(logits)


def _rotary(rows, cols, half, device, g):  # rows = B * H * S, cols = D; S = 2048 (fewer if rows is small)
    seq = min(2048, rows)
    q = _rand(g, device, half, max(1, rows // seq), seq, cols)
    cos, sin = _rand(g, device, half, seq, cols), _rand(g, device, half, seq, cols)
    return (q, cos, sin), 2 * _nbytes(q) + _nbytes(cos, sin)


def _permute(rows, cols, half, device, g):  # rows = B * S, cols = H * D
    x = _rand(g, device, half, max(1, rows // 512), min(512, rows), cols)
    return (x, max(1, cols // HEAD_DIM)), 2 * _nbytes(x)


def _pointwise(rows, cols, half, device, g):
    x, y, z = (_rand(g, device, torch.float32, rows, cols) for _ in range(3))
    return (x, y, z), 4 * _nbytes(x)


def _check_dropout(got, expected, inputs):
    """Kept elements are softmax / 0.9, about 10% are dropped."""
    ref = torch.softmax(inputs[0].float(), -1) / 0.9
    kept = got != 0
    frac = 1 - kept.float().mean().item()
    assert 0.08 < frac < 0.12, f"dropped fraction {frac:.3f}, expected about 0.1"
    torch.testing.assert_close(got.float()[kept], ref[kept], atol=2e-2, rtol=2e-2)


CASES: dict[str, Case] = {c.name: c for c in [
    Case("softmax", softmax, _two_d),
    Case("masked_softmax", masked_softmax, _masked),
    Case("softmax_dropout", softmax_dropout, _two_d, check=_check_dropout),
    Case("layernorm", layernorm, _norm),
    Case("layernorm_bwd", layernorm_backward, _norm_backward),
    Case("rmsnorm", rmsnorm, _rms),
    Case("rmsnorm_bwd", rmsnorm_backward, _rms_backward),
    Case("bias_gelu", bias_gelu, _bias),
    Case("bias_gelu_bwd", bias_gelu_backward, _bias_backward),
    Case("column_sum", column_sum, _column, fp32=True),
    Case("column_sum_half", column_sum, _column),
    Case("cross_entropy", cross_entropy, _logits),
    Case("cross_entropy_bwd", cross_entropy_backward, _logits_backward),
    Case("rotary", rotary, _rotary),
    Case("head_permute", head_permute, _permute),
    Case("pointwise", pointwise_chain, _pointwise, fp32=True),
]}

#: the kernels run by default (the first six are the original micro set)
DEFAULT = ("softmax", "layernorm", "rmsnorm", "bias_gelu", "column_sum", "pointwise")

#: shapes real models have, per kernel: (rows, cols)
SWEEP: dict[str, list[tuple[int, int]]] = {
    "softmax": [(64, 8192), (49152, 128), (24576, 512), (12288, 1024), (8192, 2048), (8192, 8192), (1024, 32768)],
    "masked_softmax": [(12 * 128 * 64, 128), (12 * 512 * 8, 512)],
    "softmax_dropout": [(12 * 512 * 8, 512), (8192, 8192)],
    "layernorm": [(64, 768), (16384, 768), (8192, 1024), (8192, 4096), (4096, 8192), (50000, 768)],
    "layernorm_bwd": [(16384, 768), (8192, 4096)],
    "rmsnorm": [(16384, 2048), (8192, 4096), (2048, 8192)],
    "rmsnorm_bwd": [(16384, 2048), (8192, 4096)],
    "bias_gelu": [(16384, 3072), (8192, 11008)],
    "bias_gelu_bwd": [(16384, 3072)],
    "column_sum": [(16384, 768), (8192, 8192), (50000, 768)],
    "column_sum_half": [(16384, 30522), (16384, 3072)],
    "cross_entropy": [(8192, 32000), (4096, 50257), (64, 32000)],
    "cross_entropy_bwd": [(8192, 32000), (4096, 50257)],
    "rotary": [(8 * 16 * 2048, 128), (8 * 32 * 512, 64)],
    "head_permute": [(16384, 768), (8192, 4096)],
    "pointwise": [(8192, 8192)],
}
