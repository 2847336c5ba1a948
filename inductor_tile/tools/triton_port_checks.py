"""The checks `triton_ports.py` runs: each calls a ported module's entry points with small random inputs
and compares with torch in float64. Entry points are looked up by the names the tutorials and libraries
publish (`add`, `softmax`, `LigerRMSNormFunction`, ...); the kernels themselves are theirs, unchanged.
A check returns notes for the table and raises `PortMismatch` on a wrong result."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from .triton_ports import Port


class PortMismatch(AssertionError):
    """A ported kernel computed a wrong value."""


def compare(what: str, got: torch.Tensor, expected: torch.Tensor, atol: float, rtol: float = 0.0) -> str:
    """`got` against the float64 reference: same shape, no NaN where the reference has none, within tolerance."""
    if tuple(got.shape) != tuple(expected.shape):
        raise PortMismatch(f"{what}: shape {tuple(got.shape)}, expected {tuple(expected.shape)}")
    got64, expected64 = got.detach().double().cpu(), expected.detach().double().cpu()
    unwritten = torch.isnan(got64) & ~torch.isnan(expected64)
    if unwritten.any():
        raise PortMismatch(f"{what}: {int(unwritten.sum())} of {got64.numel()} elements NaN "
                           f"(first at {tuple(unwritten.nonzero()[0].tolist())}): unwritten or wrong")
    error = (got64 - expected64).abs()
    bound = atol + rtol * expected64.abs()
    if (error > bound).any():
        worst = int((error - bound).argmax())
        raise PortMismatch(f"{what}: max error {float(error.max()):.3g} (atol {atol}, rtol {rtol}); element "
                           f"{worst}: {float(got64.flatten()[worst]):.6g} vs {float(expected64.flatten()[worst]):.6g}")
    return f"{what}: max error {float(error.max()):.2g}"


def _randn(*shape: int, device: str, dtype: torch.dtype = torch.float32, generator=None) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float32, generator=generator).to(device=device, dtype=dtype)


def _tolerance(dtype: torch.dtype) -> float:
    return {torch.float32: 2e-5, torch.float16: 4e-3, torch.bfloat16: 4e-2}[dtype]


def _entry(module: Any, name: str) -> Any:
    value = getattr(module, name, None)
    if value is None:
        raise PortMismatch(f"the port has no `{name}` (was it renamed upstream?)")
    return value


# ===------------------------------------------------------------------------===
# Triton's tutorials
# ===------------------------------------------------------------------------===
def check_vector_add(module: Any, device: str) -> list[str]:
    add = _entry(module, "add")
    x, y = _randn(4099, device=device), _randn(4099, device=device)  # not a multiple of the block
    return [compare("x + y", add(x, y), x.double() + y.double(), atol=1e-6)]


def check_fused_softmax(module: Any, device: str) -> list[str]:
    softmax = _entry(module, "softmax")
    notes = []
    for rows, cols in ((37, 781), (5, 128)):
        x = _randn(rows, cols, device=device) * 3
        notes.append(compare(f"softmax {rows}x{cols}", softmax(x), torch.softmax(x.double(), dim=1), atol=1e-6,
                             rtol=1e-5))
    return notes


def check_matmul(module: Any, device: str) -> list[str]:
    matmul = _entry(module, "matmul")
    a, b = _randn(96, 80, device=device, dtype=torch.float16), _randn(80, 72, device=device, dtype=torch.float16)
    reference = a.double() @ b.double()
    notes = [compare("a @ b (fp16)", matmul(a, b), reference, atol=2e-2, rtol=1e-2)]
    leaky = torch.where(reference >= 0, reference, 0.01 * reference)
    notes.append(compare("leaky_relu(a @ b)", matmul(a, b, activation="leaky_relu"), leaky, atol=2e-2, rtol=1e-2))
    return notes


def check_dropout(module: Any, device: str) -> list[str]:
    dropout, seeded_dropout = _entry(module, "dropout"), _entry(module, "seeded_dropout")
    p, n = 0.3, 5000
    x = _randn(n, device=device)
    keep = (torch.rand(n) > p).to(device=device, dtype=torch.int32)
    expected = torch.where(keep.bool(), x.double() / (1 - p), torch.zeros((), dtype=torch.float64, device=device))
    notes = [compare("dropout with a mask", dropout(x, keep, p), expected, atol=1e-6, rtol=1e-6)]
    first, again, other = seeded_dropout(x, p, 123), seeded_dropout(x, p, 123), seeded_dropout(x, p, 124)
    if not torch.equal(first, again):
        raise PortMismatch("seeded dropout: the same seed gave different masks")
    if torch.equal(first, other):
        raise PortMismatch("seeded dropout: seeds 123 and 124 gave the same mask")
    kept = first != 0
    notes.append(compare("seeded dropout, kept elements", first[kept], x.double()[kept] / (1 - p), atol=1e-6,
                         rtol=1e-6))
    share, sigma = float(kept.double().mean()), math.sqrt(p * (1 - p) / n)
    if abs(share - (1 - p)) > 5 * sigma:
        raise PortMismatch(f"seeded dropout kept {share:.3f} of the elements, expected {1 - p} +- {5 * sigma:.3f}")
    notes.append(f"seeded dropout: kept {share:.3f} (expected {1 - p})")
    return notes


def _layer_norm_reference(x, w, b, eps):
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, b))
    return x64, w64, b64, F.layer_norm(x64, (x.shape[-1],), w64, b64, eps)


def check_layer_norm(module: Any, device: str) -> list[str]:
    layer_norm = _entry(module, "layer_norm")
    notes = []
    for dtype, (rows, cols) in ((torch.float32, (151, 300)), (torch.float16, (67, 1030))):
        tol = _tolerance(dtype)
        w = (torch.rand(cols) + 0.5).to(device=device, dtype=dtype).requires_grad_()
        b = torch.randn(cols).to(device=device, dtype=dtype).requires_grad_()
        x = (_randn(rows, cols, device=device, dtype=dtype) * 0.5 - 2.3).requires_grad_()
        dy = _randn(rows, cols, device=device, dtype=dtype) * 0.1
        y = layer_norm(x, (cols,), w, b, 1e-5)
        x64, w64, b64, y64 = _layer_norm_reference(x, w, b, 1e-5)
        notes.append(compare(f"layer norm {dtype} y", y, y64, atol=tol))
        y.backward(dy)
        y64.backward(dy.double())
        for name, got, expected in (("dx", x.grad, x64.grad), ("dw", w.grad, w64.grad), ("db", b.grad, b64.grad)):
            scale = max(1.0, float(expected.abs().max()))
            notes.append(compare(f"layer norm {dtype} {name}", got, expected, atol=tol * scale))
    return notes


def check_fused_attention(module: Any, device: str) -> list[str]:
    attention = _entry(module, "attention")
    notes = []
    tuner = _entry(module, "_attn_fwd")
    if device == "cpu":  # one config: CPU compiles of the tutorial's larger dot tiles take minutes each
        small = [c for c in tuner.configs if c.kwargs == {"BLOCK_M": 64, "BLOCK_N": 64} and c.num_warps == 4][:1]
        if not small:
            raise PortMismatch("tutorial 06 has no BLOCK_M=64, BLOCK_N=64, 4-warp config any more")
        tuner.configs = small
        notes.append(f"CPU: autotuning limited to the config {{{small[0]}}}")
    else:  # GPU: every block shape and warp count, with the fewest stages (a compile per config and causality)
        fewest = min(c.num_stages for c in tuner.configs)
        tuner.configs = [c for c in tuner.configs if c.num_stages == fewest]
        notes.append(f"GPU: autotuning over the {len(tuner.configs)} configs with num_stages={fewest}")
    for causal in (False, True):
        q, k, v = (_randn(1, 2, 128, 64, device=device, dtype=torch.float16) for _ in range(3))
        out = attention(q, k, v, causal, 0.5)
        expected = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal, scale=0.5)
        notes.append(compare(f"attention causal={causal}", out, expected, atol=1e-2))
    # the backward pass (the tutorial's is causal only; its blocks need N_CTX % 128 == 0)
    q, k, v = ((_randn(1, 2, 128, 64, device=device) * 0.5).half().requires_grad_() for _ in range(3))
    notes += check_autograd("attention causal=True fwd+bwd", lambda q, k, v: attention(q, k, v, True, 0.5),
                            lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.5),
                            [q, k, v], 1e-2, grad_tol=2e-2)
    return notes


# ===------------------------------------------------------------------------===
# Liger-Kernel
# ===------------------------------------------------------------------------===
def _liger_function(module: Any, name: str) -> Any:
    return _entry(module, name).apply


def check_liger_rms_norm(module: Any, device: str) -> list[str]:
    rms_norm = _liger_function(module, "LigerRMSNormFunction")
    notes = []
    for dtype, casting, offset in ((torch.float32, "llama", 0.0), (torch.float16, "llama", 0.0),
                                   (torch.bfloat16, "gemma", 1.0), (torch.float32, "none", 0.0)):
        rows, cols = 70, 500
        x = _randn(rows, cols, device=device, dtype=dtype).requires_grad_()
        w = (torch.rand(cols) + 0.5).to(device=device, dtype=dtype).requires_grad_()
        dy = _randn(rows, cols, device=device, dtype=dtype)
        y = rms_norm(x, w, 1e-6, offset, casting, False)
        x64, w64 = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
        y64 = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + 1e-6) * (w64 + offset)
        tol = _tolerance(dtype)
        notes.append(compare(f"rms norm {dtype} {casting} y", y, y64, atol=tol, rtol=tol))
        y.backward(dy)
        y64.backward(dy.double())
        notes.append(compare(f"rms norm {dtype} {casting} dx", x.grad, x64.grad, atol=tol, rtol=tol))
        notes.append(compare(f"rms norm {dtype} {casting} dw", w.grad, w64.grad, atol=tol * rows ** 0.5, rtol=tol))
    return notes


def check_liger_layer_norm(module: Any, device: str) -> list[str]:
    layer_norm = _liger_function(module, "LigerLayerNormFunction")
    notes = []
    for dtype in (torch.float32, torch.bfloat16):
        rows, cols = 63, 700
        x = _randn(rows, cols, device=device, dtype=dtype).requires_grad_()
        w = (torch.rand(cols) + 0.5).to(device=device, dtype=dtype).requires_grad_()
        b = torch.randn(cols).to(device=device, dtype=dtype).requires_grad_()
        dy = _randn(rows, cols, device=device, dtype=dtype)
        y = layer_norm(x, w, b, 1e-6)
        x64, w64, b64, y64 = _layer_norm_reference(x, w, b, 1e-6)
        tol = _tolerance(dtype)
        notes.append(compare(f"layer norm {dtype} y", y, y64, atol=tol, rtol=tol))
        y.backward(dy)
        y64.backward(dy.double())
        for name, got, expected in (("dx", x.grad, x64.grad), ("dw", w.grad, w64.grad), ("db", b.grad, b64.grad)):
            notes.append(compare(f"layer norm {dtype} {name}", got, expected, atol=tol * rows ** 0.5, rtol=tol))
    return notes


def _check_gated(module: Any, device: str, name: str, function: str, activation) -> list[str]:
    gated = _liger_function(module, function)
    notes = []
    for dtype in (torch.float32, torch.float16):
        a = _randn(3, 17, 300, device=device, dtype=dtype).requires_grad_()
        b = _randn(3, 17, 300, device=device, dtype=dtype).requires_grad_()
        dc = _randn(3, 17, 300, device=device, dtype=dtype)
        c = gated(a, b)
        a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
        c64 = activation(a64) * b64
        tol = _tolerance(dtype)
        notes.append(compare(f"{name} {dtype} c", c, c64, atol=tol, rtol=tol))
        c.backward(dc)
        c64.backward(dc.double())
        notes.append(compare(f"{name} {dtype} da", a.grad, a64.grad, atol=tol, rtol=tol))
        notes.append(compare(f"{name} {dtype} db", b.grad, b64.grad, atol=tol, rtol=tol))
    return notes


def check_liger_swiglu(module: Any, device: str) -> list[str]:
    return _check_gated(module, device, "swiglu", "LigerSiLUMulFunction", F.silu)


def check_liger_geglu(module: Any, device: str) -> list[str]:
    return _check_gated(module, device, "geglu", "LigerGELUMulFunction", lambda t: F.gelu(t, approximate="tanh"))


def check_liger_cross_entropy(module: Any, device: str) -> list[str]:
    cross_entropy = _liger_function(module, "LigerCrossEntropyFunction")
    notes = []
    for dtype, smoothing, reduction in ((torch.float32, 0.0, "mean"), (torch.float32, 0.1, "sum"),
                                        (torch.bfloat16, 0.0, "mean")):
        rows, vocab = 24, 1000
        logits = (_randn(rows, vocab, device=device, dtype=dtype) * 2).requires_grad_()
        target = torch.randint(0, vocab, (rows,)).to(device)
        target[3] = -100  # ignored
        logits64 = logits.detach().double().requires_grad_()
        loss = cross_entropy(logits, target, None, -100, 0.0, smoothing, reduction)[0]
        loss64 = F.cross_entropy(logits64, target, ignore_index=-100, label_smoothing=smoothing, reduction=reduction)
        tol = _tolerance(dtype)
        notes.append(compare(f"cross entropy {dtype} smoothing={smoothing} {reduction} loss", loss, loss64, atol=tol,
                             rtol=tol))
        loss.backward()
        loss64.backward()
        notes.append(compare(f"cross entropy {dtype} smoothing={smoothing} {reduction} dlogits", logits.grad,
                             logits64.grad, atol=tol, rtol=tol))
    return notes


def _rotate_half(t: torch.Tensor) -> torch.Tensor:
    half = t.shape[-1] // 2
    return torch.cat((-t[..., half:], t[..., :half]), dim=-1)


def check_liger_rope(module: Any, device: str) -> list[str]:
    rope = _liger_function(module, "LigerRopeFunction")
    notes = []
    batch, q_heads, kv_heads, seq, dim = 2, 4, 2, 11, 64
    for dtype in (torch.float32, torch.bfloat16):
        q = _randn(batch, q_heads, seq, dim, device=device, dtype=dtype).requires_grad_()
        k = _randn(batch, kv_heads, seq, dim, device=device, dtype=dtype).requires_grad_()
        angles = torch.arange(seq, dtype=torch.float64)[:, None] / 10000 ** (torch.arange(0, dim, 2) / dim)
        angles = torch.cat((angles, angles), dim=-1)[None]  # (1, seq, dim)
        cos, sin = angles.cos().to(device=device, dtype=dtype), angles.sin().to(device=device, dtype=dtype)
        dq, dk = _randn(*q.shape, device=device, dtype=dtype), _randn(*k.shape, device=device, dtype=dtype)
        q_out, k_out = rope(q, k, cos, sin)
        q64, k64 = q.detach().double().requires_grad_(), k.detach().double().requires_grad_()
        cos64, sin64 = cos.double()[:, None], sin.double()[:, None]
        q_ref, k_ref = q64 * cos64 + _rotate_half(q64) * sin64, k64 * cos64 + _rotate_half(k64) * sin64
        tol = _tolerance(dtype)
        notes.append(compare(f"rope {dtype} q", q_out, q_ref, atol=tol, rtol=tol))
        notes.append(compare(f"rope {dtype} k", k_out, k_ref, atol=tol, rtol=tol))
        torch.autograd.backward((q_out, k_out), (dq, dk))
        torch.autograd.backward((q_ref, k_ref), (dq.double(), dk.double()))
        notes.append(compare(f"rope {dtype} dq", q.grad, q64.grad, atol=tol, rtol=tol))
        notes.append(compare(f"rope {dtype} dk", k.grad, k64.grad, atol=tol, rtol=tol))
    return notes


def check_autograd(what: str, ours: Any, reference: Any, inputs: list[torch.Tensor], tol: float,
                   grad_tol: float | None = None) -> list[str]:
    """`ours(*inputs)` against `reference(*inputs in float64)`: outputs, then the gradients of every floating
    input that requires one, for random output gradients. Either function may return a tensor or a tuple."""
    inputs64 = [t.detach().double().requires_grad_(t.requires_grad) if t.is_floating_point() else t for t in inputs]
    outputs, expected = ours(*inputs), reference(*inputs64)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    notes = [compare(f"{what} output {i}", got, want, atol=tol, rtol=tol)
             for i, (got, want) in enumerate(zip(outputs, expected))]
    grads = [torch.randn(o.shape, dtype=torch.float32).to(device=o.device, dtype=o.dtype) for o in outputs]
    torch.autograd.backward(outputs, grads)
    torch.autograd.backward(expected, [g.double() for g in grads])
    for i, (t, t64) in enumerate(zip(inputs, inputs64)):
        if t.requires_grad:
            notes.append(compare(f"{what} grad {i}", t.grad, t64.grad, atol=grad_tol or tol, rtol=grad_tol or tol))
    return notes


def check_liger_softmax(module: Any, device: str) -> list[str]:
    softmax = _liger_function(module, "LigerSoftmaxFunction")
    notes = []
    for dtype in (torch.float32, torch.float16):
        x = (_randn(4, 9, 300, device=device, dtype=dtype) * 3).requires_grad_()
        notes += check_autograd(f"softmax {dtype}", softmax, lambda t: torch.softmax(t, -1), [x], _tolerance(dtype))
    return notes


def check_liger_dyt(module: Any, device: str) -> list[str]:
    dyt = _liger_function(module, "LigerDyTFunction")
    notes = []
    for dtype in (torch.float32, torch.bfloat16):
        rows, cols = 45, 520
        x = _randn(rows, cols, device=device, dtype=dtype).requires_grad_()
        alpha = torch.tensor([0.7]).to(device=device, dtype=dtype).requires_grad_()
        gamma = (torch.rand(cols) + 0.5).to(device=device, dtype=dtype).requires_grad_()
        beta = torch.randn(cols).to(device=device, dtype=dtype).requires_grad_()
        tol = _tolerance(dtype)
        reference = lambda x, a, g, b: g * torch.tanh(a * x) + b  # noqa: E731
        if device == "cuda":
            notes += check_autograd(f"dyt {dtype}", dyt, reference, [x, alpha, gamma, beta], tol,
                                    grad_tol=tol * rows ** 0.5)
        else:  # the library's backward sizes its grid from a GPU's SM count (cuda/xpu/npu only)
            with torch.no_grad():
                y = dyt(x, alpha, gamma, beta)
            notes.append(compare(f"dyt {dtype} forward", y, reference(*(t.double() for t in (x, alpha, gamma, beta))),
                                 atol=tol, rtol=tol))
    if device != "cuda":
        notes.append("backward not run: the library's backward has no CPU path")
    return notes


def check_liger_kl_div(module: Any, device: str) -> list[str]:
    kl_div = _liger_function(module, "LigerKLDivLossFunction")
    notes = []
    for reduction in ("batchmean", "sum", "none"):
        rows, vocab = 13, 700
        y_pred = torch.log_softmax(_randn(rows, vocab, device=device), -1).requires_grad_()
        y_true = torch.softmax(_randn(rows, vocab, device=device), -1)
        notes += check_autograd(f"kl_div {reduction}", lambda p, t: kl_div(p, t, reduction, False, 1e-10),
                                lambda p, t: F.kl_div(p, t, reduction=reduction), [y_pred, y_true], 2e-5)
    return notes


def check_liger_group_norm(module: Any, device: str) -> list[str]:
    group_norm = _liger_function(module, "LigerGroupNormFunction")
    notes = []
    batch, channels, groups, length = 3, 12, 4, 50
    x = _randn(batch, channels, length, device=device).requires_grad_()
    w = (torch.rand(channels) + 0.5).to(device).requires_grad_()
    b = torch.randn(channels).to(device).requires_grad_()
    notes += check_autograd("group_norm", lambda x, w, b: group_norm(x, w, b, channels, groups, 1e-6),
                            lambda x, w, b: F.group_norm(x, groups, w, b, 1e-6), [x, w, b], 2e-5, grad_tol=1e-4)
    return notes


def check_liger_fused_add_rms_norm(module: Any, device: str) -> list[str]:
    fused = _liger_function(module, "LigerFusedAddRMSNormFunction")
    notes = []

    def reference(x, r, w):
        s = x + r
        return s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-6) * w, s

    for dtype in (torch.float32, torch.float16):
        rows, cols = 33, 640
        x = _randn(rows, cols, device=device, dtype=dtype).requires_grad_()
        r = _randn(rows, cols, device=device, dtype=dtype).requires_grad_()
        w = (torch.rand(cols) + 0.5).to(device=device, dtype=dtype).requires_grad_()
        tol = _tolerance(dtype)
        notes += check_autograd(f"fused add rms_norm {dtype}", lambda x, r, w: fused(x, r, w, 1e-6, 0.0, "llama"),
                                reference, [x, r, w], 2 * tol, grad_tol=2 * tol * rows ** 0.5)
    return notes


def check_liger_relu_squared(module: Any, device: str) -> list[str]:
    relu_squared = _liger_function(module, "LigerReLUSquaredFunction")
    x = _randn(7, 333, device=device).requires_grad_()
    return check_autograd("relu_squared", relu_squared, lambda t: torch.relu(t) ** 2, [x], 2e-5)


PORTS = [
    Port("tutorial 01 vector add", "tutorials", "01-vector-add.py", check_vector_add),
    Port("tutorial 02 fused softmax", "tutorials", "02-fused-softmax.py", check_fused_softmax),
    Port("tutorial 03 matrix multiplication", "tutorials", "03-matrix-multiplication.py", check_matmul),
    Port("tutorial 04 low-memory dropout", "tutorials", "04-low-memory-dropout.py", check_dropout),
    Port("tutorial 05 layer norm fwd+bwd", "tutorials", "05-layer-norm.py", check_layer_norm),
    Port("tutorial 06 fused attention", "tutorials", "06-fused-attention.py", check_fused_attention,
         needs=("make_tensor_descriptor", "tensor_descriptor"), asks_capability=True),
    Port("liger rms_norm fwd+bwd", "liger", "liger_kernel.ops.rms_norm", check_liger_rms_norm),
    Port("liger layer_norm fwd+bwd", "liger", "liger_kernel.ops.layer_norm", check_liger_layer_norm),
    Port("liger swiglu fwd+bwd", "liger", "liger_kernel.ops.swiglu", check_liger_swiglu),
    Port("liger geglu fwd+bwd", "liger", "liger_kernel.ops.geglu", check_liger_geglu),
    Port("liger cross_entropy fwd+bwd", "liger", "liger_kernel.ops.cross_entropy", check_liger_cross_entropy),
    Port("liger rope fwd+bwd", "liger", "liger_kernel.ops.rope", check_liger_rope),
    Port("liger softmax fwd+bwd", "liger", "liger_kernel.ops.softmax", check_liger_softmax),
    Port("liger dyt fwd+bwd", "liger", "liger_kernel.ops.dyt", check_liger_dyt),
    Port("liger kl_div fwd+bwd", "liger", "liger_kernel.ops.kl_div", check_liger_kl_div),
    Port("liger group_norm fwd+bwd", "liger", "liger_kernel.ops.group_norm", check_liger_group_norm),
    Port("liger fused_add_rms_norm fwd+bwd", "liger", "liger_kernel.ops.fused_add_rms_norm",
         check_liger_fused_add_rms_norm),
    Port("liger relu_squared fwd+bwd", "liger", "liger_kernel.ops.relu_squared", check_liger_relu_squared),
]
