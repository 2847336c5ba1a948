"""Where compile errors point, and what they carry: `at L:C:` counted from the kernel's `def` line (as Triton
writes positions) next to the file's own line and column, a helper's error chained as the cause of the call's,
the builtin's own frames kept in the cause, `tl.static_assert` as `CompileTimeAssertionFailure`, an
inconsistent `return` at that `return`; and tl.where's warning for a condition that is not boolean."""

from __future__ import annotations

import re
import traceback
import warnings

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompileTimeAssertionFailure
from test_errors import compile_error


def assert_points_at(error, source_fragment: str, message: str) -> None:
    """`error` shows `source_fragment`'s line of this file with a caret under it, and `message`."""
    text = str(error)
    assert source_fragment in error.source_line, f"error points at {error.source_line!r}, not at {source_fragment!r}"
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if i > 0 and source_fragment in line)
    assert lines[at + 1].strip() == "^", f"no caret under the source line:\n{text}"
    assert re.search(message, text), f"message {message!r} not in:\n{text}"
    assert f"{__file__}:{error.lineno}:" in text


def test_position_counts_from_the_def_line_of_an_indented_kernel():
    @inductor_tile.jit
    def shifted_kernel(x_ptr):
        offs = tl.arange(0, 16)
        tl.store(x_ptr + offs, offs << 1.5)

    error = compile_error(shifted_kernel, {"x_ptr": "*i32"})
    assert_points_at(error, "offs << 1.5", r"")
    # line 3 of the function (the decorator is not counted), column 27 of the dedented source; in the file the
    # kernel sits 4 columns further right (and columns count from 1)
    assert str(error).startswith(f"at 3:27: in kernel `shifted_kernel`, {__file__}:{error.lineno}:32:\n")
    assert (error.relative_line, error.relative_col, error.col) == (3, 27, 31)


@inductor_tile.jit
def expand_none_kernel(x_ptr):
    tl.store(x_ptr, tl.expand_dims(None, 0))


def test_cause_keeps_the_languages_frames_only():
    error = compile_error(expand_none_kernel, {"x_ptr": "*fp32"})
    cause = error.__cause__
    frames = traceback.extract_tb(cause.__traceback__)
    assert frames, "the cause shows where in the language the value was refused"
    assert all("inductor_tile/language/" in frame.filename for frame in frames), [f.filename for f in frames]


def test_static_assert_is_a_compile_time_assertion_failure():
    @inductor_tile.jit
    def asserting_kernel(x_ptr, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK >= 64, "BLOCK must be at least 64")
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    error = compile_error(asserting_kernel, {"x_ptr": "*fp32"}, {"BLOCK": 32})
    assert isinstance(error, CompileTimeAssertionFailure)
    assert error.__cause__ is None  # the user's own check: no language error behind it
    assert_points_at(error, "tl.static_assert(BLOCK >= 64", r"BLOCK must be at least 64")
    assert str(error).startswith("at 2:4: ")


@inductor_tile.jit
def two_shapes(x, n):
    if n > 0:
        return x
    else:
        return tl.join(x, x)


@inductor_tile.jit
def two_shapes_kernel(x_ptr, n):
    x = tl.load(x_ptr + tl.arange(0, 8))
    two_shapes(x, n)


def test_inconsistent_return_points_at_the_return_that_differs():
    error = compile_error(two_shapes_kernel, {"x_ptr": "*fp32", "n": "i32"})
    assert_points_at(error, "two_shapes(x, n)", r"called here: Inconsistent return types")
    assert str(error).startswith("at 3:4: ")
    assert_points_at(error.__cause__, "return tl.join(x, x)", r"Inconsistent return types: <\[8\], float32> and "
                                                              r"<\[8, 2\], float32>")
    assert str(error.__cause__).startswith("at 5:8: ")


def _where_on_integers(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.where(x, 1.0, -1.0))  # an int32 condition: x != 0


where_kernel = inductor_tile.jit(_where_on_integers)
WHERE_LINE = _where_on_integers.__code__.co_firstlineno + 3


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_where_warns_of_a_condition_that_is_not_boolean(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randint(-2, 3, (32,), generator=gen, dtype=torch.int32)
    y = torch.full((32,), float("nan"))
    with pytest.warns(UserWarning, match=r"tl.where's condition is int32, not a boolean") as record:
        where_kernel[(1,)](x, y, BLOCK=32)
    where = [(w.filename, w.lineno) for w in record]
    assert (__file__, WHERE_LINE) in where, where
    torch.testing.assert_close(y.double(), torch.where(x != 0, 1.0, -1.0).double())

    @inductor_tile.jit
    def where_on_booleans(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.where(tl.load(x_ptr + offs) > 0, 1.0, -1.0))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        where_on_booleans[(1,)](x, y, BLOCK=32)
    torch.testing.assert_close(y.double(), torch.where(x > 0, 1.0, -1.0).double())


@inductor_tile.jit
def widening_combine(a, b):
    return a + tl.arange(0, 4)


@inductor_tile.jit
def bad_reduce_kernel(x_ptr, out_ptr):
    x = tl.load(x_ptr + tl.arange(0, 8))
    tl.store(out_ptr, tl.reduce(x, 0, widening_combine))


def test_combine_function_returning_a_block_is_a_user_error():
    error = compile_error(bad_reduce_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"})
    assert_points_at(error, "tl.reduce(x, 0, widening_combine)",
                     r"tl.reduce: the combine function must return values shaped as its arguments \(float32\), "
                     r"got <\[4\], float32>")
