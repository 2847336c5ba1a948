"""`x.to(dtype, fp_downcast_rounding=...)` and `tl.cast(..., fp_downcast_rounding=...)`: narrowing float
conversions rounded to nearest even ("rtne", the default) or toward zero ("rtz"), against torch's
conversion (nearest even) and, toward zero, a search among every value of the 16-bit types (float32:
torch.nextafter); overflow toward zero gives the largest finite value; NaN stays NaN. Other conversions refuse a rounding
mode. Interpreter and CPU target; outputs start as NaN."""

from __future__ import annotations

import platform

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError


@inductor_tile.jit
def convert(x_ptr, y_ptr, ROUNDING: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x.to(y_ptr.dtype.element_ty, fp_downcast_rounding=ROUNDING))


def toward_zero(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The float64 reference: the value of `dtype` of largest magnitude not above |x|, with x's sign. 16-bit
    types: searched among all their finite values; float32: torch's nextafter toward zero."""
    if dtype == torch.float32:
        nearest = x.to(dtype)
        farther = nearest.double().abs() > x.double().abs()
        return torch.where(farther, torch.nextafter(nearest, torch.zeros_like(nearest)), nearest)
    every = torch.arange(0, 1 << 15, dtype=torch.int32).to(torch.int16).view(dtype).double()  # sign bit clear
    finite = every[torch.isfinite(every)].sort().values
    magnitude = x.double().abs()
    index = torch.searchsorted(finite, magnitude.nan_to_num(0.0), right=True) - 1
    result = (finite[index] * torch.sign(x.double())).to(dtype)
    return torch.where(x.isnan(), torch.full_like(result, float("nan")), result)


def _inputs(gen: torch.Generator, n: int = 256) -> torch.Tensor:
    x = torch.randn(n, generator=gen, dtype=torch.float64) * torch.logspace(-8, 6, n, dtype=torch.float64)
    x[:4] = torch.tensor([float("nan"), 1e6, -1e6, 0.0], dtype=torch.float64)  # NaN; beyond fp16's range; zero
    return x


CONVERSIONS = [(torch.float32, torch.float16), (torch.float32, torch.bfloat16), (torch.float64, torch.float32)]


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("src, dst", CONVERSIONS)
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_downcast_rounding(src, dst, rounding, mode, request, gen):
    request.getfixturevalue(mode)
    check_downcast(src, dst, rounding, "cpu", gen)


def check_downcast(src: torch.dtype, dst: torch.dtype, rounding: str, device: str, gen: torch.Generator) -> None:
    x = _inputs(gen).to(src)
    y = torch.full(x.shape, float("nan"), dtype=dst, device=device)
    convert[(1,)](x.to(device), y, ROUNDING=rounding, BLOCK=x.numel())
    y = y.cpu()
    want = x.to(dst) if rounding == "rtne" else toward_zero(x, dst)
    assert torch.equal(y.isnan(), want.isnan())
    assert torch.equal(y.nan_to_num(), want.nan_to_num())
    if rounding == "rtz":
        finite = ~x.isnan()
        assert (y[finite].double().abs() <= x[finite].double().abs()).all()  # never farther from zero


@inductor_tile.jit
def widen(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.cast(tl.load(x_ptr + offs), tl.float32, fp_downcast_rounding="rtz"))


def test_rounding_on_a_widening_conversion_is_refused(compiled):
    with pytest.raises(CompilationError, match="narrowing float conversions only"):
        widen[(1,)](torch.zeros(16, dtype=torch.float16), torch.empty(16), BLOCK=16)


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
@pytest.mark.parametrize("dst", [torch.float16, torch.bfloat16])
def test_toward_zero_assembles_for_sm90(dst):
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    bound = convert.bind((torch.empty(128), torch.empty(128, dtype=dst)), {"ROUNDING": "rtz", "BLOCK": 128})
    ptx = compile_specialized(convert, convert.specialize(bound), target="cuda:90", num_warps=4,
                              native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", "convert")
