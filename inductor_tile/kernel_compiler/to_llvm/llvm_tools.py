"""llvmlite plumbing: parse, verify and optimize LLVM IR, make target machines."""

from __future__ import annotations

import functools
import threading

import llvmlite.binding as llvm

_init_lock = threading.Lock()
_initialized = False


def initialize() -> None:
    global _initialized
    with _init_lock:
        if _initialized:
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()
        _initialized = True


def initialize_all() -> None:
    """Also the other targets (NVPTX, AMDGPU) for cross-compilation."""
    initialize()
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def host_target_machine(opt: int = 3) -> llvm.TargetMachine:
    """A new target machine for this host (one per compile: a machine must not serve two threads at once)."""
    options = host_machine_options(opt)
    return llvm.Target.from_triple(options.pop("triple")).create_target_machine(**options)


def host_machine_options(opt: int = 3) -> dict:
    """What `host_target_machine` makes its machine from: the triple and `create_target_machine`'s
    arguments (a child process makes the same machine from them: isolated_codegen.py)."""
    initialize()
    triple, cpu, features = _host()
    return {"triple": triple, "cpu": cpu, "features": features, "opt": opt, "jit": True}


@functools.cache
def _host() -> tuple[str, str, str]:
    """This process's triple, CPU name and CPU features (asked of LLVM once: the features are a query of
    the processor, half the cost of making a target machine)."""
    return llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def parse(text: str) -> llvm.ModuleRef:
    """A module in an LLVM context of its own: kernels compile in several threads at once
    (``JITFunction.precompile``), and one LLVM context must not be used by two threads."""
    initialize()
    module = llvm.parse_assembly(text, context=llvm.create_context())
    module.verify()
    return module


# LLVM contexts of modules that an execution engine owns, never disposed: an engine and its module's
# context collected together by Python's cyclic GC are finalized in any order, and a context disposed
# before the engine leaves the engine freeing a module of freed memory (a segfault in a later GC pass)
_ENGINE_CONTEXTS: list = []


def jit_engine(module: llvm.ModuleRef, machine: llvm.TargetMachine) -> llvm.ExecutionEngine:
    """An MCJIT engine owning `module` (and `machine`), whose module's context outlives it."""
    context = getattr(module, "_context", None)
    if context is not None:
        _ENGINE_CONTEXTS.append(context)
    return llvm.create_mcjit_compiler(module, machine)


def optimize(module: llvm.ModuleRef, machine: llvm.TargetMachine, speed_level: int = 3, **tuning: bool) -> None:
    """Run LLVM's default O<speed_level> pipeline in place; `tuning`: PipelineTuningOptions switches
    (``loop_unrolling=False``...)."""
    options = llvm.create_pipeline_tuning_options(speed_level=speed_level)
    for name, value in tuning.items():
        setattr(options, name, value)
    builder = llvm.create_pass_builder(machine, options)
    builder.getModulePassManager().run(module, builder)
