"""Triton fallback kernels round casts to fp16/bf16 as our kernels do (scheduler/fallback.py).

Inductor's lowering marks a cast ``use_compute_types=True`` unless ``emulate_precision_casts``
was on for the whole compile, and its Triton code then skips the rounding (``x.to(tl.float32)``);
a value rounded by one of our kernels and read unrounded by a fallback kernel would have two
values in one graph (fuzz seed 40250 on the CPU).  This checks the Triton source text; the GPU
runs of tests/gpu and the fuzzer (``--device cuda``) check the numbers.
"""

import types

import pytest
import torch

from inductor_tile.scheduler import fallback

triton_codegen = pytest.importorskip("torch._inductor.codegen.triton")


@pytest.fixture
def cuda_graph():
    """What Inductor's Triton overrides ask of the graph (its device) and kernel being compiled."""
    from torch._inductor.virtualized import V

    graph = types.SimpleNamespace(get_current_device_or_throw=lambda: torch.device("cuda"))
    kernel = types.SimpleNamespace(min_elem_per_thread=0)
    with V.set_graph_handler(graph), V.set_kernel_handler(kernel):
        yield


@pytest.mark.parametrize("low, name", [(torch.float16, "tl.float16"), (torch.bfloat16, "tl.bfloat16")])
def test_a_cast_to_low_precision_rounds_in_a_triton_fallback(cuda_graph, low, name):
    to_dtype = triton_codegen.TritonKernelOverrides.to_dtype
    assert to_dtype("tmp0", low) == "tmp0.to(tl.float32)"  # Inductor's own: no rounding
    assert fallback._triton_rounds_casts in fallback.EVERY_NODE["cuda"]
    with fallback._triton_rounds_casts():
        assert triton_codegen.TritonKernelOverrides.to_dtype("tmp0", low) == f"tmp0.to({name}).to(tl.float32)"
        assert triton_codegen.TritonKernelOverrides.to_dtype("tmp0", low, use_compute_types=False) == f"tmp0.to({name})"
        assert triton_codegen.TritonKernelOverrides.to_dtype("tmp0", torch.float32) == "tmp0.to(tl.float32)"
        assert triton_codegen.TritonKernelOverrides.to_dtype("tmp0", torch.bool) == "(tmp0 != 0)"
        # eager rounds float64 to float32, then to the low type (twice past a midpoint)
        assert triton_codegen.TritonKernelOverrides.to_dtype("tmp0", low, torch.float64) == \
            f"tmp0.to(tl.float32).to({name}).to(tl.float32)"
    assert triton_codegen.TritonKernelOverrides.to_dtype("tmp0", low) == "tmp0.to(tl.float32)"  # restored
