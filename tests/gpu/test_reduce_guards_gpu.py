"""Row reductions whose folds apply the row mask once (to_llvm/reduce_guards.py) and whose partials of many
warps are combined one per thread (to_llvm/reduce_warp_tree.py), on an NVIDIA GPU: a softmax with a layer
norm's mean and variance of the same rows, rows past the end masked, many programs at once (a missing
barrier shows as a race), against torch in float64 with NaN-poisoned outputs."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl

pytestmark = pytest.mark.gpu


@inductor_tile.jit
def softmax_and_moments_kernel(x_ptr, out_ptr, stats_ptr, n_rows, N: tl.constexpr, XBLOCK: tl.constexpr,
                               RBLOCK: tl.constexpr):
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, RBLOCK)[None, :]
    mask = (rows < n_rows) & (cols < N)
    x = tl.load(x_ptr + rows * N + cols, mask=mask, other=0).to(tl.float32)
    m = tl.max(tl.where(mask, x, float("-inf")), 1)[:, None]
    e = tl.exp(x - m)
    s = tl.sum(tl.where(mask, e, 0.0), 1)[:, None]
    mean = tl.sum(tl.where(mask, x, 0.0), 1)[:, None] / N
    centered = tl.where(mask, x - mean, 0.0)
    var = tl.sum(centered * centered, 1)[:, None] / N
    tl.store(out_ptr + rows * N + cols, (e / s).to(tl.float16), mask=mask)
    two = tl.arange(0, 2)[None, :]
    tl.store(stats_ptr + rows * 2 + two, tl.where(two == 0, mean, var), mask=rows < n_rows)


@pytest.mark.parametrize("n, xblock, rblock, warps", [(2048, 4, 2048, 8), (8192, 1, 8192, 16), (768, 1, 1024, 1),
                                                      (768, 4, 1024, 4), (200, 8, 256, 2), (1000, 2, 1024, 8)])
def test_softmax_and_moments_on_gpu(n, xblock, rblock, warps):
    n_rows = 2048 + 3
    x = (torch.randn(n_rows, n, generator=torch.Generator().manual_seed(n)) * 3).half()
    wide = x.double()
    want = torch.softmax(wide, 1)
    moments = torch.stack([wide.mean(1), wide.var(1, unbiased=False)], 1)
    grid = (-(-n_rows // xblock),)
    for _ in range(3):  # a race shows in some runs only
        out = torch.full((n_rows, n), float("nan"), dtype=torch.float16, device="cuda")
        stats = torch.full((n_rows, 2), float("nan"), dtype=torch.float32, device="cuda")
        softmax_and_moments_kernel[grid](x.cuda(), out, stats, n_rows, N=n, XBLOCK=xblock, RBLOCK=rblock,
                                         num_warps=warps)
        torch.testing.assert_close(out.cpu().double(), want, rtol=2e-3, atol=1e-5)
        torch.testing.assert_close(stats.cpu().double(), moments, rtol=1e-4, atol=1e-4)
