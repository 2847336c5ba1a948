"""A thread's fold of a reduction in scalars, with a mask its slots share applied once (to_llvm/reduce_guards.py).

PTX counts (sm_90) pin the selects: a layer norm over 768 of 1024 columns keeps one `selp` per row and sum
(48 on one warp before: one per slot), through the square of its variance; a softmax over [4, 2048] on 8
warps one per row and reduction (64 before). Correctness: kernels whose rows past `rows` are masked off
store every row's reductions (so the false side of the guard, the constants folded here, is checked too:
+0.0, -0.0, -inf, +inf, and a constant that is not folded), run by the PTX interpreter on one NVIDIA block
with random inputs and NaN-poisoned outputs, against float64.
"""

from __future__ import annotations

import platform

import numpy as np
import pytest
from filecheck_tool import filecheck
from reduce_ptx_sim import ReduceMachine
from test_constancy_dedup import layer_norm_768_kernel

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

linux_x86 = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                               reason="ptxas and libdevice wheels exist for Linux x86-64 only")


def _ptx(kernel, signature: dict[str, str], constexprs: dict, warps: int, aligned_sizes: bool = True) -> str:
    """sm_90 PTX; pointers, and with `aligned_sizes` the generated kernels' sizes (xnumel, rnumel), taken as
    multiples of 16 as the launcher specializes them."""
    aligned = [name for name, ty in signature.items()
               if ty.startswith("*") or (aligned_sizes and name.endswith("numel"))]
    ptx = inductor_tile.compile(kernel, signature, constexprs=constexprs, target="cuda:90", num_warps=warps,
                                divisible_by_16=aligned).asm["ptx"]
    check_ptx(ptx, "sm_90", kernel.__name__)
    return ptx


LN_SIGNATURE = {"in_ptr0": "*fp16", "in_ptr1": "*fp32", "in_ptr2": "*fp32", "out_ptr0": "*fp16", "xnumel": "i32",
                "rnumel": "i32"}


@linux_x86
@pytest.mark.parametrize("warps", [1, 4])
def test_layer_norm_selects_each_sum_once(warps, tmp_path):
    # the mean's sum and the variance's sum of squares: `where(row_ok & col_ok, x, 0)` with col_ok known in
    # every slot; the row mask is applied to each thread's fold once
    ptx = _ptx(layer_norm_768_kernel, LN_SIGNATURE, {"XBLOCK": 1, "RBLOCK": 1024}, warps)
    filecheck(ptx, "CHECK-COUNT-2: selp.f32\n"
                   "CHECK-NOT: selp\n", tmp_path)


@inductor_tile.jit
def softmax_kernel(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    # tile's generated softmax where rows are not whole blocks
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < RBLOCK
    tmp1 = tl.load(in_ptr0 + (rindex + (RBLOCK * xindex)), mask=xmask & rmask, other=0).to(tl.float32)
    tmp3 = tl.max(tl.where(rmask & xmask, tmp1, float("-inf")), 1)[:, None]
    tmp5 = tl.exp(tmp1 - tmp3)
    tmp7 = tl.sum(tl.where(rmask & xmask, tmp5, 0.0), 1)[:, None]
    tl.store(out_ptr0 + (rindex + (RBLOCK * xindex)), (tmp5 / tmp7).to(tl.float16), mask=xmask & rmask)


@linux_x86
def test_softmax_selects_once_per_row_and_reduction():
    # [4, 2048] on 8 warps: a thread holds 8 columns of each of the 4 rows
    ptx = _ptx(softmax_kernel, {"in_ptr0": "*fp16", "out_ptr0": "*fp16", "xnumel": "i32"},
               {"XBLOCK": 4, "RBLOCK": 2048}, 8)
    float_selects = [line for line in ptx.splitlines() if line.strip().startswith("selp.f32")]
    assert len(float_selects) == 4 * 2, float_selects


@linux_x86
def test_softmax_on_one_nvidia_block():
    rows, xblock, rblock, warps = 3, 4, 2048, 8  # the 4th row of the block is masked off
    x = (np.random.default_rng(5).standard_normal(xblock * rblock) * 3).astype(np.float16)
    out = np.full(xblock * rblock, np.nan, dtype=np.float16)
    ptx = _ptx(softmax_kernel, {"in_ptr0": "*fp16", "out_ptr0": "*fp16", "xnumel": "i32"},
               {"XBLOCK": xblock, "RBLOCK": rblock}, warps, aligned_sizes=False)
    machine = ReduceMachine(ptx, 32 * warps, [x, out], {2: rows})
    machine.run()
    got = machine.buffer(1, out).reshape(xblock, rblock)
    wide = x.astype(np.float64).reshape(xblock, rblock)[:rows]
    want = np.exp(wide - wide.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(got[:rows].astype(np.float64), want, rtol=2e-3, atol=1e-6)
    assert np.isnan(got[rows:]).all()


@inductor_tile.jit
def masked_row_stats_kernel(x_ptr, out_ptr, rows, n, ROWS: tl.constexpr, N: tl.constexpr, BLOCK: tl.constexpr,
                            STATIC_COLUMNS: tl.constexpr):
    """Per row r of ROWS (r < rows are data) over N of BLOCK columns (N static, or the argument n): the sum,
    the sum of squares of the centered values, the max, the min, a sum whose false side is -0.0 and one whose
    false side (0.5) is not folded; every row stored, masked or not."""
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    col_ok = c < N if STATIC_COLUMNS else c < n
    mask = (r < rows) & col_ok
    x = tl.load(x_ptr + r * N + c, mask=mask, other=0.0)
    total = tl.sum(tl.where(mask, x, 0.0), 1)
    centered = tl.where(mask, x - total[:, None] / N, 0.0)
    squares = tl.sum(centered * centered, 1)
    biggest = tl.max(tl.where(mask, x, float("-inf")), 1)
    smallest = tl.min(tl.where(mask, x, float("inf")), 1)
    negative = tl.sum(tl.where(mask, x, -0.0), 1)
    halves = tl.sum(tl.where(mask, x, 0.5), 1)
    rows_out = tl.arange(0, ROWS)
    tl.store(out_ptr + rows_out, total)
    tl.store(out_ptr + ROWS + rows_out, squares)
    tl.store(out_ptr + 2 * ROWS + rows_out, biggest)
    tl.store(out_ptr + 3 * ROWS + rows_out, smallest)
    tl.store(out_ptr + 4 * ROWS + rows_out, negative)
    tl.store(out_ptr + 5 * ROWS + rows_out, halves)


def masked_row_stats_reference(x: np.ndarray, rows: int, rows_block: int, n: int, block: int) -> np.ndarray:
    """float64 statistics of masked_row_stats_kernel: masked rows hold each reduction's false-side fold."""
    data = x.astype(np.float64).reshape(rows_block, n)
    out = np.empty((6, rows_block))
    total = data.sum(1)
    out[0] = total
    out[1] = ((data - total[:, None] / n) ** 2).sum(1)
    out[2], out[3], out[4] = data.max(1), data.min(1), data.sum(1)
    out[5] = total + 0.5 * (block - n)
    out[:, rows:] = np.array([0.0, 0.0, -np.inf, np.inf, -0.0, 0.5 * block])[:, None]
    return out


@linux_x86
@pytest.mark.parametrize("rows_block, n, block, warps", [(1, 768, 1024, 1), (4, 768, 1024, 4), (8, 200, 256, 2),
                                                         (4, 2048, 2048, 8), (2, 40, 64, 1)])
@pytest.mark.parametrize("static_columns", [True, False], ids=["static", "runtime"])
def test_masked_row_stats_on_one_nvidia_block(rows_block, n, block, warps, static_columns):
    rows = max(1, rows_block - 1)  # the block's last row is masked off (the only row of a 1-row block is not)
    if rows_block == 1:
        rows = 0  # ... so that one is all masked: the guard's false side
    x = (np.random.default_rng(n + block).standard_normal(rows_block * n) * 2).astype(np.float32)
    out = np.full(6 * rows_block, np.nan, dtype=np.float32)
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "n": "i32"}
    ptx = _ptx(masked_row_stats_kernel, signature,
               {"ROWS": rows_block, "N": n, "BLOCK": block, "STATIC_COLUMNS": static_columns}, warps)
    machine = ReduceMachine(ptx, 32 * warps, [x, out], {2: rows, 3: n})
    machine.run()
    got = machine.buffer(1, out).reshape(6, rows_block).astype(np.float64)
    want = masked_row_stats_reference(x, rows, rows_block, n, block)
    np.testing.assert_allclose(got[:, :rows], want[:, :rows], rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(got[:, rows:], want[:, rows:])  # exact, -0.0 included:
    assert np.signbit(got[4, rows:]).all() and not np.signbit(got[:2, rows:]).any()


@linux_x86
@pytest.mark.parametrize("rows_block, warps, selects", [(1, 1, 5 + 24), (4, 4, 4 * (5 * 5 + 8))])
def test_row_mask_applied_once_per_fold(rows_block, warps, selects):
    # 768 of 1024 columns. One warp: a thread's 32 slots are columns (8 per rep) of one row, the last 8
    # columns >= 768 in every thread: each of the 5 folded reductions selects once (by the row mask); the sum
    # of `where(mask, x, 0.5)` keeps a select per slot (0.5 + 0.5 ... is not folded here), 24.
    # 4 rows on 4 warps: a thread holds 4 columns of 2 reps for each of its 4 rows, the second rep's columns
    # 512 + 128 * warp + ... are < 768 in warps 0 and 1 only: 4 selects by the column mask and one by the row
    # mask per row and folded reduction, the 0.5 sum 8 per row (144 and 192 before: one per slot and reduction)
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "n": "i32"}
    ptx = _ptx(masked_row_stats_kernel, signature,
               {"ROWS": rows_block, "N": 768, "BLOCK": 1024, "STATIC_COLUMNS": True}, warps)
    assert sum(1 for line in ptx.splitlines() if line.strip().startswith("selp.f32")) == selects


@inductor_tile.jit
def masked_row_products_kernel(x_ptr, out_ptr, rows, ROWS: tl.constexpr, N: tl.constexpr, BLOCK: tl.constexpr):
    """Per row r of ROWS (r < rows are data) the product of its N of BLOCK values near 1; every row stored."""
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    mask = (r < rows) & (c < N)
    x = tl.load(x_ptr + r * N + c, mask=mask, other=0.0)
    tl.store(out_ptr + tl.arange(0, ROWS), tl.extra.reductions.prod(tl.where(mask, x, 1.0), 1))


@linux_x86
@pytest.mark.parametrize("rows_block, n, block, warps, selects", [(1, 768, 1024, 1, 1), (4, 768, 1024, 4, 4 * (1 + 4)),
                                                                  (4, 2048, 2048, 8, 4)])
def test_masked_row_products_on_one_nvidia_block(rows_block, n, block, warps, selects):
    # a select per row, and on 4 warps 4 per row for the column mask of the second rep (see above)
    rows = rows_block - 1  # the last row masked off (a one-row block: all of it)
    x = (1 + np.random.default_rng(n).standard_normal(rows_block * n) / 64).astype(np.float32)
    out = np.full(rows_block, np.nan, dtype=np.float32)
    ptx = _ptx(masked_row_products_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32"},
               {"ROWS": rows_block, "N": n, "BLOCK": block}, warps)
    assert sum(1 for line in ptx.splitlines() if line.strip().startswith("selp.f32")) == selects
    machine = ReduceMachine(ptx, 32 * warps, [x, out], {2: rows})
    machine.run()
    got = machine.buffer(1, out).astype(np.float64)
    want = np.prod(x.astype(np.float64).reshape(rows_block, n), axis=1)
    np.testing.assert_allclose(got[:rows], want[:rows], rtol=1e-5)
    assert (got[rows:] == 1.0).all(), got


@inductor_tile.jit
def nested_where_sum_kernel(x_ptr, out_ptr, rows, n, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    """Per row r of ROWS: the sum of its n values (n a runtime size) through two nested wheres; every row stored."""
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    x = tl.load(x_ptr + r * n + c, mask=(r < rows) & (c < n), other=0.0)
    tl.store(out_ptr + tl.arange(0, ROWS), tl.sum(tl.where(r < rows, tl.where(c < n, x, 0.0), 0.0), 1))


@linux_x86
@pytest.mark.parametrize("rows", [1, 0])
def test_nested_wheres_select_once_per_slot(rows):
    # one row of 256 on one warp: 8 slots a thread, each under `r < rows` and its own `c < n`: the inner
    # where's select per slot, the row's once (two per slot before)
    n, block = 200, 256
    ptx = _ptx(nested_where_sum_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "n": "i32"},
               {"ROWS": 1, "BLOCK": block}, 1)
    assert sum(1 for line in ptx.splitlines() if line.strip().startswith("selp.f32")) == block // 32 + 1
    x = np.random.default_rng(7).standard_normal(n).astype(np.float32)
    out = np.full(1, np.nan, dtype=np.float32)
    machine = ReduceMachine(ptx, 32, [x, out], {2: rows, 3: n})
    machine.run()
    got = machine.buffer(1, out)
    np.testing.assert_allclose(got.astype(np.float64), [x.astype(np.float64).sum() if rows else 0.0], rtol=1e-5,
                               atol=1e-5)


@inductor_tile.jit
def causal_row_softmax_kernel(x_ptr, out_ptr, ROWS: tl.constexpr, N: tl.constexpr):
    # attention's masked scores: the causal select feeds the row maximum and the exponentials
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, N)[None, :]
    scores = tl.where(c <= r, tl.load(x_ptr + r * N + c), float("-inf"))
    p = tl.exp(scores - tl.max(scores, 1)[:, None])
    tl.store(out_ptr + r * N + c, p / tl.sum(p, 1)[:, None])


@linux_x86
@pytest.mark.parametrize("rows, n, warps", [(16, 64, 4), (32, 64, 1)])
def test_select_used_beside_the_reduction_is_not_repeated(rows, n, warps):
    # the vector select is lowered for the exponentials anyway: the maximum folds its slots, one select per
    # slot in all (a select per term repeated them: attention d64 lost 20% on an H200, 126 -> 155 registers)
    ptx = _ptx(causal_row_softmax_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"ROWS": rows, "N": n}, warps)
    slots = rows * n // (32 * warps)
    assert sum(line.strip().startswith("selp.f32") for line in ptx.splitlines()) == slots
    x = np.random.default_rng(rows).standard_normal((rows, n)).astype(np.float32)
    out = np.full((rows, n), np.nan, dtype=np.float32)
    machine = ReduceMachine(ptx, 32 * warps, [x.ravel(), out.ravel()], {})
    machine.run()
    got = machine.buffer(1, out.ravel()).reshape(rows, n).astype(np.float64)
    scores = np.where(np.arange(n)[None, :] <= np.arange(rows)[:, None], x.astype(np.float64), -np.inf)
    want = np.exp(scores - scores.max(1, keepdims=True))
    np.testing.assert_allclose(got, want / want.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
