"""Slots known in every thread from index arithmetic alone (to_llvm/static_slots.py), evaluated over whole tiles.

A row of 4096 values in an [1, 8192] tile on 16 warps, masked by a row mask and a column mask computed
through int64 sign extension, multiplication and subtraction and an unsigned compare (as generated index
code is): the column mask is true in each thread's first 8 slots and false in its last 8 in every thread,
so each reduction's fold leaves the last 8 out and applies the row mask once (reduce_guards.py). 16 slots
x 512 threads were more than the evaluator looked at before (4096 elements): nothing was known, and every
slot kept a select. Correctness in the PTX interpreter (random input, NaN-poisoned output, float64), with
the row in and out of the mask; and a masked row maximum of a dot's result (values whose operands have
other shapes are unknown, not evaluated).
"""

from __future__ import annotations

import platform

import numpy as np
import pytest
from reduce_ptx_sim import ReduceMachine

import inductor_tile
import inductor_tile.language as tl

linux_x86 = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                               reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@inductor_tile.jit
def index_masked_row_kernel(x_ptr, out_ptr, rows, N: tl.constexpr, BLOCK: tl.constexpr):
    r = tl.arange(0, 1)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    scaled = c.to(tl.int64) * 3 - 2
    m = (r < rows) & (scaled < 3 * N - 2) & (c.to(tl.uint32) < N)
    x = tl.load(x_ptr + c, mask=m, other=0.0)
    tl.store(out_ptr + r, tl.sum(tl.where(m, x, 0.0), 1)[:, None])
    tl.store(out_ptr + 1 + r, tl.max(tl.where(m, x, float("-inf")), 1)[:, None])


def _ptx(n: int, block: int, warps: int) -> str:
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32"}
    return inductor_tile.compile(index_masked_row_kernel, signature, constexprs={"N": n, "BLOCK": block},
                                 target="cuda:90", num_warps=warps, divisible_by_16=["x_ptr", "out_ptr"]).asm["ptx"]


@linux_x86
def test_wide_tile_knows_its_column_mask_in_every_slot():
    ptx = _ptx(4096, 8192, 16)
    selects = [line for line in ptx.splitlines() if line.strip().startswith("selp.f32")]
    assert len(selects) == 2, selects  # one per reduction (32 before)
    thread_part = ptx.split("shfl.sync")[0]
    assert "0fFF800000" not in thread_part.split("ld.global")[-1]  # no max with -inf in the thread


@linux_x86
@pytest.mark.parametrize("n, block, warps", [(4096, 8192, 16), (3000, 4096, 8)])
@pytest.mark.parametrize("rows", [1, 0])
def test_wide_tile_row_on_one_nvidia_block(n, block, warps, rows):
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    out = np.full(4, np.nan, dtype=np.float32)
    machine = ReduceMachine(_ptx(n, block, warps), 32 * warps, [x, out], {2: rows})
    machine.run()
    got = machine.buffer(1, out)
    wide = x.astype(np.float64)
    want = [wide.sum(), wide.max()] if rows else [0.0, -np.inf]
    np.testing.assert_allclose(got[:2].astype(np.float64), want, rtol=1e-5, atol=1e-4)
    assert np.isnan(got[2:]).all()


@inductor_tile.jit
def masked_dot_row_max_kernel(a_ptr, b_ptr, out_ptr, cols):
    # an attention score's row maximum: the reduced value comes from a dot of [64, 32] and [32, 64] tiles, whose
    # operands' shapes differ from the tile's (the evaluator must not combine them)
    r = tl.arange(0, 64)
    k = tl.arange(0, 32)
    a = tl.load(a_ptr + r[:, None] * 32 + k[None, :])
    b = tl.load(b_ptr + k[:, None] * 64 + r[None, :])
    scores = tl.dot(a, b)
    masked = tl.where(r[None, :] < cols, scores, float("-inf"))
    tl.store(out_ptr + r, tl.max(masked, 1))


@linux_x86
def test_reduction_of_a_dot_on_one_nvidia_block():
    gen = np.random.default_rng(3)
    a, b = gen.standard_normal((64, 32)).astype(np.float16), gen.standard_normal((32, 64)).astype(np.float16)
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "out_ptr": "*fp32", "cols": "i32"}
    ptx = inductor_tile.compile(masked_dot_row_max_kernel, signature, target="cuda:80", num_warps=4,
                                divisible_by_16=["a_ptr", "b_ptr", "out_ptr"]).asm["ptx"]
    out = np.full(64, np.nan, dtype=np.float32)
    machine = ReduceMachine(ptx, 128, [a.ravel(), b.ravel(), out], {3: 40})
    machine.run()
    want = (a.astype(np.float64) @ b.astype(np.float64))[:, :40].max(1)
    np.testing.assert_allclose(machine.buffer(2, out).astype(np.float64), want, rtol=1e-3, atol=1e-3)
