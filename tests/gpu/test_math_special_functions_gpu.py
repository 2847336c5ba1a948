"""The special functions of tests/test_math_special_functions.py on an NVIDIA GPU: erfcx and ndtri are
libdevice's (__nv_erfcx, __nv_normcdfinv, documented to a few ulp), the rest our functions built on
libdevice (special_functions.py). Same kernels, inputs (random plus edge values), NaN-poisoned outputs
and references (mpmath, torch in float64); float32 division and libdevice's float32 functions are
within a few ulp, hence the float32 tolerances."""

from __future__ import annotations

import math

import pytest
import torch

import inductor_tile.language as tl
from test_math_special import assert_edges_exact
from test_math_special_functions import (INCOMPLETE_GAMMA_EDGES, POLYNOMIAL_EDGES, POLYNOMIALS, UNARY, UNARY_EDGES,
                                         _polygamma_mpmath, incomplete_gamma_inputs,
                                         incomplete_gamma_kernel, incomplete_gamma_reference, polynomial_inputs,
                                         polynomial_kernel, unary_inputs, unary_kernel, unary_reference,
                                         zeta_polygamma_inputs, zeta_polygamma_kernel)

pytestmark = pytest.mark.gpu
RTOL = {torch.float32: 1e-5, torch.float64: 2e-14}


def _run(kernel, rows, n, *inputs):
    out = torch.full((rows, n), math.nan, dtype=inputs[0].dtype, device="cuda")
    kernel[(tl.cdiv(n, 64),)](*(t.cuda() for t in inputs), out, n, BLOCK=64)
    return out.cpu()


def _assert_close(name, got, want, dtype, rtol=None):
    torch.testing.assert_close(got.double(), want.double(), equal_nan=True, rtol=rtol or RTOL[dtype], atol=1e-300,
                               msg=lambda m: f"{name} {dtype} on the GPU: {m}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_unary_special_functions_on_gpu(dtype):
    n = 300
    x = unary_inputs(dtype, n)
    out = _run(unary_kernel, len(UNARY), n, x)
    for row, name in enumerate(UNARY):
        ref = torch.tensor([unary_reference(name, v) for v in x[row].double().tolist()], dtype=torch.float64).to(dtype)
        if name == "airy_ai":  # oscillating below 0: relative to the amplitude |x|^-1/4, plus the phase's rounding
            xd = x[row].double()
            scale = torch.where(xd < 0, xd.abs().clamp_min(1.0) ** -0.25, ref.double().abs())
            allowed = scale * (RTOL[dtype] * 5 + 4e-16 * xd.clamp(max=0).abs() ** 1.5) + 1e-305
            bad = ~((out[row].double() - ref.double()).abs() <= allowed) & torch.isfinite(ref)
            assert not bad.any(), f"airy_ai {dtype}: {x[row][bad]} -> {out[row][bad]}, want {ref[bad]}"
        else:
            _assert_close(f"libdevice.{name}", out[row], ref, dtype)
        edges = len(UNARY_EDGES[name])
        assert_edges_exact(name, out[row, :edges], ref[:edges])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_zeta_polygamma_incomplete_gamma_on_gpu(dtype):
    n = 300
    a, b = zeta_polygamma_inputs(dtype, n)
    out = _run(zeta_polygamma_kernel, 2, n, a, b)
    zeta = torch.special.zeta(a[0].double(), b[0].double()).to(dtype)
    polygamma = _polygamma_mpmath(a[1].double(), b[1].double()).to(dtype)
    for row, (name, ref) in enumerate((("zeta", zeta), ("polygamma", polygamma))):
        _assert_close(name, out[row], ref, dtype, rtol=4e-6 if dtype == torch.float32 else 1e-13)
        assert_edges_exact(name, out[row, :11], ref[:11])
    a, x = incomplete_gamma_inputs(n)
    out = _run(incomplete_gamma_kernel, 2, n, a.to(dtype), x.to(dtype))
    values = [incomplete_gamma_reference(av, xv) for av, xv in zip(a.tolist(), x.tolist())]
    for row, name in enumerate(("igamma", "igammac")):
        ref = torch.tensor([v[row] for v in values], dtype=torch.float64).to(dtype)
        _assert_close(name, out[row], ref, dtype, rtol=1e-5 if dtype == torch.float32 else 1e-12)
        assert_edges_exact(name, out[row, :len(INCOMPLETE_GAMMA_EDGES)], ref[:len(INCOMPLETE_GAMMA_EDGES)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_orthogonal_polynomials_on_gpu(dtype):
    n = 300
    x, order = polynomial_inputs(dtype, n)
    out = _run(polynomial_kernel, len(POLYNOMIALS), n, x, order)
    rows = {name: 0 for name in POLYNOMIALS[:4]} | {name: 1 for name in POLYNOMIALS[4:8]} | \
        {"hermite_polynomial_h": 2, "hermite_polynomial_he": 2, "laguerre_polynomial_l": 3, "legendre_polynomial_p": 0}
    for row, name in enumerate(POLYNOMIALS):
        fn = getattr(torch.special, name)
        xs, ns = x[rows[name]], order[rows[name]]
        exact, eager, got = fn(xs.double(), ns.double()), fn(xs, ns), out[row]
        assert torch.equal(got.isnan(), eager.isnan()), f"{name} {dtype}: NaN at {xs[got.isnan() != eager.isnan()]}"
        scale = exact.abs().clamp_min(1.0)
        if dtype == torch.float64:
            bound = 1e-12 * scale
        else:  # the GPU's float32 division and cos/sin are within a few ulp: twice the CPU's allowance
            bound = 4 * (eager.double() - exact).abs() + 2e-5 * scale * ns.double().clamp(1.0, 100.0)
        rounded = exact.to(dtype).double()
        inf = torch.isinf(rounded) | torch.isinf(got)
        error = (got.double() - exact).abs()
        bad = ~eager.isnan() & ((error > bound) & ~inf | inf & (got.double() != rounded))
        assert not bad.any(), f"{name} {dtype}: x={xs[bad]}, n={ns[bad]} -> {got[bad]}, want {exact[bad]}"
        assert_edges_exact(name, got[:len(POLYNOMIAL_EDGES)], eager[:len(POLYNOMIAL_EDGES)])
