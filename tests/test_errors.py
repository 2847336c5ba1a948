"""Bad kernels and bad launches give clear errors that point at the user's code."""

import os
import re
import traceback

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile import CompilationError


COMPILER_DIR = os.path.join("inductor_tile", "kernel_compiler") + os.sep


def compiler_frames(error: BaseException) -> list[str]:
    """The frames inside the compiler in everything Python would print for `error` (its causes included)."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    return [line for line in text.splitlines() if line.strip().startswith("File ") and COMPILER_DIR in line
            and "compiler.py" not in line and "ttir.py" not in line]  # the API's own frames, above the front end


def compile_error(kernel, signature, constexprs=None) -> CompilationError:
    with pytest.raises(CompilationError) as info:
        inductor_tile.compile(kernel, signature=signature, constexprs=constexprs or {})
    error = info.value
    # the user's mistake as the language raised it: with the language's frames, none of the front end's
    assert not compiler_frames(error), "the front end's frames must not be shown:\n" + "\n".join(compiler_frames(error))
    assert error.__context__ is None or error.__suppress_context__ or error.__context__ is error.__cause__, \
        "internal tracebacks must not be shown"
    return error


def assert_points_at(error: CompilationError, source_fragment: str, message: str) -> None:
    text = str(error)
    assert source_fragment in error.source_line, f"error points at {error.source_line!r}, not at {source_fragment!r}"
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if i > 0 and source_fragment in line)
    caret = lines[at + 1]
    assert caret.strip() == "^", f"no caret under the source line:\n{text}"
    assert re.search(message, text), f"message {message!r} not in:\n{text}"
    assert f"{__file__}:{error.lineno}" in text


@inductor_tile.jit
def while_else_kernel(x_ptr, n):
    i = 0
    while i < n:
        i += 1
    else:
        i = -1
    tl.store(x_ptr, i)


def test_unsupported_construct():
    error = compile_error(while_else_kernel, {"x_ptr": "*i32", "n": "i32"})
    assert_points_at(error, "while i < n:", r"unsupported in a kernel: `while ... else`")


@inductor_tile.jit
def unknown_name_kernel(x_ptr):
    tl.store(x_ptr, undefined_thing + 1)  # noqa: F821


def test_unknown_name():
    error = compile_error(unknown_name_kernel, {"x_ptr": "*fp32"})
    assert_points_at(error, "undefined_thing + 1", r"name 'undefined_thing' is not defined")


@inductor_tile.jit
def broadcast_mismatch_kernel(x_ptr):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    tl.store(x_ptr + a, a + b)


def test_shape_mismatch_in_broadcasting():
    error = compile_error(broadcast_mismatch_kernel, {"x_ptr": "*i32"})
    assert_points_at(error, "a + b", r"incompatible shapes for broadcasting: \[16\] and \[32\]")


@inductor_tile.jit
def runtime_arange_kernel(x_ptr, n):
    offsets = tl.arange(0, n)
    tl.store(x_ptr + offsets, 1.0)


def test_arange_with_runtime_bound():
    error = compile_error(runtime_arange_kernel, {"x_ptr": "*fp32", "n": "i32"})
    assert_points_at(error, "tl.arange(0, n)", r"tl.arange bounds must be compile-time integers")


@inductor_tile.jit
def arange_not_power_of_two_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


def test_arange_not_power_of_two():
    error = compile_error(arange_not_power_of_two_kernel, {"x_ptr": "*fp32"}, {"BLOCK": 100})
    assert_points_at(error, "tl.arange(0, BLOCK)", r"range must be a power of two, got 100")


@inductor_tile.jit
def loop_type_change_kernel(x_ptr, n):
    acc = 0
    for i in range(n):
        acc += tl.load(x_ptr + i)
    tl.store(x_ptr, acc)


def test_loop_carried_type_change():
    error = compile_error(loop_type_change_kernel, {"x_ptr": "*fp32", "n": "i32"})
    assert_points_at(error, "for i in range(n):", r"loop-carried variable 'acc' is int32 before the loop but float32")


@inductor_tile.jit
def if_on_block_kernel(x_ptr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if x > 0:
        x = x * 2
    tl.store(x_ptr + tl.arange(0, 16), x)


def test_if_on_a_block():
    error = compile_error(if_on_block_kernel, {"x_ptr": "*fp32"})
    assert_points_at(error, "if x > 0:", r"`if` needs a scalar condition.*use tl.where")


@inductor_tile.jit
def if_branch_types_kernel(x_ptr, flag):
    if flag > 0:
        y = 1.0
    else:
        y = 1
    tl.store(x_ptr, y)


def test_if_branches_with_different_types():
    error = compile_error(if_branch_types_kernel, {"x_ptr": "*fp32", "flag": "i32"})
    assert_points_at(error, "if flag > 0:", r"Mismatched type for y: float32 in the `if` branch but int32")


@inductor_tile.jit
def return_value_kernel(x_ptr):
    return tl.load(x_ptr)


def test_kernel_returning_a_value():
    error = compile_error(return_value_kernel, {"x_ptr": "*fp32"})
    assert_points_at(error, "return tl.load(x_ptr)", r"a kernel cannot return a value")


def python_helper(x):
    return x * 2


@inductor_tile.jit
def calls_python_kernel(x_ptr):
    tl.store(x_ptr, python_helper(tl.load(x_ptr)))


def test_call_to_a_plain_python_function_with_tile_values():
    error = compile_error(calls_python_kernel, {"x_ptr": "*fp32"})
    assert_points_at(error, "python_helper(tl.load(x_ptr))", r"`python_helper` is neither a tile builtin nor a @jit")


@inductor_tile.jit
def float_floordiv_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) // 2.0)


def test_floor_division_of_floats():
    error = compile_error(float_floordiv_kernel, {"x_ptr": "*fp32"})
    assert_points_at(error, "tl.load(x_ptr) // 2.0", r"'//' is only defined for integers \(got float32\)")


@inductor_tile.jit
def int_exp_kernel(x_ptr):
    tl.store(x_ptr, tl.exp(tl.load(x_ptr)))


def test_math_on_integers():
    error = compile_error(int_exp_kernel, {"x_ptr": "*i32"})
    assert_points_at(error, "tl.exp(tl.load(x_ptr))", r"tl.exp expects a floating-point argument, got int32")


@inductor_tile.jit
def load_non_pointer_kernel(x_ptr, n):
    tl.store(x_ptr, tl.load(n))


def test_load_from_a_non_pointer():
    error = compile_error(load_non_pointer_kernel, {"x_ptr": "*fp32", "n": "i32"})
    assert_points_at(error, "tl.load(n)", r"tl.load expects a pointer or a block of pointers, got int32")


@inductor_tile.jit
def bad_helper(x):
    return x + tl.arange(0, 8)


@inductor_tile.jit
def calls_bad_helper_kernel(x_ptr):
    y = bad_helper(tl.arange(0, 16))
    tl.store(x_ptr + tl.arange(0, 16), y)


def test_error_inside_a_helper_points_at_the_call_and_chains_the_helpers_error():
    error = compile_error(calls_bad_helper_kernel, {"x_ptr": "*i32"})
    assert_points_at(error, "y = bad_helper(tl.arange(0, 16))", r"in `bad_helper` \(.*test_errors.py:\d+\) called here: "
                                                                  r"incompatible shapes")
    inner = error.__cause__
    assert isinstance(inner, CompilationError) and inner.fn_name == "bad_helper"
    assert_points_at(inner, "x + tl.arange(0, 8)", r"incompatible shapes")
    assert str(error).startswith("at 2:8: in kernel `calls_bad_helper_kernel`")
    assert str(inner).startswith("at 2:11: in kernel `bad_helper`")


@inductor_tile.jit
def break_kernel(x_ptr, n):
    for i in range(n):
        break


def test_break_is_rejected():
    error = compile_error(break_kernel, {"x_ptr": "*fp32", "n": "i32"})
    assert_points_at(error, "break", r"unsupported in a kernel: `break`")


# --- launch errors -------------------------------------------------------------


@inductor_tile.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_launch_with_wrong_number_of_arguments(mode, monkeypatch):
    monkeypatch.setenv("TILE_INTERPRET", "1" if mode == "interpret" else "0")
    x = torch.randn(8)
    with pytest.raises(TypeError, match=r"copy_kernel\[grid\]\(\.\.\.\): missing a required argument: 'n'"):
        copy_kernel[(1,)](x, x, BLOCK=8)
    with pytest.raises(TypeError, match=r"too many positional arguments"):
        copy_kernel[(1,)](x, x, 8, 8, 8)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_launch_with_wrong_argument_type(mode, monkeypatch):
    monkeypatch.setenv("TILE_INTERPRET", "1" if mode == "interpret" else "0")
    x = torch.randn(8)
    with pytest.raises(TypeError, match=r"argument 'n' has unsupported type str"):
        copy_kernel[(1,)](x, x, "8", BLOCK=8)
    with pytest.raises(TypeError, match=r"argument 'x_ptr': tensors of dtype torch.complex64 are not supported"):
        copy_kernel[(1,)](torch.zeros(8, dtype=torch.complex64), x, 8, BLOCK=8)


def test_launch_with_bad_grid_and_num_warps():
    x = torch.randn(8)
    with pytest.raises(ValueError, match=r"grid must have 1 to 3 dimensions"):
        copy_kernel[(1, 1, 1, 1)](x, x, 8, BLOCK=8)
    with pytest.raises(ValueError, match=r"num_warps must be a power of 2, got 3"):
        copy_kernel[(1,)](x, x, 8, BLOCK=8, num_warps=3)


def test_builtins_outside_a_kernel():
    with pytest.raises(RuntimeError, match=r"can only be used inside a kernel"):
        tl.arange(0, 16)


def test_compile_signature_errors():
    with pytest.raises(TypeError, match=r"parameter 'n' of copy_kernel is missing from signature="):
        inductor_tile.compile(copy_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32"}, constexprs={"BLOCK": 8})
    with pytest.raises(ValueError, match=r"unknown type string 'float'"):
        inductor_tile.compile(copy_kernel, signature={"x_ptr": "*float", "y_ptr": "*fp32", "n": "i32"},
                              constexprs={"BLOCK": 8})
    with pytest.raises(TypeError, match=r"has no parameter\(s\) \['z'\]"):
        inductor_tile.compile(copy_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "z": "i32"},
                              constexprs={"BLOCK": 8})


def test_interpreter_reports_out_of_bounds_access(interpret):
    x = torch.randn(8)
    y = torch.full((8,), float("nan"))
    with pytest.raises(IndexError):
        copy_kernel[(1,)](x, y, 16, BLOCK=16)  # n larger than the tensors: the mask lets bad lanes through
