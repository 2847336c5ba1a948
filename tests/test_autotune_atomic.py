"""Autotuning a generated kernel that adds atomically (index_add, scatter_add, embedding
backward) times it several times on the real buffers: each config's runs must not leave their
additions behind.  On the CPU, with the CUDA heuristics' candidate configs (as
test_autotune_second_process)."""

import torch

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from inductor_tile.kernel_compiler.runtime import autotuner
from inductor_tile.scheduler import scheduling


def embedding_grad(grad, idx, base):
    return base.index_add(0, idx, torch.tanh(grad) * 3.0)


def test_tuned_atomic_kernel_adds_once(monkeypatch):
    monkeypatch.setattr(scheduling, "_heuristics_device", lambda nodes: "cuda")
    monkeypatch.setattr(config, "autotune", True)
    torch._dynamo.reset()
    metrics.reset()
    gen = torch.Generator().manual_seed(11)
    grad = torch.randn(512, 64, generator=gen, dtype=torch.float64)
    idx = torch.randint(0, 40, (512,), generator=gen)
    base = torch.randn(40, 64, generator=gen, dtype=torch.float64)
    tunings = autotuner.stats.tunings
    out = torch.compile(embedding_grad, backend=tile_backend)(grad, idx, base)
    torch.testing.assert_close(out, embedding_grad(grad, idx, base), rtol=1e-12, atol=1e-12)
    assert any("tl.atomic_add" in src for src in metrics.kernel_sources.values())
    assert autotuner.stats.tunings > tunings  # the atomic kernel was tuned, not taken from the database
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
