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
