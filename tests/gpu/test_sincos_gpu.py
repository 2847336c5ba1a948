"""sin and cos of one value computed by one libdevice sincos call on NVIDIA GPUs (the rotary embeddings'
pattern): the same values as torch's float64 functions within libdevice's documented errors, small
angles and the large ones that take the multi-word argument reduction alike."""

from __future__ import annotations

import math

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl

pytestmark = pytest.mark.gpu
TOLERANCE = {torch.float32: dict(rtol=2e-6, atol=2e-6), torch.float64: dict(rtol=1e-14, atol=1e-15)}


@inductor_tile.jit
def rotate_kernel(x_ptr, angle_ptr, sin_ptr, cos_ptr, rotated_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    angle = tl.load(angle_ptr + i, mask=mask, other=0)
    x = tl.load(x_ptr + i, mask=mask, other=0)
    s, c = tl.sin(angle), tl.cos(angle)
    tl.store(sin_ptr + i, s, mask=mask)
    tl.store(cos_ptr + i, c, mask=mask)
    tl.store(rotated_ptr + i, x * c - x * s, mask=mask)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("scale", [4.0, 1e5], ids=["small", "large"])
def test_sin_and_cos_of_one_angle(dtype, scale):
    n = 5000  # not a multiple of the block: the masked tail too
    gen = torch.Generator().manual_seed(11)
    angle = ((torch.rand(n, generator=gen, dtype=torch.float64) * 2 - 1) * scale).to(dtype)
    x = torch.randn(n, generator=gen, dtype=torch.float64).to(dtype)
    outs = [torch.full((n,), math.nan, dtype=dtype, device="cuda") for _ in range(3)]
    rotate_kernel[(tl.cdiv(n, 256),)](x.cuda(), angle.cuda(), *outs, n, BLOCK=256)
    sin_ref, cos_ref = torch.sin(angle.double()), torch.cos(angle.double())
    torch.testing.assert_close(outs[0].cpu().double(), sin_ref, **TOLERANCE[dtype])
    torch.testing.assert_close(outs[1].cpu().double(), cos_ref, **TOLERANCE[dtype])
    rotated_ref = x.double() * cos_ref - x.double() * sin_ref
    torch.testing.assert_close(outs[2].cpu().double(), rotated_ref, rtol=1e-5 if dtype == torch.float32 else 1e-13,
                               atol=1e-5 if dtype == torch.float32 else 1e-13)
