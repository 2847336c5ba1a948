"""A split online softmax (Inductor's ``create_multilayer``: few long rows, each cut into blocks whose
(max, sum) pairs a second kernel combines; on an H200 cross-entropy 64x32000 splits): both stages reduce
(max, weight) pairs. Values of rows with -inf (a whole block of it), +inf and NaN, a length no split divides,
against float64 eager, outputs NaN-poisoned."""

from __future__ import annotations

import pytest
import torch
from mix_order_checks import poisoned_allocations

from inductor_tile import metrics
from inductor_tile.codegen import heuristics

pytestmark = pytest.mark.usefixtures("fresh_backend")
import torch._inductor.inductor_prims  # noqa: E402,F401  (registers prims.prepare_softmax_online)

prepare_softmax_online = torch.ops.prims.prepare_softmax_online


def _rows(cols: int, dtype: torch.dtype) -> torch.Tensor:
    g = torch.Generator().manual_seed(cols)
    x = torch.randn(3, cols, generator=g, dtype=torch.float64) * 4
    x[1, : cols * 3 // 4] = float("-inf")  # whole blocks of -inf, then finite values
    x[1, cols - 5] = float("-inf")
    x[2, cols // 2] = float("nan")
    return x.to(dtype)


@pytest.mark.parametrize("cols", [65536, 65537])
def test_split_online_softmax_values(cols, monkeypatch):
    x = _rows(cols, torch.float16)
    fn = lambda t: prepare_softmax_online(t.float(), -1)  # noqa: E731
    with poisoned_allocations(monkeypatch) as allocated:
        top, total = torch.compile(fn, backend="tile")(x)
    assert allocated and metrics.fallback_kernels == 0, metrics.fallback_reasons
    # blocks, then their pairs: the CPU target loops over a block (thousands of elements, above
    # config.max_rblock) and reduces the pairs (one per block) in one piece, so both updates run
    first, second = metrics.kernel_sources.values()
    assert "for roffset" in first and "for roffset" not in second, (first, second)
    ref_top, ref_total = prepare_softmax_online(x.double(), -1)
    torch.testing.assert_close(top, ref_top.float(), equal_nan=True)
    torch.testing.assert_close(total, ref_total.float(), rtol=1e-5, atol=0, equal_nan=True)
    assert torch.isfinite(total[:2]).all() and torch.isnan(total[2])


def test_a_split_row_of_only_minus_inf_sums_nan(monkeypatch):
    x = torch.full((2, 65536), float("-inf"))
    x[0] = torch.randn(65536, generator=torch.Generator().manual_seed(1))
    with poisoned_allocations(monkeypatch):
        top, total = torch.compile(lambda t: prepare_softmax_online(t, -1), backend="tile")(x)
    assert metrics.fallback_kernels == 0 and len(metrics.kernel_sources) == 2
    ref_top, ref_total = prepare_softmax_online(x.double(), -1)
    assert torch.isnan(ref_total[1]) and torch.isnan(total[1]) and top[1] == float("-inf")
    torch.testing.assert_close(total[0], ref_total[0].float(), rtol=1e-5, atol=0)
    assert heuristics.is_gpu("cpu") is False
