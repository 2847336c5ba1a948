"""Fallbacks to Inductor's own kernels are never an error (issue 23).

A node our codegen cannot generate is handed to Inductor's C++ scheduling on the CPU.  The
graph was lowered for our backend features, so the fallback can meet nodes it never meets
under ``backend="inductor"`` (a split reduction's welford_combine stage): these tests hand
every node over (``all_fallback``) and compare with eager in float64.
"""

import pytest
import torch
from torch._dynamo.utils import counters

from inductor_tile import metrics
from inductor_tile.backend import tile_backend
from inductor_tile.codegen.common import Unsupported
from inductor_tile.scheduler import fallback
from inductor_tile.scheduler.scheduling import TileScheduling


def _compile(fn, **kwargs):
    torch._dynamo.reset()
    counters.clear()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend, **kwargs)


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g, dtype=torch.float64)


@pytest.fixture
def all_fallback(monkeypatch):
    """Every scheduler node goes to Inductor's scheduling; the reduction types handed over."""
    handed = []

    def refuse(self, nodes):
        handed.extend(fallback.reduction_type(n) for n in nodes)
        raise Unsupported("forced by the test")

    monkeypatch.setattr(TileScheduling, "_codegen_group", refuse)
    return handed


def test_split_welford_goes_to_the_cpp_scalar_kernel(all_fallback):
    # one mean/variance over many elements: Inductor splits it in two stages for our
    # backend, and the second (welford_combine) stage reaches the C++ scheduling
    fn = lambda t: torch.var_mean(t, dim=(0, 2, 3), correction=0)  # noqa: E731
    x = _rand(64, 3, 32, 32)
    out = _compile(fn)(x)
    ref = fn(x)
    for o, r in zip(out, ref):
        torch.testing.assert_close(o, r, rtol=1e-10, atol=1e-10)
    assert "welford_combine" in all_fallback
    assert metrics.fallback_kernels >= 2 and not metrics.fallback_retries


def test_a_refused_vector_kernel_is_retried_as_scalar(all_fallback, monkeypatch):
    from torch._inductor.codegen import cpp

    def refuse_vector(self, *args, **kwargs):
        raise AssertionError("vector reduction refused by the test")

    monkeypatch.setattr(cpp.CppVecKernel, "reduction", refuse_vector)
    fn = lambda t: (t.sum(-1), torch.relu(t) * 2.0)  # noqa: E731
    x = _rand(37, 300)
    out = _compile(fn)(x)
    for o, r in zip(out, fn(x)):
        torch.testing.assert_close(o, r, rtol=1e-12, atol=1e-12)
    assert len(metrics.fallback_retries) == 1 and "refused by the test" in metrics.fallback_retries[0]


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


def test_conv_net_training_dynamic():
    # issue 23's report: the batch-norm statistics fell back under dynamic=True ("division of
    # an index by a possibly non-positive s87 - 2") and the C++ vector kernel then failed on
    # the handed-over welford_combine node; now every node is a tile kernel, forward and backward
    torch.manual_seed(0)
    model = ConvNet().double().train()
    ref_model = ConvNet().double().train()
    ref_model.load_state_dict(model.state_dict())
    compiled = _compile(model, dynamic=True)
    for shape in [(4, 3, 16, 12), (2, 3, 21, 14)]:
        x = _rand(*shape)
        out, ref = compiled(x), ref_model(x)
        torch.testing.assert_close(out, ref, rtol=1e-9, atol=1e-9)
        out.square().sum().backward()
        ref.square().sum().backward()
        for (name, p), q in zip(model.named_parameters(), ref_model.parameters()):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-9, atol=1e-9, msg=name)
            p.grad, q.grad = None, None
        torch.testing.assert_close(model.bn.running_var, ref_model.bn.running_var, rtol=1e-9, atol=1e-9)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
