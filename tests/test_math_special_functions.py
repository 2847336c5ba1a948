"""The special functions targets build themselves (to_llvm/targets/special_functions.py): erfcx, ndtri,
the Bessel functions K0, K1 (plain and scaled) and spherical j0, zeta, polygamma, the incomplete gamma
functions and the orthogonal polynomials, as libdevice functions in kernels.

Each runs in the interpreter and compiled for the CPU on float32 and float64, on random inputs over
its domain plus edge values (+-0, +-inf, NaN, poles, the ends of intervals, the switches between
methods), into outputs poisoned with NaN. The unary functions are compared with mpmath (24 digits);
zeta with torch in float64 (both Euler-Maclaurin sums), polygamma and igamma/igammac with mpmath
(torch's trigamma and incomplete gamma are good to ~1e-9 only); the
polynomials, which torch computes in the element type by the same recurrences, with torch's float64
result: float64 to 1e-12 of the polynomial's size, float32 no further from it than twice torch's own
float32 result plus 1e-5. Where the result is exact (+-0, +-inf, NaN) it must match bit for bit. The
NVIDIA path is checked through ptxas, the AMD refusal by its message.
"""

from __future__ import annotations

import functools
import math
import platform
import re

import mpmath
import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.language.extra import libdevice
from test_math_special import assert_edges_exact, set_mode

INF, NAN = math.inf, math.nan
_DIGITS = 24
UNARY = ["erfcx", "ndtri", "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
         "scaled_modified_bessel_k1", "spherical_bessel_j0", "airy_ai"]
UNARY_EDGES = {
    "erfcx": [0.0, -0.0, INF, -INF, NAN, 10.0, 9.999, -26.7, -27.0, 1e300, -1e-300, 26.0, 1e-30],
    "ndtri": [0.0, 1.0, 0.5, 0.25, 0.2499999, -0.1, 1.1, NAN, 1e-300, 5e-324, 1 - 2 ** -53, 0.75, -0.0],
    "modified_bessel_k0": [0.0, -0.0, INF, -1.0, NAN, 40.0, 40.01, 1e-300, 1e-10, 2.0, 700.0, 800.0],
    "modified_bessel_k1": [0.0, -0.0, INF, -1.0, NAN, 40.0, 40.01, 1e-300, 1e-10, 2.0, 700.0, 800.0],
    "scaled_modified_bessel_k0": [0.0, -0.0, INF, -1.0, NAN, 40.0, 40.01, 1e-300, 1e-10, 2.0, 800.0],
    "scaled_modified_bessel_k1": [0.0, -0.0, INF, -1.0, NAN, 40.0, 40.01, 1e-300, 1e-10, 2.0, 800.0],
    "spherical_bessel_j0": [0.0, -0.0, INF, -INF, NAN, 0.5, 0.4999, -0.5, 1e-30, 100.0, math.pi],
    "airy_ai": [0.0, -0.0, INF, -INF, NAN, -10.0, -10.001, 1.0, 1.001, 103.8, 103.9, -1000.0, 1e-30],
}
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
               "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"]
# (x, n) pairs with exact or special results: the ends of the interval, negative, NaN, fractional and
# large orders (the closed forms, Hermite's NaN above order 512/128)
POLYNOMIAL_EDGES = [(1.0, 5.0), (-1.0, 5.0), (-1.0, 4.0), (0.0, 3.0), (0.0, 4.0), (0.5, -1.0), (0.3, NAN),
                    (NAN, 0.0), (NAN, 1.0), (0.3, 2.9), (0.3, INF), (0.2, 100.0), (1.0, 0.0), (2.0, 600.0),
                    (0.7, 1.0)]


@inductor_tile.jit
def unary_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, libdevice.erfcx(tl.load(x_ptr + offs, mask=mask)), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.normcdfinv(tl.load(x_ptr + n + offs, mask=mask)), mask=mask)  # = ndtri
    tl.store(out_ptr + 2 * n + offs, libdevice.modified_bessel_k0(tl.load(x_ptr + 2 * n + offs, mask=mask)),
             mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.modified_bessel_k1(tl.load(x_ptr + 3 * n + offs, mask=mask)),
             mask=mask)
    tl.store(out_ptr + 4 * n + offs,
             libdevice.scaled_modified_bessel_k0(tl.load(x_ptr + 4 * n + offs, mask=mask)), mask=mask)
    tl.store(out_ptr + 5 * n + offs,
             libdevice.scaled_modified_bessel_k1(tl.load(x_ptr + 5 * n + offs, mask=mask)), mask=mask)
    tl.store(out_ptr + 6 * n + offs, libdevice.spherical_bessel_j0(tl.load(x_ptr + 6 * n + offs, mask=mask)),
             mask=mask)
    tl.store(out_ptr + 7 * n + offs, libdevice.airy_ai(tl.load(x_ptr + 7 * n + offs, mask=mask)), mask=mask)


@inductor_tile.jit
def zeta_polygamma_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s, q = tl.load(a_ptr + offs, mask=mask), tl.load(b_ptr + offs, mask=mask)
    order, x = tl.load(a_ptr + n + offs, mask=mask), tl.load(b_ptr + n + offs, mask=mask)
    tl.store(out_ptr + offs, libdevice.zeta(s, q), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.polygamma(order, x), mask=mask)


@inductor_tile.jit
def polynomial_kernel(x_ptr, n_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x, order = tl.load(x_ptr + offs, mask=mask), tl.load(n_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, libdevice.chebyshev_polynomial_t(x, order), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.chebyshev_polynomial_u(x, order), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.chebyshev_polynomial_v(x, order), mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.chebyshev_polynomial_w(x, order), mask=mask)
    y, order_y = tl.load(x_ptr + n + offs, mask=mask), tl.load(n_ptr + n + offs, mask=mask)
    tl.store(out_ptr + 4 * n + offs, libdevice.shifted_chebyshev_polynomial_t(y, order_y), mask=mask)
    tl.store(out_ptr + 5 * n + offs, libdevice.shifted_chebyshev_polynomial_u(y, order_y), mask=mask)
    tl.store(out_ptr + 6 * n + offs, libdevice.shifted_chebyshev_polynomial_v(y, order_y), mask=mask)
    tl.store(out_ptr + 7 * n + offs, libdevice.shifted_chebyshev_polynomial_w(y, order_y), mask=mask)
    h, order_h = tl.load(x_ptr + 2 * n + offs, mask=mask), tl.load(n_ptr + 2 * n + offs, mask=mask)
    tl.store(out_ptr + 8 * n + offs, libdevice.hermite_polynomial_h(h, order_h), mask=mask)
    tl.store(out_ptr + 9 * n + offs, libdevice.hermite_polynomial_he(h, order_h), mask=mask)
    z, order_z = tl.load(x_ptr + 3 * n + offs, mask=mask), tl.load(n_ptr + 3 * n + offs, mask=mask)
    tl.store(out_ptr + 10 * n + offs, libdevice.laguerre_polynomial_l(z, order_z), mask=mask)
    tl.store(out_ptr + 11 * n + offs, libdevice.legendre_polynomial_p(x, order), mask=mask)


def _uniform(gen, n, low, high):
    return torch.rand(n, generator=gen, dtype=torch.float64) * (high - low) + low


def unary_inputs(dtype, n=300, seed=3):
    gen = torch.Generator().manual_seed(seed)
    rows = [_uniform(gen, n, -12.0, 28.0),  # erfcx: both methods, overflow below -26.7
            torch.rand(n, generator=gen, dtype=torch.float64),  # ndtri
            *(_uniform(gen, n, 0.0, 60.0) for _ in range(4)),  # K: the integral and the asymptotic series
            _uniform(gen, n, -20.0, 20.0),  # spherical j0
            _uniform(gen, n, -40.0, 30.0)]  # Ai: the asymptotic series, the integrated equation, K_1/3
    x = torch.stack(rows)
    x[1, 20:60] = 10 ** -(torch.rand(40, generator=gen, dtype=torch.float64) * 300)  # ndtri's far tail
    x[2, 20:60] = 10 ** (torch.rand(40, generator=gen, dtype=torch.float64) * 6 - 5)  # small x
    x[3:6] = x[2]  # the K functions share their (slow) mpmath reference
    for row, name in enumerate(UNARY):
        x[row, :len(UNARY_EDGES[name])] = torch.tensor(UNARY_EDGES[name], dtype=torch.float64)
    x[:, len(UNARY_EDGES["erfcx"]):] = x[:, len(UNARY_EDGES["erfcx"]):].float().double()  # one reference for both
    return x.to(dtype)


def _ndtri(p):
    if not 0 < p < 1:
        return {0.0: -INF, 1.0: INF}.get(p, NAN)
    if p == 0.5:
        return 0.0
    with mpmath.workdps(_DIGITS):  # Newton on log Phi(z) = log q (concave: monotone convergence), q = min(p, 1 - p)
        q = min(mpmath.mpf(p), 1 - mpmath.mpf(p))
        z, log_q = -mpmath.sqrt(-2 * mpmath.log(q)), mpmath.log(q)
        for _ in range(60):
            step = (mpmath.log(mpmath.ncdf(z)) - log_q) * mpmath.ncdf(z) / mpmath.npdf(z)
            z -= step
            if abs(step) < 1e-22 * abs(z):
                break
        return float(z if p < 0.5 else -z)


@functools.lru_cache(maxsize=None)
def unary_reference(name: str, x: float) -> float:
    """The function at x by mpmath (24 digits), with the limits and domains torch gives."""
    if math.isnan(x):
        return NAN
    if name == "ndtri":
        return _ndtri(x)
    if name == "erfcx":
        if math.isinf(x):
            return 0.0 if x > 0 else INF
        if x > 1e8:  # mpmath's erfc gives up; the series' next term is below 1e-16
            return 1 / (x * math.sqrt(math.pi))
        with mpmath.workdps(_DIGITS):
            value = mpmath.exp(mpmath.mpf(x) ** 2) * mpmath.erfc(x)
        return float(value) if value < 1.8e308 else INF
    if name == "airy_ai":
        if math.isinf(x):
            return NAN
        if x > 103.892:
            return 0.0
        with mpmath.workdps(_DIGITS):
            return float(mpmath.airyai(x))
    if name == "spherical_bessel_j0":
        if math.isinf(x):
            return 0.0
        if x == 0:
            return 1.0
        with mpmath.workdps(_DIGITS):
            return float(mpmath.sin(x) / x)
    # the K functions: inf at 0, NaN below, 0 at inf
    if x < 0:
        return NAN
    if x == 0:
        return INF
    if math.isinf(x):
        return 0.0
    order, scaled = int(name[-1]), name.startswith("scaled")
    with mpmath.workdps(_DIGITS):
        return float(_besselk(order, x) * (mpmath.exp(x) if scaled else 1))


@functools.lru_cache(maxsize=None)
def _besselk(order: int, x: float):
    return mpmath.besselk(order, x)


TOLERANCE = {torch.float32: dict(rtol=2e-6, atol=1e-30), torch.float64: dict(rtol=4e-15, atol=1e-300)}


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_unary_special_functions_match_mpmath(mode, dtype, monkeypatch):
    set_mode(mode, monkeypatch)
    n = 300
    x = unary_inputs(dtype, n)
    out = torch.full((len(UNARY), n), NAN, dtype=dtype)
    unary_kernel[(tl.cdiv(n, 64),)](x, out, n, BLOCK=64)
    for row, name in enumerate(UNARY):
        if mode == "interpret":  # the interpreter computes with torch, in the kernel's dtype
            ref = getattr(torch.special, name)(x[row])
            tolerance = dict(rtol=0, atol=0)
        else:
            values = [unary_reference(name, v) for v in x[row].double().tolist()]
            ref = torch.tensor(values, dtype=torch.float64).to(dtype)
            tolerance = TOLERANCE[dtype]
        if name == "airy_ai" and mode == "compiled":
            # oscillating below 0: the error relative to the amplitude |x|^-1/4, plus the phase's rounding
            # (2/3 |x|^3/2 to a few ulps); subnormal results (x near 103.9) keep fewer bits
            xd = x[row].double()
            scale = torch.where(xd < 0, xd.abs().clamp_min(1.0) ** -0.25, ref.double().abs())
            relative = {torch.float32: 2e-6, torch.float64: 1e-13}[dtype] + 4e-16 * xd.clamp(max=0).abs() ** 1.5
            error = (out[row].double() - ref.double()).abs()
            bad = ~(error <= scale * relative + 1e-305) & torch.isfinite(ref)
            assert not bad.any(), f"airy_ai {dtype}: {x[row][bad]} -> {out[row][bad]}, want {ref[bad]}"
        else:
            torch.testing.assert_close(out[row], ref, equal_nan=True, **tolerance,
                                       msg=lambda m, name=name: f"libdevice.{name} {dtype} {mode}: {m}")
        edges = len(UNARY_EDGES[name])
        assert_edges_exact(name, out[row, :edges], ref[:edges])


def zeta_polygamma_inputs(dtype, n=300, seed=4):
    gen = torch.Generator().manual_seed(seed)
    s, q = _uniform(gen, n, 1.05, 9.0), _uniform(gen, n, 0.05, 30.0)
    s[100:140] = torch.randint(2, 7, (40,), generator=gen).double()  # integer s: negative q is allowed
    q[100:140] = _uniform(gen, 40, -12.0, 0.0)
    edges = [(1.0, 2.0), (0.5, 2.0), (2.0, 0.0), (2.0, -3.0), (2.5, -2.5), (3.0, -2.5), (2.0, 1e6), (NAN, 2.0),
             (2.0, NAN), (2.0, INF), (4.0, 1.0)]
    s[:len(edges)] = torch.tensor([e[0] for e in edges], dtype=torch.float64)
    q[:len(edges)] = torch.tensor([e[1] for e in edges], dtype=torch.float64)
    order = torch.randint(0, 5, (n,), generator=gen).double()
    x = _uniform(gen, n, -6.0, 15.0)
    x[:6] = torch.tensor([0.0, -2.0, 1.0, NAN, INF, 1e-8], dtype=torch.float64)
    return torch.stack([s, order]).to(dtype), torch.stack([q, x]).to(dtype)


def _polygamma(order, x):
    return torch.stack([torch.special.polygamma(int(k), v) for k, v in zip(order.tolist(), x)])


def _polygamma_mpmath(order, x):
    """mpmath's polygamma (torch's trigamma is good to ~1e-9 only); torch's values at poles, NaN and inf."""
    values = []
    for k, v in zip(order.tolist(), x.tolist()):
        if not math.isfinite(v) or (v <= 0 and v == math.floor(v)):
            values.append(torch.special.polygamma(int(k), torch.tensor(v, dtype=torch.float64)).item())
        else:
            with mpmath.workdps(30):
                values.append(float(mpmath.polygamma(int(k), v)))
    return torch.tensor(values, dtype=torch.float64)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_zeta_and_polygamma_match_torch(mode, dtype, monkeypatch):
    set_mode(mode, monkeypatch)
    n = 300
    a, b = zeta_polygamma_inputs(dtype, n)
    out = torch.full((2, n), NAN, dtype=dtype)
    zeta_polygamma_kernel[(tl.cdiv(n, 64),)](a, b, out, n, BLOCK=64)
    ad, bd = (a, b) if mode == "interpret" else (a.double(), b.double())  # the interpreter: torch in the dtype
    refs = {"zeta": torch.special.zeta(ad[0], bd[0]),
            "polygamma": _polygamma(ad[1], bd[1]) if mode == "interpret" else _polygamma_mpmath(ad[1], bd[1])}
    tolerance = {torch.float32: dict(rtol=4e-6, atol=1e-30), torch.float64: dict(rtol=1e-13, atol=1e-300)}[dtype]
    for row, (name, ref) in enumerate(refs.items()):
        torch.testing.assert_close(out[row].double(), ref.to(dtype).double(), equal_nan=True, **tolerance,
                                   msg=lambda m, name=name: f"libdevice.{name} {dtype} {mode}: {m}")
        assert_edges_exact(name, out[row, :11], ref[:11].to(dtype))


@inductor_tile.jit
def incomplete_gamma_kernel(a_ptr, x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a, x = tl.load(a_ptr + offs, mask=mask), tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, libdevice.igamma(a, x), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.igammac(a, x), mask=mask)


INCOMPLETE_GAMMA_EDGES = [(0.0, 1.0), (0.0, 0.0), (1.0, 0.0), (-1.0, 1.0), (1.0, -1.0), (INF, 1.0), (INF, INF),
                          (1.0, INF), (NAN, 1.0), (1.0, NAN), (0.01, 1.0), (1e-3, 1e-3), (150.0, 150.0), (3.0, 1.1)]


def incomplete_gamma_inputs(n=300, seed=6):
    """a over 10^[-2, 2], x over [0, 2.5 a] (the series, the fraction and the small-x sums), float32 values."""
    gen = torch.Generator().manual_seed(seed)
    a = 10 ** (torch.rand(n, generator=gen, dtype=torch.float64) * 4 - 2)
    x = a * torch.rand(n, generator=gen, dtype=torch.float64) * 2.5
    x[20:80] = torch.rand(60, generator=gen, dtype=torch.float64) * 1.5
    a[:len(INCOMPLETE_GAMMA_EDGES)] = torch.tensor([e[0] for e in INCOMPLETE_GAMMA_EDGES], dtype=torch.float64)
    x[:len(INCOMPLETE_GAMMA_EDGES)] = torch.tensor([e[1] for e in INCOMPLETE_GAMMA_EDGES], dtype=torch.float64)
    return a.float().double(), x.float().double()


@functools.lru_cache(maxsize=None)
def incomplete_gamma_reference(a: float, x: float) -> tuple[float, float]:
    """(P, Q) by mpmath, torch's values off the domain's interior (NaN, infinities, zeros)."""
    if not (math.isfinite(a) and math.isfinite(x) and a > 0 and x > 0):
        at = (torch.tensor(a, dtype=torch.float64), torch.tensor(x, dtype=torch.float64))
        return torch.special.gammainc(*at).item(), torch.special.gammaincc(*at).item()
    with mpmath.workdps(_DIGITS):
        return (float(mpmath.gammainc(a, 0, x, regularized=True)),
                float(mpmath.gammainc(a, x, mpmath.inf, regularized=True)))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_incomplete_gamma_matches_mpmath(mode, dtype, monkeypatch):
    set_mode(mode, monkeypatch)
    n = 300
    a, x = incomplete_gamma_inputs(n)
    out = torch.full((2, n), NAN, dtype=dtype)
    incomplete_gamma_kernel[(tl.cdiv(n, 64),)](a.to(dtype), x.to(dtype), out, n, BLOCK=64)
    if mode == "interpret":  # torch in the kernel's dtype
        refs = [torch.special.gammainc(a.to(dtype), x.to(dtype)), torch.special.gammaincc(a.to(dtype), x.to(dtype))]
        tolerance = dict(rtol=1e-5 if dtype == torch.float32 else 1e-13, atol=0)  # torch's vector and scalar paths
    else:
        values = [incomplete_gamma_reference(av, xv) for av, xv in zip(a.tolist(), x.tolist())]
        refs = [torch.tensor([v[i] for v in values], dtype=torch.float64).to(dtype) for i in (0, 1)]
        # float64: x^a e^-x / Gamma(a) costs ~a ulps of its exponent
        tolerance = {torch.float32: dict(rtol=4e-6, atol=1e-30), torch.float64: dict(rtol=1e-12, atol=1e-300)}[dtype]
    for row, (name, ref) in enumerate(zip(("igamma", "igammac"), refs)):
        torch.testing.assert_close(out[row], ref, equal_nan=True, **tolerance,
                                   msg=lambda m, name=name: f"libdevice.{name} {dtype} {mode}: {m}")
        assert_edges_exact(name, out[row, :len(INCOMPLETE_GAMMA_EDGES)], ref[:len(INCOMPLETE_GAMMA_EDGES)])


def polynomial_inputs(dtype, n=300, seed=5):
    gen = torch.Generator().manual_seed(seed)
    x = torch.stack([_uniform(gen, n, -1.2, 1.2), _uniform(gen, n, -0.1, 1.1), _uniform(gen, n, -4.0, 4.0),
                     _uniform(gen, n, -2.0, 12.0)])
    order = torch.randint(-2, 16, (4, n), generator=gen).double()
    order[:, 200:230] += 0.5  # the order is the integer part
    order[:, 230:250] = torch.randint(16, 60, (4, 20), generator=gen).double()
    for xv, nv in ((x[0], order[0]), (x[1], order[1]), (x[2], order[2]), (x[3], order[3])):
        xv[:len(POLYNOMIAL_EDGES)] = torch.tensor([e[0] for e in POLYNOMIAL_EDGES], dtype=torch.float64)
        nv[:len(POLYNOMIAL_EDGES)] = torch.tensor([e[1] for e in POLYNOMIAL_EDGES], dtype=torch.float64)
    x[1, :5] = torch.tensor([1.0, 0.0, 0.0, 1.0, 0.0], dtype=torch.float64)  # the shifted ends: 1 and 0
    return x.to(dtype), order.to(dtype)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_orthogonal_polynomials_match_torch(mode, dtype, monkeypatch):
    set_mode(mode, monkeypatch)
    n = 300
    x, order = polynomial_inputs(dtype, n)
    out = torch.full((len(POLYNOMIALS), n), NAN, dtype=dtype)
    polynomial_kernel[(tl.cdiv(n, 64),)](x, order, out, n, BLOCK=64)
    rows = {name: 0 for name in POLYNOMIALS[:4]} | {name: 1 for name in POLYNOMIALS[4:8]} | \
        {"hermite_polynomial_h": 2, "hermite_polynomial_he": 2, "laguerre_polynomial_l": 3, "legendre_polynomial_p": 0}
    for row, name in enumerate(POLYNOMIALS):
        fn = getattr(torch.special, name)
        xs, ns = x[rows[name]], order[rows[name]]
        exact = fn(xs.double(), ns.double())
        eager = fn(xs, ns)  # torch in the kernel's dtype
        got = out[row]
        nan_differs = got.isnan() != eager.isnan()
        assert not nan_differs.any(), f"{name} {dtype} {mode}: NaN at x={xs[nan_differs]}, n={ns[nan_differs]}"
        ok = ~eager.isnan()
        scale = exact.abs().clamp_min(1.0)
        if dtype == torch.float64:
            bound = 1e-12 * scale
        else:
            # the recurrence cancels: float32's rounding grows with the degree
            bound = 2 * (eager.double() - exact).abs() + 1e-5 * scale * ns.double().clamp(1.0, 100.0)
        error = (got.double() - exact).abs()
        rounded = exact.to(dtype).double()  # inf where the float32 result overflows
        inf = torch.isinf(rounded) | torch.isinf(got)
        bad = ok & ((error > bound) & ~inf | inf & (got.double() != rounded))
        assert not bad.any(), f"{name} {dtype} {mode}: x={xs[bad]}, n={ns[bad]} -> {got[bad]}, want {exact[bad]}"
        assert_edges_exact(name, got[:len(POLYNOMIAL_EDGES)], eager[:len(POLYNOMIAL_EDGES)])


def test_special_ops_print_and_parse_in_ttir():
    from inductor_tile.kernel_compiler.ir.context import parse_ttir

    for kernel, names in ((unary_kernel, UNARY), (polynomial_kernel, POLYNOMIALS),
                          (zeta_polygamma_kernel, ["zeta", "polygamma"]),
                          (incomplete_gamma_kernel, ["igamma", "igammac"])):
        pointers = [p for p in ("x_ptr", "a_ptr", "b_ptr", "n_ptr", "out_ptr") if p in kernel.arg_names]
        compiled = inductor_tile.compile(kernel, signature={p: "*fp64" for p in pointers} | {"n": "i32"},
                                         constexprs={"BLOCK": 64}, target="cpu")
        ttir = compiled.asm["ttir"]
        for name in names:
            assert f"math.{name} " in ttir, name
        parse_ttir(ttir).verify()


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_special_functions_assemble_with_ptxas(dtype):
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    for kernel in (unary_kernel, zeta_polygamma_kernel, polynomial_kernel, incomplete_gamma_kernel):
        pointers = [p for p in kernel.arg_names if p.endswith("_ptr")]
        compiled = inductor_tile.compile(kernel, signature={p: f"*{dtype}" for p in pointers} | {"n": "i32"},
                                         constexprs={"BLOCK": 128}, target="cuda:90", divisible_by_16=pointers)
        llir, ptx = compiled.asm["llir"], compiled.asm["ptx"]
        # every libdevice function called was found and linked (a wrong name stays declared)
        assert not re.search(r"^declare .*@__nv_", llir, re.MULTILINE), re.findall(r"^declare .*", llir, re.MULTILINE)
        check_ptx(ptx, "sm_90", kernel.__name__)


def test_amd_target_compiles_special_functions():
    """Built there on amd_math64.py's float64 math (numerics: test_amd_math64.py), nothing left to a library."""
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    compiled = inductor_tile.compile(unary_kernel, signature=signature, constexprs={"BLOCK": 64}, target="hip:gfx942")
    assert not re.search(r"^declare .*@(?!llvm\.)", compiled.asm["llir"], re.MULTILINE)
