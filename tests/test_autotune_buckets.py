"""The backend's generated kernels are tuned once per power-of-two bucket of their sizes, not once
per size: under dynamic shapes a decoder's growing sequence would otherwise time every candidate at
every step. On the CPU, with the CUDA heuristics' candidate configs (as test_autotune_second_process)."""

import torch

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from inductor_tile.codegen.runtime import size_bucket
from inductor_tile.kernel_compiler.runtime import autotuner
from inductor_tile.scheduler import scheduling


def test_size_bucket():
    assert [size_bucket(n) for n in (0, 1, 2, 3, 300, 512, 513)] == [1, 1, 2, 4, 512, 512, 1024]


def row_softmax(x):
    return torch.softmax(x * 1.5, -1)


def test_dynamic_sizes_tune_once_per_bucket(monkeypatch):
    monkeypatch.setattr(scheduling, "_heuristics_device", lambda nodes: "cuda")
    monkeypatch.setattr(config, "autotune", "reductions")
    torch._dynamo.reset()
    metrics.reset()
    compiled = torch.compile(row_softmax, backend=tile_backend, dynamic=True)
    gen = torch.Generator().manual_seed(3)
    tunings = []
    for rows in (300, 301, 400, 512, 700):  # buckets 512, 512, 512, 512, 1024
        x = torch.randn(rows, 96, generator=gen, dtype=torch.float64)
        before = autotuner.stats.tunings + autotuner.stats.db_hits
        torch.testing.assert_close(compiled(x), row_softmax(x), rtol=1e-12, atol=1e-12)
        tunings.append(autotuner.stats.tunings + autotuner.stats.db_hits - before)
    assert tunings == [1, 0, 0, 0, 1], tunings
    assert metrics.generated_kernels == 1 and metrics.fallback_kernels == 0, metrics.fallback_reasons
