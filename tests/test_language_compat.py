"""Triton-compatibility details found by running Triton's language tests (tools/triton_conformance.py):
tensor methods, compile-time isinstance/hasattr/`is None`, one-element blocks as scalars, dtype == constexpr(dtype),
expand_dims with several axes, kernels without arguments, out-of-range literals, clamp's NaN policy."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError


@inductor_tile.jit
def compat_kernel(x_ptr, out_ptr):
    a = tl.arange(0, 64).view(2, 4, 8)
    tl.static_assert(isinstance(a, tl.tensor) and hasattr(a, "dtype"))
    tl.static_assert(a.dtype == tl.constexpr(tl.int32))
    tl.static_assert(tl.expand_dims(tl.arange(0, 4), (-3, 0, -1)).shape == [1, 1, 4, 1])
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(out_ptr + tl.arange(0, 8), a.max(axis=2).reshape(8).to(tl.float32) + x.exp())
    flag = tl.full((1,), 1, tl.int32)
    if (flag is not None) and flag.reshape([]):  # identity with None; a one-element block as a scalar
        tl.store(out_ptr + 8 + tl.arange(0, 8), tl.clamp(x, -0.5, 0.5))
    tl.store(out_ptr + 16 + tl.arange(0, 8), tl.clamp(x, -0.5, 0.5, propagate_nan=tl.PropagateNan.ALL))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_compat_details(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(8, generator=gen, dtype=torch.float64)
    x[3] = float("nan")
    out = torch.full((24,), float("nan"), dtype=torch.float64)
    compat_kernel[(1,)](x, out, num_ctas=1)
    maxima = torch.arange(64).view(2, 4, 8).amax(2).reshape(8).double()
    torch.testing.assert_close(out[:8], maxima + x.exp(), rtol=1e-12, atol=0, equal_nan=True)
    clamped = x.clamp(-0.5, 0.5)
    assert torch.equal(out[8:16].nan_to_num(7.0), torch.where(x.isnan(), -0.5, clamped))
    assert torch.equal(out[16:].isnan(), x.isnan())


def test_kernel_without_arguments_and_literal_range(compiled):
    @inductor_tile.jit
    def no_arguments():
        tl.full((), 32, dtype=tl.int32)

    no_arguments[(1,)]()

    @inductor_tile.jit
    def overflow(x_ptr):
        tl.store(x_ptr, tl.load(x_ptr) + 0xFFFFFFFFFFFF)

    with pytest.raises(CompilationError, match="out of range for int32"):
        overflow[(1,)](torch.zeros(1, dtype=torch.int32))
