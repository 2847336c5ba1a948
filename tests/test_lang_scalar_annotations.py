"""Scalar parameters annotated with a type (`n: tl.int64`, `v: tl.uint8`, `f: tl.float64`) are passed as that
type, whatever the value would give (a small int is otherwise int32, a float fp32), in the interpreter and
compiled; values outside the type's range are refused at the launch."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def annotated_kernel(out_ptr, fout_ptr, v: tl.uint8, n: tl.int64, f: tl.float64, plain):
    tl.store(out_ptr + 0, (v + v).to(tl.int64))  # uint8 arithmetic wraps at 256
    tl.store(out_ptr + 1, n * n)  # int64: no int32 overflow
    tl.store(out_ptr + 2, plain * plain)  # int32, as any unannotated small int
    tl.store(fout_ptr, f * 3.0)  # fp64: no rounding to fp32 on the way in


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_annotated_scalars_take_their_types(mode, request, gen):
    request.getfixturevalue(mode)
    v = int(torch.randint(128, 256, (1,), generator=gen))
    n = int(torch.randint(50_000, 3_000_000, (1,), generator=gen))
    plain = int(torch.randint(50_000, 60_000, (1,), generator=gen))
    f = float(torch.rand(1, generator=gen, dtype=torch.float64)) / 3
    out = torch.full((3,), -1, dtype=torch.int64)
    fout = torch.full((1,), float("nan"), dtype=torch.float64)
    annotated_kernel[(1,)](out, fout, v, n, f, plain)
    int32_square = (plain * plain + 2**31) % 2**32 - 2**31
    assert out.tolist() == [(2 * v) % 256, n * n, int32_square]
    assert fout.item() == f * 3.0  # exactly: the double went in as a double


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_values_outside_the_annotated_type_are_refused(mode, request):
    request.getfixturevalue(mode)
    out, fout = torch.empty(3, dtype=torch.int64), torch.empty(1, dtype=torch.float64)
    with pytest.raises(OverflowError, match=r"argument 'v' \(annotated uint8\): 300 is out of its range \[0, 256\)"):
        annotated_kernel[(1,)](out, fout, 300, 1, 0.5, 1)
    annotated_kernel[(1,)](out, fout, 3, 1, 0.5, 1)
    with pytest.raises(OverflowError):  # also once the launch's fast path knows the kernel
        annotated_kernel[(1,)](out, fout, -1, 1, 0.5, 1)
    with pytest.raises(TypeError, match=r"argument 'n' \(annotated int64\): expected an integer, got float"):
        annotated_kernel[(1,)](out, fout, 3, 1.5, 0.5, 1)


def test_annotated_signature(tmp_path):
    from filecheck_tool import filecheck

    out, fout = torch.empty(3, dtype=torch.int64), torch.empty(1, dtype=torch.float64)
    kernel = annotated_kernel[(1,)](out, fout, 3, 4, 0.5, 5)
    filecheck(kernel.asm["ttir"], "CHECK: func.func public @annotated_kernel({{.*}}: i8, {{.*}}: i64, {{.*}}: f64, "
                                  "{{.*}}: i32)\nCHECK: arith.extui {{.*}} : i8 to i64\n", tmp_path)
