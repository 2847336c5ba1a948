"""Recompilations under backend="tile" are visible and no more frequent than Inductor's (issue 23).

Dynamo recompiles a function when its guards fail on new inputs (new static sizes, a size 0/1
where a symbol was, a dim marked dynamic).  Our backend must not add recompilations of its
own on the CPU for sizes that fit int32, and each recompilation is counted in
``metrics.recompiles`` with Dynamo's reason.
"""

import logging

import torch
from torch._dynamo.utils import counters

from inductor_tile import metrics
from inductor_tile.backend import tile_backend


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def fn(x, y):
    return torch.softmax(x, -1) * y.sum(0, keepdim=True)


# (shape of x, mark_dynamic dims of x): static, then automatic dynamic, a size-1 specialization,
# a new dim marked dynamic
SEQUENCE = [((8, 5), ()), ((9, 5), ()), ((1, 5), ()), ((7, 11), (1,))]


def _graphs(backend) -> int:
    torch._dynamo.reset()
    counters.clear()
    metrics.reset()
    compiled = torch.compile(fn, backend=backend)
    for i, (shape, marked) in enumerate(SEQUENCE):
        x, y = _rand(*shape, seed=i), _rand(3, shape[1], seed=i + 1)
        for d in marked:
            torch._dynamo.mark_dynamic(x, d)
        torch.testing.assert_close(compiled(x, y), fn(x, y), rtol=1e-12, atol=1e-12)
    return counters["stats"]["unique_graphs"]


def test_recompiles_no_more_than_inductor(caplog):
    with caplog.at_level(logging.INFO, logger="inductor_tile"):
        tile = _graphs(tile_backend)
    assert metrics.compiled_graphs == tile
    assert tile >= 3 and len(metrics.recompiles) == tile - 1, metrics.recompiles
    assert "size mismatch at index 0. expected 8, actual 9" in metrics.recompiles[0], metrics.recompiles
    assert any("recompiling" in r.getMessage() for r in caplog.records)
    inductor = _graphs("inductor")
    assert tile <= inductor, (tile, inductor)
