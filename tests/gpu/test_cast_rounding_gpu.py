"""fp_downcast_rounding on an NVIDIA GPU: the conversions of tests/test_cast_rounding.py with the tensors on
CUDA, against the same references (nearest even: torch; toward zero: a search among every 16-bit value, or
torch.nextafter for float32)."""

import pytest
import torch

from test_cast_rounding import CONVERSIONS, check_downcast

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("src, dst", CONVERSIONS)
@pytest.mark.parametrize("rounding", ["rtne", "rtz"])
def test_downcast_rounding_on_the_gpu(src, dst, rounding, compiled, gen):
    check_downcast(src, dst, rounding, "cuda", gen)
    torch.cuda.synchronize()
