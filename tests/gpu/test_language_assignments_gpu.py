"""Assigned numbers as scalar tiles and Triton's `>>` rule on an NVIDIA GPU: the kernels of
tests/test_language_assignments.py and tests/test_language_triton_rules.py with CUDA tensors,
against the same references."""

import pytest
import torch

from test_language_assignments import constant_condition_kernel, typed_constants_kernel, wide_sum_kernel
from test_language_triton_rules import N, WIDTH, _as_python, _random_ints, shift_right_kernel

pytestmark = pytest.mark.gpu


def test_int_assigned_then_widened_on_the_gpu(compiled, gen):
    lo = 2**35 + int(torch.randint(0, 1000, (1,), generator=gen))
    out = torch.full((1,), -1, dtype=torch.int64, device="cuda")
    wide_sum_kernel[(1,)](out, lo, lo + 17, 3)
    assert int(out[0]) == sum(range(lo, lo + 17, 3))


def test_assigned_numbers_have_triton_types_on_the_gpu(compiled, gen):
    n = 64
    x, y = torch.randn(n, generator=gen), torch.randn(3, generator=gen)
    x8 = torch.randint(-120, 120, (n,), generator=gen, dtype=torch.int8)
    out = torch.full((n,), float("nan"), dtype=torch.float64, device="cuda")
    out8 = torch.full((n,), -(2**31), dtype=torch.int32, device="cuda")
    typed_constants_kernel[(1,)](x.cuda(), y.cuda(), out, x8.cuda(), out8, N=n)
    expected = x.double() * 1e300 / 1e299 + float(y.double().sum()) + 1.0
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(out8.cpu(), x8.to(torch.int32) * 3, rtol=0, atol=0)


def test_constant_condition_on_the_gpu(compiled, gen):
    x = torch.randn(32, generator=gen)
    out = torch.full((32,), float("nan"), device="cuda")
    constant_condition_kernel[(1,)](x.cuda(), out, N=32)
    torch.testing.assert_close(out.cpu().double(), x.double() * 2, rtol=0, atol=0)


@pytest.mark.parametrize("x_dtype, y_dtype, z_dtype", [(torch.int32, torch.int32, torch.int32),
                                                       (torch.int16, torch.int32, torch.int32),
                                                       (torch.int64, torch.int64, torch.int64)])
def test_shift_right_on_the_gpu(compiled, x_dtype, y_dtype, z_dtype, gen):
    """Signed shifts (torch's CUDA copies of uint32/uint64 are not relied on here; the CPU test covers them)."""
    width = WIDTH[z_dtype]
    x = _random_ints(x_dtype, -(1 << (WIDTH[x_dtype] - 1)), (1 << (WIDTH[x_dtype] - 1)) - 1, gen)
    y = _random_ints(y_dtype, 0, width, gen)
    z = torch.full((N,), 0x5A, dtype=z_dtype, device="cuda")
    shift_right_kernel[(1,)](z, x.cuda(), y.cuda(), N=N)
    expected = [(xi >> yi) % (1 << width) for xi, yi in zip(_as_python(x), _as_python(y))]
    assert [zi % (1 << width) for zi in _as_python(z.cpu())] == expected
