"""Masked global loads and stores on an NVIDIA GPU (one predicated ld/st.global each): the kernels of
tests/test_masked_access_ptx_sim.py launched over several programs, sizes that are and are not multiples
of 16 (the launcher specializes on that: vector runs or one element per access), against torch in
float64 with NaN-poisoned outputs (masked lanes of a load give `other`, masked stores write nothing)."""

from __future__ import annotations

import pytest
import torch

from test_masked_access_ptx_sim import (DTYPES, broadcast_other_kernel, broadcast_tail_kernel, masked_gather_kernel,
                                        masked_scalar_kernel, masked_tail_kernel)

pytestmark = pytest.mark.gpu


def _random(dtype: torch.dtype, n: int, gen: torch.Generator) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(n, generator=gen).to(dtype)
    return torch.randint(-100, 100, (n,), generator=gen).to(dtype)


def _poisoned(dtype: torch.dtype, n: int) -> torch.Tensor:
    return torch.full((n,), float("nan") if dtype.is_floating_point else 111, dtype=dtype)


def _same(got: torch.Tensor, want: torch.Tensor) -> None:
    torch.testing.assert_close(got.cpu().double(), want.double(), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("block, warps", [(256, 4), (1024, 8)])
def test_masked_gather_and_scatter(name, block, warps):
    dtype, gen = DTYPES[name], torch.Generator().manual_seed(11)
    x = _random(dtype, block, gen)
    index = torch.randperm(block, generator=gen).to(torch.int32)
    keep = torch.rand(block, generator=gen) < 0.5
    out, scattered = _poisoned(dtype, block).cuda(), _poisoned(dtype, block).cuda()
    masked_gather_kernel[(1,)](x.cuda(), index.cuda(), keep.cuda(), out, scattered, OTHER=-7, BLOCK=block,
                               num_warps=warps)
    want_scattered = _poisoned(dtype, block).double()
    want_scattered[index.long()[~keep]] = x.double()[~keep]
    _same(out, torch.where(keep, x.double()[index.long()], -7.0))
    _same(scattered, want_scattered)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("n, m", [(4000, 8000), (3997, 8001), (8001, 3997), (16, 32), (5, 3)])
def test_masked_tail(name, n, m):
    dtype, gen, block = DTYPES[name], torch.Generator().manual_seed(12), 1024
    size = 9 * block
    x = _random(dtype, size, gen)
    out = _poisoned(dtype, size).cuda()
    masked_tail_kernel[(size // block,)](x.cuda(), out, n, m, OTHER=3, BLOCK=block, num_warps=4)
    want = _poisoned(dtype, size).double()
    want[:m] = 3.0
    want[:min(n, m)] = x.double()[:min(n, m)]
    _same(out, want)


@pytest.mark.parametrize("name", ["fp16", "bf16", "fp32", "fp64"])
@pytest.mark.parametrize("n", [4096, 4000, 3997, 1])
def test_broadcast_gather_under_a_mask_run(name, n):
    dtype, gen, block = DTYPES[name], torch.Generator().manual_seed(13), 1024
    size = 4 * block
    x, y = _random(dtype, size, gen), _random(dtype, size // 4, gen)
    out = _poisoned(dtype, 2 * size).cuda()
    broadcast_tail_kernel[(size // block,)](x.cuda(), y.cuda(), out, n, OTHER=5, BLOCK=block, num_warps=4)
    want = _poisoned(dtype, 2 * size).double()
    want[0:2 * n:2], want[1:2 * n:2] = x.double()[:n], y.double()[torch.arange(n) // 4]
    _same(out, want)


@pytest.mark.parametrize("name", ["fp16", "fp32"])
@pytest.mark.parametrize("n", [4096, 2000, 1999])
def test_broadcast_gather_keeps_each_slots_other(name, n):
    dtype, gen, block = DTYPES[name], torch.Generator().manual_seed(15), 1024
    size = 4 * block
    x, y = _random(dtype, size, gen), _random(dtype, size // 4, gen)
    out = _poisoned(dtype, size).cuda()
    broadcast_other_kernel[(size // block,)](x.cuda(), y.cuda(), out, n, BLOCK=block, num_warps=4)
    index = torch.arange(size)
    _same(out, torch.where(index < n, y.double()[index // 4], x.double()))


@pytest.mark.parametrize("dtype", [torch.bool, torch.float16, torch.float64], ids=str)
@pytest.mark.parametrize("n, m", [(9, 9), (3, 9), (9, 3), (3, 3)])
def test_masked_scalar(dtype, n, m):
    gen = torch.Generator().manual_seed(14)
    x = torch.rand(16, generator=gen) < 0.5 if dtype == torch.bool else _random(dtype, 16, gen)
    x[5] = False if dtype == torch.bool else 42
    # a bool output is read back as its byte: 0x5A until stored
    out = torch.full((1,), 0x5A, dtype=torch.uint8).cuda() if dtype == torch.bool else _poisoned(dtype, 1).cuda()
    target = out.view(torch.bool) if dtype == torch.bool else out
    masked_scalar_kernel[(1,)](x.cuda(), target, n, m, OTHER=1, num_warps=4)
    if dtype == torch.bool:
        assert int(out.cpu()[0]) == (0x5A if m <= 5 else int(bool(x[5])) if n > 5 else 1)
    else:
        want = _poisoned(dtype, 1).double() if m <= 5 else torch.tensor([x.double()[5] if n > 5 else 1.0])
        _same(out, want)
