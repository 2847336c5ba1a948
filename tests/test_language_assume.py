"""tl.assume: a promise to the optimizer. A scalar condition is `llvm.intr.assume` in TTIR and a call of
LLVM's `llvm.assume` in LLVM IR (so LLVM may use it); a block condition is dropped; nothing is checked at
run time, in the interpreter or compiled."""

from __future__ import annotations

import platform

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature


@inductor_tile.jit
def scale_shift_kernel(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    tl.assume(n > 0)
    tl.assume(stride == 1)
    tl.assume(pid >= 0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.assume(offs >= 0)  # a block: dropped
    mask = offs < n
    x = tl.load(x_ptr + offs * stride, mask=mask)
    tl.store(y_ptr + offs, x * 1.5 + 0.25, mask=mask)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_assume_keeps_results(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(300, generator=gen)
    y = torch.full_like(x, float("nan"))
    scale_shift_kernel[(inductor_tile.cdiv(300, 128),)](x, y, 300, 1, BLOCK=128)
    torch.testing.assert_close(y.double(), x.double() * 1.5 + 0.25)


SPECS = [spec_from_signature("x_ptr", "*fp32", divisible_by_16=True),
         spec_from_signature("y_ptr", "*fp32", divisible_by_16=True),
         spec_from_signature("n", "i32"), spec_from_signature("stride", "i32"),
         spec_from_signature("BLOCK", "constexpr", 128)]


def test_scalar_assumptions_reach_llvm(tmp_path):
    from filecheck_tool import filecheck

    kernel = compile_specialized(scale_shift_kernel, SPECS, target="cpu", native=False)
    # three scalar promises, in order; the block's is not there
    filecheck(kernel.asm["ttir"], "CHECK: tt.get_program_id\n"
                                  "CHECK-COUNT-3: llvm.intr.assume %{{.*}} : i1\n"
                                  "CHECK-NOT: llvm.intr.assume\n", tmp_path)
    filecheck(kernel.asm["ttgir"], "CHECK-COUNT-3: llvm.intr.assume\n", tmp_path)
    filecheck(kernel.asm["llir"], "CHECK: call void @llvm.assume(i1\n", tmp_path)


def test_false_compile_time_assumption_is_an_error():
    @inductor_tile.jit
    def bad_kernel(x_ptr, BLOCK: tl.constexpr):
        tl.assume(BLOCK > 256)
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    with pytest.raises(CompilationError, match=r"tl.assume of a compile-time condition that is false"):
        inductor_tile.compile(bad_kernel, {"x_ptr": "*fp32"}, {"BLOCK": 128})


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas wheels exist for Linux x86-64 only")
def test_assume_assembles_for_sm90():
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    kernel = compile_specialized(scale_shift_kernel, SPECS, target="cuda:90", native=False)
    assert "call void @llvm.assume(i1" in kernel.asm["llir"]
    check_ptx(kernel.asm["ptx"], "sm_90", "scale_shift_kernel")
