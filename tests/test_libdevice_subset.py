"""Linking only the libdevice functions a kernel calls (runtime/libdevice.py): the PTX is that of linking
the whole library (and the optimized IR too, but for the order of intrinsic declarations), the library is parsed once per process, and each set of
functions is cut out once."""

from __future__ import annotations

import pytest

llvm = pytest.importorskip("llvmlite.binding")

from inductor_tile.kernel_compiler.runtime import cuda_tools, libdevice  # noqa: E402
from inductor_tile.kernel_compiler.to_llvm import llvm_tools, nvptx  # noqa: E402

try:
    LIBDEVICE = cuda_tools.find_libdevice()
except FileNotFoundError:  # pragma: no cover - machines without the nvidia-nvvm wheel or CUDA
    pytest.skip("no libdevice here", allow_module_level=True)

TRIPLE = 'target triple = "nvptx64-nvidia-cuda"\n'


def kernel_ir(name: str, calls: list[str]) -> str:
    """A kernel reading x[i], applying each libdevice function in turn and adding the results."""
    lines = [TRIPLE] + [f"declare float @{fn}(float)" for fn in calls]
    lines += [f"define void @{name}(ptr addrspace(1) %x, ptr addrspace(1) %out) {{",
              "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()",
              "  %at = getelementptr float, ptr addrspace(1) %x, i32 %tid",
              "  %v = load float, ptr addrspace(1) %at", "  %acc0 = fadd float %v, 0.0"]
    for i, fn in enumerate(calls):
        lines += [f"  %r{i} = call float @{fn}(float %v)", f"  %acc{i + 1} = fadd float %acc{i}, %r{i}"]
    lines += ["  %to = getelementptr float, ptr addrspace(1) %out, i32 %tid",
              f"  store float %acc{len(calls)}, ptr addrspace(1) %to", "  ret void", "}",
              "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()"]
    return "\n".join(lines) + "\n"


def compile_with_the_whole_library(llvm_ir: str, entry: str, capability: int) -> tuple[str, str]:
    """compile_to_ptx as it was: all of libdevice parsed into the kernel's context and linked in."""
    machine = nvptx.nvptx_machine(capability)
    module = llvm_tools.parse(llvm_ir)
    with open(LIBDEVICE, "rb") as f:
        library = llvm.parse_bitcode(f.read(), context=module._context)
    library.triple, library.data_layout = module.triple, module.data_layout
    module.link_in(library)
    nvptx.internalize(module, entry)
    llvm_tools.optimize(module, machine)
    return str(module), nvptx.split_packed_int16(machine.emit_assembly(module))


@pytest.mark.parametrize("calls", [["__nv_tanhf"], ["__nv_logf", "__nv_expf"], ["__nv_erff", "__nv_sinf", "__nv_powf"]],
                         ids=lambda calls: "+".join(calls))
def test_the_subset_compiles_to_the_same_ir_and_ptx_as_the_whole_library(calls):
    if "__nv_powf" in calls:  # a two-argument function
        text = kernel_ir("k", [c for c in calls if c != "__nv_powf"]).replace(
            "declare float @__nv_erff(float)", "declare float @__nv_erff(float)\ndeclare float @__nv_powf(float, float)")
        text = text.replace("  %to =", "  %p = call float @__nv_powf(float %v, float 1.5)\n  %to =").replace(
            f"store float %acc{len(calls) - 1}", f"store float %p")
    else:
        text = kernel_ir("k", calls)
    expected_ir, expected_ptx = compile_with_the_whole_library(text, "k", 90)
    got_ir, got_ptx = nvptx.compile_to_ptx(text, "k", 90)
    assert got_ptx == expected_ptx
    # the same IR; only the order of intrinsic declarations may differ (the link order)
    assert sorted(got_ir.splitlines()) == sorted(expected_ir.splitlines())


def test_libdevice_is_parsed_once_and_each_set_cut_out_once():
    parses, subsets = libdevice.stats.parses, libdevice.stats.subsets
    first = libdevice.subset_bitcode(["__nv_tanhf", "__nv_cosf"])
    again = libdevice.subset_bitcode(["__nv_cosf", "__nv_tanhf"])  # the same set, in another order
    other = libdevice.subset_bitcode(["__nv_tanhf"])
    assert first is again and other != first
    assert libdevice.stats.parses - parses <= 1  # zero when an earlier test parsed it already
    assert libdevice.stats.subsets - subsets <= 2
    module = llvm.parse_bitcode(first, context=llvm.create_context())
    defined = {fn.name for fn in module.functions if not fn.is_declaration}
    assert {"__nv_tanhf", "__nv_cosf"} <= defined and "__nv_sinf" not in defined and "__nv_logf" not in defined
    with open(LIBDEVICE, "rb") as f:
        whole = len(f.read())
    assert len(first) < whole / 10


def test_each_thread_reuses_its_own_target_machine_and_the_ptx_stays_that_of_a_fresh_one():
    import threading

    mine = nvptx.thread_machine(90)
    assert nvptx.thread_machine(90) is mine and nvptx.thread_machine(90, arch_specific=True) is not mine
    other = []
    worker = threading.Thread(target=lambda: other.append(nvptx.thread_machine(90)))
    worker.start()
    worker.join()
    assert other[0] is not mine
    for calls in (["__nv_tanhf"], ["__nv_logf"], ["__nv_tanhf"]):  # a machine used by earlier compiles
        text = kernel_ir("k", calls)
        assert nvptx.compile_to_ptx(text, "k", 90)[1] == compile_with_the_whole_library(text, "k", 90)[1]
