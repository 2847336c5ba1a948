"""float32 exp, tanh and erf on the CPU target (vector polynomials, to_llvm/targets/cpu_math.py).

Dense sweeps over the whole useful range and the special values, against float64 torch:
within a few ulp everywhere, exact at 0, +-inf, NaN, overflow and underflow.
"""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from suite import poison


@inductor_tile.jit
def exp_tanh_kernel(x_ptr, exp_ptr, tanh_ptr, erf_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(exp_ptr + offsets, tl.exp(x), mask=mask)
    tl.store(tanh_ptr + offsets, tl.extra.libdevice.tanh(x), mask=mask)
    tl.store(erf_ptr + offsets, tl.erf(x), mask=mask)


SPECIALS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 88.72, 88.73, 89.5, -87.3, -100.0, -103.9,
            -104.5, -200.0, 1e-30, -1e-30, 1e-8, 0.625, -0.625, 0.6249999, 9.0, -9.0, 20.0, -20.0,
            1.0, -1.0, 0.99999994, 3.9, -3.9, 4.0, 4.5]


def _run(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    e, t, f = (poison(torch.empty_like(x)) for _ in range(3))
    block = 256
    exp_tanh_kernel[(-(-x.numel() // block),)](x, e, t, f, x.numel(), BLOCK=block)
    return e, t, f


def _ulp_error(out: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """|out - ref| in units of the float32 spacing at ref (ref in float64)."""
    spacing = torch.finfo(torch.float32).tiny * 2.0 ** -23  # the subnormal step
    below = ref.abs().float()
    ulp = (below.nextafter(torch.tensor(float("inf"))).double() - below.double()).clamp_min(spacing)
    return (out.double() - ref).abs() / ulp


def test_exp_tanh_erf_within_a_few_ulp():
    gen = torch.Generator().manual_seed(11)
    x = torch.cat([torch.linspace(-104, 89, 200_000, dtype=torch.float64),
                   torch.randn(50_000, generator=gen, dtype=torch.float64) * 3,
                   torch.linspace(-2, 2, 50_000, dtype=torch.float64)]).float()
    e, t, f = _run(x)
    ref_e, ref_t = x.double().exp(), x.double().tanh()
    finite = ref_e < torch.finfo(torch.float32).max
    assert _ulp_error(e[finite], ref_e[finite]).max() <= 3
    assert torch.isinf(e[~finite]).all()
    assert _ulp_error(t, ref_t).max() <= 3
    assert _ulp_error(f, x.double().erf()).max() <= 3


def test_special_values():
    x = torch.tensor(SPECIALS, dtype=torch.float32)
    e, t, f = _run(x)
    ref_e, ref_t, ref_f = (getattr(x.double(), fn)().float() for fn in ("exp", "tanh", "erf"))
    torch.testing.assert_close(e, ref_e, rtol=4e-7, atol=0, equal_nan=True)
    torch.testing.assert_close(t, ref_t, rtol=4e-7, atol=0, equal_nan=True)
    torch.testing.assert_close(f, ref_f, rtol=4e-7, atol=0, equal_nan=True)
    assert torch.signbit(t[1]) and not torch.signbit(t[0])  # tanh(-0) = -0
    assert torch.signbit(f[1]) and not torch.signbit(f[0])
    assert e[x == float("-inf")].item() == 0 and e[x == float("inf")].item() == float("inf")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_inputs_compute_in_float32(dtype):
    x = (torch.randn(1000, generator=torch.Generator().manual_seed(5)) * 4).to(dtype)
    e, t, f = _run(x)
    torch.testing.assert_close(e, x.double().exp().to(dtype), rtol=1e-2, atol=0)
    torch.testing.assert_close(t, x.double().tanh().to(dtype), rtol=1e-2, atol=1e-3)
    torch.testing.assert_close(f, x.double().erf().to(dtype), rtol=1e-2, atol=1e-3)


def test_no_scalar_math_calls_in_the_cpu_code():
    x = torch.randn(512)
    _run(x)
    (compiled,) = [c for c in exp_tanh_kernel.cache.values() if "llir" in getattr(c, "asm", {})][:1] or [None]
    assert compiled is not None
    llir = compiled.asm["llir"]
    assert "expf" not in llir and "tanhf" not in llir and "erff" not in llir and "llvm.exp." not in llir
