"""Atomic kernels with torch references, shared by the CPU tests (test_atomics.py) and the GPU ones.

Each case builds seeded random inputs on `device`, starts every accumulator at random
values (never zeros, so a kernel that stores instead of adding is caught), poisons the
outputs that receive old values with NaN (or a sentinel), launches, and returns checks
against float64 (or exact integer) references. Many lanes hit the same address, so a
lost update or an update done twice shows up in the totals; where the old values are
returned, the lanes of one address must have seen every intermediate total exactly once.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch

import inductor_tile
import inductor_tile.language as tl
from suite import Check, poison

ATOMIC_CASES: dict[str, Callable[[torch.Generator, str], list[Check]]] = {}


def case(fn: Callable[[torch.Generator, str], list[Check]]) -> Callable[[torch.Generator, str], list[Check]]:
    ATOMIC_CASES[fn.__name__] = fn
    return fn


def poisoned_like(t: torch.Tensor) -> torch.Tensor:
    return poison(torch.empty_like(t))


def random_values(gen: torch.Generator, n: int, dtype: torch.dtype, device: str) -> torch.Tensor:
    """Nonzero random values of `dtype`: normal floats, integers in [-1000, 1000] without 0."""
    if dtype.is_floating_point:
        return torch.randn(n, generator=gen, dtype=torch.float64).to(dtype).to(device)
    values = torch.randint(1, 1000, (n,), generator=gen, dtype=torch.int64)
    signs = torch.randint(0, 2, (n,), generator=gen) * 2 - 1
    return (values * signs).to(dtype).to(device)


def random_indices(gen: torch.Generator, n: int, size: int, device: str) -> torch.Tensor:
    return torch.randint(0, size, (n,), generator=gen, dtype=torch.int32).to(device)


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def saw_every_total(name: str, index: torch.Tensor, old: torch.Tensor, start: torch.Tensor) -> Check:
    """The lanes that added 1 to one address saw start, start + 1, ... each exactly once (in some order)."""
    index, old, start = index.cpu().long(), old.cpu().long(), start.cpu().long()
    seen, expected = [], []
    for address in index.unique().tolist():
        values = old[index == address].sort().values
        seen.append(values)
        expected.append(start[address] + torch.arange(values.numel()))
    return Check(name, torch.cat(seen), torch.cat(expected))


def same_nans(name: str, actual: torch.Tensor, expected: torch.Tensor, atol: float = 0.0,
              rtol: float = 0.0) -> list[Check]:
    """Checks that NaN is where `expected` has NaN, and that the other values are close."""
    actual, expected = actual.cpu().double(), expected.cpu().double()
    return [Check(f"{name} NaNs", actual.isnan(), expected.isnan()),
            Check(name, actual.nan_to_num(nan=7.0), expected.nan_to_num(nan=7.0), atol, rtol)]


# ===--------------------------------------------------------------------------===
# int32 histogram: colliding adds, and the old values each lane saw
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def histogram_kernel(bins_ptr, counts_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    b = tl.load(bins_ptr + offs, mask=inside, other=0)
    old = tl.atomic_add(counts_ptr + b, 1, mask=inside)
    tl.store(old_ptr + offs, old, mask=inside)


@case
def histogram_int32(gen: torch.Generator, device: str) -> list[Check]:
    n, num_bins = 1000, 13
    bins = random_indices(gen, n, num_bins, device)
    start = random_values(gen, num_bins, torch.int32, device)
    counts = start.clone()
    old = poisoned_like(bins)
    histogram_kernel[(cdiv(n, 256),)](bins, counts, old, n, BLOCK=256)
    expected = start.cpu().long() + torch.bincount(bins.cpu().long(), minlength=num_bins)
    return [Check("counts", counts, expected), saw_every_total("old", bins, old, start)]


# ===--------------------------------------------------------------------------===
# scatter-add of floats and int64 with collisions
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def scatter_add_kernel(index_ptr, src_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    i = tl.load(index_ptr + offs, mask=inside, other=0)
    v = tl.load(src_ptr + offs, mask=inside, other=0)
    tl.atomic_add(out_ptr + i, v, mask=inside)


# dtype -> (elements, distinct addresses, atol, rtol): half types round at every add, so few collide
SCATTER_ADD = {
    torch.float32: (1000, 17, 1e-4, 1e-5),
    torch.float64: (1000, 17, 1e-12, 1e-12),
    torch.float16: (256, 64, 2e-2, 1e-2),
    torch.bfloat16: (256, 64, 1e-1, 5e-2),
    torch.int64: (1000, 17, 0, 0),
}


def scatter_add(gen: torch.Generator, device: str, dtype: torch.dtype) -> list[Check]:
    n, size, atol, rtol = SCATTER_ADD[dtype]
    index = random_indices(gen, n, size, device)
    src = random_values(gen, n, dtype, device)
    start = random_values(gen, size, dtype, device)
    out = start.clone()
    scatter_add_kernel[(cdiv(n, 128),)](index, src, out, n, BLOCK=128)
    expected = start.cpu().double().index_add(0, index.cpu().long(), src.cpu().double())
    if not dtype.is_floating_point:
        return [Check("out", out, expected.long())]
    return [Check("out", out, expected, atol, rtol)]


for _dtype in SCATTER_ADD:
    ATOMIC_CASES[f"scatter_add_{name_of(_dtype)}"] = partial(scatter_add, dtype=_dtype)


# ===--------------------------------------------------------------------------===
# masked atomics: masked-off lanes leave memory alone and return 0
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def masked_add_kernel(out_ptr, src_ptr, keep_ptr, old_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    keep = tl.load(keep_ptr + offs, mask=inside, other=0) != 0
    v = tl.load(src_ptr + offs, mask=inside, other=0.0)
    old = tl.atomic_add(out_ptr + offs, v, mask=inside & keep)
    tl.store(old_ptr + offs, old, mask=inside)


@case
def masked_add_fp32(gen: torch.Generator, device: str) -> list[Check]:
    n = 300
    start = random_values(gen, n + 20, torch.float32, device)  # 20 elements past n: never touched
    src = random_values(gen, n + 20, torch.float32, device)
    keep = torch.randint(0, 2, (n + 20,), generator=gen, dtype=torch.int8).to(device)
    out, old = start.clone(), poisoned_like(start)
    masked_add_kernel[(cdiv(n, 128),)](out, src, keep, old, n, BLOCK=128)
    active = (keep.cpu() != 0) & (torch.arange(n + 20) < n)
    expected = torch.where(active, start.cpu().double() + src.cpu().double(), start.cpu().double())
    expected_old = torch.where(active, start.cpu().double(), 0.0)[:n]
    return [Check("out", out, expected, 1e-6, 1e-6), Check("old", old[:n], expected_old),
            Check("old past n untouched", old[n:].isnan(), torch.ones(20, dtype=torch.bool))]


@inductor_tile.jit
def relaxed_masked_scatter_kernel(index_ptr, src_ptr, keep_ptr, sum_ptr, bits_ptr, n, BLOCK: tl.constexpr):
    # old values unused, relaxed ordering: on NVIDIA a predicated `red` per element
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    i = tl.load(index_ptr + offs, mask=inside, other=0)
    keep = inside & (tl.load(keep_ptr + offs, mask=inside, other=0) != 0)
    v = tl.load(src_ptr + offs, mask=inside, other=0.0)
    tl.atomic_add(sum_ptr + i, v, mask=keep, sem="relaxed")
    tl.atomic_or(bits_ptr + i, 1 << (offs % 31), mask=keep, sem="release", scope="cta")


@case
def relaxed_masked_scatter(gen: torch.Generator, device: str) -> list[Check]:
    n, size = 700, 13  # many lanes per address, about half of them masked off
    index = random_indices(gen, n, size, device)
    src = random_values(gen, n, torch.float32, device)
    keep = torch.randint(0, 2, (n,), generator=gen, dtype=torch.int8).to(device)
    start = random_values(gen, size, torch.float32, device)
    bits_start = random_values(gen, size, torch.int32, device)
    sums, bits = start.clone(), bits_start.clone()
    relaxed_masked_scatter_kernel[(cdiv(n, 128),)](index, src, keep, sums, bits, n, BLOCK=128)
    active = keep.cpu() != 0
    where = index.cpu().long()[active]
    expected = start.cpu().double().index_add(0, where, src.cpu().double()[active])
    expected_bits = bits_start.cpu().long().clone()
    for address, bit in zip(where.tolist(), (torch.arange(n)[active] % 31).tolist()):
        expected_bits[address] |= 1 << bit
    return [Check("sums", sums, expected, 1e-5, 1e-6), Check("bits", bits.long(), expected_bits)]


# ===--------------------------------------------------------------------------===
# atomic max / min with collisions (floats: NaN wins, like tl.maximum)
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def scatter_extremes_kernel(index_ptr, src_ptr, max_ptr, min_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    i = tl.load(index_ptr + offs, mask=inside, other=0)
    v = tl.load(src_ptr + offs, mask=inside, other=0)
    tl.atomic_max(max_ptr + i, v, mask=inside)
    tl.atomic_min(min_ptr + i, v, mask=inside)


def scatter_extremes(gen: torch.Generator, device: str, dtype: torch.dtype) -> list[Check]:
    n, size = 700, 23
    index = random_indices(gen, n, size, device)
    src = random_values(gen, n, dtype, device)
    if dtype.is_floating_point:
        src[5] = float("nan")
    start_max, start_min = random_values(gen, size, dtype, device), random_values(gen, size, dtype, device)
    out_max, out_min = start_max.clone(), start_min.clone()
    scatter_extremes_kernel[(cdiv(n, 256),)](index, src, out_max, out_min, n, BLOCK=256)
    i, s = index.cpu().long(), src.cpu().double()
    expected_max = start_max.cpu().double().scatter_reduce(0, i, s, "amax")
    expected_min = start_min.cpu().double().scatter_reduce(0, i, s, "amin")
    if not dtype.is_floating_point:
        return [Check("max", out_max, expected_max.long()), Check("min", out_min, expected_min.long())]
    return same_nans("max", out_max, expected_max) + same_nans("min", out_min, expected_min)


for _dtype in (torch.int32, torch.int64, torch.float32, torch.float16, torch.bfloat16):
    ATOMIC_CASES[f"scatter_extremes_{name_of(_dtype)}"] = partial(scatter_extremes, dtype=_dtype)


# ===--------------------------------------------------------------------------===
# a scalar pointer: one update per program, however many threads the program has
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def ticket_kernel(counter_ptr, tickets_ptr, BLOCK: tl.constexpr):
    ticket = tl.atomic_add(counter_ptr, 1)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(tickets_ptr + offs, ticket + offs * 0)  # every thread must see the same ticket


@case
def scalar_pointer_tickets(gen: torch.Generator, device: str) -> list[Check]:
    programs, block = 40, 256
    start = random_values(gen, 1, torch.int32, device)
    counter = start.clone()
    tickets = poison(torch.empty(programs * block, dtype=torch.int32, device=device))
    ticket_kernel[(programs,)](counter, tickets, BLOCK=block, num_warps=4)
    rows = tickets.cpu().reshape(programs, block)
    expected_rows = rows[:, :1].expand(programs, block)
    first = rows[:, 0].sort().values
    return [Check("counter", counter, start.cpu().long() + programs),
            Check("same ticket in a program", rows, expected_rows),
            Check("tickets", first, start.cpu().long() + torch.arange(programs))]


@inductor_tile.jit
def double_counter_kernel(counter_ptr):
    tl.atomic_add(counter_ptr, 1.5)  # results unused: neither may be removed or merged
    tl.atomic_add(counter_ptr, 1.5)


@case
def unused_results_are_kept(gen: torch.Generator, device: str) -> list[Check]:
    start = random_values(gen, 1, torch.float32, device)
    counter = start.clone()
    double_counter_kernel[(7,)](counter, num_warps=4)
    return [Check("counter", counter, start.cpu().double() + 7 * 3.0, 1e-5, 1e-6)]


# ===--------------------------------------------------------------------------===
# layouts with copies: a tile smaller than the program's threads, a reduction's result
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def small_tile_kernel(index_ptr, out_ptr, old_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.load(index_ptr + offs)
    old = tl.atomic_add(out_ptr + i, 1.0)
    tl.store(old_ptr + offs, old)


@case
def small_tile_adds_once(gen: torch.Generator, device: str) -> list[Check]:
    programs, block, size = 30, 16, 5  # 16 elements, 128 threads: 8 copies of each
    index = random_indices(gen, programs * block, size, device)
    start = random_values(gen, size, torch.int32, device).float()
    out, old = start.clone(), poisoned_like(index.float())
    small_tile_kernel[(programs,)](index, out, old, BLOCK=block, num_warps=4)
    expected = start.cpu().double() + torch.bincount(index.cpu().long(), minlength=size)
    return [Check("out", out, expected), saw_every_total("old", index, old.long(), start.long())]


@inductor_tile.jit
def row_sum_atomic_kernel(x_ptr, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=cols[None, :] < N, other=0.0)
    tl.atomic_add(out_ptr + rows, tl.sum(x, axis=1))  # a slice layout: the threads along N hold copies


@case
def reduction_result_adds_once(gen: torch.Generator, device: str) -> list[Check]:
    rows, cols, bn = 8, 200, 64
    x = random_values(gen, rows * cols, torch.float32, device).reshape(rows, cols)
    start = random_values(gen, rows, torch.float32, device)
    out = start.clone()
    row_sum_atomic_kernel[(cdiv(cols, bn),)](x, out, cols, BM=rows, BN=bn, num_warps=4)
    expected = start.cpu().double() + x.cpu().double().sum(dim=1)
    return [Check("out", out, expected, 1e-4, 1e-5)]


# ===--------------------------------------------------------------------------===
# exchange and compare-and-swap
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def swap_kernel(xchg_ptr, cas_ptr, cmp_ptr, src_ptr, xchg_old_ptr, cas_old_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(src_ptr + offs)
    tl.store(xchg_old_ptr + offs, tl.atomic_xchg(xchg_ptr + offs, v))
    tl.store(cas_old_ptr + offs, tl.atomic_cas(cas_ptr + offs, tl.load(cmp_ptr + offs), v))


def swaps(gen: torch.Generator, device: str, dtype: torch.dtype) -> list[Check]:
    n = 256
    xchg_start, cas_start = random_values(gen, n, dtype, device), random_values(gen, n, dtype, device)
    src = random_values(gen, n, dtype, device)
    hit = torch.arange(n, device=device) % 3 == 0
    cmp = torch.where(hit, cas_start, cas_start + 1)  # one in three compares equal
    xchg, cas = xchg_start.clone(), cas_start.clone()
    xchg_old, cas_old = poisoned_like(src), poisoned_like(src)
    swap_kernel[(n // 64,)](xchg, cas, cmp, src, xchg_old, cas_old, BLOCK=64)
    return [Check("xchg", xchg, src.cpu()), Check("xchg old", xchg_old, xchg_start.cpu()),
            Check("cas", cas, torch.where(hit, src, cas_start).cpu()), Check("cas old", cas_old, cas_start.cpu())]


for _dtype in (torch.int32, torch.float32, torch.float16):
    ATOMIC_CASES[f"swaps_{name_of(_dtype)}"] = partial(swaps, dtype=_dtype)
