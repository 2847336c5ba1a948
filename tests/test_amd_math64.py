"""The AMD target's float64 math (targets/amd_math64.py), checked without an AMD GPU: the same LLVM functions
compiled for this CPU against torch's float64 on random inputs (in ulps of the reference), C's special
values, and kernels using them linked for gfx942 and gfx1100 (no undefined symbol: nothing left to a device
library)."""

from __future__ import annotations

import ctypes
import math

import pytest
import torch
from llvmlite import ir
from test_amd_target import _disassembly, needs_lld, needs_objdump

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.to_llvm import hsaco, llvm_tools
from inductor_tile.kernel_compiler.to_llvm.context import LoweringError
from inductor_tile.kernel_compiler.to_llvm.targets import amd_math, amd_math64, get_target

F64 = ir.DoubleType()


def _elementwise(fn):
    """Python's math function over a tensor (torch's vectorized float64 cosh/sinh overflow from 710 already)."""
    def apply(t: torch.Tensor) -> torch.Tensor:
        def one(v: float) -> float:
            try:
                return fn(v)
            except OverflowError:
                return math.copysign(math.inf, v) if fn is math.sinh else math.inf
        return torch.tensor([one(v) for v in t.tolist()], dtype=torch.float64)
    return apply


_REFERENCE = {"exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log, "log2": torch.log2,
              "log10": torch.log10, "log1p": torch.log1p, "sin": torch.sin, "cos": torch.cos, "tan": torch.tan,
              "atan": torch.atan, "asin": torch.asin, "acos": torch.acos, "tanh": torch.tanh, "sinh": _elementwise(math.sinh),
              "cosh": _elementwise(math.cosh), "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh, "erf": torch.erf,
              "erfc": torch.erfc, "lgamma": torch.lgamma,
              "round": lambda t: torch.sign(t) * torch.floor(t.abs() + 0.5)}
_BINARY = {"pow": torch.pow, "atan2": torch.atan2, "hypot": torch.hypot, "nextafter": torch.nextafter}
#: ulps allowed against torch (glibc's results, themselves within ~1 ulp)
_ULPS: dict[str, float] = {}


@pytest.fixture(scope="module")
def host64():
    """ctypes callables of every float64 body, JIT-compiled for this CPU from the IR the AMD target uses."""
    import llvmlite.binding as llvm

    module = ir.Module("amd_math64_on_host")
    library = amd_math.library_of(module)
    functions = {op: amd_math64.function(module, op, F64, library) for op in amd_math64.BODIES}
    amd_math.define_used(module)
    for fn in functions.values():
        fn.linkage = "external"
    engine = llvm.create_mcjit_compiler(llvm_tools.parse(str(module)), llvm_tools.host_target_machine())
    engine.finalize_object()
    out = {"_engine": engine}
    for op, fn in functions.items():
        proto = ctypes.CFUNCTYPE(ctypes.c_double, *[ctypes.c_double] * amd_math64.BODIES[op][0])
        out[op] = proto(engine.get_function_address(fn.name))
    return out


def _ulps(got: torch.Tensor, expected: torch.Tensor) -> torch.Tensor:
    """|got - expected| in units of the spacing of doubles at `expected` (exact matches: 0)."""
    spacing = (torch.nextafter(expected.abs(), torch.tensor(math.inf, dtype=torch.float64)) - expected.abs())
    error = (got - expected).abs()
    return torch.where(got == expected, torch.zeros_like(error), error / spacing)


def _domain(op: str, gen: torch.Generator) -> torch.Tensor:
    normal = torch.randn(3000, generator=gen, dtype=torch.float64)
    x = torch.cat([normal * 3, torch.rand(1000, generator=gen, dtype=torch.float64) * 2 - 1, normal[:500] * 300,
                   torch.tensor([0.0, -0.0, 1e-300, -1e-300, 5e-324, 0.5, -0.5, 1.5, 2.0, 30.0, -30.0])])
    if op in ("log", "log2", "log10"):
        x = torch.cat([x.abs(), x.abs() * 1e-310, x.abs() * 1e300, torch.tensor([1.0, 2.0, 1024.0, 0.1])])
    if op == "log1p":
        x = torch.cat([x.abs(), -torch.rand(1000, generator=gen, dtype=torch.float64)])
    if op in ("asin", "acos", "atanh"):
        x = torch.tanh(x)
    if op == "acosh":
        x = 1 + x.abs()
    if op in ("exp", "expm1", "sinh", "cosh", "exp2"):
        x = torch.cat([x, torch.tensor([700.0, 709.7, -700.0, -740.0, -1074.5, 1023.5, 710.3])])
    if op in ("sin", "cos", "tan"):  # multiples of pi/2 stress the reduction; huge ones take the bits of 2/pi
        huge = torch.exp(torch.rand(600, generator=gen, dtype=torch.float64) * 709) * torch.sign(normal[:600])
        x = torch.cat([x, x * 1e4, torch.arange(1, 200, dtype=torch.float64) * (math.pi / 2), huge,
                       torch.tensor([2.0 ** 28, -2.0 ** 28 + 0.5, 1e22, 6381956970095103 * 2.0 ** 797, 1.7e308])])
    if op == "lgamma":
        near_zeros = torch.tensor([1.0, 2.0]).repeat(100) + torch.randn(200, generator=gen, dtype=torch.float64) * 1e-3
        x = torch.cat([x, x.abs() * 1e5, near_zeros, torch.tensor([0.5, 2.5, 1e-300, 171.5, -2.5, -0.5, 3.0, 10.2,
                                                                  10.3, 0.74, 0.76])])
    return x


@pytest.mark.parametrize("op", sorted(_REFERENCE))
def test_f64_body_matches_torch_float64(host64, op, gen):
    x = _domain(op, gen)
    expected = _REFERENCE[op](x)
    got = torch.tensor([host64[op](v) for v in x.tolist()], dtype=torch.float64)
    finite = torch.isfinite(expected)
    assert torch.equal(got[~finite].isnan(), expected[~finite].isnan()), op
    assert torch.equal(got[~finite & ~expected.isnan()], expected[~finite & ~expected.isnan()]), op
    ulps = _ulps(got[finite], expected[finite])
    if op == "lgamma":  # below 0, absolute accuracy near its zeros (the reflection cancels there)
        near_negative_zero = (x[finite] < 0) & ((got[finite] - expected[finite]).abs() < 4e-15)
        ulps = torch.where(near_negative_zero, torch.zeros_like(ulps), ulps)
    worst = int(ulps.argmax())
    assert ulps[worst] <= _ULPS.get(op, 4.0), (op, x[finite][worst].item(), got[finite][worst].item(),
                                               expected[finite][worst].item())
    assert math.isnan(host64[op](math.nan))


@pytest.mark.parametrize("op", ["j0", "j1", "y0", "y1"])
def test_f64_bessel_matches_mpmath(host64, op, gen):
    """Against mpmath (torch's float64 Bessel functions are off by up to ~1e-6 above x = 5): within 8 ulp, and
    3e-16 absolutely near the zeros; the series below 1, the Taylor pieces, Hankel's expansions from 20."""
    mpmath = pytest.importorskip("mpmath")
    x = torch.cat([torch.rand(600, generator=gen, dtype=torch.float64) * 40, torch.rand(100, generator=gen,
                   dtype=torch.float64), torch.rand(100, generator=gen, dtype=torch.float64) * 1e4,
                   torch.tensor([0.999, 1.0, 1.001, 19.99, 20.0, 20.01, 1e-10, 1e-300, 1e15])])
    if op[0] == "j":
        x = torch.cat([x, -x[:100]])
    exact = mpmath.besselj if op[0] == "j" else mpmath.bessely
    expected = torch.tensor([float(exact(int(op[1]), mpmath.mpf(v))) for v in x.tolist()], dtype=torch.float64)
    got = torch.tensor([host64[op](v) for v in x.tolist()], dtype=torch.float64)
    finite = torch.isfinite(expected)  # (Y at 0: -inf)
    assert torch.equal(got[~finite], expected[~finite]), op
    x, got, expected = x[finite], got[finite], expected[finite]
    spacing = torch.nextafter(expected.abs(), torch.tensor(math.inf, dtype=torch.float64)) - expected.abs()
    error = torch.where(got == expected, torch.zeros_like(got), (got - expected).abs())
    worst = int((error - 8 * spacing).argmax())
    assert error[worst] <= 8 * spacing[worst] + 3e-16, (op, x[worst].item(), got[worst].item(), expected[worst].item())
    assert math.isnan(host64[op](math.nan)) and host64[op](math.inf) == 0.0
    if op[0] == "y":
        assert host64[op](0.0) == -math.inf and math.isnan(host64[op](-1.0))
    else:
        assert host64[op](0.0) == (1.0 if op == "j0" else 0.0) and host64[op](-2.5) == (1 if op == "j0" else -1) * host64[op](2.5)


def _pairs(op: str, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.randn(2000, generator=gen, dtype=torch.float64) * 4
    b = torch.randn(2000, generator=gen, dtype=torch.float64) * 4
    if op == "pow":  # positive bases over the whole exponent range; negative bases with integer exponents
        a = torch.cat([a.abs() * 10, torch.exp(torch.randn(500, generator=gen, dtype=torch.float64) * 20), -a.abs()])
        b = torch.cat([b * 5, torch.randn(500, generator=gen, dtype=torch.float64) * 30, torch.round(b * 5)])
    return a, b


@pytest.mark.parametrize("op", sorted(_BINARY))
def test_f64_binary_body_matches_torch_float64(host64, op, gen):
    a, b = _pairs(op, gen)
    expected = _BINARY[op](a, b)
    got = torch.tensor([host64[op](x, y) for x, y in zip(a.tolist(), b.tolist())], dtype=torch.float64)
    finite = torch.isfinite(expected)
    assert torch.equal(got[~finite], expected[~finite]), op
    ulps = _ulps(got[finite], expected[finite])
    worst = int(ulps.argmax())
    assert ulps[worst] <= (0.0 if op == "nextafter" else 4.0), (op, a[finite][worst].item(), b[finite][worst].item())


def test_c_special_values(host64):
    inf, nan = math.inf, math.nan
    f = host64
    assert f["exp"](inf) == inf and f["exp"](-inf) == 0.0 and f["exp"](709.8) == inf and f["exp"](-745.2) == 0.0
    assert f["log"](0.0) == -inf and math.isnan(f["log"](-1.0)) and f["log"](inf) == inf and f["log"](1.0) == 0.0
    assert f["log2"](2.0 ** -1074) == -1074.0 and f["log2"](2.0 ** 1023) == 1023.0
    assert f["expm1"](-0.0) == 0.0 and math.copysign(1, f["expm1"](-0.0)) == -1 and f["expm1"](-inf) == -1.0
    assert f["log1p"](-1.0) == -inf and math.isnan(f["log1p"](-2.0)) and math.copysign(1, f["log1p"](-0.0)) == -1
    assert math.copysign(1, f["sin"](-0.0)) == -1 and math.isnan(f["sin"](inf)) and math.isnan(f["cos"](-inf))
    assert f["tanh"](inf) == 1.0 and f["tanh"](-800.0) == -1.0 and math.copysign(1, f["tanh"](-0.0)) == -1
    assert math.isclose(f["sinh"](710.0), math.sinh(710.0), rel_tol=5e-16) and f["cosh"](711.0) == inf
    assert math.isclose(f["cosh"](-710.0), math.cosh(710.0), rel_tol=5e-16) and f["sinh"](-711.0) == -inf
    assert f["erf"](inf) == 1.0 and f["erf"](-inf) == -1.0 and f["erfc"](-inf) == 2.0 and f["erfc"](30.0) == 0.0
    assert f["lgamma"](0.0) == inf and f["lgamma"](-3.0) == inf and f["lgamma"](1.0) == 0.0 and f["lgamma"](-inf) == inf
    assert f["pow"](-2.0, 3.0) == -8.0 and f["pow"](-2.0, 2.0) == 4.0 and math.isnan(f["pow"](-2.0, 0.5))
    assert f["pow"](0.0, -1.0) == inf and f["pow"](-0.0, -3.0) == -inf and f["pow"](nan, 0.0) == 1.0
    assert f["pow"](1.0, nan) == 1.0 and f["pow"](-1.0, inf) == 1.0 and f["pow"](0.5, -inf) == inf
    assert f["pow"](2.0, 1024.0) == inf and f["pow"](2.0, -1074.0) == 5e-324 and f["pow"](10.0, 308.0) == 1e308
    assert f["atan2"](0.0, -1.0) == math.pi and f["atan2"](-0.0, -1.0) == -math.pi and f["atan2"](inf, inf) == math.pi / 4
    assert f["hypot"](inf, nan) == inf and f["hypot"](3e300, 4e300) == 5e300 and f["hypot"](0.0, 0.0) == 0.0
    assert f["nextafter"](0.0, -1.0) == -5e-324 and f["nextafter"](1.0, 1.0) == 1.0 and math.isnan(f["nextafter"](nan, 1.0))


# --- kernels using them, linked for AMD GPUs -----------------------------------------------------------
@inductor_tile.jit
def math64_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    value = tl.exp(x) + tl.log(y) + tl.sqrt(y) + tl.sin(x) * tl.cos(x) + tl.extra.libdevice.tanh(x) + tl.erf(x)
    tl.store(out_ptr + offs, value + tl.extra.libdevice.pow(y, x))


@inductor_tile.jit
def special_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    lib = tl.extra.libdevice
    value = lib.erfc(x) + lib.lgamma(x) + lib.digamma(x) + lib.erfinv(x * 0.5) + lib.i0e(x) + lib.erfcx(x)
    tl.store(out_ptr + offs, value + lib.hypot(x, x) + lib.nextafter(x, x * 2.0) + lib.zeta(x + 2.0, x))


@needs_lld
@needs_objdump
@pytest.mark.parametrize("arch", ["gfx942", "gfx1100"])
def test_float64_math_links_with_no_library(arch):
    kernel = inductor_tile.compile(math64_kernel, signature={"x_ptr": "*fp64", "y_ptr": "*fp64", "out_ptr": "*fp64"},
                                   constexprs={"BLOCK": 64}, target=f"hip:{arch}", num_warps=1)
    text = _disassembly(kernel, arch)
    assert "v_fma_f64" in text and "s_swappc" not in text  # inlined: no calls left
    assert hsaco.kernel_metadata(kernel.asm["hsaco"], "math64_kernel")[".private_segment_fixed_size"] == 0
    assert "__nv_" not in kernel.asm["llir"] and "__ocml_" not in kernel.asm["llir"]


@needs_lld
@pytest.mark.parametrize("element", ["fp32", "fp64"])
def test_special_functions_link_on_amd(element):
    kernel = inductor_tile.compile(special_kernel, signature={"x_ptr": f"*{element}", "out_ptr": f"*{element}"},
                                   constexprs={"BLOCK": 64}, target="hip:gfx942", num_warps=1)
    assert hsaco.kernel_metadata(kernel.asm["hsaco"], "special_kernel")[".private_segment_fixed_size"] == 0


def test_what_the_amd_target_implements_is_its_own_data():
    amd, cpu = get_target("hip:gfx942"), get_target("cpu")
    for op in ("exp", "erfc", "lgamma", "hypot", "nextafter", "erfinv", "digamma", "i1e", "erfcx", "airy_ai", "pow",
               "j0", "y1", "zeta", "roundeven"):
        assert amd.implements_math(op) and cpu.implements_math(op), op
    assert not amd.implements_math("no_such_function")
    with pytest.raises(LoweringError, match=r"no_such_function \(f64\) is not available on the AMD \(hip\) target"):
        amd_math.entry("no_such_function", "f64")


# --- the special functions other targets build from their library, here on amd_math64's ------------------
_SPECIAL = {"erfinv": (torch.special.erfinv, -0.99, 0.99), "digamma": (torch.special.digamma, 0.1, 30.0),
            "cyl_bessel_i0": (torch.special.i0, -20.0, 20.0), "i1e": (torch.special.i1e, -50.0, 50.0),
            "erfcx": (torch.special.erfcx, -5.0, 30.0), "ndtri": (torch.special.ndtri, 0.001, 0.999),
            "modified_bessel_k0": (torch.special.modified_bessel_k0, 0.1, 20.0),
            "airy_ai": (torch.special.airy_ai, -10.0, 5.0),  # (torch's own is off by ~3e-6 on [-10, -2]) "erfc": (torch.special.erfc, -3.0, 10.0),
            "lgamma": (torch.lgamma, 0.1, 50.0), "j1": (torch.special.bessel_j1, -4.0, 4.0),
            "y0": (torch.special.bessel_y0, 0.1, 4.0)}  # (torch's Bessel J/Y: ~1e-10 off below 4, ~1e-6 above 5)


@pytest.mark.parametrize("element", ["f64", "f32"])
def test_special_functions_on_the_amd_library_match_torch(element, gen):
    """amd_math.own_function, as the AMD target's emit_math uses it, compiled for this CPU."""
    import llvmlite.binding as llvm

    ty = F64 if element == "f64" else ir.FloatType()
    module = ir.Module("amd_special_on_host")
    functions = {op: amd_math.own_function(module, op, ty) for op in _SPECIAL}
    amd_math.define_used(module)
    for fn in functions.values():
        fn.linkage = "external"
    engine = llvm.create_mcjit_compiler(llvm_tools.parse(str(module)), llvm_tools.host_target_machine())
    engine.finalize_object()
    c_type = ctypes.c_double if element == "f64" else ctypes.c_float
    dtype = torch.float64 if element == "f64" else torch.float32
    for op, (reference, low, high) in _SPECIAL.items():
        call = ctypes.CFUNCTYPE(c_type, c_type)(engine.get_function_address(functions[op].name))
        x = (torch.rand(300, generator=gen, dtype=torch.float64) * (high - low) + low).to(dtype)
        got = torch.tensor([call(v) for v in x.tolist()], dtype=dtype)
        tolerance = max({"airy_ai": 1e-5, "j1": 1e-9, "y0": 1e-9}.get(op, 0.0), 1e-12 if element == "f64" else 2e-6)
        torch.testing.assert_close(got, reference(x.double()).to(dtype), rtol=tolerance, atol=tolerance, msg=op)


@pytest.mark.parametrize("element", [ir.FloatType(), F64], ids=["f32", "f64"])
def test_every_math_op_of_the_lowering_compiles_for_amd(element):
    """What the AMD target says it implements is every math op of the lowering (rules_arith's tables), and each
    lowers for it in float32 and float64: AMDGPU code for gfx942 with nothing left to a library."""
    from inductor_tile.kernel_compiler.to_llvm import rules_arith

    unary, binary = set(rules_arith._MATH_OPS.values()), set(rules_arith._MATH_BINARY_OPS.values())
    assert amd_math.IMPLEMENTED == unary | binary
    target = get_target("hip:gfx942")
    module = ir.Module("every_op")
    module.triple, module.data_layout = target.triple(), target.data_layout()
    for op in sorted(unary | binary):
        arity = 2 if op in binary else 1
        fn = ir.Function(module, ir.FunctionType(element, [element] * arity), f"call_{op}")
        b = ir.IRBuilder(fn.append_basic_block("entry"))
        emitted = target.emit_math_binary(b, op, *fn.args) if arity == 2 else target.emit_math(b, op, fn.args[0])
        if emitted is None:
            entry = target.math(op, "f32" if element == ir.FloatType() else "f64")
            name = f"{entry.symbol}.{'f32' if element == ir.FloatType() else 'f64'}" if entry.is_intrinsic else entry.symbol
            callee = module.globals.get(name) or ir.Function(module, ir.FunctionType(element, [element] * arity), name)
            emitted = b.call(callee, list(fn.args))
        b.ret(emitted)
    amd_math.define_used(module)
    parsed = llvm_tools.parse(str(module))
    undefined = [f.name for f in parsed.functions if f.is_declaration and not f.name.startswith("llvm.")]
    assert not undefined
    assert hsaco.amdgpu_machine("gfx942").emit_object(parsed)[:4] == b"\x7fELF"  # the backend selects all of it
