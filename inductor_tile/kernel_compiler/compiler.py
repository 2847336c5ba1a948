"""Ahead-of-time compilation: `inductor_tile.compile(fn, signature=..., constexprs=...)`.

The pipeline is a list of named stages, each producing the next artifact; every stage's
text is kept in `CompiledKernel.asm` and, with TILE_DUMP_IR=<dir>, written to disk.
Stages: source -> "ttir" (front end + TTIR optimizations) -> "ttgir" (layouts) -> "llir"
(LLVM IR, optimized at O3) -> native code ("asm" on the CPU, "ptx" for cuda, "amdgcn" and the
"hsaco" code object (bytes) for hip).
"""

from __future__ import annotations

import contextlib
import json
import logging
import operator
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .diagnostics import perf_warnings
from .frontend.grouped_arguments import flatten_launch_values, is_grouped
from .frontend.specialization import ArgSpec, spec_from_signature
from .stage_texts import DEFERRABLE, StageTexts

log = logging.getLogger("inductor_tile")

TARGETS = ("cpu", "cuda", "hip")
#: the clock of CompiledKernel.stage_seconds (a benchmark on a shared machine may take time.thread_time)
STAGE_CLOCK = time.perf_counter


@dataclass
class CompiledKernel:
    """A kernel compiled for one specialization: its IR at every stage, and how to launch it."""

    name: str
    specs: list[ArgSpec]
    target: str
    num_warps: int
    asm: dict[str, Any] = field(default_factory=StageTexts)  # text per stage; "hsaco" is bytes (stage_texts.py)
    num_stages: int = 3  # cp.async ring slots of loops of dots (NVIDIA tensor cores; ignored elsewhere)
    module: Any = None
    compile_seconds: float = 0.0
    runner: Any = None  # the target's launcher (CPUKernel, CUDARunner); None runs the interpreter
    shared_bytes: int = 0
    entry: str = ""  # the binary's entry symbol
    # compiled sanitized: asm["sanitizer"] lists its checks (JSON; runtime/sanitizer.py)
    binary: bytes | None = None  # the object file (CPU) or cubin (CUDA) the runner was made from
    cache_key: str | None = None  # its on-disk cache key, when the disk cache was consulted
    from_disk: bool = False  # loaded from the on-disk cache rather than compiled
    perf_findings: list = field(default_factory=list)  # diagnostics/perf_warnings.PerfFinding records
    # seconds per pipeline stage of a fresh compile ("frontend", "ttir", ... "load"), in order
    stage_seconds: dict[str, float] = field(default_factory=dict)
    verify: bool = True  # the pipelines verify the IR they make (passes/pipeline.verifies)
    ir_text: bool = True  # the TTIR and TTGIR modules are printed into `asm` (else made on first read)

    def timed(self, stage: str) -> contextlib.AbstractContextManager[None]:
        """Add the time of a `with` block to `stage_seconds[stage]`."""
        return _timed(self.stage_seconds, stage)

    @property
    def sanitizer_sites(self) -> list | None:
        """The checks of a kernel compiled sanitized (kind, kernel line, argument per site); None if not sanitized."""
        text = self.asm.get("sanitizer")
        return json.loads(text) if text else None

    def __post_init__(self) -> None:
        # host TensorDescriptor and tuple arguments stand for several of the runner's values
        self.grouped_arguments = any(is_grouped(spec) for spec in self.specs)

    def launch_values(self, jit_fn: Any, values: tuple, grid: tuple[int, int, int]) -> None:
        """Launch with the arguments in parameter order (constexprs included)."""
        if self.runner is not None:
            if self.grouped_arguments:
                values = flatten_launch_values(self.specs, values)
            self.runner.launch(values, grid)
            return
        from .runtime.interpret import interpret_launch

        interpret_launch(jit_fn, dict(zip(jit_fn.arg_names, values)), grid)


@contextlib.contextmanager
def _timed(stage_seconds: dict[str, float], stage: str) -> Iterator[None]:
    start = STAGE_CLOCK()
    try:
        yield
    finally:
        stage_seconds[stage] = stage_seconds.get(stage, 0.0) + STAGE_CLOCK() - start


def parse_target(target: str | None) -> str:
    target = target or "cpu"
    if target.split(":")[0] not in TARGETS:
        raise ValueError(f"unknown target {target!r}; expected 'cpu', 'cuda:<capability>' (e.g. 'cuda:90') or 'hip:<arch>'")
    return target


def compile_specialized(jit_fn: Any, specs: list[ArgSpec], target: str | None = None, num_warps: int = 4,
                        native: bool = True, load: bool = True, sanitize: bool | None = None,
                        num_stages: int = 3, ir_text: bool | None = None) -> CompiledKernel | None:
    """Run the pipeline. With `native=False` stop after the last IR stage (no binary, no launcher).
    `ir_text`: whether the TTIR and TTGIR texts are printed as the compile goes (default: unless `load`
    is False); False leaves them to the first read of `asm` (stage_texts.py), as for a compile ahead of
    the launch that nobody may read (JITFunction.precompile).
    `sanitize` (default: `inductor_tile.config.sanitize`) adds the sanitizer's run-time checks.
    `num_stages` (as Triton's launch option) sets the shared-memory stages of loops of dots on NVIDIA
    tensor cores (passes/pipeline_async_copies.py); other targets ignore it.

    Native compiles go through the on-disk cache (runtime/disk_cache.py): a valid entry is
    loaded instead of compiling, and a fresh compile is stored. `load=False` (compile workers)
    makes and stores the binary without loading it into this process (no GPU context): the
    result is then None when the cache already had it.
    """
    from .runtime import disk_cache

    start = time.perf_counter()
    target = parse_target(target)
    if sanitize is None:
        from .. import config

        sanitize = config.sanitize
    key = None
    if native and disk_cache.cache_dir() is not None:
        key = disk_cache.kernel_key(jit_fn, specs, num_warps, target, sanitize=sanitize, num_stages=num_stages)
        if not os.environ.get("TILE_DUMP_IR"):  # a dump wants every stage freshly made
            entry = disk_cache.load(key, texts=LAUNCH_TEXTS)  # the other texts read when asked for (asm)
            if entry is not None and not load:
                return None
            if entry is not None:
                kernel = _from_cache_entry(jit_fn, specs, target, num_warps, entry, sanitize, num_stages)
                if kernel is not None:
                    perf_warnings.report(kernel.perf_findings, jit_fn)
                    kernel.compile_seconds = time.perf_counter() - start
                    disk_cache.stats.load_seconds += kernel.compile_seconds
                    log.debug("loaded %s for %s from the disk cache in %.3fs", kernel.name, target,
                              kernel.compile_seconds)
                    return kernel
    kernel = _run_pipeline(jit_fn, specs, target, num_warps, native, start, load, sanitize, num_stages, ir_text)
    if load:  # compile workers (load=False) leave warnings to the process that loads the kernel
        perf_warnings.report(kernel.perf_findings, jit_fn)
    if native:
        disk_cache.stats.compiles += 1
        disk_cache.stats.compile_seconds += kernel.compile_seconds
    if key is not None and kernel.binary is not None:
        kernel.cache_key = key
        made = kernel.asm.made() if isinstance(kernel.asm, StageTexts) else kernel.asm  # not the deferred ones
        text_stages = {stage: text for stage, text in made.items() if isinstance(text, str)}
        disk_cache.store(key, kernel.name, text_stages, kernel.binary, _BINARY_SUFFIX[target.split(":")[0]],
                         {"entry": kernel.entry, "shared_bytes": kernel.shared_bytes, "target": target,
                          "num_warps": num_warps, "specs": [list(map(str, s.key())) for s in specs],
                          "perf_findings": perf_warnings.to_json(kernel.perf_findings, jit_fn)})
    return kernel


_BINARY_SUFFIX = {"cpu": "o", "cuda": "cubin", "hip": "hsaco"}
#: the stage texts a kernel loaded from the disk cache reads at once: what making its runner needs
LAUNCH_TEXTS = ("sanitizer",)


def _from_cache_entry(jit_fn: Any, specs: list[ArgSpec], target: str, num_warps: int, entry: Any,
                      sanitize: bool = False, num_stages: int = 3) -> Any:
    """A launchable CompiledKernel from a verified cache entry (None if the binary will not load).
    Its stage texts (`asm`) are read from the entry at the first read of one (`Entry.later`), and those
    the entry lacks (a compile worker leaves out the TTIR and TTGIR) made again then."""
    from .runtime import disk_cache

    meta = entry.metadata

    path, later, read = entry.path, entry.later, tuple(entry.asm)  # not the entry: its metadata is not kept

    def stored_or_remade() -> dict[str, Any]:  # the texts the entry holds, and a compile for what it lacks
        texts = disk_cache.read_later(path, later) if later else {}
        if any(stage not in texts and stage not in read for stage in DEFERRABLE + tuple(later)):
            texts = {**_ir_texts(jit_fn, specs, target, num_warps, sanitize, num_stages), **texts}
        return texts

    asm = StageTexts(entry.asm, deferred=DEFERRABLE + tuple(later), remake=stored_or_remade)
    kernel = CompiledKernel(jit_fn.kernel_name(specs), specs, target, num_warps, asm=asm,
                            shared_bytes=int(meta.get("shared_bytes", 0)), entry=meta["entry"], binary=entry.binary,
                            cache_key=entry.key, from_disk=True,
                            perf_findings=perf_warnings.from_json(meta.get("perf_findings", []), jit_fn))
    if target.split(":")[0] == "hip":
        kernel.asm["hsaco"] = entry.binary
    try:
        kernel.runner = _make_runner(kernel)
    except Exception as e:  # checksums matched, so this is unexpected: recompile rather than fail
        import warnings

        warnings.warn(f"inductor_tile: cached binary for {kernel.name} would not load ({type(e).__name__}: {e}); "
                      "recompiling", stacklevel=4)
        disk_cache.stats.corrupt += 1
        root = disk_cache.cache_dir()
        if root is not None:
            disk_cache.remove_entry(disk_cache.entry_dir(root, entry.key))
        return None
    return kernel


def _ir_texts(jit_fn: Any, specs: list[ArgSpec], target: str, num_warps: int, sanitize: bool,
              num_stages: int) -> dict[str, Any]:
    """Every stage's text of a specialization, compiled again without a binary (nothing stored, no warning
    reported): what a deferred `asm` stage is made from."""
    return _run_pipeline(jit_fn, specs, target, num_warps, False, time.perf_counter(), False, sanitize,
                         num_stages).asm


def _make_runner(kernel: CompiledKernel) -> Any:
    sites = kernel.sanitizer_sites
    if sites is not None:  # the launcher takes the hidden arguments too, and is wrapped
        from .runtime.sanitizer import SanitizedRunner, hidden_specs

        inner = _target_runner(kernel, kernel.specs + hidden_specs(kernel.specs))
        return SanitizedRunner(inner, kernel.name, kernel.specs, sites, kernel.target)
    return _target_runner(kernel, kernel.specs)


def _target_runner(kernel: CompiledKernel, specs: list[ArgSpec]) -> Any:
    if kernel.target.split(":")[0] == "cpu":
        from .runtime.cpu_launcher import CPUKernel

        return CPUKernel.from_object(kernel.binary, kernel.entry, specs)
    kinds = [spec.type.to_ir_string() for spec in specs if spec.kind != "constexpr"]
    if kernel.target.split(":")[0] == "hip":
        from .runtime.hip_launcher import HIPKernel

        return CUDARunner(HIPKernel(kernel.binary, kernel.entry, kinds, kernel.num_warps), specs)
    from .runtime.cuda_launcher import CUDAKernel

    return CUDARunner(CUDAKernel(kernel.binary, kernel.entry, kinds, kernel.num_warps, kernel.shared_bytes), specs)


def _run_pipeline(jit_fn: Any, specs: list[ArgSpec], target: str, num_warps: int, native: bool,
                  start: float, load: bool = True, sanitize: bool = False, num_stages: int = 3,
                  ir_text: bool | None = None) -> CompiledKernel:
    from ..codegen.runtime import is_generated
    from .frontend.ttir import generate_ttir  # the compiler proper: not imported by a cache hit
    from .ir.context import print_ir
    from .ir_builder import TTIRBuilder
    from .passes.pipeline import optimize_ttir, verifies

    stages: dict[str, float] = {}
    verify = verifies(generated=is_generated(jit_fn))
    # a compile that only fills the disk cache leaves the IR texts out (stage_texts.py); a dump wants them all
    ir_text = (load if ir_text is None else ir_text) or not native or bool(os.environ.get("TILE_DUMP_IR"))
    with _timed(stages, "frontend"):
        module = generate_ttir(jit_fn, specs, TTIRBuilder(), num_warps)
        sites = _sanitize(module) if sanitize else None
    with _timed(stages, "ttir"):
        module = optimize_ttir(module, verify=verify)
        ttir_text = print_ir(module) if ir_text else None
    asm = StageTexts() if ir_text else StageTexts(deferred=DEFERRABLE, remake=lambda: _ir_texts(
        jit_fn, specs, target, num_warps, sanitize, num_stages))
    kernel = CompiledKernel(jit_fn.kernel_name(specs), specs, target, num_warps, asm=asm, module=module,
                            num_stages=num_stages, stage_seconds=stages, verify=verify, ir_text=ir_text)
    if ir_text:
        kernel.asm["ttir"] = ttir_text
    if sites is not None:
        kernel.asm["sanitizer"] = json.dumps(sites)
    if target.split(":")[0] == "cpu":
        _compile_cpu(kernel, native, load)
    elif target.split(":")[0] == "cuda":
        _compile_cuda(kernel, native, load)
    elif target.split(":")[0] == "hip":
        _compile_hip(kernel, native, load)
    kernel.compile_seconds = time.perf_counter() - start
    _dump(kernel)
    log.debug("compiled %s for %s in %.3fs", kernel.name, target, kernel.compile_seconds)
    return kernel


def _sanitize(module: Any) -> list:
    """Add the sanitizer's checks before every access and integer division; returns their sites."""
    from .ir.context import make_context
    from .passes.sanitize import SanitizePass
    from .runtime.sanitizer import sites_of

    SanitizePass().apply(make_context(), module)
    return sites_of(module)


#: O3 for the CPU target without loop unrolling: a tile is already one wide vector, so unrolling
#: gains nothing at run time, while unrolled element loops (cpu_memory.py) doubled the compile
#: time of a transpose (measured on the suite's kernels, 2026-11-25)
CPU_PIPELINE_TUNING = {"loop_unrolling": False}


def _compile_cpu(kernel: CompiledKernel, native: bool, load: bool = True) -> None:
    """TTIR -> TTGIR (one thread holds the tile) -> LLVM IR -> O3 -> machine code."""
    from .ir.context import make_context, print_ir
    from .passes.broadcast_compare_operands import BroadcastCompareOperandsPass
    from .passes.pipeline import make_ttgir
    from .to_llvm import llvm_tools
    from .to_llvm.lowering import lower_to_llvm
    from .to_llvm.targets import get_target

    target = get_target("cpu")
    with kernel.timed("ttgir"):
        ttir = kernel.module.clone()
        BroadcastCompareOperandsPass().apply(make_context(), ttir)  # masks compared at full width
        ttgir = make_ttgir(ttir, num_warps=1, threads_per_warp=target.warp_size, verify=kernel.verify)
        if kernel.ir_text:
            kernel.asm["ttgir"] = print_ir(ttgir)
        axis_infos: dict = {}  # computed once for the findings and the lowering
        kernel.perf_findings = perf_warnings.find_in_ttgir(ttgir, kernel.specs, target, 1, axis_infos)
    with kernel.timed("to_llvm"):
        lowered = lower_to_llvm(ttgir, target, num_warps=1, axis_infos=axis_infos)
    with kernel.timed("parse"):
        machine = llvm_tools.host_target_machine()
        module_ref = llvm_tools.parse(lowered.llvm_ir)
    # closed here, not by a garbage collection of an error's frames, which may dispose of the module's LLVM
    # context first (a segfault; an error at the user's inline assembly is raised with the module alive)
    with contextlib.closing(module_ref):
        with kernel.timed("optimize"):
            llvm_tools.optimize(module_ref, machine, **CPU_PIPELINE_TUNING)
            kernel.asm["llir"] = str(module_ref)
            _check_vector_widths(kernel)
        # Machine code generation is the slowest step: the JIT does it once; the assembly text is only
        # produced when someone will read it (ahead-of-time compiles, TILE_DUMP_IR).
        want_assembly = not native or bool(os.environ.get("TILE_DUMP_IR"))
        if native:
            kernel.entry = lowered.entry
        if _emits_in_child(kernel):
            with kernel.timed("codegen"):
                _emit_cpu_in_child(kernel, ttgir, native, want_assembly)
        else:
            if want_assembly:
                with kernel.timed("assembly"):
                    kernel.asm["asm"] = machine.emit_assembly(module_ref)
            if native:
                with kernel.timed("codegen"):
                    kernel.binary = machine.emit_object(module_ref)
    if native and load:
        with kernel.timed("load"):
            kernel.runner = _make_runner(kernel)


def _emits_in_child(kernel: CompiledKernel) -> bool:
    """Whether the kernel's machine code is made by a child process: LLVM exits the process on inline
    assembly it cannot assemble (to_llvm/isolated_codegen.py); every other kernel is emitted here."""
    from .to_llvm import inline_asm_errors, isolated_codegen

    return inline_asm_errors.has_inline_asm(kernel.asm["llir"]) and isolated_codegen.available()


def _emit_cpu_in_child(kernel: CompiledKernel, ttgir: Any, want_object: bool, want_assembly: bool) -> None:
    """The object and/or assembly text of `kernel.asm["llir"]`, made by a child process; LLVM's error on
    the inline assembly becomes an InlineAsmError at the kernel's call."""
    from .to_llvm import inline_asm_errors, isolated_codegen, llvm_tools

    options = llvm_tools.host_machine_options()
    try:
        obj, assembly, printed = isolated_codegen.emit(kernel.asm["llir"], options, want_object, want_assembly)
    except isolated_codegen.IsolatedCodegenError as e:
        if not inline_asm_errors.is_llvm_error(e.stderr):  # the child itself failed: say so as it is
            raise
        raise inline_asm_errors.cpu_error(ttgir, e.stderr, options["triple"]) from None
    if printed.strip():  # LLVM's warnings, which it prints and goes on
        inline_asm_errors.warn_cpu(ttgir, printed, options["triple"])
    if assembly is not None:
        kernel.asm["asm"] = assembly
    if obj is not None:
        kernel.binary = obj


# the most elements of one LLVM vector the code generator takes: an instruction's operand count is
# 16 bits there, and a wider vector aborted the whole process ("too many operands to fit into SDNode")
MAX_CPU_VECTOR_ELEMENTS = 65535


def _check_vector_widths(kernel: CompiledKernel) -> None:
    """Refuse, with an error, a CPU kernel whose tile LLVM cannot compile (one program's whole tile
    is one thread's vectors there: Triton tutorial 03's 256 x 256 block)."""
    widest = max((int(n) for n in re.findall(r"<(\d+) x ", kernel.asm["llir"])), default=0)
    if widest > MAX_CPU_VECTOR_ELEMENTS:
        from .to_llvm.context import LoweringError

        raise LoweringError(f"{kernel.name}: a tile of {widest} elements is more than the CPU target can "
                            f"compile ({MAX_CPU_VECTOR_ELEMENTS} per program: one thread holds the whole "
                            "tile); use smaller blocks for the CPU")


def _compile_cuda(kernel: CompiledKernel, native: bool, load: bool = True) -> None:
    """TTIR -> TTGIR (32 lanes x num_warps) -> LLVM IR -> libdevice + O3 -> PTX -> cubin (ptxas)."""
    from .ir.context import print_ir
    from .passes.pipeline import make_ttgir
    from .to_llvm.lowering import lower_to_llvm
    from .to_llvm.nvptx import compile_to_ptx, ptx_arch
    from .to_llvm.targets import get_target

    target = get_target(kernel.target)
    with kernel.timed("ttgir"):
        ttgir = make_ttgir(kernel.module.clone(), num_warps=kernel.num_warps, threads_per_warp=target.warp_size,
                           mma_version=target.mma_version, num_stages=kernel.num_stages,
                           shared_limit=target.max_shared_bytes, verify=kernel.verify)
        if kernel.ir_text:
            kernel.asm["ttgir"] = print_ir(ttgir)
        axis_infos: dict = {}  # computed once for the findings and the lowering
        kernel.perf_findings = perf_warnings.find_in_ttgir(ttgir, kernel.specs, target, kernel.num_warps, axis_infos)
    with kernel.timed("to_llvm"):
        lowered = lower_to_llvm(ttgir, target, num_warps=kernel.num_warps, axis_infos=axis_infos)
    kernel.asm["llir"], kernel.asm["ptx"] = compile_to_ptx(lowered.llvm_ir, lowered.entry, target.capability,
                                                           kernel.timed)
    kernel.shared_bytes = lowered.shared_bytes
    if not native:
        perf_warnings.add_ptxas_findings(kernel, target.capability, None)
        return
    from .runtime.cuda_tools import PTXASError, assemble_ptx

    kernel.entry = lowered.entry
    ptxas_log: list[str] = []
    with kernel.timed("ptxas"):  # a child process: this thread's CPU clock sees only its start and wait
        try:
            kernel.binary = assemble_ptx(kernel.asm["ptx"], ptx_arch(kernel.asm["ptx"], target.capability),
                                         lowered.entry, ["-v"], ptxas_log)
        except PTXASError as e:  # on the user's inline assembly: an error at the kernel's call
            from .to_llvm.inline_asm_errors import ptxas_error

            at_call = ptxas_error(ttgir, kernel.asm["ptx"], e)
            if at_call is None:
                raise
            raise at_call from None
        perf_warnings.add_ptxas_findings(kernel, target.capability, ptxas_log[0])
    if load:
        with kernel.timed("load"):
            kernel.runner = _make_runner(kernel)


def _compile_hip(kernel: CompiledKernel, native: bool, load: bool = True) -> None:
    """TTIR -> TTGIR (wave64 on gfx9, wave32 on gfx11 x num_warps) -> LLVM IR -> O3 -> AMDGCN -> HSACO (ld.lld).

    Ahead-of-time compiles (`native=False`) also link the code object when a linker is found, and
    otherwise warn and leave `asm["hsaco"]` out; launchable compiles need it."""
    from .ir.context import print_ir
    from .passes.pipeline import make_ttgir
    from .to_llvm import hsaco
    from .to_llvm.lowering import lower_to_llvm
    from .to_llvm.targets import get_target
    from .to_llvm.targets.amd import SHARED_SYMBOL, lds_limit_of

    target = get_target(kernel.target)
    ttgir = make_ttgir(kernel.module.clone(), num_warps=kernel.num_warps, threads_per_warp=target.warp_size,
                       amd_arch=target.matrix_core_arch, verify=kernel.verify)
    if kernel.ir_text:
        kernel.asm["ttgir"] = print_ir(ttgir)
    axis_infos: dict = {}  # computed once for the findings and the lowering
    kernel.perf_findings = perf_warnings.find_in_ttgir(ttgir, kernel.specs, target, kernel.num_warps, axis_infos)
    lowered = lower_to_llvm(ttgir, target, num_warps=kernel.num_warps, axis_infos=axis_infos)
    if lowered.shared_bytes > lds_limit_of(target.arch):
        from .runtime.cuda_launcher import SharedMemoryError

        raise SharedMemoryError(f"kernel '{kernel.name}' needs {lowered.shared_bytes} bytes of LDS per workgroup, but "
                                f"{target.arch} has {lds_limit_of(target.arch)}: use smaller blocks")
    llvm_ir = hsaco.size_shared_memory(lowered.llvm_ir, SHARED_SYMBOL, lowered.shared_bytes)
    kernel.asm["llir"], kernel.asm["amdgcn"], relocatable = hsaco.compile_to_amdgcn(llvm_ir, target.arch)
    kernel.shared_bytes = lowered.shared_bytes
    kernel.entry = lowered.entry
    if not native and not hsaco.has_linker():
        import warnings

        warnings.warn(f"inductor_tile: no HSACO for {kernel.name}: {_linker_problem()}", stacklevel=4)
        return
    kernel.asm["hsaco"] = kernel.binary = hsaco.link(relocatable, kernel.name)
    if native and load:
        kernel.runner = _make_runner(kernel)


def _linker_problem() -> str:
    from .to_llvm import hsaco

    try:
        hsaco.find_linker()
    except hsaco.ToolNotFoundError as e:
        return str(e)
    return ""


class CUDARunner:
    """Picks the runtime arguments out of a launch's values and hands them to CUDAKernel (or HIPKernel)."""

    def __init__(self, kernel: Any, specs: list[ArgSpec]):
        self.kernel = kernel
        positions = [i for i, spec in enumerate(specs) if spec.kind != "constexpr"]
        pick = operator.itemgetter(*positions) if positions else (lambda values: ())
        self.pick = pick if len(positions) != 1 else (lambda values: (values[positions[0]],))

    def launch(self, values: tuple, grid: tuple[int, int, int]) -> None:
        self.kernel.launch(self.pick(values), grid)


def _dump(kernel: CompiledKernel) -> None:
    directory = os.environ.get("TILE_DUMP_IR")
    if not directory:
        return
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    for stage, text in kernel.asm.items():
        if isinstance(text, bytes):  # the HSACO code object
            (path / f"{kernel.name}.{stage}").write_bytes(text)
        else:
            (path / f"{kernel.name}.{stage}").write_text(text)


def compile(fn: Any, signature: dict[str, str], constexprs: dict[str, Any] | None = None, target: str | None = None,
            num_warps: int = 4, divisible_by_16: tuple[str, ...] | list[str] = (),
            equal_to_1: tuple[str, ...] | list[str] = (), num_stages: int = 3) -> CompiledKernel:
    """Compile `fn` (a @jit function) without launching it.

    `signature` maps each runtime parameter to a Triton type string (`*fp32`, `i32`, `fp16`, ...);
    `constexprs` gives the tl.constexpr parameters' values. `divisible_by_16` and `equal_to_1` name
    parameters to specialize as Triton would for such values. `num_stages` as for a launch.
    """
    from .runtime.jit import JITFunction

    if not isinstance(fn, JITFunction):
        raise TypeError(f"inductor_tile.compile expects a @inductor_tile.jit function, got {fn!r}")
    constexprs = dict(constexprs or {})
    specs = []
    for name in fn.arg_names:
        if name in constexprs:
            specs.append(spec_from_signature(name, "constexpr", constexprs.pop(name)))
        elif name in signature:
            if name in fn.constexpr_names:
                raise TypeError(f"parameter '{name}' of {fn.__name__} is tl.constexpr: give its value in constexprs=")
            specs.append(spec_from_signature(name, signature[name], divisible_by_16=name in divisible_by_16,
                                             equal_to_1=name in equal_to_1))
        else:
            default = fn.signature.parameters[name].default
            if name in fn.constexpr_names and default is not fn.signature.parameters[name].empty:
                specs.append(spec_from_signature(name, "constexpr", default))
                continue
            raise TypeError(f"parameter '{name}' of {fn.__name__} is missing from signature= (and constexprs=)")
    extra = set(signature) - set(fn.arg_names) | set(constexprs)
    if extra:
        raise TypeError(f"{fn.__name__} has no parameter(s) {sorted(extra)}")
    return compile_specialized(fn, specs, target=target, num_warps=num_warps, native=False, num_stages=num_stages)
