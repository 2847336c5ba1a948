"""tl.dot kernels compiled for NVIDIA without a GPU: fp16/bf16 dots run on tensor cores
(the expected number of mma.sync.m16n8k16 per thread), fp32 dots on tf32 ones, and ptxas accepts
the PTX for sm_80 and sm_90 (sm_90 with TILE_WGMMA=0: its default, wgmma, is test_dot_wgmma.py's)."""

from __future__ import annotations

import platform

import pytest

from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
from model_benchmarks import dot_kernels

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() != "x86_64",
    reason="ptxas and libdevice wheels exist for Linux x86-64 only",
)



@pytest.fixture(autouse=True)
def _mma_sync_on_sm90(monkeypatch):
    monkeypatch.setenv("TILE_WGMMA", "0")


MMA = "mma.sync.aligned.m16n8k16.row.col.f32"


def _ptx(kernel, signature: dict[str, str], constexprs: dict, arch: int, num_warps: int = 4) -> str:
    specs = [spec_from_signature(name, signature[name], divisible_by_16=not name.endswith(("_ak", "_bn", "_cn")))
             if name in signature else spec_from_signature(name, "constexpr", constexprs[name])
             for name in kernel.arg_names]
    ptx = compile_specialized(kernel, specs, target=f"cuda:{arch}", num_warps=num_warps, native=False).asm["ptx"]
    check_ptx(ptx, f"sm_{arch}", kernel.__name__)
    return ptx


def _matmul_signature(dtype: str, out: str = "fp32") -> dict[str, str]:
    ints = ["M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"]
    return {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{out}", **{name: "i32" for name in ints}}


@pytest.mark.parametrize("arch,dtype,kind", [(80, "fp16", "f16"), (90, "fp16", "f16"), (80, "bf16", "bf16")])
def test_matmul_uses_mma_sync(arch, dtype, kind):
    M, N, K, warps = 64, 64, 32, 4
    ptx = _ptx(dot_kernels.matmul_kernel, _matmul_signature(dtype),
               {"BLOCK_M": M, "BLOCK_N": N, "BLOCK_K": K, "GROUP_M": 8}, arch, warps)
    # each warp computes its share of the 64 x 64 x 32 product in 16 x 8 x 16 pieces
    assert ptx.count(f"{MMA}.{kind}.{kind}.f32") == M * N * K // (16 * 8 * 16 * warps)
    assert "fma.rn.f32" not in ptx


@pytest.mark.parametrize("arch", [80, 90])
def test_fp32_matmul_uses_tf32_mma_sync(arch, monkeypatch):
    """tl.dot's default input_precision for fp32 is tf32: m16n8k8 tf32 pieces (test_dot_tf32.py has the rest)."""
    monkeypatch.delenv("TILE_TF32_MMA", raising=False)
    ptx = _ptx(dot_kernels.matmul_kernel, _matmul_signature("fp32"),
               {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 8}, arch)
    assert ptx.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") == 32 * 32 * 16 // (16 * 8 * 8 * 4)
    assert "fma.rn.f32" not in ptx
    # both operands (prefetched, converted right before the dot) stored as tf32 tiles and read by ldmatrix
    # a: 2 row pairs x 2 k8 halves, kept for the dot; b: once (dot_tf32.tf32_a_stationary; 2, once per row pair, before)
    assert ptx.count("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == 5


def test_tf32_tensor_cores_can_be_turned_off(monkeypatch):
    """TILE_TF32_MMA=0: fp32 dots multiply on FMAs (operands still rounded to tf32)."""
    monkeypatch.setenv("TILE_TF32_MMA", "0")
    ptx = _ptx(dot_kernels.matmul_kernel, _matmul_signature("fp32"),
               {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 8}, 90)
    assert "tf32" not in ptx.replace("cvt.rna.tf32", "")
    assert "fma.rn.f32" in ptx


@pytest.mark.parametrize("arch", [80, 90])
def test_attention_uses_mma_sync(arch):
    ptx = _ptx(dot_kernels.attention_fwd_kernel, dot_kernels.ATTENTION_SIGNATURE,
               {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 32}, arch)
    # q k^T: 64 x 32 x 64, then p v: 64 x 64 x 32, over 4 warps
    assert ptx.count(f"{MMA}.f16.f16.f32") == (64 * 32 * 64 + 64 * 64 * 32) // (16 * 8 * 16 * 4)


@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("dtype,kind", [("fp16", "f16"), ("bf16", "bf16")])
def test_half_results_round_two_elements_per_cvt(arch, dtype, kind):
    """The fp32 accumulator stored to fp16/bf16 rounds two elements per cvt.rn.f16x2.f32 (sm_80+), as
    Triton does: half the instructions, and wgmma groups left in flight by cp.async rings stay
    asynchronous (test_pipeline_async_copies.py)."""
    M, N, K, warps = 64, 64, 32, 4
    ptx = _ptx(dot_kernels.matmul_kernel, _matmul_signature(dtype, out=dtype),
               {"BLOCK_M": M, "BLOCK_N": N, "BLOCK_K": K, "GROUP_M": 8}, arch, warps)
    assert ptx.count(f"cvt.rn.{kind}x2.f32") == M * N // (32 * warps) // 2
    assert f"cvt.rn.{kind}.f32" not in ptx
