"""`tl.extra.cuda.globaltimer()` and `smid()` on a CUDA GPU (tests/test_cuda_registers.py's kernel)."""

from __future__ import annotations

import pytest
import torch

from test_cuda_registers import timed_loop_kernel

pytestmark = pytest.mark.gpu


def test_timer_advances_and_sm_ids_are_in_range():
    programs, steps = 256, 200
    start = torch.randint(-1000, 1000, (128,), dtype=torch.int64, device="cuda")
    counts = start.clone()
    elapsed = torch.full((programs,), -1, dtype=torch.int64, device="cuda")
    sms = torch.full((programs,), -1, dtype=torch.int32, device="cuda")
    timed_loop_kernel[(1,)](counts, elapsed, sms, steps)
    assert torch.equal(counts, start + steps)
    assert elapsed[0].item() > 0
    timed_loop_kernel[(programs,)](counts.clone(), elapsed, sms, 1)
    count = torch.cuda.get_device_properties(0).multi_processor_count
    assert bool(((sms >= 0) & (sms < count)).all()), sms
    assert torch.unique(sms).numel() > 1
