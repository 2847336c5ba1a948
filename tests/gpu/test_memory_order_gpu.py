"""tests/test_memory_order.py's kernels on a CUDA GPU: a load after a store to its address, a load in a
loop that stores there, and values several threads hold (a scalar on 4 and 32 warps, 16 elements
over 128 threads) loaded, changed and stored in place."""

from __future__ import annotations

import pytest

from test_memory_order import run_cases

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("num_warps", [4, 32])
def test_memory_order_on_the_gpu(num_warps):
    run_cases("cuda", num_warps)
