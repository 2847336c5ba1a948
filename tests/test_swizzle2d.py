"""tl.swizzle2d: the grouped ordering of a size_i x size_j grid (groups of size_g rows, the last group
possibly shorter; within a group, consecutive linear indices walk down its rows first). Every (i, j) is
mapped, in the interpreter and on the CPU target, and compared with a Python reference; the map must be
a permutation. Outputs start at -1."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def swizzle_map(out_ptr, size_i, size_j, size_g):
    """out[new_i, new_j] = i * size_j + j for every (i, j)."""
    for i in tl.range(0, size_i, 1):
        for j in tl.range(0, size_j, 1):
            new_i, new_j = tl.swizzle2d(i, j, size_i, size_j, size_g)
            tl.store(out_ptr + new_i * size_j + new_j, i * size_j + j)


def reference(size_i: int, size_j: int, size_g: int) -> torch.Tensor:
    out = torch.full((size_i, size_j), -1, dtype=torch.int64)
    linear = 0
    for first in range(0, size_i, size_g):
        rows = min(size_g, size_i - first)
        for k in range(rows * size_j):  # the group's cells, in the order the linear index visits them
            out[first + k % rows, k // rows] = linear
            linear += 1
    return out


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("size_i, size_j, size_g", [(5, 7, 3), (8, 4, 4), (7, 3, 2), (4, 6, 8)])
def test_swizzle2d_matches_the_grouped_order(size_i, size_j, size_g, mode, request):
    request.getfixturevalue(mode)
    out = torch.full((size_i, size_j), -1, dtype=torch.int32)
    swizzle_map[(1,)](out, size_i, size_j, size_g)
    want = reference(size_i, size_j, size_g)
    assert torch.equal(out.long(), want)
    assert torch.equal(out.flatten().sort().values.long(), torch.arange(size_i * size_j))
