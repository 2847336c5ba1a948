"""The compiler computes the axis info of the final TTGIR once for its performance findings and its
lowering (analysis/axis_info.axis_info_of), and the lowering's LLVM IR is what it was computing its own."""

from __future__ import annotations

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.analysis import axis_info
from inductor_tile.kernel_compiler.diagnostics import perf_warnings
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.frontend.ttir import generate_ttir
from inductor_tile.kernel_compiler.ir_builder import TTIRBuilder
from inductor_tile.kernel_compiler.passes.pipeline import make_ttgir, optimize_ttir
from inductor_tile.kernel_compiler.to_llvm.lowering import lower_to_llvm
from inductor_tile.kernel_compiler.to_llvm.targets import get_target


@inductor_tile.jit
def strided_copy_kernel(x_ptr, out_ptr, n, stride, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.load(x_ptr + i * stride, mask=i < n, other=0.0) * 2.0, mask=i < n)


def _ttgir():
    specs = [spec_from_signature("x_ptr", "*fp32", divisible_by_16=True),
             spec_from_signature("out_ptr", "*fp32", divisible_by_16=True), spec_from_signature("n", "i32"),
             spec_from_signature("stride", "i32"), spec_from_signature("BLOCK", "constexpr", 512)]
    ttir = optimize_ttir(generate_ttir(strided_copy_kernel, specs, TTIRBuilder(), 4))
    return make_ttgir(ttir, num_warps=4, threads_per_warp=32), specs


def test_findings_and_lowering_share_one_axis_info(monkeypatch):
    target = get_target("cuda:90")
    ttgir, specs = _ttgir()
    alone = lower_to_llvm(ttgir, target, num_warps=4).llvm_ir
    runs = []
    solve = axis_info.AxisInfoSolver.run
    monkeypatch.setattr(axis_info.AxisInfoSolver, "run", lambda self, op: runs.append(op) or solve(self, op))
    shared: dict = {}
    findings = perf_warnings.find_in_ttgir(ttgir, specs, target, 4, shared)
    assert lower_to_llvm(ttgir, target, num_warps=4, axis_infos=shared).llvm_ir == alone
    assert len(runs) == 1 and list(shared) == runs
    assert findings == perf_warnings.find_in_ttgir(ttgir, specs, target, 4)  # the same findings without sharing
    assert len(runs) == 2
