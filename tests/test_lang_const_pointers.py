"""`ptr: tl.const`, Triton's read-only pointer parameters: the pointer's type is `*kfp32`, loads work,
stores and atomics through it are compile errors, and a variable or a ternary cannot be a const
pointer on one path and a plain one on another. Interpreter and CPU target; random inputs, outputs
poisoned first."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.language.dtypes import dtype_from_signature

MODES = ["interpret", "compiled"]
N = 64


def _refused(mode: str):
    """What a broken language rule raises: a CompilationError when compiling, the rule's own
    ValueError/TypeError when interpreting."""
    return pytest.raises(CompilationError if mode == "compiled" else (ValueError, TypeError))


def test_const_pointer_type():
    const_fp32 = tl.pointer_type(tl.float32, const=True)
    assert const_fp32.to_ir_string() == "*kfp32" and const_fp32.is_const()
    assert const_fp32 != tl.pointer_type(tl.float32) and not tl.pointer_type(tl.float32).is_const()
    assert const_fp32 is tl.pointer_type(tl.float32, const=True)  # interned
    assert dtype_from_signature("*kfp16") is tl.pointer_type(tl.float16, const=True)
    assert str(const_fp32) == "const pointer<float32>"


@inductor_tile.jit
def scaled_copy_kernel(x_ptr: tl.const, y_ptr, scale, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets) * scale)


@pytest.mark.parametrize("mode", MODES)
def test_loads_through_a_const_pointer(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(N, generator=gen)
    y = torch.full((N,), float("nan"))
    scaled_copy_kernel[(1,)](x, y, 1.5, N=N)
    torch.testing.assert_close(y.double(), x.double() * 1.5)


def test_the_signature_says_const():
    compiled = inductor_tile.compile(scaled_copy_kernel, signature={"x_ptr": "*kfp32", "y_ptr": "*fp32",
                                                                    "scale": "fp32"}, constexprs={"N": N})
    assert "!tt.ptr<f32>" in compiled.asm["ttir"]  # the IR pointer is the same: constness is the language's


@inductor_tile.jit
def store_through_const_kernel(x_ptr: tl.const, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets) + 1.0)


@inductor_tile.jit
def atomic_through_const_kernel(x_ptr: "tl.const", N: tl.constexpr):
    tl.atomic_add(x_ptr + tl.arange(0, N), 1.0)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kernel", [store_through_const_kernel, atomic_through_const_kernel])
def test_writing_through_a_const_pointer_is_refused(mode, kernel, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(N, generator=gen)
    before = x.clone()
    with _refused(mode) as info:
        kernel[(1,)](x, N=N)
    assert "Cannot store to a constant pointer" in str(info.value)
    assert torch.equal(x, before)


@inductor_tile.jit
def choose_output_if_kernel(x_ptr: tl.const, out_ptr, use_input, N: tl.constexpr):
    offsets = tl.arange(0, N)
    target = out_ptr
    if use_input:
        target = x_ptr
    tl.store(target + offsets, tl.load(x_ptr + offsets))


@inductor_tile.jit
def choose_output_ternary_kernel(x_ptr: tl.const, out_ptr, use_input, N: tl.constexpr):
    offsets = tl.arange(0, N)
    target = x_ptr if use_input else out_ptr
    tl.store(target + offsets, tl.load(x_ptr + offsets))


@pytest.mark.parametrize("kernel, message", [
    (choose_output_if_kernel, "Mismatched type for target"),
    (choose_output_ternary_kernel, "Ternary expression with dynamic condition has inconsistent types"),
])
def test_a_const_pointer_cannot_meet_a_plain_one(compiled, kernel, message):
    x, out = torch.randn(N), torch.full((N,), float("nan"))
    with pytest.raises(CompilationError, match=message) as info:
        kernel[(1,)](x, out, True, N=N, )
    assert message in info.value.error_message  # Triton's attribute
    assert "const pointer<float32>" in str(info.value)


@inductor_tile.jit
def choose_constexpr_kernel(x_ptr: tl.const, out_ptr, USE_INPUT: tl.constexpr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    target = x_ptr if USE_INPUT else out_ptr  # decided at compile time: no merge
    tl.store(target + offsets, tl.load(x_ptr + offsets) * 2.0)


@pytest.mark.parametrize("mode", MODES)
def test_a_compile_time_choice_keeps_each_type(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(N, generator=gen)
    out = torch.full((N,), float("nan"))
    choose_constexpr_kernel[(1,)](x, out, USE_INPUT=False, N=N)
    torch.testing.assert_close(out.double(), x.double() * 2.0)
    with _refused(mode, ) as info:
        choose_constexpr_kernel[(1,)](x, out, USE_INPUT=True, N=N)
    assert "Cannot store to a constant pointer" in str(info.value)
