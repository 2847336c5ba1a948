"""tl.sort (a bitonic network), tl.gather, tl.histogram in the interpreter and on the CPU target.

Sorting and gathering move values exactly: results must equal torch's bit for bit (NaN sorts
last, as in torch.sort). NVIDIA: ptxas accepts the kernels; GPU numerics in tests/gpu.
"""

from __future__ import annotations

import platform

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

M, N = 4, 32


@inductor_tile.jit
def sort_gather_kernel(x_ptr, i_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rm * N + rn)
    if OP == "sort":
        tl.store(out_ptr + rm * N + rn, tl.sort(x))
    elif OP == "sort_descending":
        tl.store(out_ptr + rm * N + rn, x.sort(descending=True))
    elif OP == "sort_dim0":
        tl.store(out_ptr + rm * N + rn, tl.sort(x, 0))
    elif OP == "gather":
        tl.store(out_ptr + rm * N + rn, tl.gather(x, tl.load(i_ptr + rm * N + rn), 1))
    elif OP == "gather_dim0":
        index = tl.load(i_ptr + tl.arange(0, 2 * M)[:, None] * N + rn) % M
        tl.store(out_ptr + tl.arange(0, 2 * M)[:, None] * N + rn, tl.gather(x, index, 0))
    elif OP == "histogram":
        values = tl.load(i_ptr + tl.arange(0, M * N))
        tl.store(out_ptr + tl.arange(0, 16), tl.histogram(values, 16))


def reference(op: str, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    if op == "sort":
        return x.sort(1).values
    if op == "sort_descending":
        return x.sort(1, descending=True).values
    if op == "sort_dim0":
        return x.sort(0).values
    if op == "gather":
        return torch.gather(x, 1, index.long())
    if op == "gather_dim0":
        return torch.gather(x, 0, (index.reshape(2 * M, N) % M).long())
    return torch.stack([(index == b).sum() for b in range(16)]).to(torch.int32)


def inputs(op: str, dtype: torch.dtype, gen: torch.Generator, shape=(M, N)):
    m, n = shape
    if dtype.is_floating_point:
        x = torch.randn(m, n, generator=gen).to(dtype)
        x.view(-1)[torch.randperm(m * n, generator=gen)[:3]] = torch.tensor([float("nan"), float("inf"), -float("inf")],
                                                                           dtype=dtype)
        x[0, 1] = x[0, 2]  # a tie
    else:
        x = torch.randint(-50, 50, (m, n), generator=gen, dtype=torch.int64).to(dtype)
    if op == "histogram":
        index = torch.randint(-3, 20, (m * n,), generator=gen, dtype=torch.int32)
    elif op == "gather_dim0":
        index = torch.randint(0, 1000, (2 * m * n,), generator=gen, dtype=torch.int32)
    else:
        index = torch.randint(0, n, (m, n), generator=gen, dtype=torch.int32)
    return x, index


def run(op: str, x: torch.Tensor, index: torch.Tensor, **launch) -> torch.Tensor:
    want = reference(op, x.cpu(), index.cpu())
    fill = float("nan") if want.dtype.is_floating_point else 0x5A
    out = torch.full(want.shape, fill, dtype=want.dtype, device=x.device)
    sort_gather_kernel[(1,)](x, index, out, M=x.shape[0], N=x.shape[1], OP=op, **launch)
    return out


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype.is_floating_point:
        return torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(0.5), b.nan_to_num(0.5))
    return torch.equal(a, b)


OPS = ["sort", "sort_descending", "sort_dim0", "gather", "gather_dim0", "histogram"]


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("op", OPS)
def test_sort_gather_histogram_match_torch(mode, op, request, gen):
    request.getfixturevalue(mode)
    x, index = inputs(op, torch.float32, gen)
    assert same(run(op, x, index), reference(op, x, index))


@pytest.mark.parametrize("op, dtype", [("sort", torch.int8), ("sort_descending", torch.float16),
                                       ("gather", torch.int64), ("gather", torch.float16)], ids=str)
def test_sort_and_gather_other_dtypes(op, dtype, compiled, gen):
    x, index = inputs(op, dtype, gen)
    assert same(run(op, x, index), reference(op, x, index))


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
@pytest.mark.parametrize("op", ["sort", "gather", "histogram"])
def test_sort_gather_histogram_assemble_for_sm90(op):
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    specs = [spec_from_signature("x_ptr", "*fp32", divisible_by_16=True),
             spec_from_signature("i_ptr", "*i32", divisible_by_16=True),
             spec_from_signature("out_ptr", "*i32" if op == "histogram" else "*fp32", divisible_by_16=True),
             spec_from_signature("M", "constexpr", 4), spec_from_signature("N", "constexpr", 32),
             spec_from_signature("OP", "constexpr", op)]
    ptx = compile_specialized(sort_gather_kernel, specs, target="cuda:90", num_warps=4, native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", f"sort_gather_kernel[{op}]")


@inductor_tile.jit
def histogram_kernel(x_ptr, out_ptr, n, M: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, M)
    counts = tl.histogram(tl.load(x_ptr + offs, mask=offs < n, other=0), BINS, mask=offs < n)
    tl.store(out_ptr + tl.arange(0, BINS), counts)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype, m", [(torch.uint8, 64), (torch.int64, 1024)], ids=str)
def test_large_masked_histogram(mode, dtype, m, request, gen):
    """Values into 128 bins (values past the bins, negatives and masked-off ones are not counted).
    (uint8 at 64 values only: the CPU target's x86 code generation of 1024-wide i8 vectors takes a minute.)"""
    request.getfixturevalue(mode)
    low = 0 if dtype == torch.uint8 else -20
    x = torch.randint(low, 200, (m,), generator=gen, dtype=torch.int64).to(dtype)
    out = torch.full((128,), 0x5A, dtype=torch.int32)
    histogram_kernel[(1,)](x, out, m - 24, M=m, BINS=128)
    want = torch.stack([(x[:m - 24].long() == b).sum() for b in range(128)]).to(torch.int32)
    assert torch.equal(out, want)
