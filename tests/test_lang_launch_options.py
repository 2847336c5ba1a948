"""Launch and decorator options as Triton has them: `@jit(repr=f)` names compiled kernels from their
specialization, a num_warps that is not a power of two is an AssertionError (and still a ValueError),
an int argument no 64-bit type holds is an OverflowError, `tl.extra.cuda.num_threads()` /
`num_warps()` are compile-time values of the launch, and a dtype's repr evaluates to the dtype.
Interpreter and CPU target; random inputs, outputs poisoned first."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl

MODES = ["interpret", "compiled"]


def _signature_name(spec) -> str:
    ones = "_".join(sorted(name for name, value in spec.constants.items() if value == 1))
    return f"scale_{spec.signature['x_ptr'].replace('*', 'p')}_{spec.signature['n']}_{ones or 'none'}"


@inductor_tile.jit(repr=_signature_name)
def scale_kernel(x_ptr, y_ptr, n, factor, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * factor, mask=mask)


@pytest.mark.parametrize("n, factor, expected", [
    (37, 3, "scale_pfp32_i32_none"),        # no argument equal to 1
    (37, 1, "scale_pfp32_i32_factor"),       # factor is compiled as the constant 1
    (1, 3, "scale_pfp32_constexpr_n"),       # so is n
    (2**40, 3, "scale_pfp32_i64_none"),      # n needs 64 bits
])
def test_repr_names_each_specialization(compiled, gen, n, factor, expected):
    x = torch.randn(64, generator=gen)
    y = torch.full((64,), float("nan"))
    kernel = scale_kernel[(1,)](x, y, n, factor, BLOCK=64)
    assert kernel.name == expected
    assert f"@{expected}" in kernel.asm["ttir"]
    count = min(n, 64)
    torch.testing.assert_close(y[:count].double(), x[:count].double() * factor)
    assert torch.isnan(y[count:]).all()


def test_repr_must_give_a_kernel_name(compiled):
    @inductor_tile.jit(repr=lambda spec: "not a name")
    def copy(x_ptr, y_ptr):
        tl.store(y_ptr, tl.load(x_ptr))

    with pytest.raises(ValueError, match=r"repr=.*must return an identifier.*'not a name'"):
        copy[(1,)](torch.randn(1), torch.empty(1))


@inductor_tile.jit
def empty_kernel(x_ptr):
    pass


@pytest.mark.parametrize("mode", MODES)
def test_num_warps_not_a_power_of_two(mode, request):
    request.getfixturevalue(mode)
    x = torch.empty(4)
    for error in (AssertionError, ValueError):  # Triton's type, and ours before
        with pytest.raises(error, match=r"num_warps must be a power of 2, got 6"):
            empty_kernel[(1,)](x, num_warps=6)
    empty_kernel[(1,)](x, num_warps=8)


@inductor_tile.jit
def add_scalar_kernel(x_ptr, y_ptr, value):
    tl.store(y_ptr, tl.load(x_ptr) + value)


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1])
def test_an_int_argument_beyond_64_bits_overflows(compiled, value):
    with pytest.raises(OverflowError, match=rf"argument 'value': the integer {value} does not fit in 64 bits"):
        add_scalar_kernel[(1,)](torch.zeros(1, dtype=torch.int64), torch.zeros(1, dtype=torch.int64), value)


@pytest.mark.parametrize("value", [2**64 - 1, -(2**63)])
def test_the_64_bit_extremes_launch(compiled, value):
    x = torch.zeros(1, dtype=torch.uint64 if value > 0 else torch.int64)
    y = torch.full((1,), 5, dtype=x.dtype)
    add_scalar_kernel[(1,)](x, y, value)
    assert int(y.view(torch.int64)[0]) % 2**64 == value % 2**64


@inductor_tile.jit
def geometry_kernel(out_ptr, x_ptr):
    threads: tl.constexpr = tl.extra.cuda.num_threads()
    warps: tl.constexpr = tl.extra.cuda.num_warps()
    offsets = tl.arange(0, threads)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + warps)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("num_warps", [1, 4, 8])
def test_cuda_launch_geometry_is_a_compile_time_value(mode, num_warps, request, gen):
    request.getfixturevalue(mode)
    threads = 32 * num_warps
    x = torch.randint(-1000, 1000, (512,), generator=gen, dtype=torch.int32)
    out = torch.full((512,), -7, dtype=torch.int32)
    geometry_kernel[(1,)](out, x, num_warps=num_warps)
    assert torch.equal(out[:threads], x[:threads] + num_warps)
    assert (out[threads:] == -7).all()  # the tile has exactly num_threads elements


def test_dtype_repr_evaluates_to_the_dtype():
    import inductor_tile.language  # noqa: F401  (what the repr names)

    for dtype in (tl.int1, tl.int8, tl.uint16, tl.int64, tl.float16, tl.bfloat16, tl.float32, tl.float64):
        assert repr(dtype).startswith("inductor_tile.language.")
        assert eval(repr(dtype)) is dtype
    assert eval(repr(tl.pointer_type(tl.float16))) is tl.pointer_type(tl.float16)
