"""Training graphs with dynamic=True on the CPU (issue 23): ragged masks, strided pooling,
cumulative ops and indexing over symbolic sizes, forward and backward in one graph (one
compile keeps CI time down), compared with eager in float64; no node may fall back and one
graph serves every size."""

import torch
from torch._dynamo.utils import counters

from inductor_tile import metrics
from inductor_tile.backend import tile_backend


def _rand(*shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def training_graph(x, lengths, image, idx):
    # a padding mask from per-row lengths over a symbolic sequence length
    keep = torch.arange(x.shape[-1])[None, :] < lengths[:, None]
    ragged = torch.softmax(x.masked_fill(~keep, float("-inf")), -1) * keep
    pooled = torch.nn.functional.max_pool2d(image, 3, stride=2, padding=1)  # strided pooling
    cumulative = torch.cumsum(x, 1) * x
    indexed = torch.index_select(x, 0, idx).sigmoid() * 2.0
    return ragged, pooled, cumulative, indexed


def test_training_over_symbolic_sizes():
    torch._dynamo.reset()
    counters.clear()
    metrics.reset()
    compiled = torch.compile(training_graph, backend=tile_backend, dynamic=True)
    for seed, (n, m) in enumerate([(6, 11), (9, 20), (7, 5)]):
        g = torch.Generator().manual_seed(seed)
        args = [_rand(n, m, seed=seed), torch.randint(1, m + 1, (n,), generator=g), _rand(2, 3, n + 4, m, seed=seed),
                torch.randint(0, n, (m,), generator=g)]
        eager_args = [a.clone().requires_grad_() if a.is_floating_point() else a for a in args]
        tile_args = [a.clone().requires_grad_() if a.is_floating_point() else a for a in args]
        ref, out = training_graph(*eager_args), compiled(*tile_args)
        for o, r in zip(out, ref):
            torch.testing.assert_close(o, r, rtol=1e-10, atol=1e-10)
        sum((o * (i + 1.5)).sum() for i, o in enumerate(out)).backward()
        sum((r * (i + 1.5)).sum() for i, r in enumerate(ref)).backward()
        for a, b in zip(tile_args, eager_args):
            if b.requires_grad:
                torch.testing.assert_close(a.grad, b.grad, rtol=1e-10, atol=1e-10)
    assert counters["stats"]["unique_graphs"] == 1
    assert metrics.generated_kernels >= 2 and metrics.fallback_kernels == 0, metrics.fallback_reasons
