"""Index arithmetic over symbolic sizes that only the ShapeEnv can sign (issue 23).

A divisor such as ``s1 - 2`` (a sliced or convolved dim) or ``(s0 - 1) // 2`` (a pooled dim)
is positive or non-negative for every size the graph accepts, but sympy alone cannot tell;
float-valued size expressions (Bessel's correction ``n / (n - 1)``) are computed in float64
as eager computes them on the host.  Each case ran as an Inductor fallback before.
"""

import pytest
import torch
from torch._dynamo.utils import counters

from inductor_tile import metrics
from inductor_tile.backend import tile_backend

CASES = {
    # a reduction over a slice: the split reduction decodes its index by s2 - 2
    "var_mean_of_slice": lambda x: torch.var_mean(x[:, :, 2:], dim=(0, 2)),
    # s0*s2 - 2*s0 is >= 0 only in the factored form s0*(s2 - 2)
    "flattened_slice_sum": lambda x: (x[:, :, 2:] * 2).reshape(x.shape[0], -1).sum(-1),
    # pooled sizes (s - 1) // 2 as divisors
    "pooled_channel_sums": lambda x: torch.nn.functional.max_pool2d(x[:, :, 1:, 1:], 2).sum((0, 2, 3)),
    # unbiased variance: a float index expression over symbolic sizes
    "unbiased_var": lambda x: x.var((0, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_symbolic_divisors_are_generated(name):
    fn = CASES[name]
    torch._dynamo.reset()
    counters.clear()
    metrics.reset()
    compiled = torch.compile(fn, backend=tile_backend, dynamic=True)
    for i, shape in enumerate([(5, 3, 17, 13), (3, 3, 22, 9), (2, 3, 6, 7)]):
        g = torch.Generator().manual_seed(i)
        x = torch.randn(*shape, generator=g, dtype=torch.float64)
        out, ref = compiled(x), fn(x)
        for o, r in zip(out if isinstance(out, tuple) else (out,), ref if isinstance(ref, tuple) else (ref,)):
            torch.testing.assert_close(o, r, rtol=1e-10, atol=1e-10)
    assert counters["stats"]["unique_graphs"] == 1
    assert metrics.generated_kernels >= 1 and metrics.fallback_kernels == 0, metrics.fallback_reasons
