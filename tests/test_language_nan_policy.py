"""tl.minimum / tl.maximum follow Triton's `propagate_nan`: by default (tl.PropagateNan.NONE) a NaN
operand gives the other one (NaN only where both are: torch.fmin / torch.fmax), with
tl.PropagateNan.ALL a NaN in either gives NaN (torch.minimum / torch.maximum). Interpreter and CPU
target against torch in float64 on random inputs with NaNs in each operand; the LLVM IR uses
llvm.minnum / llvm.maximum."""

from __future__ import annotations

import pytest
import torch
from filecheck_tool import filecheck

import inductor_tile
import inductor_tile.language as tl

N = 64


@inductor_tile.jit
def min_max_kernel(x_ptr, y_ptr, out_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    x, y = tl.load(x_ptr + offsets), tl.load(y_ptr + offsets)
    tl.store(out_ptr + offsets, tl.minimum(x, y))
    tl.store(out_ptr + N + offsets, tl.maximum(x, y, propagate_nan=tl.PropagateNan.NONE))
    tl.store(out_ptr + 2 * N + offsets, tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(out_ptr + 3 * N + offsets, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))


def _inputs(gen, dtype):
    x, y = torch.randn(N, generator=gen, dtype=torch.float64), torch.randn(N, generator=gen, dtype=torch.float64)
    x[::5] = float("nan")  # NaN in x only, in y only, in both
    y[::7] = float("nan")
    return x.to(dtype), y.to(dtype)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_nan_policy_of_minimum_and_maximum(mode, dtype, request, gen):
    request.getfixturevalue(mode)
    x, y = _inputs(gen, dtype)
    out = torch.full((4 * N,), float("nan"), dtype=dtype)
    min_max_kernel[(1,)](x, y, out, N=N)
    a, b = x.double(), y.double()
    want = torch.cat([torch.fmin(a, b), torch.fmax(a, b), torch.minimum(a, b), torch.maximum(a, b)])
    torch.testing.assert_close(out.double(), want, rtol=0, atol=0, equal_nan=True)


def test_policies_lower_to_llvm_minnum_and_maximum(tmp_path):
    compiled = inductor_tile.compile(min_max_kernel, signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32"},
                                     constexprs={"N": N}, target="cpu")
    filecheck(compiled.asm["ttir"], "CHECK: arith.minnumf\nCHECK: arith.maxnumf\nCHECK: arith.minimumf\n"
                                    "CHECK: arith.maximumf\n", tmp_path)
    filecheck(compiled.asm["llir"], "CHECK-DAG: @llvm.minnum.v\nCHECK-DAG: @llvm.maxnum.v\nCHECK-DAG: @llvm.minimum.v\n"
                                    "CHECK-DAG: @llvm.maximum.v\n", tmp_path)
