"""The backend's generated kernels for a tiny model compile and link for an AMD GPU ahead of time.

A tiny model of tests/test_models.py runs under torch.compile(backend="tile") on the CPU with the GPU launch heuristics
(block sizes, num_warps), as tests/test_codegen_heuristics.py does for NVIDIA; every kernel
the backend generates (forward and backward) is recorded with its num_warps and then
compiled for hip:gfx942 into a linked code object whose metadata has the workgroup size
the launch will use. No AMD GPU is needed (and none is here).
"""

from __future__ import annotations

import pytest
import torch
from test_models import NormBlock

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.to_llvm import hsaco
from inductor_tile.scheduler import scheduling

pytestmark = pytest.mark.skipif(not hsaco.has_linker(), reason="needs ld.lld (apt-get install lld-16, or ROCm)")


@pytest.fixture
def generated_gpu_kernels(monkeypatch):
    """Generate with the GPU heuristics; record (kernel, signature, constexprs, num_warps) instead of precompiling."""
    monkeypatch.setattr(scheduling, "_heuristics_device", lambda nodes: "cuda")
    monkeypatch.setattr(config, "precompile", True)
    recorded = []

    def record(fn, kernel, device_type, source, launch=None):
        signature, constexprs = kernel.signature()
        recorded.append((fn, signature, constexprs, kernel.launch.num_warps or 4))

    monkeypatch.setattr(scheduling, "_precompile", record)
    return recorded


def test_tiny_model_kernels_compile_and_link_for_gfx942(generated_gpu_kernels):
    torch.manual_seed(0)
    torch._dynamo.reset()
    metrics.reset()
    model = NormBlock(32)  # LayerNorm, GELU, RMSNorm, gated SiLU; backward adds column sums
    x = torch.randn(2, 12, 32, generator=torch.Generator().manual_seed(8), requires_grad=True)
    torch.compile(model, backend=tile_backend)(x).square().mean().backward()  # forward and backward kernels
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert len(generated_gpu_kernels) >= 6
    cross_lane = 0
    for fn, signature, constexprs, num_warps in generated_gpu_kernels:
        specs = [spec_from_signature(n, "constexpr", constexprs[n]) if n in constexprs
                 else spec_from_signature(n, signature[n], divisible_by_16=signature[n].startswith("*"))
                 for n in fn.arg_names]
        kernel = compile_specialized(fn, specs, target="hip:gfx942", num_warps=num_warps, native=False)
        meta = hsaco.kernel_metadata(kernel.asm["hsaco"], fn.__name__)
        assert meta[".max_flat_workgroup_size"] == 64 * num_warps, fn.__name__
        assert meta[".group_segment_fixed_size"] == kernel.shared_bytes, fn.__name__
        assert len(meta[".args"]) == len(signature), fn.__name__
        cross_lane += any(op in kernel.asm["amdgcn"] for op in ("ds_swizzle", "quad_perm", "ds_bpermute"))
    assert cross_lane >= 2  # layer norms and softmax reduce across lanes
