"""`return` inside a branch on a runtime value (Triton allows it): the statements after the `if`
run only in the branches that do not return (the front end moves them there), so a program can
leave early, in a kernel or in an inlined @jit helper. Interpreter and CPU target against torch in
float64; outputs start as NaN, and a row a program leaves without storing keeps its NaN."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError

ROWS, N = 16, 32


@inductor_tile.jit
def store_doubled_if_negative(x, out_ptr, offsets, first):
    """Stores 2x and leaves when `first` is negative; otherwise does nothing."""
    if first < 0:
        tl.store(out_ptr + offsets, x * 2.0)
        return
    tl.debug_barrier()


@inductor_tile.jit
def early_exit_kernel(x_ptr, out_ptr, flag_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    offsets = row * N + tl.arange(0, N)
    x = tl.load(x_ptr + offsets)
    first = tl.load(x_ptr + row * N)
    if first < 0:
        tl.store(out_ptr + offsets, x * 2.0)
        return
    total = tl.sum(x, axis=0)
    if total > 0:
        if first > 1.0:
            return  # nothing stored: the row keeps its NaN
        x = x + total
    else:
        store_doubled_if_negative(-first, flag_ptr, row, -first)
    tl.store(out_ptr + offsets, x)


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    out, flag = torch.full_like(x, float("nan")), torch.full_like(x[:, 0], float("nan"))
    for r, row in enumerate(x):
        if row[0] < 0:
            out[r] = row * 2
        elif row.sum() > 0:
            if row[0] <= 1.0:
                out[r] = row + row.sum()
        else:
            out[r] = row
            if -row[0] < 0:
                flag[r] = -row[0] * 2
    return out, flag


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_early_returns_leave_the_program(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(ROWS, N, generator=gen, dtype=torch.float64)
    x[:, 0] = torch.linspace(-2.0, 2.5, ROWS, dtype=torch.float64)  # every path is taken by some row
    out = torch.full_like(x, float("nan"))
    flag = torch.full((ROWS,), float("nan"), dtype=torch.float64)
    early_exit_kernel[(ROWS,)](x, out, flag, N=N)
    want, want_flag = reference(x)
    for w in (want, want_flag):  # some rows store, some leave without storing
        assert w.isnan().any() and not w.isnan().all()
    torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12, equal_nan=True)
    torch.testing.assert_close(flag, want_flag, rtol=1e-12, atol=1e-12, equal_nan=True)


@inductor_tile.jit
def value_from_branch_kernel(x_ptr, out_ptr):
    x = tl.load(x_ptr)
    if x > 0:
        return x
    tl.store(out_ptr, x)


def test_a_kernel_returning_a_value_from_a_runtime_branch_is_an_error():
    with pytest.raises(CompilationError, match="a kernel cannot return a value"):
        inductor_tile.compile(value_from_branch_kernel, signature={"x_ptr": "*fp32", "out_ptr": "*fp32"})
