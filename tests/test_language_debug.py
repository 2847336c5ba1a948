"""tl.device_assert (debug mode only), tl.device_print, tl.static_assert, tl.static_print.

CPU target and interpreter: a failing device assertion raises DeviceAssertionError naming the
kernel's file:line and the failing program ids; without debug mode the check is not compiled
in. NVIDIA: the assertion calls CUDA's __assertfail and ptxas accepts the kernel.
"""

from __future__ import annotations

import platform

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.runtime.device_assert import DeviceAssertionError


def _double_positive(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    tl.device_assert(x > 0, "x must be positive", mask=offs < n)
    tl.store(x_ptr + offs, x * 2, mask=offs < n)


checked_kernel = inductor_tile.jit(debug=True)(_double_positive)
unchecked_kernel = inductor_tile.jit(_double_positive)
ASSERT_LINE = _double_positive.__code__.co_firstlineno + 3


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_device_assert_reports_line_and_program(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.rand(100, generator=gen) + 0.1
    checked_kernel[(4,)](x.clone(), 100, BLOCK=32)  # passes
    x[77] = -1.0
    with pytest.raises(DeviceAssertionError, match=rf"test_language_debug.py:{ASSERT_LINE}: device assertion failed: "
                                                   r"x must be positive \(program id \(2, 0, 0\)\)"):
        checked_kernel[(4,)](x, 100, BLOCK=32)


def test_device_assert_is_compiled_only_in_debug_mode(compiled, monkeypatch, gen):
    x = torch.rand(64, generator=gen) - 2.0
    want = x * 2
    unchecked_kernel[(2,)](x, 64, BLOCK=32)
    assert torch.equal(x, want)
    specs = [spec_from_signature("x_ptr", "*fp32", divisible_by_16=True), spec_from_signature("n", "i32"),
             spec_from_signature("BLOCK", "constexpr", 32)]
    assert "tt.assert" not in compile_specialized(unchecked_kernel, specs, target="cpu", native=False).asm["ttir"]
    monkeypatch.setenv("TILE_DEBUG", "1")
    assert "tt.assert" in compile_specialized(unchecked_kernel, specs, target="cpu", native=False).asm["ttir"]


def _scale_positive(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1.0)
    assert (x > 0) | (offs >= n), "x must be positive"
    tl.store(y_ptr + offs, x * 3.0, mask=offs < n)


checked_assert_kernel = inductor_tile.jit(debug=True)(_scale_positive)
unchecked_assert_kernel = inductor_tile.jit(_scale_positive)
PY_ASSERT_LINE = _scale_positive.__code__.co_firstlineno + 3


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_runtime_assert_statement_is_checked_only_in_debug_mode(mode, request, gen, monkeypatch):
    """Triton's rule: `assert` on a tile is tl.device_assert, so outside debug mode it is not checked (the
    interpreter runs the kernel's Python, where a plain `assert` would always fire)."""
    request.getfixturevalue(mode)
    monkeypatch.delenv("TILE_DEBUG", raising=False)
    x = torch.rand(100, generator=gen) + 0.1
    x[13] = -0.5  # the one failing element
    y = torch.full_like(x, float("nan"))
    unchecked_assert_kernel[(4,)](x, y, 100, BLOCK=32)
    torch.testing.assert_close(y.double(), x.double() * 3.0)
    with pytest.raises(DeviceAssertionError, match=rf"test_language_debug.py:{PY_ASSERT_LINE}: device assertion "
                                                   r"failed: x must be positive \(program id \(0, 0, 0\)\)"):
        checked_assert_kernel[(4,)](x, torch.full_like(x, float("nan")), 100, BLOCK=32)
    x[13] = 0.25
    y = torch.full_like(x, float("nan"))
    checked_assert_kernel[(4,)](x, y, 100, BLOCK=32)  # passes
    torch.testing.assert_close(y.double(), x.double() * 3.0)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_assert_on_a_python_value_is_checked_in_every_mode(mode, request, monkeypatch):
    request.getfixturevalue(mode)
    monkeypatch.delenv("TILE_DEBUG", raising=False)

    @inductor_tile.jit
    def constexpr_assert_kernel(x_ptr, BLOCK: tl.constexpr):
        assert BLOCK % 64 == 0, f"BLOCK={BLOCK} is not a multiple of 64"
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    x = torch.full((64,), float("nan"))
    constexpr_assert_kernel[(1,)](x, BLOCK=64)
    assert torch.equal(x, torch.ones(64))
    error = AssertionError if mode == "interpret" else CompilationError
    with pytest.raises(error, match="BLOCK=32 is not a multiple of 64"):
        constexpr_assert_kernel[(1,)](torch.empty(32), BLOCK=32)


@inductor_tile.jit
def print_kernel(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 4))
    tl.device_print("x=", x)
    tl.device_print("pid=", tl.program_id(0))


def test_device_print_on_cpu(compiled, capfd):
    print_kernel[(2,)](torch.tensor([0.5, -1.0, 2.0, 3.25]))
    out = capfd.readouterr().out
    assert "pid (1, 0, 0) idx (3) x=: 3.250000" in out
    assert "pid (0, 0, 0) idx (1) x=: -1.000000" in out
    assert "pid (1, 0, 0) idx () pid=: 1" in out


def test_device_print_in_the_interpreter(interpret, capsys):
    print_kernel[(1,)](torch.tensor([0.5, -1.0, 2.0, 3.25]))
    out = capsys.readouterr().out
    assert "pid (0, 0, 0) idx (3) x=: 3.250000" in out
    assert "pid (0, 0, 0) idx () pid=: 0" in out


def test_static_assert_fails_compilation_at_its_line(compiled):
    @inductor_tile.jit
    def static_kernel(x_ptr, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK % 64 == 0, "BLOCK must be a multiple of 64")
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    with pytest.raises(CompilationError, match=r"tl.static_assert(.|\n)*BLOCK must be a multiple of 64"):
        static_kernel[(1,)](torch.empty(32), BLOCK=32)


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
def test_device_assert_and_print_assemble_for_sm90():
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    specs = [spec_from_signature("x_ptr", "*fp32", divisible_by_16=True), spec_from_signature("n", "i32"),
             spec_from_signature("BLOCK", "constexpr", 256)]
    ptx = compile_specialized(checked_kernel, specs, target="cuda:90", native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", "checked_kernel")
    assert "call.uni __assertfail" in ptx or "__assertfail," in ptx
    ptx = compile_specialized(print_kernel, specs[:1], target="cuda:90", native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", "print_kernel")
    assert "vprintf" in ptx


@inductor_tile.jit
def checked_add(a, b):
    wide = a.to(tl.int64) + b.to(tl.int64)
    tl.device_assert((wide >= -2**31) & (wide < 2**31), "int32 overflow")
    return a + b


@inductor_tile.jit(debug=True)
def checked_sum_and_cumsum_kernel(x_ptr, sum_ptr, cumsum_ptr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, BLOCK))
    tl.store(sum_ptr, tl.reduce(x, 0, checked_add))
    tl.store(cumsum_ptr + tl.arange(0, BLOCK), tl.associative_scan(x, 0, checked_add))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_device_assert_inside_a_combine_function(mode, request, gen):
    """A combine function may check its operands (debug mode): every combine step is checked."""
    request.getfixturevalue(mode)
    x = torch.randint(-1000, 1000, (256,), generator=gen, dtype=torch.int32)
    total = torch.full((1,), -1, dtype=torch.int32)
    cumsum = torch.full((256,), -1, dtype=torch.int32)
    checked_sum_and_cumsum_kernel[(1,)](x, total, cumsum, BLOCK=256)
    assert total.item() == x.long().sum().item()
    assert torch.equal(cumsum.long(), x.long().cumsum(0))
    x[:3] = 2**30  # the partial sums pass 2**31
    with pytest.raises(DeviceAssertionError, match=r"device assertion failed: int32 overflow"):
        checked_sum_and_cumsum_kernel[(1,)](x, total, cumsum, BLOCK=256)
