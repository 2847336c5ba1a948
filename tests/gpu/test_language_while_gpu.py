"""`while` loops on an NVIDIA GPU (4 warps per program: the loop condition is uniform over them):
the kernels of tests/test_language_while.py with every tensor on CUDA, against the same references."""

import pytest
import torch

from test_language_while import CHECKS

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_while_loops_on_the_gpu(name, compiled, gen):
    CHECKS[name]("cuda", gen)
    torch.cuda.synchronize()
