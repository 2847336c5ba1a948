"""Python's `min` / `max` in a kernel: on tile values they are tl.minimum / tl.maximum (Triton's rule, used by
Liger-Kernel's `row_end = min(row_start + rows_per_program, n_rows)`), folded over three or more arguments;
on compile-time values they stay Python's."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError


@inductor_tile.jit
def min_max_kernel(x_ptr, y_ptr, out_ptr, n, rows_per_program, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    row_end = min((pid + 1) * rows_per_program, n)  # runtime scalars
    first = max(pid * rows_per_program, 0, 1 - 1)  # three arguments
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + pid * BLOCK + offs)
    y = tl.load(y_ptr + pid * BLOCK + offs)
    width: tl.constexpr = min(BLOCK, 8) + max(1, 2)  # compile-time: Python's
    base = out_ptr + pid * 4 * BLOCK
    tl.store(base + offs, min(x, y))
    tl.store(base + BLOCK + offs, max(x, 0.25, y))
    tl.store(base + 2 * BLOCK + offs, (row_end - first).to(tl.float64) + offs * 0.0)
    tl.store(base + 3 * BLOCK + offs, width + offs * 0.0)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_python_min_max_of_tiles(mode, request, gen):
    request.getfixturevalue(mode)
    programs, block, n, rows = 5, 16, 23, 5
    x = torch.randn(programs * block, generator=gen, dtype=torch.float64)
    y = torch.randn(programs * block, generator=gen, dtype=torch.float64)
    out = torch.full((programs, 4, block), float("nan"), dtype=torch.float64)
    min_max_kernel[(programs,)](x, y, out, n, rows, BLOCK=block)
    xs, ys = x.view(programs, block), y.view(programs, block)
    torch.testing.assert_close(out[:, 0], torch.minimum(xs, ys), rtol=0, atol=0)
    torch.testing.assert_close(out[:, 1], torch.maximum(torch.maximum(xs, torch.tensor(0.25, dtype=torch.float64)),
                                                        ys), rtol=0, atol=0)
    pids = torch.arange(programs, dtype=torch.float64)
    spans = torch.minimum((pids + 1) * rows, torch.tensor(float(n))) - pids * rows
    torch.testing.assert_close(out[:, 2], spans[:, None].expand(programs, block), rtol=0, atol=0)
    assert torch.equal(out[:, 3], torch.full((programs, block), 10.0, dtype=torch.float64))


def test_min_of_one_tile_is_an_error(compiled):
    @inductor_tile.jit
    def one_argument(x_ptr):
        tl.store(x_ptr, min(tl.load(x_ptr)))

    with pytest.raises(CompilationError, match="two or more positional arguments"):
        one_argument[(1,)](torch.randn(1))
