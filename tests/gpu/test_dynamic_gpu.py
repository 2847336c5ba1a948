"""Dynamic shapes and fallbacks on a CUDA GPU (issue 23): the conv net of the issue in training
with dynamic=True in float32 and float16, every node handed to Inductor's Triton scheduling,
and a fuzzer budget on the GPU.

Errors are measured against eager in float64 as tests/gpu/test_models_gpu.py does: the
compiled error may be at most a small multiple of eager's own rounding error plus a floor.
"""

import copy
import io

import pytest
import torch

from inductor_tile import metrics
from inductor_tile.backend import tile_backend
from inductor_tile.codegen.common import Unsupported
from inductor_tile.scheduler.scheduling import TileScheduling
from inductor_tile.tools import fuzz

pytestmark = pytest.mark.gpu

ERROR_MULTIPLIER = 3.0
ERROR_FLOOR = {torch.float32: 1e-5, torch.float16: 2e-3}


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.bn = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.fc(x.mean((2, 3)))


def _rms(t):
    return t.double().square().mean().sqrt().item()


def _step(module, x, compiled_fn=None):
    module.zero_grad(set_to_none=True)
    x = x.clone().requires_grad_()
    out = (compiled_fn if compiled_fn is not None else module)(x)
    out.float().square().mean().backward()
    return [out.detach()] + [p.grad.detach().clone() for p in module.parameters()] + [x.grad]


@pytest.mark.parametrize("handover", [False, True], ids=["tile", "all_to_triton"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_conv_net_training_dynamic_gpu(dtype, handover, monkeypatch):
    if handover:
        monkeypatch.setattr(TileScheduling, "_codegen_group",
                            lambda self, nodes: (_ for _ in ()).throw(Unsupported("forced by the test")))
    torch._dynamo.reset()
    metrics.reset()
    torch.manual_seed(0)
    model = ConvNet().cuda()
    ref_model, eager_model, tile_model = copy.deepcopy(model).double(), copy.deepcopy(model).to(dtype), model.to(dtype)
    compiled = torch.compile(tile_model, backend=tile_backend, dynamic=True)
    for i, shape in enumerate([(8, 3, 32, 24), (5, 3, 41, 30), (16, 3, 20, 20)]):
        g = torch.Generator(device="cuda").manual_seed(i)
        x = torch.randn(*shape, generator=g, device="cuda", dtype=torch.float64)
        ref = _step(ref_model, x)
        eager = _step(eager_model, x.to(dtype))
        tile = _step(tile_model, x.to(dtype), compiled)
        for j, (t, e, r) in enumerate(zip(tile, eager, ref)):
            assert t.dtype == e.dtype and t.shape == r.shape and torch.isfinite(t).all()
            error, eager_error = _rms(t.double() - r), _rms(e.double() - r)
            bound = ERROR_MULTIPLIER * eager_error + ERROR_FLOOR[dtype] * max(_rms(r), 1e-3)
            assert error <= bound, f"shape {shape}, tensor {j}: rms error {error:.3g} > {bound:.3g}"
    if handover:
        assert metrics.generated_kernels == 0 and metrics.fallback_kernels > 0
    else:
        assert metrics.fallback_kernels == 0, metrics.fallback_reasons


def test_fuzz_budget_gpu():
    out = io.StringIO()
    results = fuzz.fuzz(range(200_000, 201_000), device="cuda", time_budget=120, out=out)
    assert results and all(r.ok for r in results), out.getvalue()
