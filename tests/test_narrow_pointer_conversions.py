"""A 32768-element tile loaded through pointers built from a reshaped range (the shape of Triton's
test_chained_reductions): the load's layout differs from the reshape's, and a reshape is not
rebuilt, so a conversion stays. remove-layout-conversions converts the i32 offsets and adds them to
the splat base pointer again in the load's layout (passes/rematerialize.py, narrowing): 128 KB of
shared memory instead of the 256 KB a tile of 8-byte pointers took, over the H200's 227 KB.
Both parametrizations compile for sm_90 within the limit and run on the CPU target against torch
(random int32 inputs, output poisoned first)."""

from __future__ import annotations

import re

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl

SM90_SHARED_LIMIT = 232448  # bytes of shared memory a block may use on an H100 / H200

# (tile shape, permutation, the three axes summed one after the other)
CASES = [((4, 32, 32, 4, 2), (2, 1, 0, 3, 4), (3, 1, 0)),
         ((8, 2, 32, 4, 16), (4, 0, 1, 3, 2), (0, 2, 0))]


@inductor_tile.jit
def permuted_sums_kernel(x_ptr, out_ptr, S0: tl.constexpr, S1: tl.constexpr, S2: tl.constexpr, S3: tl.constexpr,
                         S4: tl.constexpr, P0: tl.constexpr, P1: tl.constexpr, P2: tl.constexpr, P3: tl.constexpr,
                         P4: tl.constexpr, R0: tl.constexpr, R1: tl.constexpr, R2: tl.constexpr):
    offsets = tl.arange(0, S0 * S1 * S2 * S3 * S4).reshape(S0, S1, S2, S3, S4)
    x = tl.permute(tl.load(x_ptr + offsets), [P0, P1, P2, P3, P4])
    sums = tl.sum(tl.sum(tl.sum(x, R0), R1), R2)  # [A, B]
    tl.store(out_ptr + tl.arange(0, sums.shape[0] * sums.shape[1]).reshape(sums.shape), sums)


def constexprs(shape, perm, axes) -> dict[str, int]:
    names = [f"S{i}" for i in range(5)] + [f"P{i}" for i in range(5)] + [f"R{i}" for i in range(3)]
    return dict(zip(names, (*shape, *perm, *axes)))


def pointer_conversions(ttgir: str) -> list[str]:
    return [line for line in ttgir.splitlines() if re.search(r"ttg\.convert_layout %\S+ : tensor<[^>]*!tt\.ptr", line)]


def offsets_converted(ttgir: str) -> bool:
    """Whether the 5-D reshaped range (the load's offsets) is converted."""
    reshaped = re.search(r"(%\S+) = tt\.reshape %\S+ : tensor<32768xi32, [^>]*>> -> tensor<(\d+x){5}i32", ttgir)
    return reshaped is not None and f"ttg.convert_layout {reshaped.group(1)} :" in ttgir


@pytest.mark.parametrize("shape, perm, axes", CASES)
def test_sm90_converts_offsets_within_shared_memory(shape, perm, axes):
    kernel = inductor_tile.compile(permuted_sums_kernel, {"x_ptr": "*i32", "out_ptr": "*i32"},
                                   constexprs=constexprs(shape, perm, axes), target="cuda:90", num_warps=4)
    ttgir = kernel.asm["ttgir"]
    assert not pointer_conversions(ttgir), pointer_conversions(ttgir)
    assert offsets_converted(ttgir), ttgir
    # the offsets' conversion and the loaded values' (to the reshape's layout) move 128 KB each
    assert 32768 * 4 <= kernel.shared_bytes < SM90_SHARED_LIMIT


@pytest.mark.parametrize("shape, perm, axes", CASES)
def test_cpu_runs_against_torch(compiled, shape, perm, axes, gen):
    x = torch.randint(-2**16, 2**16, shape, generator=gen, dtype=torch.int32)
    summed = x.permute(perm).to(torch.int64)
    for axis in axes:
        summed = summed.sum(axis)
    out = torch.full(summed.shape, -12345, dtype=torch.int32)
    kernel = permuted_sums_kernel[(1,)](x, out, *shape, *perm, *axes)
    assert not pointer_conversions(kernel.asm["ttgir"])  # the CPU target's layouts take the same path
    assert torch.equal(out.to(torch.int64), summed)
