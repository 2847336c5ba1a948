"""Special functions in kernels: libdevice.erfc, lgamma, digamma, erfinv, hypot, nextafter, the Bessel
functions j0, j1, y0, y1, cyl_bessel_i0, cyl_bessel_i1, i0e and i1e (torch.i0, torch.special.i1/i0e/i1e).

Each runs in the interpreter and compiled for the CPU on float32 and float64, on random
inputs plus edge values (+-0, +-inf, NaN, poles, the ends of erfinv's domain), into outputs
poisoned with NaN, and is compared with torch computed in float64 from the same inputs
(nextafter exactly, in the kernel's dtype; the compiled Bessel functions with mpmath, torch's
being good to ~1e-9 only). The NVIDIA path is checked through ptxas, the AMD target's refusal
by its message.
"""

from __future__ import annotations

import math
import platform
import re

import mpmath
import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.language.extra import libdevice

INF, NAN = math.inf, math.nan
EDGES = {
    "erfc": [0.0, -0.0, INF, -INF, NAN, 30.0, -30.0, 1e-30, 9.0, 26.5],
    "lgamma": [0.0, -0.0, 1.0, 2.0, -1.0, -2.5, INF, -INF, NAN, 1e-30, 1e30, 0.5],
    "digamma": [0.0, -0.0, -1.0, -2.0, INF, -INF, NAN, 1e-30, -1e-30, 1e30, -1e7 - 0.5, 0.5, 1.0, -2.5, 1.4616321],
    "erfinv": [0.0, -0.0, 1.0, -1.0, 1.5, -1.0000001, NAN, 0.5, 0.999999, -0.9999999, 1e-30, 0.0299],
}
BESSEL_EDGES = {
    "j0": [0.0, -0.0, INF, -INF, NAN, 1e-30, 2.404825557695773, 100.0, -5.0],
    "j1": [0.0, -0.0, INF, -INF, NAN, 1e-30, 3.8317059702075125, 100.0, -5.0],
    "y0": [0.0, -0.0, INF, NAN, -1.0, 1e-30, 0.8935769662791675, 100.0],
    "y1": [0.0, -0.0, INF, NAN, -1.0, 1e-30, 2.197141326031017, 100.0],
    "cyl_bessel_i0": [0.0, -0.0, INF, -INF, NAN, 1e-30, 20.0, -20.0, 700.0, 710.0, 19.99],
    "cyl_bessel_i1": [0.0, -0.0, INF, -INF, NAN, 1e-30, 20.0, -20.0, 700.0, -710.0, 19.99],
    "i0e": [0.0, -0.0, INF, -INF, NAN, 1e-30, 20.0, -20.0, 800.0, 19.99],
    "i1e": [0.0, -0.0, INF, -INF, NAN, 1e-30, 20.0, -20.0, -800.0, 19.99],
}


TORCH_BESSEL = {"j0": torch.special.bessel_j0, "j1": torch.special.bessel_j1, "y0": torch.special.bessel_y0,
                "y1": torch.special.bessel_y1, "cyl_bessel_i0": torch.i0, "cyl_bessel_i1": torch.special.i1,
                "i0e": torch.special.i0e, "i1e": torch.special.i1e}


def _bessel_reference(name: str, x: float) -> float:
    """The Bessel function at x by mpmath, rounded to float64 (torch's float64 Bessel functions are
    only good to ~1e-9, and give NaN at +-inf where the limits are 0, or inf for I0)."""
    if math.isnan(x) or (name in ("y0", "y1") and x < 0):
        return NAN
    if name in ("y0", "y1") and x == 0:
        return -INF
    if math.isinf(x) and name in ("i0e", "i1e"):
        return 0.0 if name == "i0e" else math.copysign(0.0, x)
    if math.isinf(x):
        return INF if name == "cyl_bessel_i0" else x if name == "cyl_bessel_i1" else \
            math.copysign(0.0, x) if name == "j1" else 0.0
    if x == 0:
        return 1.0 if name in ("j0", "cyl_bessel_i0", "i0e") else x  # j1, i1, i1e: +-0 at +-0
    fn = {"j0": lambda v: mpmath.besselj(0, v), "j1": lambda v: mpmath.besselj(1, v),
          "y0": lambda v: mpmath.bessely(0, v), "y1": lambda v: mpmath.bessely(1, v),
          "cyl_bessel_i0": lambda v: mpmath.besseli(0, v), "cyl_bessel_i1": lambda v: mpmath.besseli(1, v),
          "i0e": lambda v: mpmath.besseli(0, v) * mpmath.exp(-abs(v)),
          "i1e": lambda v: mpmath.besseli(1, v) * mpmath.exp(-abs(v))}[name]
    with mpmath.workdps(30):
        value = fn(mpmath.mpf(x))
    return float(value) if abs(value) < 1.8e308 else math.copysign(INF, value)
BINARY_EDGES = [(3.0, 4.0), (INF, NAN), (NAN, -INF), (NAN, 1.0), (1e30, 1e30), (1e-30, 1e-30), (-0.0, 0.0),
                (1.0, 1.0), (0.0, -1.0), (1.0, INF), (-1.0, 2.0), (-0.0, -0.0)]


@inductor_tile.jit
def special_unary_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    erfc_in = tl.load(x_ptr + offs, mask=mask)
    lgamma_in = tl.load(x_ptr + n + offs, mask=mask)
    digamma_in = tl.load(x_ptr + 2 * n + offs, mask=mask)
    erfinv_in = tl.load(x_ptr + 3 * n + offs, mask=mask)
    tl.store(out_ptr + offs, libdevice.erfc(erfc_in), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.lgamma(lgamma_in), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.digamma(digamma_in), mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.erfinv(erfinv_in), mask=mask)


@inductor_tile.jit
def bessel_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, libdevice.j0(tl.load(x_ptr + offs, mask=mask)), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.j1(tl.load(x_ptr + n + offs, mask=mask)), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.y0(tl.load(x_ptr + 2 * n + offs, mask=mask)), mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.y1(tl.load(x_ptr + 3 * n + offs, mask=mask)), mask=mask)
    tl.store(out_ptr + 4 * n + offs, libdevice.cyl_bessel_i0(tl.load(x_ptr + 4 * n + offs, mask=mask)), mask=mask)
    tl.store(out_ptr + 5 * n + offs, libdevice.cyl_bessel_i1(tl.load(x_ptr + 5 * n + offs, mask=mask)), mask=mask)
    tl.store(out_ptr + 6 * n + offs, libdevice.i0e(tl.load(x_ptr + 6 * n + offs, mask=mask)), mask=mask)
    tl.store(out_ptr + 7 * n + offs, libdevice.i1e(tl.load(x_ptr + 7 * n + offs, mask=mask)), mask=mask)


@inductor_tile.jit
def special_binary_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, libdevice.hypot(x, y), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.nextafter(x, y), mask=mask)


def _unary_inputs(dtype, n=300, seed=0):
    gen = torch.Generator().manual_seed(seed)
    u = torch.rand(4, n, generator=gen, dtype=torch.float64) * 2 - 1
    # erfc on (-6, 6), lgamma and digamma on (-12, 12), erfinv on (-1, 1)
    x = torch.stack([u[0] * 6.0, u[1] * 12.0, u[2] * 12.0, u[3]])
    for row, name in enumerate(EDGES):
        x[row, :len(EDGES[name])] = torch.tensor(EDGES[name], dtype=torch.float64)
    return x.to(dtype)


def _binary_inputs(dtype, n=300, seed=1):
    gen = torch.Generator().manual_seed(seed)
    x, y = (torch.randn(2, n, generator=gen, dtype=torch.float64) * 10).to(dtype)
    y[40:80] = x[40:80]  # nextafter(x, x) is x
    y[80:120] = -x[80:120]
    edges = torch.tensor(BINARY_EDGES, dtype=dtype)
    x[:len(edges)], y[:len(edges)] = edges[:, 0], edges[:, 1]
    return x, y


def _bessel_inputs(dtype, n=300, seed=2):
    gen = torch.Generator().manual_seed(seed)
    u = torch.rand(8, n, generator=gen, dtype=torch.float64)
    # j0, j1 on (-30, 30); y0, y1 on (0, 30); i0, i1, i0e, i1e on (-50, 50)
    x = torch.stack([u[0] * 60 - 30, u[1] * 60 - 30, u[2] * 30, u[3] * 30, *(u[4:] * 100 - 50)])
    for row, name in enumerate(BESSEL_EDGES):
        x[row, :len(BESSEL_EDGES[name])] = torch.tensor(BESSEL_EDGES[name], dtype=torch.float64)
    return x.to(dtype)


def assert_edges_exact(name, got, want):
    """Where the result is exact (+-0, +-inf, NaN), bit for bit, the sign of zero included."""
    special = ~torch.isfinite(want) | (want == 0)
    assert torch.equal(got[special].isnan(), want[special].isnan()), f"{name}: {got[special]} vs {want[special]}"
    finite = special & ~want.isnan()
    assert torch.equal(got[finite], want[finite]) and torch.equal(got[finite].signbit(), want[finite].signbit()), \
        f"{name} {got.dtype}: {got[finite]} vs {want[finite]}"


def _tolerance(dtype):
    return {torch.float32: dict(rtol=2e-6, atol=1e-6), torch.float64: dict(rtol=1e-13, atol=1e-14)}[dtype]


def set_mode(mode, monkeypatch):
    if mode == "interpret":
        monkeypatch.setenv("TILE_INTERPRET", "1")
    else:
        monkeypatch.delenv("TILE_INTERPRET", raising=False)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_erfc_lgamma_digamma_erfinv_match_torch(mode, dtype, monkeypatch):
    set_mode(mode, monkeypatch)
    n = 300
    x = _unary_inputs(dtype, n)
    out = torch.full((4, n), NAN, dtype=dtype)
    special_unary_kernel[(tl.cdiv(n, 64),)](x, out, n, BLOCK=64)
    xd = x.double()
    refs = {"erfc": torch.erfc(xd[0]), "lgamma": torch.lgamma(xd[1]), "digamma": torch.digamma(xd[2]),
            "erfinv": torch.erfinv(xd[3])}
    for row, (name, ref) in enumerate(refs.items()):
        torch.testing.assert_close(out[row].double(), ref.to(dtype).double(), equal_nan=True, **_tolerance(dtype),
                                   msg=lambda m, name=name: f"libdevice.{name} {dtype} {mode}: {m}")
    for row, name in enumerate(EDGES):
        assert_edges_exact(name, out[row, :len(EDGES[name])], refs[name][:len(EDGES[name])].to(dtype))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_bessel_functions_match_torch(mode, dtype, monkeypatch):
    set_mode(mode, monkeypatch)
    n = 300
    x = _bessel_inputs(dtype, n)
    out = torch.full((8, n), NAN, dtype=dtype)
    bessel_kernel[(tl.cdiv(n, 64),)](x, out, n, BLOCK=64)
    for row, name in enumerate(BESSEL_EDGES):
        if mode == "interpret":  # the interpreter computes with torch, in the kernel's dtype
            ref = TORCH_BESSEL[name](x[row])
        else:
            ref = torch.tensor([_bessel_reference(name, v) for v in x[row].double().tolist()], dtype=torch.float64)
            ref = ref.to(dtype)
        torch.testing.assert_close(out[row].double(), ref.double(), equal_nan=True, **_tolerance(dtype),
                                   msg=lambda m, name=name: f"libdevice.{name} {dtype} {mode}: {m}")
        assert_edges_exact(name, out[row, :len(BESSEL_EDGES[name])], ref[:len(BESSEL_EDGES[name])])


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_hypot_nextafter_match_torch(mode, dtype, monkeypatch):
    set_mode(mode, monkeypatch)
    n = 300
    x, y = _binary_inputs(dtype, n)
    out = torch.full((2, n), NAN, dtype=dtype)
    special_binary_kernel[(tl.cdiv(n, 64),)](x, y, out, n, BLOCK=64)
    torch.testing.assert_close(out[0].double(), torch.hypot(x.double(), y.double()).to(dtype).double(),
                               equal_nan=True, **_tolerance(dtype))
    want = torch.nextafter(x, y)  # exact: bit for bit, the sign of zero included
    same = (out[1] == want) & (out[1].signbit() == want.signbit()) | (out[1].isnan() & want.isnan())
    assert bool(same.all()), f"nextafter {dtype} {mode}: {x[~same]}, {y[~same]} -> {out[1][~same]}, not {want[~same]}"


def test_nextafter_refuses_half_precision():
    from inductor_tile.kernel_compiler.errors import CompilationError

    with pytest.raises(CompilationError, match="nextafter on float16 is not supported"):
        inductor_tile.compile(special_binary_kernel, signature={"x_ptr": "*fp16", "y_ptr": "*fp16", "out_ptr": "*fp16",
                                                                "n": "i32"}, constexprs={"BLOCK": 64}, target="cpu")


def test_math_ops_print_and_parse_in_ttir():
    compiled = inductor_tile.compile(special_unary_kernel, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                                     constexprs={"BLOCK": 64}, target="cpu")
    from inductor_tile.kernel_compiler.ir.context import parse_ttir

    ttir = compiled.asm["ttir"]
    for op in ("math.erfc", "math.lgamma", "math.digamma", "math.erfinv"):
        assert op in ttir
    parse_ttir(ttir).verify()


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_special_functions_call_libdevice_and_assemble_with_ptxas(dtype):
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    for kernel, pointers in ((special_unary_kernel, ("x_ptr", "out_ptr")), (bessel_kernel, ("x_ptr", "out_ptr")),
                             (special_binary_kernel, ("x_ptr", "y_ptr", "out_ptr"))):
        signature = {p: f"*{dtype}" for p in pointers} | {"n": "i32"}
        compiled = inductor_tile.compile(kernel, signature=signature, constexprs={"BLOCK": 256}, target="cuda:90",
                                         divisible_by_16=list(pointers))
        llir, ptx = compiled.asm["llir"], compiled.asm["ptx"]
        # every __nv_ function the kernel calls was found in libdevice and linked (a wrong name stays declared)
        assert not re.search(r"^declare .*@__nv_", llir, re.MULTILINE), re.findall(r"^declare .*", llir, re.MULTILINE)
        check_ptx(ptx, "sm_90", kernel.__name__)
        assert ptx.count(".func") < 60, "all of libdevice was linked into the kernel"


def test_amd_target_compiles_these_with_no_library():
    """Built there on amd_math64.py (numerics: test_amd_math64.py): nothing is left declared for a library."""
    from inductor_tile.kernel_compiler.to_llvm import hsaco

    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    for kernel in (special_unary_kernel, bessel_kernel):
        compiled = inductor_tile.compile(kernel, signature=signature, constexprs={"BLOCK": 64}, target="hip:gfx942")
        assert not re.search(r"^declare .*@(?!llvm\.)", compiled.asm["llir"], re.MULTILINE), kernel.__name__
        if hsaco.has_linker():
            assert compiled.asm["hsaco"][:4] == b"\x7fELF"
