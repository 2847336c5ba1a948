"""Philox random numbers, tl.umulhi and the prod/xor_sum reductions on an NVIDIA GPU, and the
torch.compile backend's random ops (dropout, rand_like) and torch.prod on CUDA tensors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from inductor_tile import metrics
from inductor_tile.backend import tile_backend
from test_random import (
    BLOCK, rand_reference, randint4x_kernel, randint4x_reference, random_kernel, randn_reference, triton_cdiv,
    umulhi_kernel,
)
from test_reduce_kinds import reduce_kernel

pytestmark = pytest.mark.gpu


def test_randint4x_on_gpu_matches_reference():
    gen = torch.Generator().manual_seed(0)
    offsets = torch.randint(-(2**62), 2**62, (5000,), generator=gen, dtype=torch.int64)
    n = offsets.numel()
    for seed in (0, -1, 2**40 + 77):
        out = torch.full((4 * n,), 0x5A5A5A5A, dtype=torch.int32, device="cuda")  # must be overwritten
        randint4x_kernel[(triton_cdiv(n, BLOCK),)](seed, offsets.cuda(), out, n, BLOCK=BLOCK)
        got = out.cpu().view(torch.uint32).numpy().reshape(4, n)
        assert np.array_equal(got, randint4x_reference(seed, offsets.numpy())), seed


@pytest.mark.parametrize("block", [256, 1024])
def test_rand_and_randn_on_gpu(block):
    n, seed = 1 << 20, 99
    words = randint4x_reference(seed, np.arange(n, dtype=np.int32))
    uniform = torch.full((n,), float("nan"), device="cuda")
    random_kernel[(triton_cdiv(n, block),)](seed, uniform, n, KIND="rand", BLOCK=block, num_warps=4)
    assert np.array_equal(uniform.cpu().numpy(), rand_reference(words[0]))
    normal = torch.full((n,), float("nan"), device="cuda")
    random_kernel[(triton_cdiv(n, block),)](seed, normal, n, KIND="randn", BLOCK=block, num_warps=4)
    np.testing.assert_allclose(normal.cpu().double().numpy(), randn_reference(words[0], words[1]),
                               rtol=1e-5, atol=1e-5)  # GPU log/cos: a few ulp


@pytest.mark.parametrize("dtype, storage", [("uint32", torch.int32), ("int64", torch.int64)])
def test_umulhi_on_gpu(dtype, storage):
    import inductor_tile.language as tl

    gen = torch.Generator().manual_seed(1)
    width = torch.iinfo(storage).bits
    x = torch.randint(torch.iinfo(storage).min, torch.iinfo(storage).max, (1000,), generator=gen, dtype=storage)
    y = torch.randint(torch.iinfo(storage).min, torch.iinfo(storage).max, (1000,), generator=gen, dtype=storage)
    out = torch.zeros_like(x).cuda()
    umulhi_kernel[(8,)](x.cuda(), y.cuda(), out, 1000, DTYPE=getattr(tl, dtype), BLOCK=128)
    modulus = 1 << width
    expected = [((a % modulus) * (b % modulus)) >> width for a, b in zip(x.tolist(), y.tolist())]
    assert [v % modulus for v in out.cpu().tolist()] == expected


@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_prod_and_xor_sum_across_warps_on_gpu(num_warps):
    gen = torch.Generator().manual_seed(2)
    rows, cols = 4, 1024
    x = 1.0 + 0.001 * torch.randn(rows, cols, generator=gen, dtype=torch.float64)
    outs = [torch.full((n,), float("nan"), dtype=torch.float64, device="cuda") for n in (rows, cols, 1)]
    reduce_kernel[(1,)](x.cuda(), *outs, R=rows, C=cols, KIND="prod", num_warps=num_warps)
    torch.testing.assert_close(outs[0].cpu(), x.prod(1), rtol=1e-12, atol=0)
    torch.testing.assert_close(outs[1].cpu(), x.prod(0), rtol=1e-12, atol=0)
    torch.testing.assert_close(outs[2].cpu(), x.prod().reshape(1), rtol=1e-12, atol=0)
    ints = torch.randint(-(2**31), 2**31 - 1, (rows, cols), generator=gen, dtype=torch.int32)
    outs = [torch.full((n,), 7, dtype=torch.int32, device="cuda") for n in (rows, cols, 1)]
    reduce_kernel[(1,)](ints.cuda(), *outs, R=rows, C=cols, KIND="xor_sum", num_warps=num_warps)
    assert torch.equal(outs[0].cpu(), _xor(ints, 1)) and torch.equal(outs[1].cpu(), _xor(ints, 0))
    assert outs[2].item() == _xor(ints.flatten(), 0).item()


def _xor(t: torch.Tensor, dim: int) -> torch.Tensor:
    rows = t.unbind(dim)
    result = rows[0].clone()
    for row in rows[1:]:
        result ^= row
    return result


def _compile(fn):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_dropout_on_gpu(dtype):
    p = 0.2
    x = torch.randn(512, 1024, device="cuda", dtype=dtype)
    x = torch.where(x == 0, torch.ones_like(x), x).requires_grad_(True)
    run = _compile(lambda t: torch.nn.functional.dropout(t, p=p, training=True))
    out = run(x)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    dropped = out == 0
    n = x.numel()
    assert abs(dropped.double().mean().item() - p) < 5 * math.sqrt(p * (1 - p) / n)
    kept = ~dropped
    tol = 1e-6 if dtype == torch.float32 else 2e-3
    # fp16 subnormals (|x| < 6.1e-5, spaced 6e-8) lose most relative precision when rounded: an absolute bound
    atol = 0 if dtype == torch.float32 else 1.2e-7
    torch.testing.assert_close(out[kept].double(), x[kept].detach().double() / (1 - p), rtol=tol, atol=atol)
    out.sum().backward()
    assert torch.equal(x.grad == 0, dropped)
    assert not torch.equal(run(x.detach()) == 0, dropped)


def test_rand_like_and_prod_on_gpu():
    run = _compile(lambda t: (torch.rand_like(t), torch.randn_like(t)))
    u, z = run(torch.empty(1024, 1024, device="cuda"))
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    n = u.numel()
    assert u.min().item() >= 0 and u.max().item() < 1
    assert abs(u.double().mean().item() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    assert abs(z.double().mean().item()) < 5 / math.sqrt(n) and abs(z.double().var().item() - 1) < 5 * math.sqrt(2 / n)
    x = 1.0 + 0.01 * torch.randn(64, 3000, device="cuda", dtype=torch.float64)
    prod = _compile(lambda t: (torch.prod(t, 1), torch.prod(t, 0)))(x)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    torch.testing.assert_close(prod[0], x.prod(1), rtol=1e-12, atol=0)
    torch.testing.assert_close(prod[1], x.prod(0), rtol=1e-12, atol=0)
