"""Python numbers assigned in a kernel are scalar tiles (Triton's rule): `acc = 0` is an int32
scalar with `.to` and `.dtype`, `v = 1e300` is fp64 (fp32 cannot hold it), `c = 3` promotes an
int8 block to int32, and `n: tl.constexpr = 4` stays a compile-time number. Interpreter and CPU
target; random inputs, outputs poisoned first, references computed in Python / float64."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError

MODES = ["interpret", "compiled"]


@inductor_tile.jit
def wide_sum_kernel(out_ptr, lo, hi, step: tl.constexpr):
    acc = 0
    acc = acc.to(tl.int64)  # the Python int is an int32 scalar tile, converted before the loop
    for i in range(lo, hi, step):
        acc += i
    tl.store(out_ptr, acc)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("step", [1, 3])
def test_int_assigned_then_widened_for_an_int64_loop(mode, step, request, gen):
    request.getfixturevalue(mode)
    lo = 2**35 + int(torch.randint(0, 1000, (1,), generator=gen))
    hi = lo + 17
    out = torch.full((1,), -1, dtype=torch.int64)
    wide_sum_kernel[(1,)](out, lo, hi, step)
    assert int(out[0]) == sum(range(lo, hi, step))


@inductor_tile.jit
def typed_constants_kernel(x_ptr, y_ptr, out_ptr, x8_ptr, out8_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    one = 1
    ones = tl.full([N], one, dtype=one.dtype)  # `one` has a dtype: int32
    huge = 1e300  # beyond fp32: an fp64 scalar
    x = tl.load(x_ptr + offsets)  # fp32
    total = 0.0
    for i in range(0, 3):
        total += tl.load(y_ptr + i)  # an fp32 scalar carried through the loop
    tl.store(out_ptr + offsets, (x * huge) / 1e299 + total + ones)
    c = 3
    tl.store(out8_ptr + offsets, tl.load(x8_ptr + offsets) * c)  # int8 * int32 scalar -> int32


@pytest.mark.parametrize("mode", MODES)
def test_assigned_numbers_have_triton_types(mode, request, gen):
    request.getfixturevalue(mode)
    n = 64
    x = torch.randn(n, generator=gen)
    y = torch.randn(3, generator=gen)
    x8 = torch.randint(-120, 120, (n,), generator=gen, dtype=torch.int8)
    out = torch.full((n,), float("nan"), dtype=torch.float64)
    out8 = torch.full((n,), -(2**31), dtype=torch.int32)
    typed_constants_kernel[(1,)](x, y, out, x8, out8, N=n)
    total = float(y[0]) + float(y[1]) + float(y[2])
    expected = x.double() * 1e300 / 1e299 + total + 1.0
    torch.testing.assert_close(out, expected, rtol=1e-6, atol=1e-6)  # total sums in fp32
    torch.testing.assert_close(out8, x8.to(torch.int32) * 3, rtol=0, atol=0)


@inductor_tile.jit
def constexpr_number_kernel(out_ptr):
    n: tl.constexpr = 16
    offsets = tl.arange(0, n)
    tl.store(out_ptr + offsets, offsets * 2)


@pytest.mark.parametrize("mode", MODES)
def test_constexpr_annotation_keeps_a_python_number(mode, request):
    request.getfixturevalue(mode)
    out = torch.full((16,), -1, dtype=torch.int32)
    constexpr_number_kernel[(1,)](out)
    torch.testing.assert_close(out, torch.arange(16, dtype=torch.int32) * 2)


@inductor_tile.jit
def assigned_bound_kernel(out_ptr):
    n = 16
    offsets = tl.arange(0, n)
    tl.store(out_ptr + offsets, offsets)


def test_an_assigned_number_is_no_longer_a_compile_time_value(compiled):
    with pytest.raises(CompilationError, match=r"tl.arange\(0, n\)"):
        assigned_bound_kernel[(1,)](torch.empty(16, dtype=torch.int32))


@inductor_tile.jit
def doubled_if_asked(x):
    double = True
    if double:  # a name assigned a constant: the branch is chosen at compile time, so it may return
        return x * 2
    return x


@inductor_tile.jit
def constant_condition_kernel(x_ptr, out_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(out_ptr + offsets, doubled_if_asked(tl.load(x_ptr + offsets)))


@pytest.mark.parametrize("mode", MODES)
def test_if_on_an_assigned_constant_is_decided_at_compile_time(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(32, generator=gen)
    out = torch.full((32,), float("nan"))
    constant_condition_kernel[(1,)](x, out, N=32)
    torch.testing.assert_close(out.double(), x.double() * 2, rtol=0, atol=0)
