"""torch.compile(backend="tile") on the CPU for what Inductor stores with `mode="atomic_add"`:
index_add, scatter_add and the embedding backward become `tl.atomic_add` kernels (no fallback),
run after the kernel that initializes their output, and match eager in float64."""

from __future__ import annotations

import re

import pytest
import torch

from inductor_tile import metrics
from inductor_tile.backend import tile_backend


def _compile(fn, **kwargs):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend, **kwargs)


def _generator(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _atomic_kernels() -> list[str]:
    return [name for name, source in metrics.kernel_sources.items() if "tl.atomic_add(" in source]


def _launch_arguments(name: str) -> list[str]:
    line = metrics.launch_lines[name]
    return [a.strip() for a in line[line.index("](") + 2: line.rindex(")")].split(",")]


def _outputs(name: str) -> list[str]:
    """The buffers kernel `name` writes (or adds into): its launch arguments in place of its out_ptr parameters."""
    source = metrics.kernel_sources[name]
    parameters = [p.strip() for p in re.search(r"def \w+\(([^)]*)\)", source).group(1).split(",")]
    arguments = _launch_arguments(name)
    return [arguments[i] for i, p in enumerate(parameters) if p.startswith("out_ptr")]


def _assert_atomic_kernel_runs_after_its_initialization() -> None:
    """No fallback for atomic stores; each atomic kernel is launched after a kernel that writes its output
    (Inductor fills the buffer first: zeros, or a copy of the input), in wrapper order."""
    assert not any("atomic_add" in reason for reason in metrics.fallback_reasons), metrics.fallback_reasons
    atomic = _atomic_kernels()
    assert atomic, "no kernel uses tl.atomic_add"
    order = list(metrics.launch_lines)
    for name in atomic:
        earlier = order[: order.index(name)]
        for buffer in _outputs(name):
            assert any(buffer in _outputs(e) for e in earlier), (
                f"{name} adds into {buffer} before any kernel initializes it: {order}")


def index_add(x, index, src):
    return x.index_add(0, index, src) * 2.0


def test_index_add_matches_eager_with_colliding_indices():
    gen = _generator()
    x = torch.randn(10, 16, dtype=torch.float64, generator=gen)
    index = torch.randint(0, 10, (50,), generator=gen)
    src = torch.randn(50, 16, dtype=torch.float64, generator=gen)
    compiled = _compile(index_add)
    torch.testing.assert_close(compiled(x, index, src), index_add(x, index, src), rtol=1e-12, atol=1e-12)
    _assert_atomic_kernel_runs_after_its_initialization()
    # a second call starts again from x (the buffer is re-initialized, not accumulated into)
    torch.testing.assert_close(compiled(x, index, src), index_add(x, index, src), rtol=1e-12, atol=1e-12)


def index_add_inplace(x, index, src):
    y = x.clone()
    y.index_add_(1, index, src, alpha=0.5)
    return y


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_index_add_inplace_along_a_later_dim(dtype):
    gen = _generator(1)
    x = torch.randn(6, 9, 5, dtype=torch.float64, generator=gen).to(dtype)
    index = torch.randint(0, 9, (40,), generator=gen)
    src = torch.randn(6, 40, 5, dtype=torch.float64, generator=gen).to(dtype)
    out = _compile(index_add_inplace)(x, index, src)
    tolerance = 1e-12 if dtype == torch.float64 else 1e-5
    torch.testing.assert_close(out, index_add_inplace(x, index, src), rtol=tolerance, atol=tolerance)
    _assert_atomic_kernel_runs_after_its_initialization()


def scatter_add(x, index, src):
    return torch.relu(x.scatter_add(0, index, src.exp()))


def test_scatter_add_is_generated_when_inductor_does_not_call_aten():
    # Inductor calls aten's scatter_add on the CPU unless told otherwise (its C++ atomics are slow)
    gen = _generator(2)
    x = torch.randn(7, 33, dtype=torch.float64, generator=gen)
    index = torch.randint(0, 7, (300, 33), generator=gen)
    src = torch.randn(300, 33, dtype=torch.float64, generator=gen)
    compiled = _compile(scatter_add, options={"cpp.fallback_scatter_reduce_sum": False})
    torch.testing.assert_close(compiled(x, index, src), scatter_add(x, index, src), rtol=1e-12, atol=1e-12)
    _assert_atomic_kernel_runs_after_its_initialization()


class TinyEmbeddingModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(11, 24, padding_idx=3)
        self.proj = torch.nn.Linear(24, 5)

    def forward(self, tokens):
        return self.proj(torch.tanh(self.embedding(tokens))).sum()


def test_embedding_backward_matches_eager():
    torch.manual_seed(0)
    model = TinyEmbeddingModel().double()
    tokens = torch.randint(0, 11, (4, 37), generator=_generator(3))
    model.zero_grad()
    model(tokens).backward()
    expected = model.embedding.weight.grad.clone()
    compiled = _compile(model)
    for _ in range(2):  # the gradient buffer is zero-filled on every call
        model.zero_grad()
        compiled(tokens).backward()
        torch.testing.assert_close(model.embedding.weight.grad, expected, rtol=1e-12, atol=1e-12)
    _assert_atomic_kernel_runs_after_its_initialization()
    assert model.embedding.weight.grad[3].abs().max() == 0  # the padding row gets no gradient
