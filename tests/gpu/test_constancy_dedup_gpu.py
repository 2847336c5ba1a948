"""Element-wise work shared by slots axis info proves equal, and reductions leaving out slots masked in every
thread (to_llvm/constancy.py, static_slots.py), on an NVIDIA GPU: the kernels of tests/test_constancy_dedup.py
over many programs, row counts that are and are not multiples of 16 (the launcher specializes on that), against
torch in float64 with NaN-poisoned outputs."""

from __future__ import annotations

import pytest
import torch

from test_constancy_dedup import (masked_row_reductions_kernel, masked_rows_kernel, masked_rows_reference,
                                  rotate_half_kernel, rotate_half_reference)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("n, block, rows_per_program, warps", [(200, 256, 2, 2), (96, 128, 4, 4), (40, 64, 4, 1),
                                                               (768, 1024, 1, 1), (768, 1024, 1, 2)])
@pytest.mark.parametrize("rows", [37, 64])
def test_masked_rows(n, block, rows_per_program, warps, rows):
    gen = torch.Generator().manual_seed(n + rows)
    programs = -(-rows // rows_per_program)
    x = torch.randn(programs * rows_per_program * n, generator=gen)
    w = torch.randn(n, generator=gen)
    out = torch.full_like(x, float("nan")).cuda()
    sums = torch.full((programs * rows_per_program,), float("nan")).cuda()
    masked_rows_kernel[(programs,)](x.cuda(), w.cuda(), out, sums, rows, N=n, ROWS=rows_per_program, BLOCK=block,
                                    num_warps=warps)
    want_out, want_sums = masked_rows_reference(x, w, rows, n)
    torch.testing.assert_close(out[:rows * n].cpu().double(), want_out.flatten(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(sums[:rows].cpu().double(), want_sums, rtol=1e-5, atol=1e-5)
    assert out[rows * n:].isnan().all() and sums[rows:].isnan().all()


@pytest.mark.parametrize("n, block, warps", [(768, 1024, 1), (200, 1024, 1), (200, 256, 2), (1000, 1024, 4)])
@pytest.mark.parametrize("negative_zeros", [False, True], ids=["random", "negative_zeros"])
def test_masked_row_reductions(n, block, warps, negative_zeros):
    x = torch.full((n,), -0.0) if negative_zeros else torch.randn(n, generator=torch.Generator().manual_seed(n))
    out = torch.full((4,), float("nan")).cuda()
    counts = torch.full((2,), 1234567, dtype=torch.int32).cuda()
    masked_row_reductions_kernel[(1,)](x.cuda(), out, counts, N=n, BLOCK=block, num_warps=warps)
    padded = torch.cat([x.double(), torch.zeros(block - n, dtype=torch.float64)])
    want = torch.stack([padded.sum(), (padded * padded).sum(), x.double().max()])
    got = out.cpu()
    torch.testing.assert_close(got[:3].double(), want, rtol=1e-5, atol=1e-5)
    assert got[3].isnan() and counts[1].item() == 1234567 and counts[0].item() == int((x > 0).sum())
    if negative_zeros:
        assert not got[0].signbit() and not got[1].signbit()


@pytest.mark.parametrize("numel", [2 * 2048 * 128, 5000])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_rotate_half(numel, dtype):
    gen = torch.Generator().manual_seed(numel)
    x = torch.randn(2 * 2048 * 128, generator=gen).to(dtype)
    cos, sin = (torch.randn(2048 * 128, generator=gen).to(dtype) for _ in range(2))
    out = torch.full_like(x, float("nan")).cuda()
    rotate_half_kernel[(-(-numel // 1024),)](x.cuda(), cos.cuda(), sin.cuda(), out, numel, XBLOCK=1024, num_warps=4)
    want = rotate_half_reference(x, cos, sin, numel)
    tolerance = 2e-2 if dtype == torch.float16 else 1e-5
    torch.testing.assert_close(out[:numel].cpu().double(), want, rtol=tolerance, atol=tolerance)
    assert out[numel:].isnan().all()
