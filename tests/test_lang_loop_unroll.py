"""`tl.range(..., loop_unroll_factor=N)`: the compiled loop runs N copies of the body per iteration over the
whole multiples of N iterations, then a second loop runs the rest; results are those of the plain loop
(runtime bounds, trip counts that N does not divide, no trips, counting down, loop-carried values). Also
Python's `print` of tile values in a kernel, which is tl.device_print (Triton's rule), and the interpreter's
loop variable, a scalar tile as compiled."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError

BLOCK = 16


@inductor_tile.jit
def weighted_rows_kernel(x_ptr, out_ptr, count_ptr, start, end, BLOCK: tl.constexpr, STEP: tl.constexpr,
                         UNROLL: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    count = 0
    for i in tl.range(start, end, STEP, loop_unroll_factor=UNROLL):
        acc += tl.load(x_ptr + i * BLOCK + offs) * (i + 1).to(tl.float32)
        count += 1
    tl.store(out_ptr + offs, acc)
    tl.store(count_ptr, count)


def reference(x: torch.Tensor, start: int, end: int, step: int) -> tuple[torch.Tensor, int]:
    rows = list(range(start, end, step))
    acc = torch.zeros(BLOCK, dtype=torch.float64)
    for i in rows:
        acc += x[i].double() * (i + 1)
    return acc, len(rows)


@inductor_tile.jit
def loop_variable_kernel(x_ptr, out_ptr, n):
    for i in range(0, n):  # `i` is an int32 tile: int8 * int32 is int32, as compiled (a Python int would keep int8)
        tl.store(out_ptr + i, tl.load(x_ptr + i) * (i + 100))
    for j in tl.range(0, 1):
        tl.static_assert(j.dtype == tl.int32)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_loop_variable_is_an_int32_tile(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randint(-128, 128, (6,), generator=gen, dtype=torch.int8)
    out = torch.full((6,), -1, dtype=torch.int32)
    loop_variable_kernel[(1,)](x, out, 6)
    assert torch.equal(out.long(), x.long() * (torch.arange(6) + 100))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("unroll", [0, 1, 2, 3, 4, 8])
@pytest.mark.parametrize("start,end,step", [(0, 13, 1), (2, 11, 3), (5, 5, 1), (7, 3, 1), (12, 1, -1), (12, 0, -5)])
def test_unrolled_loop_gives_the_plain_loops_results(mode, unroll, start, end, step, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(13, BLOCK, generator=gen)
    out = torch.full((BLOCK,), float("nan"))
    count = torch.full((1,), -1, dtype=torch.int32)
    weighted_rows_kernel[(1,)](x, out, count, start, end, BLOCK=BLOCK, STEP=step, UNROLL=unroll)
    want, trips = reference(x, start, end, step)
    torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-4)
    assert count.item() == trips


def test_unrolled_loop_structure(tmp_path):
    from filecheck_tool import filecheck

    kernel = inductor_tile.compile(weighted_rows_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "count_ptr": "*i32",
                                                          "start": "i32", "end": "i32"},
                                   {"BLOCK": BLOCK, "STEP": 1, "UNROLL": 3})
    # the main loop: three loads per iteration, its step 3 x 1; then the rest: one load per iteration
    filecheck(kernel.asm["ttir"], """
CHECK: %[[THREE:.*]] = arith.constant 3 : i32
CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}}
CHECK-COUNT-3: tt.load
CHECK-NOT: tt.load
CHECK: scf.yield
CHECK: scf.for
CHECK: tt.load
CHECK-NOT: tt.load
CHECK: scf.yield
""", tmp_path)


def test_unroll_factor_below_two_is_a_plain_loop_and_a_non_integer_an_error(tmp_path):
    from filecheck_tool import filecheck

    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "count_ptr": "*i32", "start": "i32", "end": "i32"}
    for factor in (0, 1, -3):
        kernel = inductor_tile.compile(weighted_rows_kernel, signature, {"BLOCK": BLOCK, "STEP": 1, "UNROLL": factor})
        one_loop = "CHECK: scf.for\nCHECK: tt.load\nCHECK-NOT: tt.load\nCHECK-NOT: scf.for\n"
        filecheck(kernel.asm["ttir"], one_loop, tmp_path)
    with pytest.raises(CompilationError, match=r"loop_unroll_factor must be a compile-time integer, got 2.5"):
        inductor_tile.compile(weighted_rows_kernel, signature, {"BLOCK": BLOCK, "STEP": 1, "UNROLL": 2.5})


@inductor_tile.jit
def print_rows_kernel(x_ptr, n):
    for i in tl.range(0, n):
        print("row", i, tl.load(x_ptr + i))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_python_print_of_tiles_is_device_print(mode, request, capfd):
    request.getfixturevalue(mode)
    print_rows_kernel[(1,)](torch.tensor([1.5, -2.0]), 2)
    lines = [line for line in capfd.readouterr().out.splitlines() if "row" in line]
    # each program prints its values with its id, the string first argument as the prefix
    assert [line.rsplit(" ", 1)[0] for line in lines] == ["pid (0, 0, 0) idx () row: (operand 0)",
                                                          "pid (0, 0, 0) idx () row: (operand 1)"] * 2, lines
    assert [float(line.split(")")[-1]) for line in lines] == [0, 1.5, 1, -2.0], lines
