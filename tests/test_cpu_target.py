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
from filecheck_tool import filecheck
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


@inductor_tile.jit
def grid_ids_kernel(ids_ptr, value_ptr, a, b, c, d, flag):
    x, y, z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    pid = (z * tl.num_programs(1) + y) * tl.num_programs(0) + x
    tl.store(ids_ptr + pid * 3, x)
    tl.store(ids_ptr + pid * 3 + 1, y)
    tl.store(ids_ptr + pid * 3 + 2, z)
    value = a * x.to(tl.float64) + b * y.to(tl.float64) + (c * z).to(tl.float64) + d
    tl.store(value_ptr + pid, tl.where(flag, value, -value))


@pytest.mark.parametrize("grid", [(1, 1, 1), (3, 5, 7), (7, 1, 3), (1, 6, 1), (2, 2, 9)])
@pytest.mark.parametrize("threads", [1, 2])
def test_every_program_id_and_scalar_reaches_the_kernel(grid, threads, monkeypatch):
    """The entry's frame (each argument in an 8-byte slot, then the grid and the range) and its
    odometer over program ids, on one thread and split across the pool (chunks that start
    mid-row: the first ids of a chunk come from divisions, the rest from stepping)."""
    from inductor_tile.kernel_compiler.runtime import cpu_launcher

    monkeypatch.setattr(cpu_launcher, "PARALLEL_MIN_SECONDS", 0.0)
    gen = torch.Generator().manual_seed(sum(grid) * threads)
    a, b = torch.randn(2, generator=gen).tolist()  # Python floats are fp32 arguments: exact in float32
    c, d = 3_000_000_011, int(torch.randint(-1000, 1000, (1,), generator=gen))  # c needs 64 bits
    total = grid[0] * grid[1] * grid[2]
    expected_ids = torch.tensor([(x, y, z) for z in range(grid[2]) for y in range(grid[1]) for x in range(grid[0])],
                                dtype=torch.int32)
    xyz = expected_ids.double()
    expected = a * xyz[:, 0] + b * xyz[:, 1] + (c * expected_ids[:, 2].long()).double() + d
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for launch, flag in enumerate((True, False, True)):  # the second and third may use the pool
            ids = poison(torch.empty(total, 3, dtype=torch.int32))
            values = poison(torch.empty(total, dtype=torch.float64))
            grid_ids_kernel[grid](ids, values, a, b, c, d, flag)
            assert torch.equal(ids, expected_ids), f"launch {launch}"
            torch.testing.assert_close(values, expected if flag else -expected, rtol=1e-15, atol=0)
    finally:
        torch.set_num_threads(before)


def test_entry_reads_one_frame_and_divides_only_before_its_loop(tmp_path):
    """The grid entry takes one pointer (the frame) and steps program ids without dividing."""
    text = inductor_tile.compile(grid_ids_kernel, {"ids_ptr": "*i32", "value_ptr": "*fp64", "a": "fp32", "b": "fp32",
                                                   "c": "i64", "d": "i32", "flag": "i1"}, {}, target="cpu").asm["llir"]
    filecheck(text, """
CHECK-LABEL: define void @grid_ids_kernel_grid(ptr
CHECK-SAME: %[[FRAME:[^)]+]])
CHECK: getelementptr i8, ptr %[[FRAME]], i64 56
CHECK: load i32
CHECK: {{udiv|urem}} i64
CHECK: loop:
CHECK-NOT: {{udiv|urem|sdiv|srem}}
CHECK: done:
CHECK-NEXT: ret void
""", tmp_path)
