"""Special functions in kernels: libdevice.erfc, lgamma, digamma, erfinv, hypot and nextafter.

Each runs in the interpreter and compiled for the CPU on float32 and float64, on random
inputs plus edge values (+-0, +-inf, NaN, poles, the ends of erfinv's domain), into outputs
poisoned with NaN, and is compared with torch computed in float64 from the same inputs
(nextafter exactly, in the kernel's dtype). The NVIDIA path is checked through ptxas.
"""

from __future__ import annotations

import math
import platform
import re

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
    x = torch.stack([u[0] * 6.0, u[1] * 12.0, u[2] * 12.0, u[3]])  # erfc on (-6, 6), (di)lgamma on (-12, 12), erfinv on (-1, 1)
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


def _tolerance(dtype):
    return {torch.float32: dict(rtol=2e-6, atol=1e-6), torch.float64: dict(rtol=1e-13, atol=1e-14)}[dtype]


def _set_mode(mode, monkeypatch):
    if mode == "interpret":
        monkeypatch.setenv("TILE_INTERPRET", "1")
    else:
        monkeypatch.delenv("TILE_INTERPRET", raising=False)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_erfc_lgamma_digamma_erfinv_match_torch(mode, dtype, monkeypatch):
    _set_mode(mode, monkeypatch)
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
    # the edge values exactly where the result is exact: signs of zero, infinities and NaN
    for row, name in enumerate(EDGES):
        got, want = out[row, :len(EDGES[name])], refs[name][:len(EDGES[name])].to(dtype)
        special = ~torch.isfinite(want) | (want == 0)
        assert torch.equal(got[special].isnan(), want[special].isnan()), f"{name}: {got} vs {want}"
        finite = special & ~want.isnan()
        assert torch.equal(got[finite], want[finite]) and torch.equal(got[finite].signbit(), want[finite].signbit()), \
            f"{name} {dtype}: {got[finite]} vs {want[finite]}"


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_hypot_nextafter_match_torch(mode, dtype, monkeypatch):
    _set_mode(mode, monkeypatch)
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

    for kernel, pointers in ((special_unary_kernel, ("x_ptr", "out_ptr")),
                             (special_binary_kernel, ("x_ptr", "y_ptr", "out_ptr"))):
        signature = {p: f"*{dtype}" for p in pointers} | {"n": "i32"}
        compiled = inductor_tile.compile(kernel, signature=signature, constexprs={"BLOCK": 256}, target="cuda:90",
                                         divisible_by_16=list(pointers))
        llir, ptx = compiled.asm["llir"], compiled.asm["ptx"]
        # every __nv_ function the kernel calls was found in libdevice and linked (a wrong name stays declared)
        assert not re.search(r"^declare .*@__nv_", llir, re.MULTILINE), re.findall(r"^declare .*", llir, re.MULTILINE)
        check_ptx(ptx, "sm_90", kernel.__name__)
        assert ptx.count(".func") < 60, "all of libdevice was linked into the kernel"
