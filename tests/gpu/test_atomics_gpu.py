"""Atomics on an NVIDIA GPU: the atomic cases (tests/atomic_cases.py) with every tensor on CUDA, with
several warps per program (copies of an element in the layout must add once), and index_add /
embedding backward under torch.compile(backend="tile") on CUDA tensors against eager in float64."""

import pytest
import torch

from atomic_cases import ATOMIC_CASES
from inductor_tile import metrics
from inductor_tile.backend import tile_backend
from suite import assert_checks

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", sorted(ATOMIC_CASES))
def test_atomic_case_on_gpu(name, compiled, gen):
    assert_checks(ATOMIC_CASES[name](gen, "cuda"))
    torch.cuda.synchronize()


def _compile(fn):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend)


def index_add(x, index, src):
    return x.index_add(0, index, src) * 2.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_index_add_on_gpu(dtype):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(64, 33, device="cuda", generator=g).to(dtype)
    index = torch.randint(0, 64, (4000,), device="cuda", generator=g)
    src = torch.randn(4000, 33, device="cuda", generator=g).to(dtype)
    out = _compile(index_add)(x, index, src)
    expected = index_add(x.double(), index, src.double())
    tolerance = 1e-4 if dtype == torch.float32 else 5e-2
    torch.testing.assert_close(out.double(), expected, rtol=tolerance, atol=tolerance * expected.abs().max().item())
    assert not any("atomic_add" in r for r in metrics.fallback_reasons), metrics.fallback_reasons
    assert any("tl.atomic_add(" in s for s in metrics.kernel_sources.values())


def test_embedding_backward_on_gpu():
    torch.manual_seed(0)
    embedding = torch.nn.Embedding(100, 64).cuda()
    tokens = torch.randint(0, 100, (16, 128), device="cuda")

    def loss(t):
        return torch.tanh(embedding(t)).square().sum()

    embedding.zero_grad()
    loss(tokens).backward()
    expected = embedding.weight.grad.double().clone()
    embedding.zero_grad()
    _compile(loss)(tokens).backward()
    torch.testing.assert_close(embedding.weight.grad.double(), expected, rtol=1e-4, atol=1e-4)
    assert not any("atomic_add" in r for r in metrics.fallback_reasons), metrics.fallback_reasons
