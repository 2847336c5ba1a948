"""torch.compile(backend="tile") on CUDA tensors: our kernels run on the GPU and match eager."""

import pytest
import torch

from inductor_tile import metrics
from inductor_tile.backend import tile_backend

pytestmark = pytest.mark.gpu


def _compile(fn):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend)


def _seeded_pair(shape, dtype):
    """Two random CUDA tensors from one seeded generator (the same values every run)."""
    g = torch.Generator(device="cuda").manual_seed(0)
    return (torch.randn(shape, device="cuda", dtype=dtype, generator=g),
            torch.randn(shape, device="cuda", dtype=dtype, generator=g))


def pointwise_and_reductions(x, y):
    a = torch.relu(x + y) * 2.0
    b = torch.sigmoid(a) - y
    return torch.where(x > 0, b, a * y), a.sum(dim=1), (b * b).amax(dim=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape", [(37, 53), (8, 3000)])
def test_pointwise_and_reductions_on_gpu(dtype, shape):
    x, y = _seeded_pair(shape, dtype)
    out = _compile(pointwise_and_reductions)(x, y)
    ref = pointwise_and_reductions(x.double(), y.double())
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    for o, r in zip(out, ref):
        assert o.device.type == "cuda"
        torch.testing.assert_close(o.double(), r, rtol=tolerance, atol=tolerance * max(1.0, r.abs().max().item()))
    assert metrics.generated_kernels >= 1


def attention_transposes(q, k):
    # attention's head permutes: [B, S, H, D] -> [B, H, D, S] (key transpose, cast to fp32 and
    # scaled) and [B, H, S, D] -> [B, S, H*D]: tiled pointwise kernels on the GPU
    kt = (k.permute(0, 2, 3, 1).float() * 0.125).contiguous()
    merged = (q.permute(0, 2, 1, 3) * 2.0).contiguous().permute(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], -1)
    return kt, merged.contiguous(), (q.transpose(1, 3) + 1.0).contiguous()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape", [(2, 77, 3, 40), (4, 512, 12, 64)])
def test_tiled_transposes_on_gpu(dtype, shape):
    q, k = _seeded_pair(shape, dtype)
    out = _compile(attention_transposes)(q, k)
    ref = attention_transposes(q.double(), k.double())
    for o, r in zip(out, ref):
        assert o.device.type == "cuda" and o.shape == r.shape and o.stride() == r.stride()
        tolerance = 1e-6 if o.dtype == torch.float32 else 1e-2
        torch.testing.assert_close(o.double(), r.double(), rtol=tolerance, atol=tolerance)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert any("YBLOCK" in s for s in metrics.kernel_sources.values()), list(metrics.kernel_sources)


class SqueezeExcitation(torch.nn.Module):
    """EfficientNet's block tail on channels-last activations: batch norm, SiLU, the channel means through
    two 1x1 convolutions, and the product that Inductor may walk in NCHW order over channels-last tensors."""

    def __init__(self, channels: int, squeezed: int):
        super().__init__()
        self.norm = torch.nn.BatchNorm2d(channels)
        self.reduce = torch.nn.Conv2d(channels, squeezed, 1)
        self.expand = torch.nn.Conv2d(squeezed, channels, 1)

    def forward(self, x):
        x = torch.nn.functional.silu(self.norm(x))
        scale = torch.sigmoid(self.expand(torch.nn.functional.silu(self.reduce(x.mean((2, 3), keepdim=True)))))
        return x * scale


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_squeeze_excitation_on_channels_last_gpu(dtype):
    torch.manual_seed(0)
    model = SqueezeExcitation(96, 4).cuda().eval()
    with torch.no_grad():  # running statistics that are not the identity
        model.norm.running_mean.uniform_(-0.5, 0.5)
        model.norm.running_var.uniform_(0.5, 2.0)
    x = torch.randn(8, 96, 56, 56, device="cuda").to(memory_format=torch.channels_last)
    ref = model.double()(x.double())
    model = model.to(dtype)
    with torch.no_grad():
        out = _compile(model)(x.to(dtype))
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(out.double(), ref, rtol=tolerance, atol=tolerance)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
