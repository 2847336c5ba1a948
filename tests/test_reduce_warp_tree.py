"""Partials of many warps combined by one thread each in a warp (to_llvm/reduce_warp_tree.py).

Where a thread would hold more than 8 partials of one reduced value after the lanes' butterfly (softmax
[4, 2048] over 8 warps: 4 rows x 8 warps), each warp stores its partials, thread t < rows x warps loads one,
xor-shuffles combine the warps' and the results come back through shared memory. Checked in the PTX
interpreter on one block (random inputs, NaN-poisoned outputs, numpy float64): sums, maxima and argmax (ties
across warps: the first index wins), fp16/fp32/int32/int64, 8 and 16 warps, two reductions crossing warps
together, a reduction in a loop; and by its shared-memory traffic (one scalar load per thread).
"""

from __future__ import annotations

import platform

import numpy as np
import pytest
from test_reduce_ptx_sim import (KERNELS, TL_TYPES, check_chained, check_sum, compile_ptx, max_then_sum_kernel,
                                 poisoned, random_input, run, shared_traffic, two_sums_kernel)

import inductor_tile
from inductor_tile.kernel_compiler.to_llvm import reduce_warp_tree

needs_llvm_nvptx = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                      reason="the NVPTX wheels exist for Linux x86-64 only")


@pytest.fixture
def tree_calls(monkeypatch):
    """The (elements, warps) of each combine the tree does while compiling."""
    calls = []
    original = reduce_warp_tree.combine_in_a_warp

    def spy(ctx, vectors, buffers, first, own, elements, unique_warps, combine):
        calls.append((elements, unique_warps))
        return original(ctx, vectors, buffers, first, own, elements, unique_warps, combine)

    monkeypatch.setattr(reduce_warp_tree, "combine_in_a_warp", spy)
    return calls


CASES = [("sum", "fp32", (4, 2048), 8), ("sum", "fp16", (4, 2048), 8), ("max", "fp16", (4, 2048), 8),
         ("argmax", "i32", (4, 2048), 8), ("argmax", "fp32", (2, 4096), 16), ("sum", "i64", (1, 8192), 16),
         ("max", "i32", (1, 8192), 16), ("argmax", "i32", (8, 1024), 4)]


@needs_llvm_nvptx
@pytest.mark.parametrize("kind,dtype,shape,warps", CASES, ids=[f"{k}-{d}-{s}-{w}w" for k, d, s, w in CASES])
def test_row_reductions_through_the_tree_match_numpy(kind, dtype, shape, warps, tree_calls):
    x = random_input(shape, dtype, seed=hash((kind, dtype, shape, warps)) % 2**32)
    if kind == "argmax" and dtype == "i32":
        x = x % 5  # ties in every warp: the first index must win
    out_type = {"argmax": "i32"}.get(kind, dtype)
    ptx = compile_ptx(KERNELS[kind], [f"*{dtype}", f"*{out_type}"], shape, 1, warps)
    assert tree_calls, "the reduction did not go through the tree"
    (got,) = run(ptx, warps, x, [poisoned(shape[0], np.int32 if kind == "argmax" else TL_TYPES[dtype])])
    if kind == "sum":
        check_sum(got, x, 1)
    elif kind == "max":
        assert (got == x.max(1)).all(), (got, x.max(1))
    else:
        assert (got == x.argmax(1)).all(), (got, x.argmax(1))


@needs_llvm_nvptx
@pytest.mark.parametrize("shape,warps", [((4, 2048), 8), ((16, 1024), 8), ((1, 8192), 16)])
def test_two_reductions_through_the_tree(shape, warps, tree_calls):
    x = random_input(shape, "fp16", seed=23)
    rows = shape[0]
    ptx = compile_ptx(two_sums_kernel, ["*fp16", "*fp32", "*fp32"], shape, 1, warps)
    sums, squares = run(ptx, warps, x, [poisoned(rows, np.float32), poisoned(rows, np.float32)])
    check_sum(sums, x.astype(np.float32), 1)
    check_sum(squares, x.astype(np.float32) ** 2, 1)
    ptx = compile_ptx(max_then_sum_kernel, ["*fp16", "*fp32", "*fp32"], shape, 1, warps)
    maxima, sums = run(ptx, warps, x, [poisoned(rows, np.float32), poisoned(rows, np.float32)])
    wide = x.astype(np.float64)
    assert (maxima == wide.max(1)).all()
    assert np.allclose(sums, np.exp(wide - wide.max(1, keepdims=True)).sum(1), rtol=1e-4)
    assert tree_calls


@needs_llvm_nvptx
def test_reductions_in_a_loop_reuse_the_tree_scratch(tree_calls):
    # a maximum, a sum that needs it and a sum of squares that does not, three times: each iteration's
    # stores of partials must wait for the previous results to be read
    check_chained((4, 2048), 8, seed=31)
    assert tree_calls


@needs_llvm_nvptx
def test_softmax_rows_cross_warps_one_partial_per_thread():
    # [4, 2048] over 8 warps, for the max and for the sum: each warp's 4 row partials in one v4 store, one
    # scalar load per thread, one store of the result, the 4 results in one v4 load; 3 barriers, the sum's
    # first one left out (its scratch lies after the max's). Before: 4 stores and 8 v4 loads per reduction
    # (32 partials in registers at once)
    ptx = compile_ptx(max_then_sum_kernel, ["*fp16", "*fp32", "*fp32"], (4, 2048), 1, 8)
    traffic = shared_traffic(ptx)
    assert traffic["barriers"] == 3 + 2 + 2 * 2 and traffic["vector loads"] == 2, traffic  # 2 conversions
    scalar_loads = [line for line in ptx.splitlines() if line.strip().startswith("ld.shared.b32")]
    assert len(scalar_loads) == 2 + 2, scalar_loads  # one partial per reduction, one per conversion


@needs_llvm_nvptx
def test_softmax_maximum_tree_in_order(tmp_path):
    # the max of [4, 2048] over 8 warps: the warp's 4 row partials stored, a barrier, one partial loaded, three
    # xor-shuffles (the 8 warps), the result stored, a barrier, the thread's 4 results loaded at once
    from filecheck_tool import filecheck

    ptx = compile_ptx(max_then_sum_kernel, ["*fp16", "*fp32", "*fp32"], (4, 2048), 1, 8)
    filecheck(ptx, "CHECK: st.shared.v4.b32\n"
                   "CHECK-NEXT: bar.sync\n"
                   "CHECK-NOT: ld.shared.v4\n"
                   "CHECK: ld.shared.b32\n"
                   "CHECK: shfl.sync.bfly.b32 {{.*}}, 1, 31\n"
                   "CHECK: shfl.sync.bfly.b32 {{.*}}, 2, 31\n"
                   "CHECK: shfl.sync.bfly.b32 {{.*}}, 4, 31\n"
                   "CHECK-NOT: bar.sync\n"
                   "CHECK: st.shared.b32\n"
                   "CHECK-NEXT: bar.sync\n"
                   "CHECK-NEXT: ld.shared.v4.b32\n", tmp_path)
