"""LLVM IR -> PTX for NVIDIA GPUs: link the libdevice functions used, optimize, emit PTX.

Only the libdevice functions the kernel calls survive: after linking, every definition
but the kernel is made internal, so O3's dead-code elimination drops the rest (otherwise
the PTX would carry all of libdevice).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Callable, ContextManager

import llvmlite.binding as llvm

from . import llvm_tools
from .ptx_fixups import split_packed_int16

#: PTX ISA version LLVM is asked for; ptxas from CUDA 12.4 and newer accepts it
PTX_VERSION = "84"


def nvptx_machine(capability: int, arch_specific: bool = False) -> llvm.TargetMachine:
    """`arch_specific`: PTX for sm_90a (wgmma and its fences exist only there)."""
    llvm_tools.initialize_all()
    target = llvm.Target.from_triple("nvptx64-nvidia-cuda")
    cpu = f"sm_{capability}{'a' if arch_specific else ''}"
    return target.create_target_machine(cpu=cpu, features=f"+ptx{PTX_VERSION}", opt=3)


_machines = threading.local()  # per thread: a target machine must not serve two threads at once


def thread_machine(capability: int, arch_specific: bool = False) -> llvm.TargetMachine:
    """This thread's `nvptx_machine(capability, arch_specific)`, made once (0.6 ms a kernel otherwise)."""
    cache = _machines.__dict__.setdefault("by_arch", {})
    machine = cache.get((capability, arch_specific))
    if machine is None:
        machine = cache[capability, arch_specific] = nvptx_machine(capability, arch_specific)
    return machine


def ptx_arch(ptx: str, capability: int) -> str:
    """The ptxas -arch for `ptx`: sm_90a when it targets the arch-specific features, else sm_<capability>."""
    return f"sm_{capability}a" if f".target sm_{capability}a" in ptx else f"sm_{capability}"


def uses_libdevice(module: llvm.ModuleRef) -> bool:
    return any(f.is_declaration and f.name.startswith("__nv_") for f in module.functions)


def link_libdevice(module: llvm.ModuleRef, entry: str) -> None:
    from ..runtime.libdevice import subset_bitcode  # the functions called and theirs, not the whole library

    called = [f.name for f in module.functions if f.is_declaration and f.name.startswith("__nv_")]
    library = llvm.parse_bitcode(subset_bitcode(called), context=module._context)  # linking needs one context
    library.triple = module.triple
    library.data_layout = module.data_layout
    module.link_in(library)
    internalize(module, entry)


def internalize(module: llvm.ModuleRef, entry: str) -> None:
    """Every definition but the kernel and its shared memory internal, so that O3 drops the unused."""
    for fn in module.functions:
        if not fn.is_declaration and fn.name != entry:
            fn.linkage = llvm.Linkage.internal
    for variable in module.global_variables:
        if not variable.is_declaration and variable.name != "global_smem":
            variable.linkage = llvm.Linkage.internal


def _untimed(stage: str) -> ContextManager[None]:
    return contextlib.nullcontext()


def compile_to_ptx(llvm_ir: str, entry: str, capability: int,
                   timed: Callable[[str], ContextManager[None]] = _untimed) -> tuple[str, str]:
    """Return (optimized LLVM IR, PTX); the PTX has ptxas workarounds applied (ptx_fixups.py).
    `timed(stage)` wraps each step ("parse", "libdevice", "optimize", "ptx"; CompiledKernel.timed)."""
    with timed("parse"):
        machine = thread_machine(capability, arch_specific="wgmma." in llvm_ir)
        module = llvm_tools.parse(llvm_ir)
    with timed("libdevice"):
        if uses_libdevice(module):
            link_libdevice(module, entry)
    with timed("optimize"):
        llvm_tools.optimize(module, machine)
        optimized = str(module)
    with timed("ptx"):
        return optimized, split_packed_int16(machine.emit_assembly(module))
