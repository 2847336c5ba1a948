"""Ops that used to send their node to Inductor's own kernels (issue 23: no fallback from ordinary
ops), each compiled with the tile backend into a NaN-poisoned output and compared with a float64
(or exact) reference and with eager; every test asserts that no node fell back."""

import math

import pytest
import torch
import torch.nn.functional as F

from inductor_tile import metrics
from inductor_tile.backend import tile_backend
from inductor_tile.kernel_compiler.runtime.device_assert import DeviceAssertionError


def _compile(fn):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend)


def _assert_all_ours():
    assert metrics.generated_kernels >= 1
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons


def _poisoned(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype)


# ===--------------------------------------------------------------------------===
# ldexp: x * 2**n rounded once
# ===--------------------------------------------------------------------------===
def _ldexp_exact(x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    """math.ldexp per element in float64 (exact for every float32 input) with eager's int32 exponent,
    rounded once to x's dtype (fp16/bf16 through float32, exact there)."""
    def int32(v):
        return (v + 2**31) % 2**32 - 2**31

    def one(a, b):
        try:
            return math.ldexp(a, int32(b))
        except OverflowError:
            return math.copysign(math.inf, a)

    values = [one(a, b) for a, b in zip(x.double().flatten().tolist(), n.flatten().tolist())]
    out = torch.tensor(values, dtype=torch.float64).view(x.shape)
    return out.to(torch.float32).to(x.dtype) if x.dtype in (torch.float16, torch.bfloat16) else out.to(x.dtype)


def _ldexp_inputs(dtype, n_dtype, count=300):
    g = torch.Generator().manual_seed(23)
    x = torch.randn(count, generator=g, dtype=torch.float64) * 10
    x[:6] = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.5])
    info = torch.iinfo(n_dtype)
    if n_dtype == torch.int64:  # exponents far past every range, and ones that wrap as int32
        n = torch.randint(-1200, 1200, (count,), generator=g)
        n[6:12] = torch.tensor([2**32 + 3, -2**31, 2**31 - 1, -2**31 - 5, 3000, -3000])
    else:
        n = torch.randint(max(info.min, -200), min(info.max, 200) + 1, (count,), generator=g, dtype=n_dtype)
    return x.to(dtype), n


@pytest.mark.parametrize("dtype,n_dtype", [(torch.float64, torch.int64), (torch.float32, torch.int64),
                                           (torch.float32, torch.int32), (torch.float16, torch.int8),
                                           (torch.bfloat16, torch.uint8), (torch.float64, torch.int16)])
def test_ldexp_is_rounded_once(dtype, n_dtype):
    x, n = _ldexp_inputs(dtype, n_dtype)
    if dtype in (torch.float32, torch.float64):  # results near the subnormal boundary: one rounding only
        smallest_normal_exponent, mantissa_bits = (-125, 23) if dtype == torch.float32 else (-1021, 52)
        tiny_exponent = smallest_normal_exponent - mantissa_bits // 2  # frexp's exponents
        n[12:40] = (tiny_exponent - torch.frexp(x[12:40])[1]).to(n_dtype)
        # results in range through powers of two that are not: 2**n itself over- or underflows
        big = 100 if dtype == torch.float32 else 1000
        x[40:44] = torch.tensor([1.25 * 2.0**big, -1.75 * 2.0**big, 1.5 * 2.0**-big, -2.0**-big]).to(dtype)
        n[40:44] = torch.tensor([-2 * big, -2 * big - 3, 2 * big, 2 * big + 5]).to(n_dtype)
    out = _poisoned(x.shape, dtype)

    def fn(x, n, out):
        out.copy_(torch.ldexp(x, n))

    _compile(fn)(x, n, out)
    _assert_all_ours()
    want = _ldexp_exact(x, n)
    torch.testing.assert_close(out, want, rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(out, torch.ldexp(x, n), rtol=0, atol=0, equal_nan=True)


# ===--------------------------------------------------------------------------===
# device_assert_async: aten._assert_async (one_hot's class check)
# ===--------------------------------------------------------------------------===
def one_hot_weighted(idx, w, out):
    out.copy_(F.one_hot(idx, 7).to(torch.float64) * w)


def test_one_hot_checks_its_classes_with_a_device_assert():
    g = torch.Generator().manual_seed(5)
    idx = torch.randint(0, 7, (5, 9), generator=g)
    w = torch.randn(5, 9, 7, generator=g, dtype=torch.float64)
    out = _poisoned((5, 9, 7), torch.float64)
    compiled = _compile(one_hot_weighted)
    compiled(idx, w, out)
    _assert_all_ours()
    assert any("tl.device_assert(" in src for src in metrics.kernel_sources.values())
    want = torch.zeros(5, 9, 7, dtype=torch.float64).scatter_(2, idx.unsqueeze(-1), 1.0) * w
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    bad = idx.clone()
    bad[3, 4] = 7  # eager raises "Class values must be smaller than num_classes"
    with pytest.raises(DeviceAssertionError, match="num_classes"):
        compiled(bad, w, _poisoned((5, 9, 7), torch.float64))


def test_an_op_without_a_rule_says_where_rules_live():
    from inductor_tile.codegen.common import Unsupported
    from inductor_tile.codegen.ops import TileOps

    class Kernel:
        pass

    with pytest.raises(Unsupported, match=r"op made_up_op \(Inductor.s ops.made_up_op has no rule in codegen/ops.py\)"):
        TileOps(Kernel()).made_up_op
