"""Index arithmetic over symbolic sizes that only the ShapeEnv can sign (issue 23).

A divisor such as ``s1 - 2`` (a sliced or convolved dim) or ``(s0 - 1) // 2`` (a pooled dim)
is positive or non-negative for every size the graph accepts, but sympy alone cannot tell;
float-valued size expressions (Bessel's correction ``n / (n - 1)``) are computed in float64
as eager computes them on the host.  Each case ran as an Inductor fallback before.
"""

import torch
from torch._dynamo.utils import counters

from inductor_tile import metrics
from inductor_tile.backend import tile_backend

def symbolic_divisors(x):
    return (
        # a reduction over a slice: the split reduction decodes its index by s2 - 2
        *torch.var_mean(x[:, :, 2:], dim=(0, 2)),
        # s0*s2 - 2*s0 is >= 0 only in the factored form s0*(s2 - 2)
        (x[:, :, 2:] * 2).reshape(x.shape[0], -1).sum(-1),
        # pooled sizes (s - 1) // 2 as divisors
        torch.nn.functional.max_pool2d(x[:, :, 1:, 1:], 2).sum((0, 2, 3)),
        # unbiased variance: a float index expression over symbolic sizes
        x.var((0, 1)),
    )


def test_symbolic_divisors_are_generated():
    torch._dynamo.reset()
    counters.clear()
    metrics.reset()
    compiled = torch.compile(symbolic_divisors, backend=tile_backend, dynamic=True)
    for i, shape in enumerate([(5, 3, 17, 13), (3, 3, 22, 9), (2, 3, 6, 7)]):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(*shape, generator=g, dtype=torch.float64)
        for o, r in zip(compiled(x), symbolic_divisors(x)):
            torch.testing.assert_close(o, r, rtol=1e-10, atol=1e-10)
    assert counters["stats"]["unique_graphs"] == 1
    assert metrics.generated_kernels >= 4 and metrics.fallback_kernels == 0, metrics.fallback_reasons
