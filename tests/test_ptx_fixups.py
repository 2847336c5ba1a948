"""The PTX rewrite that keeps packed 16-bit integer arithmetic away from ptxas (ptx_fixups.py):
FileCheck on a hand-written snippet and on a generated kernel whose index arithmetic LLVM
narrows to `i16` vectors, which must still assemble."""

from __future__ import annotations

import importlib.util
import os
import platform

import pytest
from filecheck_tool import filecheck

import inductor_tile
from inductor_tile.kernel_compiler.to_llvm.ptx_fixups import split_packed_int16

SNIPPET = """\
\tmov.b32 \t%r244, 18874656;
\tadd.s16x2 \t%r246, %r239, %r244;
@%p3 min.u16x2 %r7, %r5, 65537; // keep me
\tsub.s16x2 %r8, %r7, %r6;
\tadd.rn.f16x2 \t%r9, %r1, %r2;
\tmax.s16 \t%rs1, %rs2, %rs3;
"""


def test_split_packed_int16_rewrites_each_half(tmp_path):
    out = split_packed_int16(SNIPPET)
    filecheck(out, """\
CHECK: mov.b32 %r244, 18874656;
CHECK: {
CHECK-NEXT: .reg .b32 [[R:%tile_i16x2_0_]]a, [[R]]b;
CHECK-NEXT: .reg .b16
CHECK-NEXT: mov.b32 [[R]]a, %r239;
CHECK-NEXT: mov.b32 [[R]]b, %r244;
CHECK-NEXT: mov.b32 {[[R]]a0, [[R]]a1}, [[R]]a;
CHECK-NEXT: mov.b32 {[[R]]b0, [[R]]b1}, [[R]]b;
CHECK-NEXT: add.s16 [[R]]d0, [[R]]a0, [[R]]b0;
CHECK-NEXT: add.s16 [[R]]d1, [[R]]a1, [[R]]b1;
CHECK-NEXT: mov.b32 %r246, {[[R]]d0, [[R]]d1};
CHECK-NEXT: }
CHECK: mov.b32 [[M:%tile_i16x2_1_]]b, 65537;
CHECK: min.u16 [[M]]d1, [[M]]a1, [[M]]b1;
CHECK-NEXT: @%p3 mov.b32 %r7, {[[M]]d0, [[M]]d1}; // keep me
CHECK: sub.s16 %tile_i16x2_2_d0
CHECK: add.rn.f16x2 %r9, %r1, %r2;
CHECK-NEXT: max.s16 %rs1, %rs2, %rs3;
""", tmp_path)
    assert "16x2 " not in out.replace("f16x2", "")


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas wheels exist for Linux x86-64 only")
def test_generated_kernel_with_narrowed_index_math_has_no_packed_int16(compiled, tmp_path):
    path = os.path.join(os.path.dirname(__file__), "gpu", "data", "longformer_pad_kernel.py")
    spec = importlib.util.spec_from_file_location("longformer_pad_kernel", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = module.tile_poi_constant_pad_nd_copy_new_zeros_permute_select_slice_5
    k = inductor_tile.compile(kernel, signature={"in_ptr0": "*fp16", "out_ptr0": "*fp16", "xnumel": "i32"},
                              constexprs={"XBLOCK": 1024}, target="cuda:90", num_warps=8)
    ptx = k.asm["ptx"]
    # LLVM narrowed this kernel's index math to packed 16-bit ops until its broadcast values were computed
    # once per thread (constancy.py, whole-dimension runs): none may be left either way
    assert not any(f"{op}.{s}16x2" in ptx for op in ("add", "sub", "min", "max") for s in "su")
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    check_ptx(ptx, "sm_90", kernel.__name__)


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas wheels exist for Linux x86-64 only")
def test_packed_int16_from_llvm_is_split(tmp_path):
    # index math LLVM keeps in two 16-bit lanes: compile_to_ptx rewrites LLVM's packed ops, and ptxas takes it
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
    from inductor_tile.kernel_compiler.to_llvm.nvptx import compile_to_ptx

    ir = """target triple = "nvptx64-nvidia-cuda"
define void @packed(ptr addrspace(1) %p, <2 x i16> %a, <2 x i16> %b) {
  %s = add <2 x i16> %a, %b
  %m = call <2 x i16> @llvm.umin.v2i16(<2 x i16> %s, <2 x i16> <i16 513, i16 96>)
  store <2 x i16> %m, ptr addrspace(1) %p, align 4
  ret void
}
declare <2 x i16> @llvm.umin.v2i16(<2 x i16>, <2 x i16>)
"""
    _, ptx = compile_to_ptx(ir, "packed", 90)
    assert not any(f"{op}.{s}16x2" in ptx for op in ("add", "sub", "min", "max") for s in "su")
    filecheck(ptx, "CHECK: add.s16 %tile_i16x2_{{[0-9]+}}_d0\n", tmp_path)
    check_ptx(ptx, "sm_90", "packed")
