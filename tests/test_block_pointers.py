"""tl.make_block_ptr / tl.advance with boundary_check and padding_option, in loops.

Block pointers become ordinary tiles of pointers with masks, so the interpreter and the CPU
target agree with torch exactly; NVIDIA: ptxas accepts a loop over block pointers.
"""

from __future__ import annotations

import platform

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

BM, BN = 16, 32


@inductor_tile.jit
def copy_blocks(a_ptr, out_ptr, pad_ptr, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr,
                PAD: tl.constexpr):
    """out = 2a + 1 block by block along the rows (advance in a loop); pad = the first block as loaded
    past the tensor's end (rows pid*BM.., columns N-BN/2..), padding included."""
    pid = tl.program_id(0)
    src = tl.make_block_ptr(a_ptr, shape=(M, N), strides=(stride_m, stride_n), offsets=(pid * BM, 0),
                            block_shape=(BM, BN), order=(1, 0))
    dst = tl.make_block_ptr(out_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    for _ in range(0, tl.cdiv(N, BN)):
        x = tl.load(src, boundary_check=(0, 1), padding_option=PAD)
        tl.store(dst, x * 2 + 1, boundary_check=(0, 1))
        src = tl.advance(src, (0, BN))
        dst = tl.advance(dst, (0, BN))
    edge = tl.make_block_ptr(a_ptr, (M, N), (stride_m, stride_n), (pid * BM, N - BN // 2), (BM, BN), (1, 0))
    whole = tl.make_block_ptr(pad_ptr, (tl.num_programs(0) * BM, BN), (BN, 1), (pid * BM, 0), (BM, BN), (1, 0))
    tl.store(whole, tl.load(edge, boundary_check=(0, 1), padding_option=PAD))


def _run(a: torch.Tensor, pad: str):
    m, n = a.shape
    grid = (m + BM - 1) // BM
    out = torch.full((m, n), float("nan"), dtype=a.dtype)
    padded = torch.full((grid * BM, BN), 7.0, dtype=a.dtype)
    copy_blocks[(grid,)](a, out, padded, m, n, a.stride(0), a.stride(1), BM=BM, BN=BN, PAD=pad)
    return out, padded


def _padded_reference(a: torch.Tensor, pad: str) -> torch.Tensor:
    m, n = a.shape
    grid = (m + BM - 1) // BM
    want = torch.full((grid * BM, BN), 0.0 if pad == "zero" else float("nan"), dtype=a.dtype)
    want[:m, : BN // 2] = a[:, n - BN // 2:]
    return want


@pytest.mark.parametrize("mode, pad, transposed", [
    ("interpret", "zero", False), ("interpret", "nan", True), ("compiled", "zero", False), ("compiled", "nan", True)])
def test_block_pointers_match_torch(mode, pad, transposed, request, gen):
    request.getfixturevalue(mode)
    a = torch.randn(37, 50, generator=gen, dtype=torch.float64)
    if transposed:
        a = a.t().contiguous().t()  # column-major strides
    out, padded = _run(a, pad)
    assert torch.equal(out, a * 2 + 1)
    want = _padded_reference(a, pad)
    assert torch.equal(padded.isnan(), want.isnan()) and torch.equal(padded.nan_to_num(3.0), want.nan_to_num(3.0))


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
def test_block_pointer_loop_assembles_for_sm90():
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    specs = [spec_from_signature(n, "*fp32", divisible_by_16=True) for n in ("a_ptr", "out_ptr", "pad_ptr")] + [
        spec_from_signature(n, "i32") for n in ("M", "N", "stride_m")] + [
        spec_from_signature("stride_n", "constexpr", 1), spec_from_signature("BM", "constexpr", 64),
        spec_from_signature("BN", "constexpr", 64), spec_from_signature("PAD", "constexpr", "zero")]
    ptx = compile_specialized(copy_blocks, specs, target="cuda:90", num_warps=4, native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", "copy_blocks")
