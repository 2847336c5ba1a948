"""The kernel suite on an NVIDIA GPU, against torch.

The suite's cases build CPU tensors; here every launch moves its tensor arguments to the
GPU (NaN-poisoned outputs included), runs the compiled CUDA kernel and copies every
tensor back, so the same checks compare the GPU results with the float64 references.
"""

import pytest
import torch

from inductor_tile.kernel_compiler.runtime.jit import JITFunction
from suite import CASES, assert_checks

pytestmark = pytest.mark.gpu


@pytest.fixture
def on_gpu(monkeypatch):
    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    original = JITFunction.run

    def run_on_gpu(self, *args, grid, **kwargs):
        moved = {}

        def to_gpu(value):
            if isinstance(value, torch.Tensor) and value.device.type == "cpu":
                gpu = value.to("cuda")
                moved[id(gpu)] = (value, gpu)
                return gpu
            return value

        result = original(self, *[to_gpu(a) for a in args], grid=grid, **{k: to_gpu(v) for k, v in kwargs.items()})
        torch.cuda.synchronize()
        for cpu, gpu in moved.values():
            cpu.copy_(gpu.cpu())
        return result

    monkeypatch.setattr(JITFunction, "run", run_on_gpu)


@pytest.mark.parametrize("name", sorted(CASES))
def test_suite_case_on_gpu(name, on_gpu, gen):
    assert_checks(CASES[name](gen))
