"""Values out of branches on runtime values, as Triton has them: a helper may `return` a value from
such a branch (every `return` of one type; a path falling off the end gives an undefined value,
`ub.poison`), and `a if c else b` on a runtime scalar runs only the chosen side (its stores too).
Interpreter and CPU target; random inputs, outputs poisoned first, references in float64."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError

MODES = ["interpret", "compiled"]
N = 32
PROGRAMS = 8


def _flags(gen) -> torch.Tensor:
    """One int32 flag per program, both values present."""
    flags = torch.randint(0, 2, (PROGRAMS,), generator=gen, dtype=torch.int32)
    flags[0], flags[1] = 0, 1
    return flags


@inductor_tile.jit
def scaled_or_shifted(x, flag):
    if flag > 0:
        return x * 3.0
    else:
        return x - 1.0


@inductor_tile.jit
def sum_and_max_or_min(x, flag):
    if flag > 0:
        return tl.sum(x, axis=0), tl.max(x, axis=0)
    return tl.sum(x, axis=0) * 2.0, tl.min(x, axis=0)  # after the `if`: the else path


@inductor_tile.jit
def branch_return_kernel(x_ptr, flag_ptr, out_ptr, stats_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * N + tl.arange(0, N)
    x = tl.load(x_ptr + offsets)
    flag = tl.load(flag_ptr + pid)
    tl.store(out_ptr + offsets, scaled_or_shifted(x, flag))
    total, extreme = sum_and_max_or_min(x, flag)
    tl.store(stats_ptr + 2 * pid, total)
    tl.store(stats_ptr + 2 * pid + 1, extreme)


@pytest.mark.parametrize("mode", MODES)
def test_helpers_return_values_from_runtime_branches(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(PROGRAMS, N, generator=gen)
    flags = _flags(gen)
    out = torch.full((PROGRAMS, N), float("nan"))
    stats = torch.full((PROGRAMS, 2), float("nan"))
    branch_return_kernel[(PROGRAMS,)](x, flags, out, stats, N=N)
    xd, on = x.double(), (flags > 0)[:, None]
    torch.testing.assert_close(out.double(), torch.where(on, xd * 3.0, xd - 1.0))
    want_total = torch.where(on[:, 0], xd.sum(1), xd.sum(1) * 2.0)
    want_extreme = torch.where(on[:, 0], xd.max(1).values, xd.min(1).values)
    torch.testing.assert_close(stats.double(), torch.stack([want_total, want_extreme], 1), rtol=1e-5, atol=1e-5)


@inductor_tile.jit
def doubled_or_nothing(x, flag):
    if flag > 0:
        return x * 2.0


@inductor_tile.jit
def poison_path_kernel(x_ptr, flag_ptr, out_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * N + tl.arange(0, N)
    flag = tl.load(flag_ptr + pid)
    y = doubled_or_nothing(tl.load(x_ptr + offsets), flag)
    tl.store(out_ptr + offsets, y, mask=(offsets >= 0) & (flag > 0))  # only where a value was returned


def test_a_path_returning_nothing_gives_an_undefined_value(compiled, gen):
    x = torch.randn(PROGRAMS, N, generator=gen)
    flags = _flags(gen)
    out = torch.full((PROGRAMS, N), float("nan"))
    kernel = poison_path_kernel[(PROGRAMS,)](x, flags, out, N=N)
    assert "ub.poison" in kernel.asm["ttir"]
    on = flags > 0
    torch.testing.assert_close(out[on].double(), x[on].double() * 2.0)
    assert out[~on].isnan().all()  # never stored


@inductor_tile.jit
def fp32_or_int(x, flag):
    if flag > 0:
        return x
    return flag


@inductor_tile.jit
def value_or_void(x, flag):
    if flag > 0:
        return x
    return


@inductor_tile.jit
def mixed_returns_kernel(x_ptr, flag_ptr, out_ptr, VOID: tl.constexpr):
    flag = tl.load(flag_ptr)
    y = value_or_void(tl.load(x_ptr), flag) if VOID else fp32_or_int(tl.load(x_ptr), flag)
    tl.store(out_ptr, y)


@pytest.mark.parametrize("void, shown", [(False, "float32 and int32"), (True, "float32 and void")])
def test_returns_of_different_types_are_an_error(compiled, void, shown):
    with pytest.raises(CompilationError, match=f"Inconsistent return types: {shown}"):
        mixed_returns_kernel[(1,)](torch.randn(1), torch.ones(1, dtype=torch.int32), torch.empty(1), VOID=void)


@inductor_tile.jit
def returns_then_continues(x, flag):
    for i in tl.static_range(2):
        if flag > i:
            return x * 2.0
    x = x + 1.0
    return x


@inductor_tile.jit
def returns_in_a_static_loop_kernel(x_ptr, flag_ptr, out_ptr):
    tl.store(out_ptr, returns_then_continues(tl.load(x_ptr), tl.load(flag_ptr)))


def test_a_value_returned_on_some_paths_before_more_statements_is_refused(compiled):
    with pytest.raises(CompilationError, match="returned on some paths"):
        returns_in_a_static_loop_kernel[(1,)](torch.randn(1), torch.ones(1, dtype=torch.int32), torch.empty(1))


@inductor_tile.jit
def ternary_store_kernel(x_ptr, flag_ptr, a_ptr, b_ptr, N: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * N + tl.arange(0, N)
    x = tl.load(x_ptr + offsets)
    flag = tl.load(flag_ptr + pid)
    tl.store(a_ptr + offsets, x) if flag > 0 else tl.store(b_ptr + offsets, -x)
    tl.atomic_add(a_ptr + PROGRAMS_N + pid, 1.0) if flag > 0 else tl.atomic_add(b_ptr + PROGRAMS_N + pid, 1.0)


PROGRAMS_N = tl.constexpr(PROGRAMS * N)


@pytest.mark.parametrize("mode", MODES)
def test_a_ternary_on_a_runtime_value_runs_one_side(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(PROGRAMS, N, generator=gen)
    flags = _flags(gen)
    a = torch.full((PROGRAMS * N + PROGRAMS,), float("nan"))
    b = torch.full((PROGRAMS * N + PROGRAMS,), float("nan"))
    a[PROGRAMS * N:], b[PROGRAMS * N:] = 0.0, 0.0
    ternary_store_kernel[(PROGRAMS,)](x, flags, a, b, N=N)
    on = flags > 0
    a_rows, b_rows = a[:PROGRAMS * N].view(PROGRAMS, N), b[:PROGRAMS * N].view(PROGRAMS, N)
    torch.testing.assert_close(a_rows[on], x[on])
    torch.testing.assert_close(b_rows[~on], -x[~on])
    assert a_rows[~on].isnan().all() and b_rows[on].isnan().all()
    assert torch.equal(a[PROGRAMS * N:], on.float()) and torch.equal(b[PROGRAMS * N:], (~on).float())


@inductor_tile.jit
def ternary_types_kernel(h_ptr, i_ptr, flag_ptr, h_out, f_out):
    pid = tl.program_id(0)
    flag = tl.load(flag_ptr + pid)
    h = tl.load(h_ptr + pid)
    i = tl.load(i_ptr + pid)
    tl.store(h_out + pid, h if flag > 0 else 0)  # a number takes the tile's type: fp16
    tl.store(f_out + pid, i if flag > 0 else 2.5)  # int32 and a float: fp32


@pytest.mark.parametrize("mode", MODES)
def test_ternary_sides_meet_in_the_operator_type(mode, request, gen):
    request.getfixturevalue(mode)
    flags = _flags(gen)
    h = torch.randn(PROGRAMS, generator=gen).half()
    i = torch.randint(-100, 100, (PROGRAMS,), generator=gen, dtype=torch.int32)
    h_out = torch.full((PROGRAMS,), float("nan"), dtype=torch.float16)
    f_out = torch.full((PROGRAMS,), float("nan"))
    ternary_types_kernel[(PROGRAMS,)](h, i, flags, h_out, f_out)
    on = flags > 0
    assert torch.equal(h_out, torch.where(on, h, torch.zeros_like(h)))
    assert torch.equal(f_out, torch.where(on, i.float(), torch.full_like(f_out, 2.5)))
