"""tl.atomic_*: the atomic cases on the interpreter and the CPU target, their IR, their PTX, and errors."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from atomic_cases import ATOMIC_CASES, double_counter_kernel, scatter_add_kernel, small_tile_kernel
from inductor_tile import CompilationError
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.ir.context import parse_ttir, print_ir
from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
from suite import assert_checks
from test_nvidia_ptx import filecheck


@pytest.mark.parametrize("name", sorted(ATOMIC_CASES))
def test_atomic_case_interpreted(name, interpret, gen):
    assert_checks(ATOMIC_CASES[name](gen, "cpu"))


@pytest.mark.parametrize("name", sorted(ATOMIC_CASES))
def test_atomic_case_compiled_for_the_cpu(name, compiled, gen):
    assert_checks(ATOMIC_CASES[name](gen, "cpu"))


# ===--------------------------------------------------------------------------===
# IR
# ===--------------------------------------------------------------------------===
def _specs(kernel, signature: dict[str, str], constexprs: dict | None = None) -> list:
    constexprs = constexprs or {}
    return [spec_from_signature(name, signature[name], divisible_by_16=True) if name in signature
            else spec_from_signature(name, "constexpr", constexprs[name]) for name in kernel.arg_names]


SCATTER_ADD_SIGNATURE = {"index_ptr": "*i32", "src_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}


def test_unused_atomics_survive_the_ttir_passes_and_round_trip(tmp_path):
    kernel = compile_specialized(double_counter_kernel, _specs(double_counter_kernel, {"counter_ptr": "*fp32"}),
                                 target="cpu", num_warps=1)
    ttir = kernel.asm["ttir"]
    filecheck(ttir, "CHECK: [[OLD1:%[0-9a-z_]+]] = tt.atomic_rmw fadd, acq_rel, gpu, %0, [[V:%[0-9a-z_]+]] : "
                    "!tt.ptr<f32>, f32\n"
                    "CHECK-NEXT: tt.atomic_rmw fadd, acq_rel, gpu, %0, [[V]] : !tt.ptr<f32>, f32\n", tmp_path)
    assert print_ir(parse_ttir(ttir)) == ttir
    filecheck(kernel.asm["llir"], "CHECK: atomicrmw fadd ptr {{.*}}, float {{.*}} acq_rel\n"
                                  "CHECK: atomicrmw fadd ptr {{.*}}, float {{.*}} acq_rel\n", tmp_path)


def test_masked_tile_atomic_on_the_cpu_is_a_guarded_loop_over_slots(tmp_path):
    kernel = compile_specialized(scatter_add_kernel, _specs(scatter_add_kernel, SCATTER_ADD_SIGNATURE, {"BLOCK": 128}),
                                 target="cpu", num_warps=1)
    filecheck(kernel.asm["ttgir"], "CHECK: tt.atomic_rmw fadd, acq_rel, gpu, {{.*}} mask {{.*}} : "
                                   "tensor<128x!tt.ptr<f32>, #ttg.blocked<{{.*}}>>, tensor<128xf32, {{.*}}>\n",
              tmp_path)
    # a loop over the 128 slots, each atomic behind its mask bit (O3 unrolls it a few times, not 128)
    llir = kernel.asm["llir"]
    assert 1 <= llir.count("atomicrmw") <= 8
    filecheck(llir, "CHECK: atomic.slot{{.*}}:\n"
                    "CHECK: extractelement <128 x i1>\n"
                    "CHECK: br i1\n"
                    "CHECK: atomicrmw fadd ptr {{.*}}, float {{.*}} acq_rel\n", tmp_path)


# ===--------------------------------------------------------------------------===
# PTX
# ===--------------------------------------------------------------------------===
def _ptx(kernel, signature, constexprs=None, arch=90, num_warps=4) -> str:
    compiled = compile_specialized(kernel, _specs(kernel, signature, constexprs), target=f"cuda:{arch}",
                                   num_warps=num_warps, native=False)
    return compiled.asm["ptx"]


# element type -> what the atomic add becomes: one predicated instruction per element, no branch
PTX_ADD = {
    "fp32": "@%p{{[0-9]+}} atom.acq_rel.gpu.global.add.f32",
    "fp64": "@%p{{[0-9]+}} atom.acq_rel.gpu.global.add.f64",
    "fp16": "@%p{{[0-9]+}} atom.acq_rel.gpu.global.add.noftz.f16",
    "bf16": "atom.{{.*}}global.cas.b32",  # no native bf16 arithmetic here: a compare-and-swap loop
    "i64": "@%p{{[0-9]+}} atom.acq_rel.gpu.global.add.u64",
}


@pytest.mark.parametrize("element", sorted(PTX_ADD))
@pytest.mark.parametrize("arch", [90, 80])
def test_atomic_add_ptx_assembles(element, arch, tmp_path):
    signature = {**SCATTER_ADD_SIGNATURE, "src_ptr": f"*{element}", "out_ptr": f"*{element}"}
    ptx = _ptx(scatter_add_kernel, signature, {"BLOCK": 128}, arch=arch)
    check_ptx(ptx, f"sm_{arch}", f"scatter_add_{element}")
    filecheck(ptx, f"CHECK: {PTX_ADD[element]}\n", tmp_path)
    if element != "bf16":
        assert "bra" not in ptx, ptx


def test_extremes_and_swaps_ptx_assemble(tmp_path):
    from atomic_cases import scatter_extremes_kernel, swap_kernel

    extremes = {"index_ptr": "*i32", "src_ptr": "*i32", "max_ptr": "*i32", "min_ptr": "*i32", "n": "i32"}
    ptx = _ptx(scatter_extremes_kernel, extremes, {"BLOCK": 256})
    check_ptx(ptx, "sm_90", "extremes_i32")
    filecheck(ptx, "CHECK: @%p{{[0-9]+}} atom.acq_rel.gpu.global.max.s32\n"
                   "CHECK: @%p{{[0-9]+}} atom.acq_rel.gpu.global.min.s32\n", tmp_path)
    assert "bra" not in ptx, ptx
    floats = {name: ("*fp32" if name != "index_ptr" else "*i32") for name in extremes if name != "n"}
    ptx = _ptx(scatter_extremes_kernel, {**floats, "n": "i32"}, {"BLOCK": 256})
    check_ptx(ptx, "sm_90", "extremes_fp32")
    filecheck(ptx, "CHECK: max.NaN.f32\nCHECK: atom.{{.*}}global.cas.b32\n", tmp_path)
    halves = {**floats, "src_ptr": "*fp16", "max_ptr": "*fp16", "min_ptr": "*fp16", "n": "i32"}
    ptx = _ptx(scatter_extremes_kernel, halves, {"BLOCK": 256}, arch=80)
    check_ptx(ptx, "sm_80", "extremes_fp16")
    filecheck(ptx, "CHECK: max.NaN.f16\nCHECK: atom.{{.*}}global.cas.b32\n", tmp_path)
    swaps = {name: "*i32" for name in swap_kernel.arg_names if name != "BLOCK"}
    ptx = _ptx(swap_kernel, swaps, {"BLOCK": 64}, arch=80)
    check_ptx(ptx, "sm_80", "swaps_i32")
    # the old values go to the copies of each element through shared memory (non-owners store to a spare slot)
    filecheck(ptx, "CHECK: @%p{{[0-9]+}} atom.acq_rel.gpu.global.exch.b32\n"
                   "CHECK: @%p{{[0-9]+}} atom.acq_rel.gpu.global.cas.b32\n", tmp_path)
    assert "bra" not in ptx, ptx


@pytest.mark.parametrize("arch", [90, 80])
def test_unused_relaxed_atomics_are_predicated_reds(arch, tmp_path):
    from atomic_cases import relaxed_masked_scatter_kernel

    signature = {"index_ptr": "*i32", "src_ptr": "*fp32", "keep_ptr": "*i8", "sum_ptr": "*fp32", "bits_ptr": "*i32",
                 "n": "i32"}
    ptx = _ptx(relaxed_masked_scatter_kernel, signature, {"BLOCK": 128}, arch=arch)
    check_ptx(ptx, f"sm_{arch}", "relaxed_masked_scatter")
    filecheck(ptx, "CHECK: @%p{{[0-9]+}} red.relaxed.gpu.global.add.f32 [%rd{{[0-9]+}}], %r{{[0-9]+}};\n"
                   "CHECK: @%p{{[0-9]+}} red.release.cta.global.or.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};\n", tmp_path)
    assert "atom." not in ptx and "bra" not in ptx, ptx


@inductor_tile.jit
def contiguous_add_kernel(out_ptr, src_ptr, old_ptr, n, BLOCK: tl.constexpr, USE: tl.constexpr, SEM: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    old = tl.atomic_add(out_ptr + offs, tl.load(src_ptr + offs, mask=inside, other=0.0), mask=inside, sem=SEM)
    if USE:
        tl.store(old_ptr + offs, old, mask=inside)


# (element, arch, old values used, ordering) -> the instructions of a thread's 4 consecutive elements
VECTOR_ATOMICS = [
    ("fp32", 90, True, "acq_rel", ["@%p{{[0-9]+}} atom.acq_rel.gpu.global.v4.f32.add {%r{{.*}}}, [%rd{{[0-9]+}}], {"]),
    ("fp32", 90, False, "relaxed", ["@%p{{[0-9]+}} red.relaxed.gpu.global.v4.f32.add [%rd{{[0-9]+}}], {"]),
    ("fp32", 80, True, "acq_rel", ["@%p{{[0-9]+}} atom.acq_rel.gpu.global.add.f32 "] * 4),  # no vector atomics
    ("fp16", 80, True, "acq_rel", ["@%p{{[0-9]+}} atom.acq_rel.gpu.global.add.noftz.f16x2 %r"] * 2),
    ("fp16", 90, False, "release", ["@%p{{[0-9]+}} red.release.gpu.global.add.noftz.f16x2 [%rd"] * 2),
]


@pytest.mark.parametrize("element, arch, use, sem, expected", VECTOR_ATOMICS, ids=[str(c[:4]) for c in VECTOR_ATOMICS])
def test_consecutive_float_adds_share_an_instruction(element, arch, use, sem, expected, tmp_path):
    """With 4 consecutive elements per thread in the atomic's layout (coalescing gives atomics 1 today:
    the layout is edited in the TTGIR), aligned and equally masked: one v4.f32 atom on sm_90, f16 pairs."""
    from inductor_tile.kernel_compiler.to_llvm.lowering import lower_to_llvm
    from inductor_tile.kernel_compiler.to_llvm.nvptx import compile_to_ptx
    from inductor_tile.kernel_compiler.to_llvm.targets import get_target

    signature = {"out_ptr": f"*{element}", "src_ptr": f"*{element}", "old_ptr": f"*{element}", "n": "i32"}
    compiled = compile_specialized(contiguous_add_kernel, _specs(contiguous_add_kernel, signature,
                                                                 {"BLOCK": 512, "USE": use, "SEM": sem}),
                                   target=f"cuda:{arch}", num_warps=4, native=False)
    ttgir = compiled.asm["ttgir"]
    assert "sizePerThread = [1]" in ttgir
    ttgir = ttgir.replace("sizePerThread = [1]", "sizePerThread = [4]").replace("sizePerThread = [8]",
                                                                              "sizePerThread = [4]")
    lowered = lower_to_llvm(parse_ttir(ttgir), get_target(f"cuda:{arch}"), num_warps=4)
    ptx = compile_to_ptx(lowered.llvm_ir, lowered.entry, arch)[1]
    check_ptx(ptx, f"sm_{arch}", "contiguous_add")
    atomics = [line.strip() for line in ptx.splitlines() if "atom." in line or "red." in line and "shared" not in line]
    assert len(atomics) == len(expected), "\n".join(atomics)
    filecheck("\n".join(atomics), "".join(f"CHECK: {line}\n" for line in expected), tmp_path)
    assert "bra" not in ptx, ptx


def test_copies_of_an_element_do_not_all_add_on_the_gpu(tmp_path):
    """16 elements in 128 threads: only the owning threads do the atomic; the old values reach
    every copy through shared memory."""
    signature = {"index_ptr": "*i32", "out_ptr": "*fp32", "old_ptr": "*fp32"}
    compiled = compile_specialized(small_tile_kernel, _specs(small_tile_kernel, signature, {"BLOCK": 16}),
                                   target="cuda:90", num_warps=4, native=False)
    check_ptx(compiled.asm["ptx"], "sm_90", "small_tile")
    assert "bra" not in compiled.asm["ptx"], compiled.asm["ptx"]
    llir = compiled.asm["llir"]
    assert llir.count("atomicrmw") == 0 and llir.count("atom.") == 1
    filecheck(llir, "CHECK: sreg.tid.x\n"
                    "CHECK: asm sideeffect \"@$2 atom.acq_rel.gpu.global.add.f32 $0, [$1], $3;\", \"=r,l,b,r,0\""
                    "(i64 {{.*}}, i1 [[OWNER:%[^,]+]], i32 1065353216, i32 0)\n"
                    "CHECK: call void @llvm.nvvm.barrier{{.*}}\n"
                    "CHECK: select i1 [[OWNER]], i{{32|64}} {{.*}}, i{{32|64}} 16\n"
                    "CHECK: store {{.*}}, ptr addrspace(3)\n"
                    "CHECK: call void @llvm.nvvm.barrier{{.*}}\n"
                    "CHECK: load {{i32|float}}, ptr addrspace(3)\n", tmp_path)


def test_scalar_atomic_is_done_by_one_thread_on_the_gpu(tmp_path):
    ptx = _ptx(double_counter_kernel, {"counter_ptr": "*fp32"}, num_warps=4)
    check_ptx(ptx, "sm_90", "double_counter")
    filecheck(ptx, "CHECK: %tid.x\n"
                   "CHECK: setp.{{.*}} [[FIRST:%p[0-9]+]],\n"
                   "CHECK: @[[FIRST]] atom.acq_rel.gpu.global.add.f32\n"
                   "CHECK: @[[FIRST]] atom.acq_rel.gpu.global.add.f32\n", tmp_path)
    assert "bra" not in ptx, ptx


# ===--------------------------------------------------------------------------===
# errors
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def int8_atomic_kernel(x_ptr):
    tl.atomic_add(x_ptr, 1)


@inductor_tile.jit
def float_and_kernel(x_ptr):
    tl.atomic_and(x_ptr, 1.0)


@inductor_tile.jit
def bad_sem_kernel(x_ptr):
    tl.atomic_max(x_ptr, 1, sem="sequential")


@pytest.mark.parametrize("kernel, signature, line, message", [
    (int8_atomic_kernel, "*i8", "tl.atomic_add(x_ptr, 1)", "does not support pointers to int8"),
    (float_and_kernel, "*fp32", "tl.atomic_and(x_ptr, 1.0)", "needs integer elements"),
    (bad_sem_kernel, "*i32", 'sem="sequential"', "sem must be one of relaxed, acquire, release, acq_rel"),
])
def test_bad_atomics_point_at_the_source_line(kernel, signature, line, message):
    with pytest.raises(CompilationError) as info:
        inductor_tile.compile(kernel, signature={"x_ptr": signature}, constexprs={})
    assert line in info.value.source_line
    assert message in str(info.value)


def test_atomic_on_a_non_pointer_is_an_error(interpret):
    @inductor_tile.jit
    def not_a_pointer_kernel(x_ptr):
        tl.atomic_add(tl.load(x_ptr), 1.0)

    with pytest.raises(Exception, match="tl.atomic_add expects a pointer"):
        not_a_pointer_kernel[(1,)](torch.ones(1))
