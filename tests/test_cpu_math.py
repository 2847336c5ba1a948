"""float32 exp, tanh, erf, sin, cos and log on the CPU target (vector polynomials, to_llvm/targets/cpu_math.py).

Dense sweeps over the whole useful range and the special values, against float64 torch:
within a few ulp everywhere, exact at 0, +-inf, NaN, overflow and underflow.
"""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from filecheck_tool import filecheck
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


@inductor_tile.jit
def sin_cos_log_kernel(x_ptr, sin_ptr, cos_ptr, log_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(sin_ptr + offsets, tl.sin(x), mask=mask)
    tl.store(cos_ptr + offsets, tl.cos(x), mask=mask)
    tl.store(log_ptr + offsets, tl.log(x), mask=mask)


def _run_trig(x: torch.Tensor, block: int = 256) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    s, c, g = (poison(torch.empty_like(x)) for _ in range(3))
    sin_cos_log_kernel[(-(-x.numel() // block),)](x, s, c, g, x.numel(), BLOCK=block)
    return s, c, g


def _next_to_multiples_of_half_pi(count: int) -> torch.Tensor:
    """The float32 values nearest k pi/2 and their neighbours: where the reduction must be exact."""
    near = (torch.arange(1, count, dtype=torch.float64) * torch.pi / 2).float()
    up, down = near.nextafter(torch.tensor(float("inf"))), near.nextafter(torch.tensor(float("-inf")))
    return torch.cat([near, up, down, -near])


def test_sin_cos_log_within_two_ulp():
    gen = torch.Generator().manual_seed(13)
    x = torch.cat([torch.linspace(-20, 20, 200_000, dtype=torch.float64).float(),
                   torch.randn(50_000, generator=gen) * 1e4,
                   (torch.rand(20_000, generator=gen) - 0.5) * 2 ** 21,  # some beyond the vector reduction
                   _next_to_multiples_of_half_pi(300_000)])
    s, c, _ = _run_trig(x)
    assert _ulp_error(s, x.double().sin()).max() <= 2
    assert _ulp_error(c, x.double().cos()).max() <= 2
    positive = torch.cat([torch.rand(100_000, generator=gen) * 4,  # around 1: log near 0
                          torch.exp2((torch.rand(100_000, generator=gen) - 0.5) * 250),
                          torch.tensor([1e-40, 3e-45, 1.17e-38, 2 ** -126, 3.4e38, 0.70710677, 1.4142135])])
    _, _, g = _run_trig(positive)
    assert _ulp_error(g, positive.double().log()).max() <= 2


def test_sin_cos_log_special_values():
    x = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), -1.0, -1e-40, 1.0, 2 ** 20, 2 ** 20 + 0.5,
                      -(2 ** 21), 1e30, 1e-30, -1e-30], dtype=torch.float32)
    s, c, g = _run_trig(x, block=16)  # also a vector narrower than the library loop's
    for got, fn in ((s, "sin"), (c, "cos"), (g, "log")):
        torch.testing.assert_close(got, getattr(x.double(), fn)().float(), rtol=2.5e-7, atol=0, equal_nan=True)
    assert torch.signbit(s[1]) and not torch.signbit(s[0])  # sin(-0) = -0
    assert g[0].item() == g[1].item() == float("-inf") and g[2].item() == float("inf")
    assert g[3:7].isnan().all()  # log of -inf, NaN and negatives


def test_sin_cos_call_the_library_only_beyond_the_reduction(tmp_path):
    text = inductor_tile.compile(sin_cos_log_kernel, {"x_ptr": "*fp32", "sin_ptr": "*fp32", "cos_ptr": "*fp32",
                                                      "log_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64},
                                 target="cpu").asm["llir"]
    assert "logf" not in text and "llvm.log." not in text and "llvm.sin." not in text and "llvm.cos." not in text
    filecheck(text, """
CHECK-LABEL: loop:
CHECK-NOT: @sinf
CHECK: fcmp ugt <64 x float> {{.*}}, splat (float 0x4130000000000000)
CHECK-NOT: @sinf
CHECK: br i1
CHECK: element_loop
CHECK: call float @sinf
CHECK: element_loop
CHECK: call float @cosf
""", tmp_path)


def test_math_on_a_wide_tile_loops_over_register_wide_slices(tmp_path):
    """erf on 256 elements: one copy of the polynomial on a register's worth in a loop through the stack,
    not 16 interleaved copies (which spilled: 1469 instructions, 1.7x torch's time; now ~1.35x)."""
    text = inductor_tile.compile(exp_tanh_kernel, {"x_ptr": "*fp32", "exp_ptr": "*fp32", "tanh_ptr": "*fp32",
                                                   "erf_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256},
                                 target="cpu").asm["llir"]
    filecheck(text, """
CHECK-LABEL: loop:
CHECK: store <256 x float> [[X:%.*]], ptr [[SLOT:%.*]], align 1
CHECK: [[LOOP:chunk_loop[0-9.i]*]]:
CHECK: [[I:%.*]] = phi i64 [ 0, {{.*}} ], [ [[NEXT:%.*]], %[[LOOP]] ]
CHECK: load <[[W:(4|8|16)]] x float>
CHECK: fmul {{.*}}<[[W]] x float>
CHECK: store <[[W]] x float>
CHECK: [[NEXT]] = add {{.*}}i64 [[I]], [[W]]
CHECK: br i1 {{.*}}, label %[[LOOP]], label %chunk_done
""", tmp_path)
    assert "fmul contract <256 x float>" not in text and "fdiv <256 x float>" not in text


def test_no_scalar_math_calls_in_the_cpu_code():
    x = torch.randn(512)
    _run(x)
    (compiled,) = [c for c in exp_tanh_kernel.cache.values() if "llir" in getattr(c, "asm", {})][:1] or [None]
    assert compiled is not None
    llir = compiled.asm["llir"]
    assert "expf" not in llir and "tanhf" not in llir and "erff" not in llir and "llvm.exp." not in llir
