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


def pointwise_and_reductions(x, y):
    a = torch.relu(x + y) * 2.0
    b = torch.sigmoid(a) - y
    return torch.where(x > 0, b, a * y), a.sum(dim=1), (b * b).amax(dim=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("shape", [(37, 53), (8, 3000)])
def test_pointwise_and_reductions_on_gpu(dtype, shape):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(shape, device="cuda", dtype=dtype, generator=g)
    y = torch.randn(shape, device="cuda", dtype=dtype, generator=g)
    out = _compile(pointwise_and_reductions)(x, y)
    ref = pointwise_and_reductions(x.double(), y.double())
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    for o, r in zip(out, ref):
        assert o.device.type == "cuda"
        torch.testing.assert_close(o.double(), r, rtol=tolerance, atol=tolerance * max(1.0, r.abs().max().item()))
    assert metrics.generated_kernels >= 1
