"""Issue 20's language additions on an NVIDIA GPU: element moves across threads and warps
(shared memory), scans, reductions with a combine function, sorts, gathers, asserts.
Same kernels and references as the CPU tests (tests/test_language_*.py)."""

from __future__ import annotations

import pytest
import torch

from test_language_moves import OPS, _inputs, _poisoned, _reference, moves_kernel

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("shape, warps", [((8, 16), 1), ((32, 64), 4), ((64, 128), 8)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("op", OPS)
def test_moves_on_gpu(op, dtype, shape, warps):
    gen = torch.Generator().manual_seed(7)
    x, y = _inputs(dtype, gen, *shape)
    want = _reference(op, x, y)
    out = _poisoned(want.numel(), dtype).cuda()
    moves_kernel[(1,)](x.cuda(), y.cuda(), out, M=shape[0], N=shape[1], OP=op, num_warps=warps)
    assert torch.equal(out.cpu().reshape(want.shape), want)


# --- reductions with a combine function and scans ----------------------------------------
from test_language_scan import OPS as COMBINE_OPS  # noqa: E402
from test_language_scan import random_inputs, reference, run  # noqa: E402


@pytest.mark.parametrize("shape, warps", [((8, 32), 1), ((8, 32), 4), ((32, 256), 4), ((4, 1024), 8), ((256, 8), 8)])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", COMBINE_OPS)
def test_combine_ops_on_gpu(op, axis, shape, warps):
    gen = torch.Generator().manual_seed(3)
    x, y = random_inputs(gen, shape)
    want = reference(op, x, y, axis).reshape(-1)
    got = run(op, x.cuda(), y.cuda(), axis, num_warps=warps).cpu()
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-11)
    got32 = run(op, x.float().cuda(), y.float().cuda(), axis, num_warps=warps).cpu()
    torch.testing.assert_close(got32.double(), want, rtol=2e-4, atol=2e-4)


# --- sort, gather, histogram ----------------------------------------------------------------
from test_language_sort_gather import OPS as SORT_OPS  # noqa: E402
from test_language_sort_gather import inputs, same  # noqa: E402
from test_language_sort_gather import reference as sort_reference  # noqa: E402
from test_language_sort_gather import run as sort_run  # noqa: E402


@pytest.mark.parametrize("shape, warps", [((4, 32), 1), ((4, 32), 4), ((16, 64), 4)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float16], ids=str)
@pytest.mark.parametrize("op", SORT_OPS)
def test_sort_gather_histogram_on_gpu(op, dtype, shape, warps):
    if op == "histogram" and dtype != torch.int32:
        pytest.skip("histogram counts integers; one dtype is enough")
    gen = torch.Generator().manual_seed(5)
    x, index = inputs(op, dtype, gen, shape)
    got = sort_run(op, x.cuda(), index.cuda(), num_warps=warps).cpu()
    assert same(got, sort_reference(op, x, index))


# --- block pointers, device_print ---------------------------------------------------------------
from test_block_pointers import _padded_reference, copy_blocks  # noqa: E402


@pytest.mark.parametrize("pad", ["zero", "nan"])
@pytest.mark.parametrize("transposed", [False, True])
def test_block_pointers_on_gpu(pad, transposed):
    a = torch.randn(300, 200, dtype=torch.float32, generator=torch.Generator().manual_seed(1))
    if transposed:
        a = a.t().contiguous().t()
    m, n = a.shape
    grid = (m + 15) // 16
    a_gpu = a.cuda() if not transposed else a.t().contiguous().cuda().t()
    out = torch.full((m, n), float("nan"), device="cuda")
    padded = torch.full((grid * 16, 32), 7.0, device="cuda")
    copy_blocks[(grid,)](a_gpu, out, padded, m, n, a_gpu.stride(0), a_gpu.stride(1), BM=16, BN=32, PAD=pad)
    assert torch.equal(out.cpu(), a * 2 + 1)
    want = _padded_reference(a, pad)
    got = padded.cpu()
    assert torch.equal(got.isnan(), want.isnan()) and torch.equal(got.nan_to_num(3.0), want.nan_to_num(3.0))


from test_language_sort_gather import histogram_kernel  # noqa: E402


@pytest.mark.parametrize("warps", [1, 4, 8])
@pytest.mark.parametrize("dtype", [torch.uint8, torch.int64], ids=str)
def test_large_masked_histogram_on_gpu(dtype, warps):
    gen = torch.Generator().manual_seed(9)
    low = 0 if dtype == torch.uint8 else -20
    x = torch.randint(low, 200, (1024,), generator=gen, dtype=torch.int64).to(dtype)
    out = torch.full((128,), 0x5A, dtype=torch.int32, device="cuda")
    histogram_kernel[(1,)](x.cuda(), out, 1000, M=1024, BINS=128, num_warps=warps)
    want = torch.stack([(x[:1000].long() == b).sum() for b in range(128)]).to(torch.int32)
    assert torch.equal(out.cpu(), want)


# --- tl.assume, loop_unroll_factor, assert and print of tiles --------------------------------
from test_lang_loop_unroll import reference as rows_reference  # noqa: E402
from test_lang_loop_unroll import weighted_rows_kernel  # noqa: E402
from test_language_assume import scale_shift_kernel  # noqa: E402
from test_language_debug import checked_assert_kernel, unchecked_assert_kernel  # noqa: E402


@pytest.mark.parametrize("warps", [1, 4])
def test_assume_on_gpu(warps):
    x = torch.randn(3000, generator=torch.Generator().manual_seed(11))
    y = torch.full((3000,), float("nan"), device="cuda")
    scale_shift_kernel[(24,)](x.cuda(), y, 3000, 1, BLOCK=128, num_warps=warps)
    torch.testing.assert_close(y.cpu().double(), x.double() * 1.5 + 0.25)


@pytest.mark.parametrize("unroll", [1, 3, 4])
@pytest.mark.parametrize("start,end,step", [(0, 13, 1), (2, 11, 3), (12, 0, -5), (7, 3, 1)])
def test_unrolled_loop_on_gpu(unroll, start, end, step):
    x = torch.randn(13, 16, generator=torch.Generator().manual_seed(12))
    out = torch.full((16,), float("nan"), device="cuda")
    count = torch.full((1,), -1, dtype=torch.int32, device="cuda")
    weighted_rows_kernel[(1,)](x.cuda(), out, count, start, end, BLOCK=16, STEP=step, UNROLL=unroll)
    want, trips = rows_reference(x, start, end, step)
    torch.testing.assert_close(out.cpu().double(), want, rtol=1e-5, atol=1e-4)
    assert count.item() == trips


def test_assert_statement_only_in_debug_mode_on_gpu():
    x = torch.rand(100, generator=torch.Generator().manual_seed(13)) + 0.1
    y = torch.full((100,), float("nan"), device="cuda")
    x[13] = -0.5
    unchecked_assert_kernel[(4,)](x.cuda(), y, 100, BLOCK=32)  # not compiled in: no trap
    torch.testing.assert_close(y.cpu().double(), x.double() * 3.0)
    x[13] = 0.5
    checked_assert_kernel[(4,)](x.cuda(), y, 100, BLOCK=32)  # compiled in, holds
    torch.testing.assert_close(y.cpu().double(), x.double() * 3.0)


# --- cache hints (cache_modifier, eviction_policy, volatile) --------------------------------
from access_hint_cases import HINTS, hinted_axpy  # noqa: E402
from suite import assert_checks  # noqa: E402


@pytest.mark.parametrize("hints", HINTS, ids=str)
def test_cache_hints_on_gpu(hints, compiled, gen):
    assert_checks(hinted_axpy(gen, "cuda", hints))
    assert_checks(hinted_axpy(gen, "cuda", hints, n=4096 + 3, block=1024))
