"""Layout conversions through shared memory (`to_llvm/shared.py`, planned by `shared_plan.py`: vector
accesses, padding) on an NVIDIA GPU.

- The layout pairs and reshapes of tests/test_convert_ptx_sim.py (run there in the PTX interpreter): the
  same TTGIR kernel, assembled for this device and launched, moves every element to its place (random input, output
  poisoned, compared exactly against the input in float64).
- BERT's layer-norm backward (three conversions: [1, 1024] weight, fp32 and fp16 [8, 1024] tiles), rows
  not a multiple of the block, against torch in float64.
- A layer norm with fp32 weight and bias and an RMSNorm backward with an fp32 weight, whose [1, N] rows
  convert before their broadcast (remove-layout-conversions' narrowing), against torch in float64.
"""

from __future__ import annotations

import pytest
import torch

from convert_ptx_sim import conversion_kernel
from test_convert_ptx_sim import CASES, RESHAPES
from test_narrowed_conversion_ptx_sim import layer_norm_forward_kernel, rms_norm_backward_kernel
from test_nvidia_ptx import layer_norm_backward_kernel

pytestmark = pytest.mark.gpu

TORCH = {"f16": torch.float16, "f32": torch.float32, "i32": torch.int32, "i8": torch.int32, "i1": torch.int32}
KIND = {"f16": "fp16", "f32": "fp32", "i32": "i32", "i8": "i32", "i1": "i32"}


@pytest.mark.parametrize("shape,element,src,dst,warps,dst_shape",
                         [pytest.param(*case.values, None, id=case.id) for case in CASES]
                         + [pytest.param(shape, element, src, dst, warps, dst_shape, id=f"reshape-{shape}-{dst_shape}")
                            for shape, dst_shape, src, dst, warps, element in RESHAPES])
def test_conversion_moves_every_element(shape, element, src, dst, warps, dst_shape):
    """(a reshape writes the same elements in row-major order: its output compares like a conversion's)"""
    from inductor_tile.kernel_compiler.runtime.cuda_launcher import CUDAKernel
    from inductor_tile.kernel_compiler.runtime.cuda_tools import assemble_ptx
    from inductor_tile.kernel_compiler.to_llvm.nvptx import ptx_arch

    major, minor = torch.cuda.get_device_capability()
    capability = 10 * major + minor
    ptx, shared_bytes = conversion_kernel(shape, element, src, dst, warps, capability, dst_shape)
    kernel = CUDAKernel(assemble_ptx(ptx, ptx_arch(ptx, capability), "convert"), "convert",
                        [f"*{KIND[element]}"] * 2, warps, shared_bytes)
    gen = torch.Generator().manual_seed(11)
    dtype = TORCH[element]
    if dtype.is_floating_point:
        source = torch.randn(shape, generator=gen).to(dtype)
        out = torch.full(shape, float("nan"), dtype=dtype)
    else:
        source = torch.randint(-2**31, 2**31 - 1, shape, generator=gen, dtype=torch.int64).to(torch.int32)
        out = torch.full(shape, 0x5A5A5A5A, dtype=torch.int32)
    want = source.double()
    if element == "i8":
        want = source.to(torch.int8).double()
    elif element == "i1":
        want = (source & 1).double()
    source, out = source.cuda(), out.cuda()
    kernel.launch((source, out), (1, 1, 1))
    torch.cuda.synchronize()
    got = out.cpu().double()
    wrong = (got != want).nonzero()
    assert len(wrong) == 0, f"{len(wrong)} elements wrong, first at {wrong[0].tolist()}"


@pytest.mark.parametrize("rows", [8, 100, 1000])
def test_layer_norm_backward(rows):
    gen = torch.Generator().manual_seed(5)
    dy = torch.randn(rows, 768, generator=gen).half()
    w = torch.randn(768, generator=gen)
    xhat = torch.randn(rows, 768, generator=gen)
    rstd = torch.rand(rows, generator=gen) + 0.5
    keep = torch.rand(rows, 768, generator=gen) > 0.1
    dyw = dy.double() * w.double()
    sum_dyw = dyw.sum(1, keepdim=True)
    sum_dyw_xhat = (dyw * xhat.double()).sum(1, keepdim=True)
    want = rstd.double()[:, None] * (dyw * 768.0 - sum_dyw - xhat.double() * sum_dyw_xhat)
    dx = torch.full((rows, 768), float("nan")).cuda()
    dx_half = torch.full((rows, 768), float("nan"), dtype=torch.float16).cuda()
    layer_norm_backward_kernel[((rows + 7) // 8,)](dy.cuda(), w.cuda(), xhat.cuda(), rstd.cuda(), keep.cuda(), dx,
                                                   dx_half, rows, XBLOCK=8, RBLOCK=1024, num_warps=4)
    scale = want.abs().max()
    assert ((dx.cpu().double() - want).abs().max() / scale) < 1e-5
    assert ((dx_half.cpu().double() - want.half().double() * keep).abs().max() / scale) < 2e-3


@pytest.mark.parametrize("rows", [8, 100, 1000])
def test_layer_norm_forward_with_fp32_weight(rows):
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(rows, 768, generator=gen).half()
    w, b = torch.randn(768, generator=gen), torch.randn(768, generator=gen)
    want = torch.nn.functional.layer_norm(x.double(), (768,), w.double(), b.double(), eps=1e-5)
    y = torch.full((rows, 768), float("nan"), dtype=torch.float16).cuda()
    layer_norm_forward_kernel[((rows + 7) // 8,)](x.cuda(), w.cuda(), b.cuda(), y, rows, XBLOCK=8, RBLOCK=1024,
                                                  num_warps=4)
    assert ((y.cpu().double() - want).abs() <= 2.0 ** -10 * want.abs() + 1e-3).all()


@pytest.mark.parametrize("rows", [2, 101, 1000])
def test_rms_norm_backward_with_fp32_weight(rows):
    gen = torch.Generator().manual_seed(7)
    dy, x = torch.randn(rows, 4096, generator=gen).half(), torch.randn(rows, 4096, generator=gen).half()
    w, rstd = torch.randn(4096, generator=gen), torch.rand(rows, generator=gen) + 0.5
    dyw, r = dy.double() * w.double(), rstd.double()[:, None]
    want = r * dyw - x.double() * (r**3 * (dyw * x.double()).sum(1, keepdim=True) / 4096)
    dx = torch.full((rows, 4096), float("nan")).cuda()
    rms_norm_backward_kernel[((rows + 1) // 2,)](dy.cuda(), x.cuda(), w.cuda(), rstd.cuda(), dx, rows, XBLOCK=2,
                                                 RBLOCK=4096, num_warps=8)
    assert ((dx.cpu().double() - want).abs().max() / want.abs().max()) < 1e-5
