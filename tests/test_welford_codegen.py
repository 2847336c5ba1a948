"""Generated welford reductions (var, std, var_mean, layer_norm) in float64 against eager.

The four forms share one Chan combination of (mean, m2, weight) triples: a looped welford_reduce
combines its lanes after the loop, a split reduction's second stage (welford_combine) combines
rows of partial triples, persistent or looped. Each form is forced with the block-size settings
and recognized in the generated source.
"""

from __future__ import annotations

import pytest
import torch

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend

TOL = 1e-10


def _run(fn, *args, max_rblock: int | None = None):
    torch._dynamo.reset()
    metrics.reset()
    settings = {} if max_rblock is None else {"max_rblock": max_rblock}
    with config.patch(**settings):
        out = torch.compile(fn, backend=tile_backend)(*args)
    assert metrics.generated_kernels >= 1
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    return out


def _data(*shape: int, seed: int, offset: float = 0.0) -> torch.Tensor:
    """Normal samples around `offset` (a large offset makes naive variance formulas lose digits)."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3.0 + offset


def _sources() -> str:
    return "\n".join(metrics.kernel_sources.values())


@pytest.mark.parametrize("max_rblock", [None, 4], ids=["persistent-combine", "looped-combine"])
def test_split_var_mean_combines_partial_triples(max_rblock):
    x = _data(200_000, seed=1, offset=1000.0)
    var, mean = _run(lambda t: torch.var_mean(t), x, max_rblock=max_rblock)
    ref_var, ref_mean = torch.var_mean(x)
    torch.testing.assert_close(mean, ref_mean, rtol=TOL, atol=0)
    torch.testing.assert_close(var, ref_var, rtol=TOL, atol=0)
    loops = _sources().count("for roffset in range")
    assert loops == (2 if max_rblock is not None else 1), "the first stage loops; the combine only when forced"


# Inductor uses Welford on the CPU for rows of 1024 elements or more (shorter rows: two passes)
@pytest.mark.parametrize("columns, max_rblock", [(1500, None), (1500, 2048), (5000, None)],
                         ids=["looped-masked-tail", "persistent", "looped-long-rows"])
def test_row_var_std_and_layer_norm(columns, max_rblock):
    x = _data(33, columns, seed=2, offset=-40.0)
    weight, bias = _data(columns, seed=3), _data(columns, seed=4)

    def fn(t):
        return (t.var(-1), t.std(-1, correction=0), torch.var_mean(t, -1)[1],
                torch.nn.functional.layer_norm(t, (columns,), weight, bias, eps=1e-5))

    outs = _run(fn, x, max_rblock=max_rblock)
    for got, ref in zip(outs, fn(x)):
        torch.testing.assert_close(got, ref, rtol=TOL, atol=TOL)
    looped = "for roffset in range" in _sources()
    assert looped == (max_rblock is None)
