"""passes/liveness.py's region_dce erases exactly what xdsl's region_dce (which it replaced) erases: the same
IR text and the same answer, on hand-written TTIR (the dce FileCheck cases and a few more) and on the IR
of real kernels before and after the TTGIR passes that leave dead ops behind."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.transforms.dead_code_elimination import region_dce as xdsl_region_dce

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.frontend.ttir import generate_ttir
from inductor_tile.kernel_compiler.ir.context import make_context, parse_ttir, print_ir
from inductor_tile.kernel_compiler.ir_builder import TTIRBuilder
from inductor_tile.kernel_compiler.passes.coalesce import CoalescePass
from inductor_tile.kernel_compiler.passes.convert_to_ttgir import ConvertToTTGIRPass
from inductor_tile.kernel_compiler.passes.liveness import region_dce

DCE_CASES = (Path(__file__).parent / "filecheck" / "transforms" / "dce.mlir").read_text().split("// -----")

EXTRA_CASES = [
    # a loop-carried value used only by itself (dead through the cycle) beside a live one
    """func.func @cycle(%p: !tt.ptr<i32>, %lb: i32, %ub: i32, %st: i32) {
      %r:2 = scf.for %i = %lb to %ub step %st iter_args(%dead = %lb, %kept = %lb) -> (i32, i32) : i32 {
        %d = arith.addi %dead, %i : i32
        %k = arith.muli %kept, %i : i32
        scf.yield %d, %k : i32, i32
      }
      tt.store %p, %r#1 : !tt.ptr<i32>, i32
      func.return
    }""",
    # a dead loop nested in a live one, and a dead chain whose last user is inside the live loop's body
    """func.func @nested(%p: !tt.ptr<i32>, %lb: i32, %ub: i32, %st: i32) {
      %c = arith.addi %lb, %ub : i32
      %unused = arith.muli %c, %c : i32
      scf.for %i = %lb to %ub step %st : i32 {
        %inner = scf.for %j = %lb to %ub step %st iter_args(%acc = %i) -> (i32) : i32 {
          %n = arith.addi %acc, %j : i32
          scf.yield %n : i32
        }
        %dead = arith.subi %unused, %i : i32
        %v = arith.addi %c, %i : i32
        tt.store %p, %v : !tt.ptr<i32>, i32
      }
      func.return
    }""",
]


def _both(module) -> tuple[tuple[str, bool], tuple[str, bool]]:
    """(IR text, answer) after xdsl's region_dce and after ours, each on its own copy of `module`."""
    theirs, ours = module.clone(), module.clone()
    answers = []
    for copy, dce in ((theirs, xdsl_region_dce), (ours, region_dce)):
        answers.append(any([dce(op.body) for op in copy.ops]))  # each function (every one, no short cut)
    return (print_ir(theirs), answers[0]), (print_ir(ours), answers[1])


@pytest.mark.parametrize("text", DCE_CASES + EXTRA_CASES, ids=lambda t: t.split("@")[1].split("(")[0])
def test_hand_written_ir_loses_what_xdsl_dce_removes(text):
    module = parse_ttir(text)
    before = print_ir(module)
    theirs, ours = _both(module)
    assert ours == theirs
    assert ours[1] == (ours[0] != before)  # the answer says whether something went


def test_the_cases_do_remove_ops():
    """Not vacuous: most cases have something dead (the FileCheck file's volatile load is the kept one)."""
    removed = [_both(parse_ttir(text))[1][1] for text in DCE_CASES + EXTRA_CASES]
    assert sum(removed) >= len(removed) - 1


@inductor_tile.jit
def looped_softmax_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    best = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, n, BLOCK):
        x = tl.load(x_ptr + row * n + start + offsets, mask=start + offsets < n, other=float("-inf"))
        best = tl.maximum(best, x)
    peak = tl.max(best, 0)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        x = tl.load(x_ptr + row * n + start + offsets, mask=start + offsets < n, other=float("-inf"))
        total += tl.exp(x - peak)
    unused = tl.sum(total, 0) * 2.0  # noqa: F841 - dead on purpose
    scale = 1.0 / tl.sum(total, 0)
    for start in range(0, n, BLOCK):
        x = tl.load(x_ptr + row * n + start + offsets, mask=start + offsets < n, other=0.0)
        tl.store(out_ptr + row * n + start + offsets, tl.exp(x - peak) * scale, mask=start + offsets < n)


@inductor_tile.jit
def row_norm_kernel(x_ptr, w_ptr, out_ptr, n, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, RBLOCK)[None, :]
    x = tl.load(x_ptr + rows * n + cols, mask=cols < n, other=0.0)
    mean = tl.sum(x, 1)[:, None] / n
    spread = tl.max(x, 1) - tl.min(x, 1)  # noqa: F841 - dead on purpose (reductions: ops with regions)
    centered = tl.where(cols < n, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centered * centered, 1)[:, None] / n + 1e-5)
    w = tl.load(w_ptr + cols, mask=cols < n, other=1.0)
    tl.store(out_ptr + rows * n + cols, (centered * rstd * w).to(tl.float16), mask=cols < n)


def _specs(kernel, constexprs: dict[str, int]) -> list:
    pointer = {"x_ptr", "w_ptr", "out_ptr"}
    return [spec_from_signature(name, "constexpr", constexprs[name]) if name in constexprs else
            spec_from_signature(name, "*fp32" if name in pointer else "i32", divisible_by_16=name in pointer)
            for name in kernel.arg_names]


@pytest.mark.parametrize("kernel, constexprs", [(looped_softmax_kernel, {"BLOCK": 256}),
                                                (row_norm_kernel, {"XBLOCK": 4, "RBLOCK": 128})])
def test_kernel_ir_loses_what_xdsl_dce_removes(kernel, constexprs):
    module = generate_ttir(kernel, _specs(kernel, constexprs), TTIRBuilder(), 4)  # the front end's duplicates
    theirs, ours = _both(module)
    assert ours == theirs and ours[1]
    xdsl_region_dce(module.body)
    ctx = make_context()  # TTGIR after coalescing: conversions and rebuilt index math left unused
    ConvertToTTGIRPass(num_warps=4, threads_per_warp=32).apply(ctx, module)
    CoalescePass().apply(ctx, module)
    assert _both(module)[0] == _both(module)[1]
