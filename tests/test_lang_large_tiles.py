"""Element moves on large tiles on the CPU target: a shuffle longer than MAX_REGISTER_SHUFFLE goes through
a stack array in a loop over a constant index table (LLVM's code generation of one 16384-element
shufflevector took tens of seconds; Triton's test_chained_reductions, a 32768-element tile, compiled
in 84-140 s, now ~20). The threshold is lowered here so that small tiles take the memory path: results
must equal the in-register ones for every element type (i1 is widened to a byte in memory, pointers
and halves keep their types). Random inputs, outputs poisoned first."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.to_llvm import context as lowering_context

M, N = 16, 32


@pytest.fixture
def memory_shuffles(compiled, monkeypatch, tmp_path):
    """Shuffles of more than 64 elements go through memory; a fresh kernel cache (no binary compiled
    with the default threshold is reused)."""
    monkeypatch.setattr(lowering_context, "MAX_REGISTER_SHUFFLE", 64)
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path))


@inductor_tile.jit
def transpose_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :])
    tl.store(y_ptr + cols[:, None] * M + rows[None, :], tl.trans(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int8])
def test_transpose_through_memory(memory_shuffles, dtype, gen):
    if dtype.is_floating_point:
        x = torch.randn(M, N, generator=gen).to(dtype)
    else:
        x = torch.randint(-100, 100, (M, N), generator=gen).to(dtype)
    y = torch.full((N, M), -7, dtype=dtype) if not dtype.is_floating_point else torch.full((N, M), float("nan"), dtype=dtype)
    kernel = transpose_kernel[(1,)](x, y, M, N)
    assert "shuffle_indices" in kernel.asm["llir"]  # the memory path was taken
    assert torch.equal(y, x.t())


@inductor_tile.jit
def transpose_mask_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M), tl.arange(0, N)
    positive = tl.load(x_ptr + rows[:, None] * N + cols[None, :]) > 0  # an i1 tile
    tl.store(y_ptr + cols[:, None] * M + rows[None, :], tl.where(tl.trans(positive), 1.0, -1.0))


def test_a_boolean_tile_through_memory(memory_shuffles, gen):
    x = torch.randn(M, N, generator=gen)
    y = torch.full((N, M), float("nan"))
    kernel = transpose_mask_kernel[(1,)](x, y, M, N)
    assert "shuffle_indices" in kernel.asm["llir"]
    assert torch.equal(y, torch.where(x.t() > 0, 1.0, -1.0))


@inductor_tile.jit
def transposed_pointers_kernel(x_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr):
    rows, cols = tl.arange(0, M), tl.arange(0, N)
    pointers = tl.trans(x_ptr + rows[:, None] * N + cols[None, :])  # a tile of pointers, permuted
    tl.store(y_ptr + cols[:, None] * M + rows[None, :], tl.load(pointers) * 2.0)


def test_a_pointer_tile_through_memory(memory_shuffles, gen):
    x = torch.randn(M, N, generator=gen)
    y = torch.full((N, M), float("nan"))
    kernel = transposed_pointers_kernel[(1,)](x, y, M, N)
    assert "shuffle_indices" in kernel.asm["llir"]
    torch.testing.assert_close(y.double(), x.t().double() * 2.0)


@inductor_tile.jit
def chained_reductions_kernel(x_ptr, out_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, D: tl.constexpr):
    index = tl.arange(0, A * B * C * D).reshape(A, B, C, D)
    x = tl.permute(tl.load(x_ptr + index), [2, 1, 0, 3])
    r = tl.sum(tl.max(x, 1), 0)  # [A, D] after reducing C's and B's axes
    out = tl.arange(0, A)[:, None] * D + tl.arange(0, D)[None, :]
    tl.store(out_ptr + out, r)


def test_permute_and_reductions_through_memory(memory_shuffles, gen):
    shape = (4, 8, 16, 2)
    x = torch.randint(-1000, 1000, shape, generator=gen, dtype=torch.int32)
    out = torch.full((4, 2), -1, dtype=torch.int32)
    kernel = chained_reductions_kernel[(1,)](x, out, *shape)
    assert "shuffle_indices" in kernel.asm["llir"]
    permuted = x.permute(2, 1, 0, 3)
    assert torch.equal(out, permuted.max(1).values.sum(0, dtype=torch.int32))


@inductor_tile.jit
def gather_rows_kernel(x_ptr, index_ptr, y_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :])
    where = tl.arange(0, K)[:, None] * N + tl.arange(0, N)[None, :]
    picked = tl.gather(x, tl.load(index_ptr + where), 0)  # [K, N]: y[k, n] = x[index[k, n], n]
    tl.store(y_ptr + where, picked)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int16])
def test_gather_through_memory_loops(memory_shuffles, dtype, gen):
    """The CPU gather's stores to and loads from its scratch array run as loops past the threshold."""
    K = 2 * M
    x = torch.randn(M, N, generator=gen).to(dtype) if dtype.is_floating_point else \
        torch.randint(-1000, 1000, (M, N), generator=gen).to(dtype)
    index = torch.randint(0, M, (K, N), generator=gen, dtype=torch.int32)
    y = torch.full((K, N), -5, dtype=dtype)
    gather_rows_kernel[(1,)](x, index, y, M, N, K)
    assert torch.equal(y, torch.gather(x, 0, index.long()))
