"""The special functions of tests/test_math_special.py on an NVIDIA GPU (libdevice's __nv_* and our own
digamma, i0e, i1e): same kernels, inputs (random plus edge values), NaN-poisoned outputs and float64
references; libdevice's documented float32 errors are a few ulp, hence the float32 tolerance."""

from __future__ import annotations

import math

import pytest
import torch

import inductor_tile.language as tl
from test_math_special import (BESSEL_EDGES, EDGES, assert_edges_exact, _bessel_inputs, _bessel_reference,
                               _binary_inputs, _unary_inputs, bessel_kernel, special_binary_kernel,
                               special_unary_kernel)

pytestmark = pytest.mark.gpu
TOLERANCE = {torch.float32: dict(rtol=1e-5, atol=2e-6), torch.float64: dict(rtol=1e-12, atol=1e-13)}
# libdevice's float64 j0, j1, y0, y1 are documented (CUDA programming guide, mathematical functions appendix)
# to 7 ulp below |x| = 8 and to an absolute error of 5e-12 above: near their zeros (x = 100 in the edges
# is close to one of y0's) the relative error is unbounded, so above 8 the check is absolute. A wrong
# function is still off by ~0.1 there.
LIBDEVICE_BESSEL_ABSOLUTE = 5e-12


def _run(kernel, rows, n, *inputs):
    out = torch.full((rows, n), math.nan, dtype=inputs[0].dtype, device="cuda")
    kernel[(tl.cdiv(n, 64),)](*(t.cuda() for t in inputs), out, n, BLOCK=64)
    return out.cpu()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_erfc_lgamma_digamma_erfinv_on_gpu(dtype):
    n = 300
    x = _unary_inputs(dtype, n)
    out = _run(special_unary_kernel, 4, n, x)
    xd = x.double()
    refs = {"erfc": torch.erfc(xd[0]), "lgamma": torch.lgamma(xd[1]), "digamma": torch.digamma(xd[2]),
            "erfinv": torch.erfinv(xd[3])}
    for row, (name, ref) in enumerate(refs.items()):
        torch.testing.assert_close(out[row].double(), ref.to(dtype).double(), equal_nan=True, **TOLERANCE[dtype],
                                   msg=lambda m, name=name: f"libdevice.{name} {dtype}: {m}")
        assert_edges_exact(name, out[row, :len(EDGES[name])], ref[:len(EDGES[name])].to(dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_bessel_functions_on_gpu(dtype):
    n = 300
    x = _bessel_inputs(dtype, n)
    out = _run(bessel_kernel, 8, n, x)
    for row, name in enumerate(BESSEL_EDGES):
        ref = torch.tensor([_bessel_reference(name, v) for v in x[row].double().tolist()], dtype=torch.float64)
        if dtype == torch.float64 and name in ("j0", "j1", "y0", "y1"):
            want, got, large = ref, out[row].double(), x[row].abs() >= 8
            allowed = torch.where(large, LIBDEVICE_BESSEL_ABSOLUTE, 1e-12 * want.abs() + 1e-13)
            bad = ~((got - want).abs() <= allowed) & ~(got.isnan() & want.isnan()) & ~(got == want)
            assert not bad.any(), f"libdevice.{name}: x={x[row][bad]} -> {got[bad]}, want {want[bad]}"
        else:
            torch.testing.assert_close(out[row].double(), ref.to(dtype).double(), equal_nan=True, **TOLERANCE[dtype],
                                       msg=lambda m, name=name: f"libdevice.{name} {dtype}: {m}")
        assert_edges_exact(name, out[row, :len(BESSEL_EDGES[name])], ref[:len(BESSEL_EDGES[name])].to(dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_hypot_nextafter_on_gpu(dtype):
    n = 300
    x, y = _binary_inputs(dtype, n)
    out = _run(special_binary_kernel, 2, n, x, y)
    torch.testing.assert_close(out[0].double(), torch.hypot(x.double(), y.double()).to(dtype).double(),
                               equal_nan=True, **TOLERANCE[dtype])
    want = torch.nextafter(x, y)  # exact, the sign of zero included
    same = (out[1] == want) & (out[1].signbit() == want.signbit()) | (out[1].isnan() & want.isnan())
    assert bool(same.all()), f"nextafter {dtype}: {x[~same]}, {y[~same]} -> {out[1][~same]}, not {want[~same]}"
