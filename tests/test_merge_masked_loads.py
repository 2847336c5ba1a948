"""merge-masked-loads end to end: kernels that load the same addresses under masks differing by conjuncts (as
Inductor's index-heavy kernels do) compute what they computed before, with one load per pair, on the CPU
target; a store between the loads keeps both. Random inputs, NaN-poisoned outputs, torch in float64."""

from __future__ import annotations

import torch

import inductor_tile
import inductor_tile.language as tl

N = 256


@inductor_tile.jit
def masked_pairs_kernel(x_ptr, out_ptr, n, N: tl.constexpr):
    i = tl.arange(0, N)
    m = i < n
    odd = (i % 2) == 1
    wide = tl.load(x_ptr + i, mask=m, other=1.5)
    narrow = tl.load(x_ptr + i, mask=m & odd, other=1.5)
    third = (i % 3) == 0
    narrow_first = tl.load(x_ptr + 2 * i, mask=m & third & odd, other=-2.0)
    wide_second = tl.load(x_ptr + 2 * i, mask=m & odd, other=-2.0)
    tl.store(out_ptr + i, wide + 3.0 * narrow + 5.0 * narrow_first + 7.0 * wide_second, mask=m)


@inductor_tile.jit
def store_between_kernel(x_ptr, out_ptr, n, N: tl.constexpr):
    i = tl.arange(0, N)
    m = i < n
    before = tl.load(x_ptr + i, mask=m, other=0.0)
    tl.store(x_ptr + i, before * 2.0, mask=m)
    after = tl.load(x_ptr + i, mask=m & ((i % 2) == 0), other=0.0)
    tl.store(out_ptr + i, before + after, mask=m)


def _masked_pairs_reference(x: torch.Tensor, n: int) -> torch.Tensor:
    i = torch.arange(N)
    m, odd, third = i < n, i % 2 == 1, i % 3 == 0
    xd = x.double()
    wide = torch.where(m, xd[:N], 1.5)
    narrow = torch.where(m & odd, xd[:N], 1.5)
    narrow_first = torch.where(m & third & odd, xd[(2 * i).clamp(max=2 * N - 1)], -2.0)
    wide_second = torch.where(m & odd, xd[(2 * i).clamp(max=2 * N - 1)], -2.0)
    return wide + 3.0 * narrow + 5.0 * narrow_first + 7.0 * wide_second


def test_pairs_load_once_and_compute_the_same():
    ttir = inductor_tile.compile(masked_pairs_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                                 constexprs={"N": N}, target="cpu").asm["ttir"]
    assert ttir.count("tt.load") == 2, ttir
    gen = torch.Generator().manual_seed(3)
    for n in (N, 201, 0):
        x = torch.randn(2 * N, generator=gen)
        out = torch.full((N,), float("nan"))
        masked_pairs_kernel[(1,)](x, out, n, N=N)
        want = _masked_pairs_reference(x, n)
        torch.testing.assert_close(out[:n].double(), want[:n], rtol=1e-6, atol=1e-6)
        assert out[n:].isnan().all()


def test_a_store_between_keeps_both_loads():
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(N, generator=gen)
    original = x.double().clone()
    out = torch.full((N,), float("nan"))
    store_between_kernel[(1,)](x, out, 200, N=N)
    i = torch.arange(N)
    want = original + torch.where(i % 2 == 0, 2.0 * original, 0.0)
    torch.testing.assert_close(out[:200].double(), want[:200], rtol=1e-6, atol=1e-6)
    assert out[200:].isnan().all()
