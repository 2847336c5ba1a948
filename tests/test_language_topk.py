"""tl.topk(x, k, dim=None): the k largest elements along a dimension, largest first (torch.topk's values).

Random inputs (float ones with a NaN, which counts as the largest as in torch.topk), NaN-poisoned outputs,
compared with torch.topk in float64; compiled for the CPU and in the interpreter.
"""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError


@inductor_tile.jit
def topk_rows_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    x = tl.load(x_ptr + rows * N + tl.arange(0, N)[None, :])
    tl.store(out_ptr + rows * K + tl.arange(0, K)[None, :], tl.topk(x, K))


@inductor_tile.jit
def topk_columns_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + cols)
    tl.store(out_ptr + tl.arange(0, K)[:, None] * N + cols, tl.topk(x, K, dim=0))


def _random(shape, dtype, gen):
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
        x.view(-1)[3] = float("nan")
        return x
    return torch.randint(-50, 50, shape, generator=gen, dtype=dtype)  # ties included


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.float32, torch.float16])
@pytest.mark.parametrize("M, N, K", [(8, 64, 8), (4, 16, 16), (2, 32, 1)])
def test_topk_along_the_last_dimension(mode, dtype, M, N, K, request, gen):
    request.getfixturevalue(mode)
    x = _random((M, N), dtype, gen)
    out = torch.full((M, K), float("nan")).to(dtype) if dtype.is_floating_point else torch.full((M, K), -7, dtype=dtype)
    topk_rows_kernel[(1,)](x, out, M=M, N=N, K=K)
    expected = torch.topk(x.to(torch.float64), K, dim=1).values
    assert torch.equal(out.to(torch.float64).isnan(), expected.isnan())
    torch.testing.assert_close(out.to(torch.float64), expected, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_topk_along_dimension_0(mode, request, gen):
    request.getfixturevalue(mode)
    x = _random((32, 8), torch.float32, gen)
    out = torch.full((4, 8), float("nan"))
    topk_columns_kernel[(1,)](x, out, M=32, N=8, K=4)
    expected = torch.topk(x.to(torch.float64), 4, dim=0).values
    torch.testing.assert_close(out.to(torch.float64), expected, rtol=0, atol=0, equal_nan=True)


def test_topk_k_must_not_exceed_the_dimension(compiled):
    with pytest.raises(CompilationError, match="tl.topk: k must be a power of two from 1 to the dimension's length 16"):
        topk_rows_kernel[(1,)](torch.randn(4, 16), torch.empty(4, 32), M=4, N=16, K=32)
