"""The CPU target against torch and against the interpreter.

Masked tails of every length, 2D reductions along either axis, and the dtypes the
lowering treats differently (fp16/bf16 through software conversions, small ints, fp64).
Every output is poisoned first; each kernel runs compiled and interpreted.
"""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from suite import poison

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int32, torch.uint8]


def random_tensor(gen: torch.Generator, shape, dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    low, high = (0, 200) if dtype == torch.uint8 else (-100, 100)
    return torch.randint(low, high, shape, generator=gen, dtype=torch.int64).to(dtype)


def run_both(monkeypatch, launch) -> tuple:
    """Run `launch()` compiled and interpreted; return both results."""
    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    compiled = launch()
    monkeypatch.setenv("TILE_INTERPRET", "1")
    interpreted = launch()
    monkeypatch.delenv("TILE_INTERPRET")
    return compiled, interpreted


@inductor_tile.jit
def tail_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x * 3 + x, mask=mask)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_masked_tails_of_every_length(dtype, monkeypatch):
    gen = torch.Generator().manual_seed(7)
    block = 16
    for n in range(1, block + 1):
        for programs in (1, 2):
            total = (programs - 1) * block + n
            x = random_tensor(gen, (total + 3,), dtype)

            def launch():
                out = poison(torch.empty(total + 3, dtype=dtype))
                tail_kernel[(programs,)](x, out, total, BLOCK=block)
                return out

            compiled, interpreted = run_both(monkeypatch, launch)
            expected = x[:total] * 3 + x[:total]
            torch.testing.assert_close(compiled[:total], expected, msg=f"n={total}")
            torch.testing.assert_close(compiled, interpreted, equal_nan=True, msg=f"n={total}")
            assert torch.equal(compiled[total:], poison(torch.empty(3, dtype=dtype))) or \
                compiled[total:].isnan().all(), f"n={total}: wrote past the mask"


@inductor_tile.jit
def reduce_2d_kernel(x_ptr, out_ptr, M, N, AXIS: tl.constexpr, KIND: tl.constexpr,
                     BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    if KIND == "sum":
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=0)
        result = tl.sum(x, axis=AXIS)
    elif KIND == "max":
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=-100)
        result = tl.max(x, axis=AXIS)
    elif KIND == "min":
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=100)
        result = tl.min(x, axis=AXIS)
    else:
        x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=mask, other=-100)
        result = tl.argmax(x, axis=AXIS)
    out_offsets = tl.arange(0, BN) if AXIS == 0 else tl.arange(0, BM)
    tl.store(out_ptr + out_offsets, result, mask=out_offsets < (N if AXIS == 0 else M))


def _torch_reduce(x: torch.Tensor, axis: int, kind: str) -> torch.Tensor:
    if kind == "sum":
        return x.double().sum(axis) if x.dtype.is_floating_point else x.long().sum(axis)
    if kind == "max":
        return x.amax(axis)
    if kind == "min":
        return x.amin(axis)
    return x.argmax(axis)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("kind", ["sum", "max", "min", "argmax"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int8], ids=str)
def test_2d_reductions_along_either_axis(axis, kind, dtype, monkeypatch):
    gen = torch.Generator().manual_seed(11)
    M, N, BM, BN = 13, 21, 16, 32
    x = random_tensor(gen, (M, N), dtype)
    out_len = N if axis == 0 else M
    if kind == "argmax":
        out_dtype = torch.int32
    elif kind == "sum" and not dtype.is_floating_point:
        out_dtype = torch.int32
    else:
        out_dtype = dtype

    def launch():
        out = poison(torch.empty(out_len, dtype=out_dtype))
        reduce_2d_kernel[(1,)](x, out, M, N, AXIS=axis, KIND=kind, BM=BM, BN=BN)
        return out

    compiled, interpreted = run_both(monkeypatch, launch)
    expected = _torch_reduce(x, axis, kind)
    if kind == "argmax":
        assert torch.equal(compiled.long(), expected)
    elif dtype.is_floating_point:
        tolerance = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 5e-2}[dtype]
        torch.testing.assert_close(compiled.double(), expected.double(), rtol=tolerance, atol=tolerance)
    else:
        assert torch.equal(compiled.long(), expected.long())
    torch.testing.assert_close(compiled.double(), interpreted.double(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("threads, min_seconds, programs, pooled", [
    (2, 0.0, 40, True),  # every grid pays off: the second launch of the size splits
    (2, float("inf"), 41, False),  # no grid pays off: always on the calling thread
    (1, 0.0, 42, False),  # torch.set_num_threads(1): never split
])
def test_grid_split_across_threads_only_when_it_pays(threads, min_seconds, programs, pooled, monkeypatch):
    from inductor_tile.kernel_compiler.runtime import cpu_launcher

    submitted = []
    pool = cpu_launcher._pool()

    class Spy:
        def submit(self, *args):
            submitted.append(args[-2:])  # (first program, end)
            return pool.submit(*args)

    monkeypatch.setattr(cpu_launcher, "_pool", lambda: Spy())
    monkeypatch.setattr(cpu_launcher, "PARALLEL_MIN_SECONDS", min_seconds)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        gen = torch.Generator().manual_seed(programs)
        block = 16
        x = random_tensor(gen, (programs * block,), torch.float32)
        for launch in range(3):
            out = poison(torch.empty_like(x))
            tail_kernel[(programs,)](x, out, x.numel(), BLOCK=block)
            torch.testing.assert_close(out, x * 3 + x, rtol=0, atol=0)
            if launch == 0:
                assert not submitted  # the first launch of a grid size runs here, timed
    finally:
        torch.set_num_threads(before)
    if pooled:
        chunks = sorted(submitted[:threads])
        assert len(submitted) == 2 * threads and chunks[0][0] == 0 and chunks[-1][1] == programs, submitted
    else:
        assert not submitted
