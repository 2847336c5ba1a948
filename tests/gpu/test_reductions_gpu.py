"""Reductions and scans across warps on an NVIDIA GPU (vector scratch accesses, reductions sharing one
barrier pair, no barrier before a reduction that follows another): the PTX-interpreter kernels of
tests/test_reduce_ptx_sim.py, and many programs at once (where a missing barrier would show as a race),
against torch in float64 with NaN-poisoned outputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from test_nvidia_ptx import layer_norm_backward_kernel
from test_reduce_ptx_sim import KERNELS, chained_kernel, chained_reference, cumsum_kernel, random_input, \
    reverse_cummax_kernel, two_sums_kernel

pytestmark = pytest.mark.gpu

TORCH = {"fp16": torch.float16, "fp32": torch.float32, "i32": torch.int32}


def _poisoned(n: int, dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.full((n,), float("nan"), dtype=dtype, device="cuda")
    return torch.full((n,), 0x5A5A5A5A, dtype=dtype, device="cuda")


@pytest.mark.parametrize("shape", [(8, 1024), (64, 64), (1, 4096)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("warps", [1, 4, 8])
@pytest.mark.parametrize("dtype", ["fp16", "fp32", "i32"])
@pytest.mark.parametrize("kind", ["sum", "max", "argmax"])
def test_reductions_on_gpu(kind, dtype, warps, axis, shape):
    x = torch.from_numpy(random_input(shape, dtype, seed=11))
    if kind == "argmax" and dtype == "i32":
        x = x % 7  # ties: the first index wins
    out = _poisoned(shape[1 - axis], torch.int32 if kind == "argmax" else TORCH[dtype])
    KERNELS[kind][(1,)](x.cuda(), out, R=shape[0], C=shape[1], AXIS=axis, num_warps=warps)
    got, wide = out.cpu(), x.double()
    if kind == "argmax":
        assert torch.equal(got.long(), wide.argmax(axis)), (got, wide.argmax(axis))
    elif kind == "max":
        assert torch.equal(got.double(), wide.amax(axis))
    elif dtype == "i32":
        assert torch.equal(got.long(), wide.sum(axis).long())
    else:
        eps = 2.0 ** -10 if dtype == "fp16" else 2.0 ** -23
        bound = 4 * eps * np.log2(shape[axis] + 1) * wide.abs().sum(axis) + eps
        assert ((got.double() - wide.sum(axis)).abs() <= bound).all(), (got, wide.sum(axis))


@pytest.mark.parametrize("shape,axis,warps", [((8, 1024), 1, 4), ((64, 64), 0, 4), ((1, 4096), 1, 8)])
def test_two_sums_and_scans_on_gpu(shape, axis, warps):
    x = torch.from_numpy(random_input(shape, "fp32", seed=13)).cuda()
    sums, squares = _poisoned(shape[1 - axis], torch.float32), _poisoned(shape[1 - axis], torch.float32)
    two_sums_kernel[(1,)](x, sums, squares, R=shape[0], C=shape[1], AXIS=axis, num_warps=warps)
    torch.testing.assert_close(sums.double(), x.double().sum(axis), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(squares.double(), (x.double() ** 2).sum(axis), rtol=1e-5, atol=1e-4)
    out = _poisoned(x.numel(), torch.float32)
    cumsum_kernel[(1,)](x, out, R=shape[0], C=shape[1], AXIS=axis, num_warps=warps)
    torch.testing.assert_close(out.double().reshape(shape), x.double().cumsum(axis), rtol=1e-5, atol=1e-3)
    reverse_cummax_kernel[(1,)](x, out, R=shape[0], C=shape[1], AXIS=axis, num_warps=warps)
    want = x.double().flip(axis).cummax(axis).values.flip(axis)
    assert torch.equal(out.double().reshape(shape), want)


@pytest.mark.parametrize("shape,warps", [((8, 1024), 4), ((1, 4096), 8), ((64, 64), 8)])
def test_chained_reductions_in_a_loop_on_gpu(shape, warps):
    x = random_input((3, *shape), "fp16", seed=29)
    out = _poisoned(shape[0], torch.float32)
    chained_kernel[(1,)](torch.from_numpy(x).cuda(), out, R=shape[0], C=shape[1], ITERS=3, num_warps=warps)
    torch.testing.assert_close(out.cpu().double(), torch.from_numpy(chained_reference(x)), rtol=1e-4, atol=1e-3)


@inductor_tile.jit
def row_stats_kernel(x_ptr, out_ptr, n_rows, C: tl.constexpr, XBLOCK: tl.constexpr):
    # per row: log-sum-exp (a maximum, then a sum that needs it), mean and variance (two dependent sums),
    # and a sum of squares (a partner of the maximum): five reductions across warps one after another
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, C)[None, :]
    x = tl.load(x_ptr + rows * C + cols, mask=rows < n_rows, other=0).to(tl.float32)
    m = tl.max(x, 1)[:, None]
    squares = tl.sum(x * x, 1)[:, None]
    lse = m + tl.log(tl.sum(tl.exp(x - m), 1)[:, None])
    mean = tl.sum(x, 1)[:, None] / C
    var = tl.sum((x - mean) * (x - mean), 1)[:, None] / C
    tl.store(out_ptr + rows * 4 + tl.arange(0, 4)[None, :],
             tl.where(tl.arange(0, 4)[None, :] == 0, lse,
                      tl.where(tl.arange(0, 4)[None, :] == 1, mean,
                               tl.where(tl.arange(0, 4)[None, :] == 2, var, squares))), mask=rows < n_rows)


@pytest.mark.parametrize("C,XBLOCK,warps", [(1024, 8, 4), (4096, 1, 8), (2048, 2, 8), (256, 16, 4)])
def test_many_programs_no_race(C, XBLOCK, warps):
    n_rows = 8192 + 3
    g = torch.Generator().manual_seed(C)
    x = torch.randn(n_rows, C, generator=g).half().cuda()
    wide = x.double()
    want = torch.stack([torch.logsumexp(wide, 1), wide.mean(1), wide.var(1, unbiased=False), (wide ** 2).sum(1)], 1)
    for _ in range(5):  # a race shows in some runs only
        out = _poisoned(n_rows * 4, torch.float32)
        row_stats_kernel[(triton_cdiv(n_rows, XBLOCK),)](x, out, n_rows, C=C, XBLOCK=XBLOCK, num_warps=warps)
        torch.testing.assert_close(out.reshape(n_rows, 4).double(), want, rtol=1e-4, atol=1e-3)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


def test_layer_norm_backward_on_gpu():
    # BERT's layer-norm backward (768 columns in an [8, 1024] tile, 4 warps): both row sums cross warps together
    n = 4096 + 5
    g = torch.Generator().manual_seed(3)
    dy = torch.randn(n, 768, generator=g).half()
    w = torch.randn(768, generator=g)
    xhat = torch.randn(n, 768, generator=g)
    rstd = torch.rand(n, generator=g) + 0.5
    keep = torch.rand(n, 768, generator=g) > 0.1
    dx, dx_half = _poisoned(n * 768, torch.float32), _poisoned(n * 768, torch.float16)
    layer_norm_backward_kernel[(triton_cdiv(n, 8),)](dy.cuda(), w.cuda(), xhat.cuda(), rstd.cuda(), keep.cuda(), dx,
                                                     dx_half, n, XBLOCK=8, RBLOCK=1024, num_warps=4)
    dyw = dy.double() * w.double()
    want = rstd.double()[:, None] * (dyw * 768 - dyw.sum(1, keepdim=True) - xhat.double() *
                                     (dyw * xhat.double()).sum(1, keepdim=True))
    torch.testing.assert_close(dx.cpu().double().reshape(n, 768), want, rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(dx_half.cpu().double().reshape(n, 768), (want.half() * keep).double(), rtol=2e-3,
                               atol=2e-2)
