"""`for i in range(lo, hi, STEP)` with a compile-time negative STEP counts down, as in Python and Triton
(no iteration when lo <= hi); a zero step is an error. Interpreter and CPU target; random data and
bounds, outputs poisoned first, Python references."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError

MODES = ["interpret", "compiled"]
SIZE = 64


@inductor_tile.jit
def weighted_sum_kernel(x_ptr, out_ptr, lo, hi, STEP: tl.constexpr):
    acc = 0.0
    acc = acc.to(tl.float64)
    count = 0
    for i in range(lo, hi, STEP):
        acc += tl.load(x_ptr + i).to(tl.float64) * i
        count += 1
    tl.store(out_ptr, acc)
    tl.store(out_ptr + 1, count.to(tl.float64))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("step", [-1, -2, -3, -7, 1, 5])
def test_descending_and_ascending_ranges(mode, step, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(SIZE, generator=gen, dtype=torch.float64)
    bounds = torch.randint(0, SIZE, (4, 2), generator=gen).tolist() + [[40, 3], [3, 40], [9, 9], [SIZE - 1, 0]]
    for lo, hi in bounds:
        out = torch.full((2,), float("nan"), dtype=torch.float64)
        weighted_sum_kernel[(1,)](x, out, lo, hi, STEP=step)
        indices = list(range(lo, hi, step))
        want = sum(float(x[i]) * i for i in indices)
        assert out[1].item() == len(indices), (lo, hi, step)
        assert out[0].item() == pytest.approx(want, rel=1e-12, abs=1e-12), (lo, hi, step)


@inductor_tile.jit
def wide_descending_kernel(out_ptr, lo, hi, STEP: tl.constexpr):
    acc = 0
    acc = acc.to(tl.int64)
    for i in range(lo, hi, STEP):
        acc += i
    tl.store(out_ptr, acc)


@pytest.mark.parametrize("lo, hi, step", [(2**35 + 20, 2**35, -3), (2**35, 2**35 + 20, -1), (15, -16, -2)])
def test_descending_over_int64_bounds(compiled, lo, hi, step):
    out = torch.full((1,), -99, dtype=torch.int64)
    wide_descending_kernel[(1,)](out, lo, hi, STEP=step)
    assert out.item() == sum(range(lo, hi, step))


def test_a_zero_step_is_an_error(compiled):
    with pytest.raises(CompilationError, match="loop step must not be 0"):
        wide_descending_kernel[(1,)](torch.empty(1, dtype=torch.int64), 0, 4, STEP=0)
