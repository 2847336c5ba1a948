"""Tensor descriptors on an NVIDIA GPU: the checks of tests/test_tensor_descriptor.py (descriptors made in
the kernel and host TensorDescriptor arguments; windows past every edge, rank 3 in a loop, atomics, gather
and scatter) with every tensor on CUDA, against the same float64 / exact references."""

import pytest
import torch

from test_tensor_descriptor import CHECKS

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_tensor_descriptors_on_the_gpu(name, compiled, gen):
    CHECKS[name]("cuda", gen)
    torch.cuda.synchronize()
