"""The matmul configs whose wgmma loops tests/test_dot_lean_loops.py checks on PTX, on the GPU at their default
pipeline (no TILE_PIPELINE): descriptors stepped from one base, copies from one address per run with the loop's
offsets added last, tf32 rings sized by their padding (128x256x64 fp32: two stages); random inputs with edges,
NaN-poisoned outputs, float64 references. (Attention's q in a one-slot ring and its zero accumulator run in
test_dot_gpu.py's causal attention tests.)

    pytest -q -m gpu tests/gpu/test_dot_lean_gpu.py
"""

from __future__ import annotations

import pytest
import torch

from gpu.test_dot_gpu import check_matmul

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def default_pipeline(monkeypatch):
    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    monkeypatch.delenv("TILE_PIPELINE", raising=False)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("blocks", [(128, 128, 64, 4), (128, 256, 64, 8)], ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("shape", [(512, 512, 512), (333, 271, 145)], ids=["aligned", "edges"])
def test_benchmark_matmul_blocks(dtype, blocks, shape):
    ptx = check_matmul(dtype, blocks, shape)
    if torch.cuda.get_device_capability() == (9, 0):
        assert ptx and all("wgmma.mma_async" in text and "cp.async" in text for text in ptx)
