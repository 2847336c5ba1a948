"""GPU kernels over a static size that every block they may be launched with divides (their launch and
each autotuning candidate, codegen/kernel.py `_launches`) get all-true row masks, as CPU kernels do
(test_cpu_whole_blocks): no per-element selects by the row mask. Sizes some candidate block does not
divide keep their bounds. Run on the CPU with the CUDA heuristics' launches and candidates, autotuned
(as test_autotune_atomic); values match torch in float64."""

from __future__ import annotations

import pytest
import torch

from inductor_tile import config, metrics
from inductor_tile.codegen import heuristics
from inductor_tile.scheduler import scheduling

pytestmark = pytest.mark.usefixtures("fresh_backend")


@pytest.fixture
def cuda_launches(monkeypatch):
    monkeypatch.setattr(scheduling, "_heuristics_device", lambda nodes: "cuda")
    monkeypatch.setattr(config, "autotune", True)


def _sources() -> str:
    return "\n".join(metrics.kernel_sources.values())


@pytest.mark.parametrize("rows, whole", [(256, True), (258, False)])
def test_layer_norm_row_mask_is_all_true_only_where_every_candidate_block_divides(cuda_launches, rows, whole):
    # 768-wide rows: one row per program, candidates of 1, 2 and 4 rows; 258 is not a multiple of 4
    chosen = heuristics.reduction("cuda", rows, 768, 768)
    blocks = {c.xblock for c in heuristics.candidates("cuda", chosen, True)}
    assert max(blocks) == 4 and (rows % 4 == 0) == whole
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(rows, 768, generator=gen) * 2 + 0.5
    w, b = torch.randn(768, generator=gen), torch.randn(768, generator=gen)

    def fn(x, w, b):
        return torch.nn.functional.layer_norm(x, (768,), w, b)

    out = torch.compile(fn, backend="tile")(x, w, b)
    torch.testing.assert_close(out, fn(x.double(), w.double(), b.double()).float(), rtol=1e-5, atol=1e-5)
    source = _sources()
    assert ("xmask = tl.full([XBLOCK, 1], True, tl.int1)" in source) == whole, source
    assert ("xmask = xindex < xnumel" in source) == (not whole), source
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons


@pytest.mark.parametrize("n, whole", [(1 << 16, True), ((1 << 16) + 128, False), (1000, False)])
def test_pointwise_mask_is_all_true_only_where_every_candidate_block_divides(cuda_launches, n, whole):
    # 2**16 elements: XBLOCK 512 (candidates 512 and 256); 2**16 + 128 (XBLOCK 1024) and 1000 are not whole
    x = torch.randn(n, generator=torch.Generator().manual_seed(5)) * 3

    def fn(x):
        return torch.sigmoid(x) * x + 1.0

    out = torch.compile(fn, backend="tile")(x)
    torch.testing.assert_close(out, fn(x.double()).float(), rtol=1e-6, atol=1e-6)
    source = _sources()
    assert ("xmask = tl.full([XBLOCK], True, tl.int1)" in source) == whole, source
    assert ("xmask = xindex < xnumel" in source) == (not whole), source
