"""Mix-order reductions on CUDA (``config.mix_order``): layer norm and RMSNorm backward, input and
weight/bias gradients in one kernel over the rows, at sizes where the pairing applies on GPUs
(more than 5M elements, at least 4096 rows). Rows are not a multiple of the rows per program.
Every gradient is compared with eager in float64."""

import pytest
import torch

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend

pytestmark = pytest.mark.gpu


def _rand(*shape, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", dtype=dtype, generator=g)


def _check(got, want, dtype):
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    for value, ref in zip(got, want):
        assert value.dtype == dtype and torch.isfinite(value).all()
        torch.testing.assert_close(value.double(), ref, rtol=tol, atol=tol * ref.abs().max().item())


def _mix_kernels() -> list[str]:
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    return [name for name in metrics.kernel_sources if name.startswith("tile_mix_")]


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=["fp16", "fp32"])
@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
def test_norm_forward_backward(kind, dtype):
    rows, cols = 16383, 768
    x, dy = _rand(rows, cols, dtype=dtype, seed=1), _rand(rows, cols, dtype=dtype, seed=2)
    w, b = _rand(cols, dtype=dtype, seed=3) + 1.0, _rand(cols, dtype=dtype, seed=4)

    def fn(x, w, b=None):
        if kind == "layernorm":
            return torch.nn.functional.layer_norm(x, (cols,), w, b)
        xf = x.to(torch.promote_types(x.dtype, torch.float32))  # the float64 reference stays float64
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w

    params = (x, w, b) if kind == "layernorm" else (x, w)
    inputs = [t.detach().requires_grad_(True) for t in params]
    torch._dynamo.reset()
    with config.patch(mix_order=True):
        out = torch.compile(fn, backend=tile_backend)(*inputs)
        metrics.reset()
        got = torch.autograd.grad(out, inputs, dy)
    assert len(_mix_kernels()) == 1, list(metrics.kernel_sources)
    ref_inputs = [t.detach().double().requires_grad_(True) for t in params]
    want = torch.autograd.grad(fn(*ref_inputs), ref_inputs, dy.double())
    _check(got, want, dtype)


def _rmsnorm_backward(dy, x, w):  # rstd recomputed: the column sum reads the row reduction
    compute = torch.promote_types(x.dtype, torch.float32)  # the float64 reference stays float64
    xf, gf = x.to(compute), dy.to(compute) * w.to(compute)
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    dx = rstd * (gf - xf * rstd.pow(2) * (gf * xf).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dy.to(compute) * xf * rstd).sum(0).to(w.dtype)


def test_rmsnorm_backward_recomputing_rstd():
    dtype = torch.float16
    dy, x = _rand(8191, 1024, dtype=dtype, seed=5), _rand(8191, 1024, dtype=dtype, seed=6)
    w = _rand(1024, dtype=dtype, seed=7)
    torch._dynamo.reset()
    metrics.reset()
    with config.patch(mix_order=True):
        got = torch.compile(_rmsnorm_backward, backend=tile_backend)(dy, x, w)
    assert len(_mix_kernels()) == 1, list(metrics.kernel_sources)
    want = _rmsnorm_backward(dy.double(), x.double(), w.double())
    _check(got, want, dtype)
