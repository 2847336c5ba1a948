"""Typing rules, the ahead-of-time API, IR dumps and the README/CI contract."""

import re
from pathlib import Path

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.ir.context import parse_ttir
from inductor_tile.language.semantic import Semantic

ROOT = Path(__file__).resolve().parent.parent

# (a, a is a Python literal, b, b is a Python literal, div_or_mod) -> result, as Triton defines it
PROMOTION_TABLE = [
    (tl.int8, False, tl.int8, False, False, tl.int8),
    (tl.int8, False, tl.uint8, False, False, tl.uint8),
    (tl.int16, False, tl.uint8, False, False, tl.int16),
    (tl.int32, False, tl.int64, False, False, tl.int64),
    (tl.int1, False, tl.int1, False, False, tl.int1),
    (tl.int1, False, tl.int8, False, False, tl.int8),
    (tl.float16, False, tl.float16, False, False, tl.float16),
    (tl.float16, False, tl.float16, False, True, tl.float32),
    (tl.float16, False, tl.bfloat16, False, False, tl.float32),
    (tl.bfloat16, False, tl.int32, False, False, tl.bfloat16),
    (tl.float16, False, tl.float32, False, False, tl.float32),
    (tl.float32, False, tl.float64, False, False, tl.float64),
    (tl.int64, False, tl.float16, False, False, tl.float16),
    # Python literals of a lower or equal kind take the tensor's type
    (tl.float16, False, tl.float32, True, False, tl.float16),
    (tl.int8, False, tl.int32, True, False, tl.int8),
    (tl.float16, False, tl.int32, True, True, tl.float32),
    (tl.int8, False, tl.float32, True, False, tl.float32),
    (tl.uint8, False, tl.int32, True, False, tl.uint8),
]


@pytest.mark.parametrize("a, a_lit, b, b_lit, div, expected", PROMOTION_TABLE)
def test_computation_type(a, a_lit, b, b_lit, div, expected):
    semantic = Semantic(builder=None)
    assert semantic.computation_type(a, a_lit, b, b_lit, div) == expected
    assert semantic.computation_type(b, b_lit, a, a_lit, div) == expected


@inductor_tile.jit
def typing_kernel(h_ptr, i8_ptr, u8_ptr, f_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    h = tl.load(h_ptr + offs)
    i8 = tl.load(i8_ptr + offs)
    u8 = tl.load(u8_ptr + offs)
    tl.static_assert((h * 2.0).dtype == tl.float16)
    tl.static_assert((h / h).dtype == tl.float32)
    tl.static_assert((i8 + u8).dtype == tl.uint8)
    tl.static_assert((i8 / i8).dtype == tl.float32)
    tl.static_assert((i8 < 3).dtype == tl.int1)
    tl.static_assert(tl.sum(i8, axis=0).dtype == tl.int32)
    tl.static_assert(tl.argmax(h, axis=0).dtype == tl.int32)
    tl.static_assert(h[:, None].shape[0] == BLOCK)
    tl.static_assert(h[None, :].shape[0] == 1)
    tl.static_assert(len(tl.broadcast_to(h[:, None], (BLOCK, 4)).shape) == 2)
    tl.static_assert(h_ptr.dtype.element_ty == tl.float16)
    tl.store(f_ptr + offs, h.to(tl.float32) + i8 + u8)
    tl.store(f_ptr + BLOCK + offs, (i8 + u8).to(tl.float32))  # uint8 arithmetic wraps


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_result_types_inside_a_kernel(mode, monkeypatch):
    monkeypatch.setenv("TILE_INTERPRET", "1" if mode == "interpret" else "0")
    gen = torch.Generator().manual_seed(0)
    h = torch.randn(16, generator=gen).half()
    i8 = torch.randint(-50, 50, (16,), generator=gen, dtype=torch.int8)
    u8 = torch.randint(0, 100, (16,), generator=gen, dtype=torch.uint8)
    out = torch.full((32,), float("nan"))
    typing_kernel[(1,)](h, i8, u8, out, BLOCK=16)
    torch.testing.assert_close(out[16:].double(), ((i8.long() + u8.long()) % 256).double())
    out = out[:16]
    expected = h.double() + i8.double() + u8.double()  # fp32 + int8 -> fp32, then + uint8 -> fp32
    torch.testing.assert_close(out.double(), expected, rtol=1e-6, atol=1e-6)


@inductor_tile.jit
def aot_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


def test_compile_ahead_of_time_fills_ttir():
    k = inductor_tile.compile(aot_kernel, signature={"x_ptr": "*fp16", "out_ptr": "*fp16", "n": "i32", "scale": "fp32"},
                              constexprs={"BLOCK": 256}, divisible_by_16=["x_ptr", "n"])
    ttir = k.asm["ttir"]
    assert re.search(r"func.func public @aot_kernel\(%\d+: !tt.ptr<f16> \{tt.divisibility = 16 : i32\}, "
                     r"%\d+: !tt.ptr<f16>, %\d+: i32 \{tt.divisibility = 16 : i32\}, %\d+: f32\)", ttir), ttir
    assert "tensor<256x!tt.ptr<f16>>" in ttir
    assert "tt.make_range {end = 256 : i32, start = 0 : i32}" in ttir
    parse_ttir(ttir).verify()


def test_compile_equal_to_1_specializes_the_constant():
    general = inductor_tile.compile(aot_kernel, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                                           "scale": "fp32"}, constexprs={"BLOCK": 64})
    special = inductor_tile.compile(aot_kernel, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                                           "scale": "fp32"}, constexprs={"BLOCK": 64},
                                    equal_to_1=["n"])
    assert "tt.splat %2" in general.asm["ttir"]  # the mask compares with the argument n
    assert "tt.splat %2" not in special.asm["ttir"]  # n == 1 is folded into the code


@inductor_tile.jit
def scale_by_count(x_ptr, out_ptr, n, count, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * count.to(tl.float32), mask=mask)  # Inductor writes (s0).to(...)


@pytest.mark.parametrize("count", [1, 3])
def test_int_argument_to_float_also_when_specialized_as_1(compiled, count):
    """`count.to(tl.float32)` on an int argument: count == 1 is specialized into the code (a
    constexpr), and must convert like any other value (a dynamic-shape addmv crashed on it)."""
    x = torch.randn(50, generator=torch.Generator().manual_seed(count))
    out = torch.full_like(x, float("nan"))
    scale_by_count[(1,)](x, out, 50, count, BLOCK=64)
    torch.testing.assert_close(out.double(), x.double() * count, rtol=1e-6, atol=1e-6)


def test_dump_ir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_DUMP_IR", str(tmp_path))
    inductor_tile.compile(aot_kernel, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "scale": "fp32"},
                          constexprs={"BLOCK": 64})
    dumped = (tmp_path / "aot_kernel.ttir").read_text()
    assert "tt.store" in dumped


def test_unknown_target():
    with pytest.raises(ValueError, match=r"unknown target 'tpu'"):
        inductor_tile.compile(aot_kernel, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                                                     "scale": "fp32"}, constexprs={"BLOCK": 64}, target="tpu")


def test_launch_specializes_once_per_signature(compiled):
    aot_kernel.cache.clear()
    x = torch.randn(100)
    out = torch.full_like(x, float("nan"))
    aot_kernel[(2,)](x, out, 100, 2.0, BLOCK=64)
    aot_kernel[(2,)](x, out, 100, 3.0, BLOCK=64)  # same specialization
    assert len(aot_kernel.cache) == 1
    aot_kernel[(2,)](x, out, 99, 3.0, BLOCK=64)  # like 100, 99 is not divisible by 16: same specialization
    assert len(aot_kernel.cache) == 1
    aot_kernel[(2,)](x, out, 64, 3.0, BLOCK=64)  # 64 is divisible by 16
    out64 = torch.full_like(x, float("nan"), dtype=torch.float64)
    aot_kernel[(2,)](x.double(), out64, 100, 3.0, BLOCK=64)  # new dtypes
    assert len(aot_kernel.cache) == 3
    torch.testing.assert_close(out, x * 3.0)
    torch.testing.assert_close(out64, x.double() * 3.0)


def test_grid_callable_and_helpers(interpret):
    x = torch.randn(1000)
    out = torch.full_like(x, float("nan"))
    aot_kernel[lambda meta: (inductor_tile.cdiv(meta["n"], meta["BLOCK"]),)](x, out, 1000, 0.5, BLOCK=128)
    torch.testing.assert_close(out, x * 0.5)
    assert [inductor_tile.next_power_of_2(n) for n in (0, 1, 2, 3, 17, 1024)] == [1, 1, 2, 4, 32, 1024]


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = 'pip install -e ".[test]" && python -m pytest -q -n 2 --dist loadfile tests'
    assert command in readme
    assert ci.strip().splitlines()[-1] == command


def test_compile_fills_every_stage_for_cpu_and_cuda():
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "scale": "fp32"}
    cpu = inductor_tile.compile(aot_kernel, signature=signature, constexprs={"BLOCK": 256}, target="cpu",
                                divisible_by_16=["x_ptr", "out_ptr"])
    assert set(cpu.asm) >= {"ttir", "ttgir", "llir", "asm"}
    assert "#ttg.blocked<{sizePerThread" in cpu.asm["ttgir"]
    assert "llvm.masked.load" in cpu.asm["llir"] and "_grid" in cpu.asm["llir"]
    cuda = inductor_tile.compile(aot_kernel, signature=signature, constexprs={"BLOCK": 256}, target="cuda:90",
                                 divisible_by_16=["x_ptr", "out_ptr"])
    assert set(cuda.asm) >= {"ttir", "ttgir", "llir", "ptx"}
    assert ".target sm_90" in cuda.asm["ptx"] and ".visible .entry aot_kernel(" in cuda.asm["ptx"]


# ===--------------------------------------------------------------------------===
# libdevice math (`inductor_tile.language.extra.libdevice`, Triton's names)
# ===--------------------------------------------------------------------------===
from inductor_tile.language.extra import libdevice  # noqa: E402

# name -> (torch reference on the kernel's argument, how the kernel shapes its argument)
LIBDEVICE_UNARY = ["tanh", "log1p", "expm1", "log10", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh",
                   "acosh", "atanh", "trunc", "rint", "nearbyint", "round"]
LIBDEVICE_BINARY = ["pow", "atan2", "copysign", "fmod"]


@inductor_tile.jit
def libdevice_unary_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.5)  # x in (-0.95, 0.95), never 0
    big = x * 7.3
    results = (libdevice.tanh(big), libdevice.log1p(x), libdevice.expm1(big), libdevice.log10(tl.abs(big)),
               libdevice.tan(x), libdevice.sinh(big), libdevice.cosh(big), libdevice.asin(x), libdevice.acos(x),
               libdevice.atan(big), libdevice.asinh(big), libdevice.acosh(tl.abs(big) + 1.0), libdevice.atanh(x),
               libdevice.trunc(big), libdevice.rint(big), libdevice.nearbyint(big), libdevice.round(big))
    for i in tl.static_range(17):
        tl.store(out_ptr + i * n + offs, results[i], mask=mask)


@inductor_tile.jit
def libdevice_binary_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.5)
    y = tl.load(y_ptr + offs, mask=mask, other=0.5)
    results = (libdevice.pow(tl.abs(x) * 3.0, y * 2.0), libdevice.atan2(x, y), libdevice.copysign(x, y),
               libdevice.fmod(x * 7.3, y))
    for i in tl.static_range(4):
        tl.store(out_ptr + i * n + offs, results[i], mask=mask)


def _libdevice_inputs(dtype, n=200, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.rand(n, generator=gen, dtype=torch.float64) * 0.9 + 0.05) * (torch.randint(0, 2, (n,), generator=gen) * 2 - 1)
    x[:6] = torch.tensor([0.5 / 7.3, -0.5 / 7.3, 1.5 / 7.3, 2.5 / 7.3, -2.5 / 7.3, 0.9])  # rounding ties (in fp64)
    return x.to(dtype)


def _libdevice_unary_refs(x):
    big = x * torch.tensor(7.3, dtype=x.dtype)  # in the kernel's dtype, as the kernel computes it
    acosh_arg = (big.abs() + 1.0).double()
    big, xd = big.double(), x.double()
    half_away = lambda v: torch.where((v - v.trunc()).abs() >= 0.5, v.trunc() + v.sign(), v.trunc())  # noqa: E731
    return [big.tanh(), xd.log1p(), big.expm1(), big.abs().log10(), xd.tan(), big.sinh(), big.cosh(), xd.asin(),
            xd.acos(), big.atan(), big.asinh(), acosh_arg.acosh(), xd.atanh(), big.trunc(), big.round(),
            big.round(), half_away(big)]


def _libdevice_tolerance(dtype):
    return {torch.float16: (1e-3, 1e-3), torch.float32: (1e-5, 1e-6), torch.float64: (1e-12, 1e-12)}[dtype]


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_libdevice_unary_matches_torch(mode, dtype, monkeypatch):
    if mode == "interpret":
        monkeypatch.setenv("TILE_INTERPRET", "1")
    else:
        monkeypatch.delenv("TILE_INTERPRET", raising=False)
    n = 200
    x = _libdevice_inputs(dtype)
    out = torch.full((len(LIBDEVICE_UNARY) * n,), float("nan"), dtype=dtype)
    libdevice_unary_kernel[(tl.cdiv(n, 32),)](x, out, n, BLOCK=32)  # narrow tiles compile fast
    rtol, atol = _libdevice_tolerance(dtype)
    for i, (name, ref) in enumerate(zip(LIBDEVICE_UNARY, _libdevice_unary_refs(x))):
        torch.testing.assert_close(out[i * n:(i + 1) * n].double(), ref.to(dtype).double(), rtol=rtol, atol=atol,
                                   msg=lambda m, name=name: f"libdevice.{name} {dtype}: {m}")


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_libdevice_binary_matches_torch(mode, dtype, monkeypatch):
    if mode == "interpret":
        monkeypatch.setenv("TILE_INTERPRET", "1")
    else:
        monkeypatch.delenv("TILE_INTERPRET", raising=False)
    n = 200
    x, y = _libdevice_inputs(dtype, seed=1), _libdevice_inputs(dtype, seed=2)
    out = torch.full((len(LIBDEVICE_BINARY) * n,), float("nan"), dtype=dtype)
    libdevice_binary_kernel[(tl.cdiv(n, 32),)](x, y, out, n, BLOCK=32)
    xd, yd = x.double(), y.double()
    base = (x.abs() * 3.0).double()  # rounded to the kernel's dtype first, as the kernel does
    refs = [base.pow((y * 2.0).double()), torch.atan2(xd, yd), torch.copysign(xd, yd), torch.fmod((x * torch.tensor(7.3, dtype=dtype)).double(), yd)]
    rtol, atol = _libdevice_tolerance(dtype)
    for i, (name, ref) in enumerate(zip(LIBDEVICE_BINARY, refs)):
        torch.testing.assert_close(out[i * n:(i + 1) * n].double(), ref.to(dtype).double(), rtol=rtol, atol=atol,
                                   msg=lambda m, name=name: f"libdevice.{name} {dtype}: {m}")


def test_libdevice_functions_assemble_with_ptxas():
    import platform

    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    if platform.system() != "Linux" or platform.machine() != "x86_64":
        pytest.skip("ptxas and libdevice wheels exist for Linux x86-64 only")
    for dtype in ("fp32", "fp64", "fp16"):
        for kernel, pointers in ((libdevice_unary_kernel, ("x_ptr", "out_ptr")),
                                 (libdevice_binary_kernel, ("x_ptr", "y_ptr", "out_ptr"))):
            signature = {p: f"*{dtype}" for p in pointers} | {"n": "i32"}
            compiled = inductor_tile.compile(kernel, signature=signature, constexprs={"BLOCK": 256}, target="cuda:90",
                                             divisible_by_16=list(pointers))
            ptx = compiled.asm["ptx"]
            check_ptx(ptx, "sm_90", kernel.__name__)
            if kernel is libdevice_unary_kernel and dtype == "fp32":
                assert "cvt.rzi.f32.f32" in ptx and "cvt.rni.f32.f32" in ptx  # trunc, rint: one instruction each
            assert ptx.count(".func") < 60, "all of libdevice was linked into the kernel"


@inductor_tile.jit
def bool_gather_kernel(mask_ptr, idx_ptr, table_ptr, out_ptr, flags_ptr, n, size, BLOCK: tl.constexpr):
    # what the torch.compile codegen emits for bool tensors and embeddings: i1 loads and stores
    # (one byte each), a wrapped index and a bounds-masked gather
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    keep = tl.load(mask_ptr + offs, mask=mask, other=0)
    idx = tl.load(idx_ptr + offs, mask=mask, other=0)
    idx = tl.where(idx < 0, idx + size, idx)
    inside = (idx >= 0) & (idx < size)
    value = tl.load(table_ptr + idx, mask=mask & inside, other=0)
    tl.store(out_ptr + offs, tl.where(keep, value, -1.0), mask=mask)
    tl.store(flags_ptr + offs, keep ^ (value > 0), mask=mask)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_bool_pointers_and_masked_gather(mode, monkeypatch):
    if mode == "interpret":
        monkeypatch.setenv("TILE_INTERPRET", "1")
    else:
        monkeypatch.delenv("TILE_INTERPRET", raising=False)
    gen = torch.Generator().manual_seed(5)
    n, size = 100, 37
    keep = torch.rand(n, generator=gen) > 0.5
    idx = torch.randint(-size, size, (n,), generator=gen)
    idx[:3] = torch.tensor([size, -size - 1, 1000])  # out of range: masked, read as 0
    table = torch.randn(size, generator=gen, dtype=torch.float64)
    out = torch.full((n,), float("nan"), dtype=torch.float64)
    flags = torch.zeros(n, dtype=torch.bool)
    bool_gather_kernel[(tl.cdiv(n, 32),)](keep, idx, table, out, flags, n, size, BLOCK=32)
    wrapped = torch.where(idx < 0, idx + size, idx)
    inside = (wrapped >= 0) & (wrapped < size)
    value = torch.where(inside, table[wrapped.clamp(0, size - 1)], 0.0)
    assert torch.equal(out, torch.where(keep, value, -1.0))
    assert torch.equal(flags, keep ^ (value > 0))


def test_bool_pointers_assemble_with_ptxas():
    import platform

    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    if platform.system() != "Linux" or platform.machine() != "x86_64":
        pytest.skip("ptxas exists for Linux x86-64 only")
    signature = {"mask_ptr": "*i1", "idx_ptr": "*i64", "table_ptr": "*fp64", "out_ptr": "*fp64", "flags_ptr": "*i1",
                 "n": "i32", "size": "i32"}
    compiled = inductor_tile.compile(bool_gather_kernel, signature=signature, constexprs={"BLOCK": 256},
                                     target="cuda:90", divisible_by_16=["mask_ptr", "idx_ptr", "table_ptr", "out_ptr",
                                                                        "flags_ptr"])
    ptx = compiled.asm["ptx"]
    check_ptx(ptx, "sm_90", "bool_gather_kernel")
    assert "ld.global.b8" in ptx and "st.global.b8" in ptx  # bools are bytes in memory
