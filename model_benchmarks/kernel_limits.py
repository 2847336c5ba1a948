"""`python -m model_benchmarks.kernel_limits`: why each generated kernel of the micro benchmarks runs below
the device's copy bandwidth, read from its sm_90 code on a machine without a GPU.

    python -m model_benchmarks.kernel_limits [--cases cross_entropy:8192x32000,softmax:64x8192] [--cuobjdump PATH]

Each case (a ``model_benchmarks.micro_cases`` function at one shape, fp16) is compiled with
``backend="tile"`` on the CPU with everything that shapes a kernel set as on an H200 (``cuda_shapes``:
the CUDA block/warp heuristics, Inductor's split-reduction choices for 132 SMs, its online softmax);
nothing is run: each launch's kernel, arguments, grid and warps are recorded instead.  Each kernel is then
compiled for sm_90 (PTX, then a cubin with ptxas) and read:

- programs (the grid), warps, registers and shared bytes (``ptxas -v``), and resident warps an SM from
  registers / shared memory / warp slots / 32 blocks (sm_90: 64K registers, 228 KB, 64 warps);
- instructions per byte: the machine instructions (SASS; PTX where no cuobjdump is found) of the loop
  bodies, over the bytes those bodies' global loads and stores move, per thread (for a loop-free kernel,
  the whole kernel): the steady state of a row loop, whatever its trip count.  An SM issues 4 warp
  instructions a clock, so at 1.98 GHz and 132 SMs ~8 instructions a byte already cap the kernel at the
  measured copy bandwidth; ``MUFU/B`` (exp2, log2, rcp...) run at 16 lanes a clock;
- global access widths: the count of 16-, 8-, 4- and 2-byte loads in the code;
- bytes in flight an SM: the loads a thread issues before it first uses one (from the top of the loop,
  or of the kernel), times 32 lanes and the resident warps, against Little's law's need
  (``DEVICE.in_flight_needed``: 4.8 TB/s x ~700 ns / 132 SMs, about 25 KB).  Its ceiling comes from a
  pass (a loop step, or a loop-free program) of a warp, or of a whole program where the pass waits at a
  barrier: its load waits one after another (~700 ns each; 300 ns for kernels small enough to sit in L2),
  its bytes streaming into the SM (~64 B a clock) and its work (instructions at one a clock per scheduler,
  its longest dependent chain, or its MUFU lanes); other warps overlap their work with its waits until the
  schedulers are full;
- bytes moved against the ideal, from the kernel's source: every load/store statement counts its tensor's
  bytes (a gather through loaded indices counts its elements), statements in different loops count again;
  the ideal reads each input once and writes each output once.  A second pass over a row may hit L2, which
  only ncu's DRAM bytes settle (``.probe/limits_ncu.sh``).

Each of these gives a ceiling in percent of the measured copy bandwidth (a model, not a measurement); the
reason printed is the lowest ceilings under 90%.  A kernel's model time is its bytes at its lowest rate
ceiling, its last partial wave at that wave's own rate, plus ~2 us a kernel; a case's model percentage
(the summary) is the micro benchmark's bytes at copy speed over its kernels' model times, next to what
session 21 measured.  A node our codegen hands to Inductor's (a Triton kernel on a GPU) is named, not read.  Reductions are read in the heuristic's config; the
autotuner may pick another of its candidates on the device: the ncu probe's registers and grid show
which ran.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .kernel_sass import Program, parse_ptx, parse_sass

#: the kernels below 90% of copy in session 21's H200 sweep (BENCHMARKS.md "Session 21")
DEFAULT_CASES = ("cross_entropy:8192x32000", "cross_entropy:4096x50257", "cross_entropy:64x32000",
                 "cross_entropy_bwd:8192x32000", "cross_entropy_bwd:4096x50257", "softmax:64x8192",
                 "softmax:1024x32768", "layernorm_bwd:16384x768", "layernorm_bwd:8192x4096",
                 "rmsnorm_bwd:16384x2048", "rmsnorm_bwd:8192x4096", "layernorm:64x768")


@dataclasses.dataclass(frozen=True)
class Device:
    """The numbers the ceilings are computed from (an H200 SXM; latency is a typical loaded DRAM latency)."""

    name: str = "H200"
    sms: int = 132
    clock_hz: float = 1.98e9
    dram_bytes_per_s: float = 4.8e12  # the data sheet's
    copy_bytes_per_s: float = 4.177e12  # a device copy measured in session 21
    latency_s: float = 700e-9
    # a kernel moving at most this many bytes finds them in L2 (50 MB; the benchmark calls it back to back, and
    # a small kernel reads what the kernel before it wrote), at about this latency
    l2_resident_bytes: int = 16 << 20
    l2_latency_s: float = 300e-9
    issue_per_clock: int = 4  # warp instructions an SM issues a clock (4 schedulers)
    special_lanes_per_clock: int = 16  # MUFU lanes an SM
    sm_load_bytes_per_clock: int = 64  # what one SM's loads stream in a clock from L2 (about)
    # what a kernel costs besides moving its bytes (start, first loads' latency, the last wave's drain):
    # an assumption of this model, about what an almost empty kernel shows in a profile
    fixed_s: float = 2e-6

    @property
    def in_flight_needed(self) -> float:
        """Bytes an SM must have requested at once to keep DRAM busy (Little's law)."""
        return self.dram_bytes_per_s * self.latency_s / self.sms

    @property
    def instructions_per_byte_at_copy(self) -> float:
        """Thread instructions a byte the SMs can issue while moving data at the copy bandwidth."""
        return self.issue_per_clock * 32 * self.clock_hz * self.sms / self.copy_bytes_per_s


DEVICE = Device()


@dataclasses.dataclass
class Launch:
    """One kernel launch recorded by `capture`: what the backend would launch on the GPU."""

    case: str
    shape: str
    fn: Any  # the generated @jit function
    specs: list
    num_warps: int
    grid: tuple[int, int, int]
    arguments: dict[str, Any]  # parameter -> (numel, element bytes) of a tensor, or a scalar's value

    @property
    def name(self) -> str:
        return self.fn.__name__


# ---- recording the kernels as a CUDA device gets them ----------------------------------------------

H200_PROPERTIES = dict(type="cuda", index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536,
                       max_threads_per_multi_processor=2048, max_threads_per_block=1024, warp_size=32)


def _online_softmax_on_any_device(match):  # its code replaces Inductor's check, run in post_grad's globals
    return config.online_softmax  # noqa: F821 - torch._inductor.config, a global of post_grad


@contextlib.contextmanager
def cuda_shapes():
    """Compile for the CPU with what shapes a kernel set as on an H200: our block/warp heuristics for CUDA
    (and mix-order's 132 SMs), no in-place outputs (the CPU's only), Inductor's device properties (its split
    reductions) and its online softmax (a post-grad pattern it applies on CUDA only). Autotuning, precompiles and graph caches are off."""
    import torch._inductor.config as inductor_config
    from torch._inductor.fx_passes import post_grad
    from torch._inductor.runtime.hints import DeviceProperties

    from inductor_tile import config
    from inductor_tile.codegen import heuristics
    from inductor_tile.scheduler import inplace

    h200 = DeviceProperties(**H200_PROPERTIES)
    in_place = inplace.devices
    inplace.devices = lambda: ()  # outputs never take over dying inputs' memory on a GPU
    create = DeviceProperties.__dict__["create"]
    check = post_grad.prepare_softmax_extra_check
    code = check.__code__
    is_gpu = heuristics.is_gpu
    heuristics.is_gpu = lambda device_type: True
    DeviceProperties.create = classmethod(lambda cls, device: h200 if device.type == "cpu"
                                          else create.__func__(cls, device))
    check.__code__ = _online_softmax_on_any_device.__code__
    try:
        # var_mean: Inductor's CPU lowering sums twice up to 1024 elements; on CUDA fp16 rows get its welford
        # unless the reduction splits (not modelled: a split var_mean is Triton's two-step there)
        two_step = {"cpp.use_two_step_variance_threshold": inductor_config.unroll_reductions_threshold}
        with config.patch(autotune=False, precompile=False, graph_cache=False), \
                inductor_config.patch(fx_graph_cache=False, **two_step):
            yield
    finally:
        heuristics.is_gpu = is_gpu
        inplace.devices = in_place
        DeviceProperties.create = create
        check.__code__ = code


@contextlib.contextmanager
def _recording(launches: list[Launch], case: str, shape: str):
    """Every JITFunction launch recorded into `launches`, none run (the outputs stay garbage)."""
    import torch

    from inductor_tile.kernel_compiler.runtime.jit import JITFunction, resolve_grid

    run = JITFunction.run

    def record(self, *args, grid, num_warps=4, **kwargs):
        bound = self.bind(args, kwargs)
        arguments = {name: (value.numel(), value.element_size()) if isinstance(value, torch.Tensor) else value
                     for name, value in bound.items()}
        launches.append(Launch(case, shape, self, self.specialize(bound), num_warps, resolve_grid(grid, bound),
                               arguments))

    JITFunction.run = record
    try:
        yield
    finally:
        JITFunction.run = run


class _FallbackNotes(logging.Handler):
    """Collects the backend's messages about nodes handed to Inductor's own codegen (on a GPU, Triton's
    kernels run for them, which this tool does not read) and graphs that run eagerly."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.notes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        lines = [line.strip() for line in record.getMessage().splitlines() if line.strip()]
        if lines and ("falls back to Inductor" in lines[0] or "runs eagerly" in lines[0]):
            first = re.sub(r"^tile: ", "", lines[0].split(": CompilationError")[0])
            first = first.replace("Inductor's CppScheduling", "Inductor's codegen (Triton's on a GPU)")
            self.notes.append(first + (f" ({lines[-1][:120]})" if len(lines) > 1 else ""))


def capture(case_name: str, rows: int, cols: int, notes: list[str] | None = None) -> tuple[list[Launch], int]:
    """The tile kernels `python -m model_benchmarks micro` launches for `case_name` at rows x cols (fp16)
    on an sm_90 device, in launch order, and the bytes the micro benchmark counts for the case (each input
    read once, each output written once). `notes` receives why a node or graph left our codegen."""
    import torch

    from .backends import resolve_compiler
    from .micro_cases import CASES

    case = CASES[case_name]
    generator = torch.Generator().manual_seed(0)
    dtype = torch.float32 if case.fp32 else torch.float16
    inputs, nbytes = case.inputs(rows, cols, dtype, torch.device("cpu"), generator)
    launches: list[Launch] = []
    torch._dynamo.reset()
    handler = _FallbackNotes()
    logger = logging.getLogger("inductor_tile")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        with cuda_shapes(), _recording(launches, case_name, f"{rows}x{cols}"):
            torch.compile(case.fn, backend=resolve_compiler("tile"))(*inputs)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        torch._dynamo.reset()
    if notes is not None:
        notes.extend(handler.notes)
    return launches, nbytes


# ---- reading one kernel ---------------------------------------------------------------------------------

@dataclasses.dataclass
class Row:
    case: str
    shape: str
    kernel: str
    programs: int
    warps: int
    registers: int
    spill_bytes: int
    shared_bytes: int
    blocks_per_sm: int  # the occupancy limit: blocks an SM can hold at once
    occupancy_limit: str  # what sets it: warp slots, blocks, registers, shared
    code: str  # "SASS" or "PTX"
    instructions: int  # static, whole kernel
    per_byte: float  # thread instructions a byte moved, loop bodies (or the whole kernel)
    special_per_byte: float
    region: str  # "loop" or "kernel"
    widths: dict[int, int]  # bytes per access -> loads in the code
    thread_in_flight: int  # bytes a thread has requested before it first uses one
    rounds: int  # load latencies a thread waits through, one after another, a pass (loop step or kernel)
    pass_instructions: int  # warp instructions of a pass
    pass_chain: int  # clocks of its longest dependent chain (loads' latency apart)
    pass_special: int  # its MUFU instructions
    pass_barrier: bool  # whether it waits at a barrier (a program's warps then move together)
    pass_bytes: int  # bytes a thread's global loads and stores move a pass
    moved: int  # bytes, source estimate
    ideal: int
    ceilings: dict[str, tuple[float, str]] = dataclasses.field(default_factory=dict)

    def resident(self, device: Device) -> int:
        """Programs running at once on the device (at most the occupancy allows)."""
        return min(self.programs, device.sms * self.blocks_per_sm)

    def warps_per_sm(self, device: Device) -> float:
        return self.resident(device) * self.warps / device.sms

    def in_flight_sm(self, device: Device) -> float:
        """Bytes requested at once an SM, averaged over the SMs, while every resident program waits."""
        return self.thread_in_flight * 32 * self.warps_per_sm(device)

    def model_seconds(self, device: Device) -> float:
        """The kernel's time in this model: its bytes at the lowest rate ceiling, the last partial wave
        slowed by its own bytes in flight, plus the fixed cost."""
        rate = min([v for k, (v, _) in self.ceilings.items() if k in RATE_CEILINGS] or [1.0])
        tail = self.ceilings.get("tail", (1.0, ""))[0]
        return self.moved / (device.copy_bytes_per_s * rate) / tail + device.fixed_s

    def model_share(self, device: Device) -> float:
        """The ideal bytes' time at copy speed over the model's time: the kernel's ceiling in % of copy."""
        return self.ideal / device.copy_bytes_per_s / self.model_seconds(device)

    def reasons(self) -> list[str]:
        """The lowest ceilings under 90% (two at most), each with its bound; or the nearest one."""
        ranked = sorted((v, text) for v, text in self.ceilings.values())
        low = [f"{text} (<= {v:.0%})" for v, text in ranked if v < 0.9][:2]
        if not low:
            v, text = ranked[0]
            return [f"no ceiling under 90% in this model (nearest: {text}, <= {v:.0%}): ncu must say"]
        return low

    @property
    def reason(self) -> str:
        return "; ".join(self.reasons())


def compile_for_sm90(launch: Launch, capability: int = 90):
    """The launch's kernel compiled as the backend does for an sm_`capability` device (no GPU needed)."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized

    return compile_specialized(launch.fn, launch.specs, target=f"cuda:{capability}", num_warps=launch.num_warps,
                               load=False)


def ptxas_report(ptx: str, arch: str) -> tuple[bytes, str]:
    from inductor_tile.kernel_compiler.runtime.cuda_tools import assemble_ptx

    log: list[str] = []
    cubin = assemble_ptx(ptx, arch, "kernel", options=["-v"], log=log)
    return cubin, "\n".join(log)


def machine_code(cubin: bytes, ptx: str, cuobjdump: str | None) -> Program:
    """The kernel's SASS (cuobjdump), or its PTX where there is no cuobjdump."""
    if cuobjdump:
        with tempfile.TemporaryDirectory(prefix="tile-limits-") as tmp:
            path = Path(tmp) / "kernel.cubin"
            path.write_bytes(cubin)
            listing = subprocess.run([cuobjdump, "-sass", str(path)], capture_output=True, text=True,
                                     check=True).stdout
        program = parse_sass(listing)
        if program.instructions:
            return program
    return parse_ptx(ptx)


_ACCESS = re.compile(r"tl\.(load|store)\((\w+)\s*\+?\s*(.*)")


def source_bytes(launch: Launch) -> tuple[int, int]:
    """(bytes the kernel's loads and stores move, the ideal), estimated from its source: see the module doc."""
    source = launch.fn.src
    iteration = 1
    for name in ("xnumel", "ynumel", "rnumel"):
        value = launch.arguments.get(name)
        literal = re.search(rf"^\s+{name} = (\d+)$", source, re.MULTILINE)
        if literal:
            value = int(literal.group(1))
        if isinstance(value, int):
            iteration *= value
    counted: set[tuple] = set()
    moved = 0
    ideal: dict[tuple[str, str], int] = {}
    loop = 0
    for line in source.splitlines():
        if line.lstrip().startswith("for "):
            loop += 1
        match = _ACCESS.search(line)
        if not match:
            continue
        kind, pointer, rest = match.groups()
        tensor = launch.arguments.get(pointer)
        if not isinstance(tensor, tuple):
            continue
        numel, size = tensor
        index = rest.split(", mask=")[0].split(", other=")[0]
        if kind == "store":
            index = rest.split(",")[0]
        gather = kind == "load" and re.search(r"\btmp\d+\b", index) is not None
        nbytes = min(numel, iteration) * size if gather else numel * size
        key = (kind, pointer, index.strip() if gather else "", loop)  # a tensor counts once a pass
        if key in counted:
            continue
        counted.add(key)
        moved += nbytes
        ideal[(kind, pointer)] = max(ideal.get((kind, pointer), 0), nbytes)
    return moved, sum(ideal.values())


def analyse(launch: Launch, cuobjdump: str | None, device: Device = DEVICE) -> Row:
    from inductor_tile.kernel_compiler.diagnostics.ptxas_findings import limits_for, parse_ptxas_log
    from inductor_tile.kernel_compiler.to_llvm.nvptx import ptx_arch

    kernel = compile_for_sm90(launch)
    ptx = kernel.asm["ptx"]
    cubin, log = ptxas_report(ptx, ptx_arch(ptx, 90))
    report = parse_ptxas_log(log)
    shared = kernel.shared_bytes + report.static_shared
    sm = limits_for(90)
    per_warp = -(-max(report.registers, 1) * 32 // sm.register_unit) * sm.register_unit
    limits = {"warp slots": sm.max_warps // launch.num_warps, "blocks": sm.max_blocks,
              "registers": sm.registers // (per_warp * launch.num_warps)}  # ties name the hardware's cap first
    if shared:
        limits["shared"] = sm.shared_bytes // (shared + 1024)  # sm_90 reserves 1 KB a block
    limit = min(limits, key=lambda k: limits[k])
    blocks = limits[limit]
    programs = math.prod(launch.grid)

    program = machine_code(cubin, ptx, cuobjdump)
    loop = program.loop_indices()
    region = loop if program.accesses(loop) else set(range(len(program.instructions)))
    accesses = program.accesses(region)
    access_bytes = sum(a.access_bytes for a in accesses) or 1
    per_byte = len(region) / access_bytes
    special = sum(1 for i in region if program.instructions[i].is_special_function) / access_bytes
    widths: dict[int, int] = {}
    for ins in program.instructions:
        if ins.is_load:
            widths[ins.access_bytes] = widths.get(ins.access_bytes, 0) + 1
    if loop and program.accesses(loop):
        start, stop = max(program.loops(), key=lambda s: sum(a.access_bytes for a in program.accesses(range(s[0], s[1] + 1))))
        start, stop = start, stop + 1
    else:
        start = next((i for i, ins in enumerate(program.instructions) if ins.is_load), 0)
        stop = len(program.instructions)
    in_flight = program.bytes_in_flight(start, stop)
    step = set(range(start, stop)) if region is loop else region
    rounds = max(1, program.load_rounds(step))
    step_bytes = sum(a.access_bytes for a in program.accesses(step))
    chain = program.critical_path(step)
    moved, ideal = source_bytes(launch)
    row = Row(launch.case, launch.shape, launch.name, programs, launch.num_warps, report.registers,
              report.spill_loads + report.spill_stores, shared, blocks, limit, program.source, len(program.instructions), per_byte, special, "loop" if loop and region is loop
              else "kernel", widths, in_flight, rounds, len(step), chain,
              sum(1 for i in step if program.instructions[i].is_special_function),
              any(program.instructions[i].opcode.startswith(("BAR", "bar.sync", "barrier.sync")) for i in step),
              step_bytes, moved, ideal)
    row.ceilings = ceilings(row, device)
    return row


RATE_CEILINGS = ("issue", "special", "in flight")  # bounds on the rate; "tail", "bytes", "fixed" add time


def ceilings(row: Row, device: Device = DEVICE) -> dict[str, tuple[float, str]]:
    """Each model's bound on the kernel's bandwidth, as a share of the copy bandwidth, with its one-line why.
    Rates ("issue", "special", "in flight") bound the whole kernel; "tail" (the last partial wave, whose
    fewer programs have fewer bytes in flight), "bytes" (re-reads) and "fixed" (a short kernel) add time."""
    out = {}
    issue = device.instructions_per_byte_at_copy / row.per_byte
    out["issue"] = (issue, f"issue-bound: {row.per_byte:.1f} instructions a byte ({row.code} {row.region}; "
                           f"{device.instructions_per_byte_at_copy:.1f} at copy speed)")
    special_limit = device.special_lanes_per_clock * device.clock_hz * device.sms / device.copy_bytes_per_s
    if row.special_per_byte:
        out["special"] = (special_limit / row.special_per_byte,
                          f"MUFU-bound: {row.special_per_byte:.2f} a byte ({special_limit:.2f} at copy speed)")
    # a pass of one unit: its load latencies one after another and its bytes streaming into the SM, then
    # its own work: its instructions on the 4 schedulers (one a clock each), their longest dependent chain, or
    # their MUFU lanes, whichever is longest.  The unit is a warp, or a whole program where the pass has a
    # barrier (its warps then move together).  Units an SM overlap one's wait with another's work, until the
    # schedulers (or the MUFU lanes) are busy all the time
    unit_warps = row.warps if row.pass_barrier else 1
    stream = unit_warps * 32 * row.pass_bytes / device.sm_load_bytes_per_clock
    issue = row.pass_instructions * unit_warps / device.issue_per_clock
    special = row.pass_special * unit_warps * 32 / device.special_lanes_per_clock
    work = max(row.pass_chain, row.pass_instructions * math.ceil(unit_warps / device.issue_per_clock), special)

    latency = device.l2_latency_s if row.moved <= device.l2_resident_bytes else device.latency_s

    def rate(programs: int) -> float:  # share of copy `programs` resident programs reach
        units_per_sm = programs * row.warps / unit_warps / device.sms
        pass_s = max(row.rounds * latency + (stream + work) / device.clock_hz,
                     max(1.0, units_per_sm) * max(issue, special) / device.clock_hz)
        return programs * row.warps * 32 * row.pass_bytes / pass_s / device.copy_bytes_per_s

    widest = max(row.widths) if row.widths else 0
    held = (f"{row.programs} programs on {device.sms} SMs" if row.programs < device.sms * row.blocks_per_sm else
            f"{row.blocks_per_sm * row.warps} warps an SM, {row.occupancy_limit}-limited")
    step = "loop step" if row.region == "loop" else "program"
    out["in flight"] = (rate(row.resident(device)),
                        f"latency-bound: {row.in_flight_sm(device) / 1024:.1f} KB in flight an SM "
                        f"{'<' if row.in_flight_sm(device) < device.in_flight_needed else 'vs'} "
                        f"{device.in_flight_needed / 1024:.0f} KB needed ({row.thread_in_flight} B a thread, widest load "
                        f"{widest} B; {held}; {row.registers} registers; {row.rounds} wait(s) + {work:.0f} clocks a "
                        f"{step}{' in L2' if latency < device.latency_s else ''})")
    capacity = device.sms * row.blocks_per_sm
    full, rest = divmod(row.programs, capacity)
    if full and rest:
        steady = min(1.0, rate(capacity), issue)
        last = min(steady, rate(rest))
        share = 1 / (full * capacity / row.programs + rest / row.programs * steady / last)
        out["tail"] = (share, f"tail: {row.programs / capacity:.2f} waves of {capacity} programs, the last with "
                              f"{rest / device.sms:.1f} an SM")
    data_s = row.moved / device.copy_bytes_per_s
    if data_s < 50 * device.fixed_s:
        out["fixed"] = (data_s / (data_s + device.fixed_s),
                        f"short: {data_s * 1e6:.1f} us of bytes at copy speed + ~{device.fixed_s * 1e6:.0f} us a kernel")
    if row.moved > row.ideal:
        out["bytes"] = (row.ideal / row.moved, f"re-reads: moves {row.moved / row.ideal:.2f}x the ideal bytes "
                                               f"(L2 may serve the second pass)")
    return {k: (min(1.0, v), text) for k, (v, text) in out.items()}


# ---- the table ------------------------------------------------------------------------------------------

def _widths(widths: dict[int, int]) -> str:
    return "/".join(str(widths.get(b, 0)) for b in (16, 8, 4, 2))


def _warps_cell(row: Row) -> str:
    """Resident warps an SM and what limits them: the grid where it has fewer programs than the SMs hold."""
    warps = row.warps_per_sm(DEVICE)
    if row.programs < DEVICE.sms * row.blocks_per_sm:
        return f"{warps:.2g} (grid; {row.occupancy_limit} allow {row.blocks_per_sm * row.warps})"
    return f"{warps:.0f} ({row.occupancy_limit})"


def table(rows: list[Row]) -> str:
    head = ("| case | kernel | programs | warps | regs | smem B | warps/SM (limit) | instr/B | MUFU/B | "
            "loads 16/8/4/2 B | in flight KB/SM | MB moved / ideal | model | reason |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        ceiling = r.model_share(DEVICE)
        short = re.sub(r"^tile_(red|per|poi)_+", "", r.kernel)[:34]
        lines.append(f"| {r.case} {r.shape} | {short} | {r.programs} | {r.warps} | {r.registers}"
                     f"{f' +{r.spill_bytes} spill' if r.spill_bytes else ''} | {r.shared_bytes} | "
                     f"{_warps_cell(r)} | {r.per_byte:.1f} {r.region} | {r.special_per_byte:.2f} | "
                     f"{_widths(r.widths)} | {r.in_flight_sm(DEVICE) / 1024:.1f} | {r.moved / 1e6:.1f} / {r.ideal / 1e6:.1f} | "
                     f"{ceiling:.0%} | {r.reason} |")
    return "\n".join(lines)


#: session 21's H200 sweep, kernel time in % of copy (tile, Inductor), for the summary
MEASURED_SESSION_21 = {
    "cross_entropy 8192x32000": (66, 36), "cross_entropy 4096x50257": (52, 31), "cross_entropy 64x32000": (13, 12),
    "cross_entropy_bwd 8192x32000": (54, 38), "cross_entropy_bwd 4096x50257": (43, 32), "softmax 64x8192": (24, 13),
    "softmax 1024x32768": (70, 47), "layernorm_bwd 16384x768": (44, 44), "layernorm_bwd 8192x4096": (68, 48),
    "rmsnorm_bwd 16384x2048": (71, None), "rmsnorm_bwd 8192x4096": (73, None),
}


def summary(rows: list[Row], case_bytes: dict[str, int], notes: dict[str, list[str]],
            device: Device = DEVICE) -> str:
    """Per case: its kernels' model time against the micro benchmark's bytes at copy speed."""
    lines = ["| case | kernels | MB moved / ideal | model, % of copy | measured tile / Inductor (session 21) | why |",
             "|---|---|---|---|---|---|"]
    for case, nbytes in case_bytes.items():
        mine = [r for r in rows if f"{r.case} {r.shape}" == case]
        tile, inductor = MEASURED_SESSION_21.get(case, (None, None))
        measured = f"{tile}% / {inductor}%" if inductor else (f"~{tile}%" if tile else "")
        moved = sum(r.moved for r in mine)
        if notes.get(case):
            model, why = "", "not ours: " + notes[case][0]
        else:
            model = f"{nbytes / device.copy_bytes_per_s / sum(r.model_seconds(device) for r in mine):.0%}"
            slowest = max(mine, key=lambda r: r.model_seconds(device))
            first = slowest.reasons()[0]
            data_s = nbytes / device.copy_bytes_per_s
            why = (f"{len(mine)} kernel(s) move {moved / nbytes:.2f}x the bytes; "
                   if moved > 1.1 * nbytes and not first.startswith("re-reads") else "")
            if data_s < 4 * device.fixed_s * len(mine):
                why += (f"launch-bound: {len(mine)} kernel(s) for {data_s * 1e6:.1f} us of bytes at copy speed; ")
            why += f"slowest, {re.sub(r'^tile_(red|per|poi)_+', '', slowest.kernel)[:24]}: {first}"
        lines.append(f"| {case} | {len(mine)} | {moved / 1e6:.1f} / {nbytes / 1e6:.1f} | {model} | {measured} | {why} |")
    return "\n".join(lines)


def find_cuobjdump() -> str | None:
    from inductor_tile.tools.ptx_stats import find_cuobjdump as found

    return found()


def parse_cases(text: str) -> list[tuple[str, int, int]]:
    cases = []
    for item in text.split(","):
        name, _, shape = item.strip().partition(":")
        rows, cols = map(int, shape.lower().split("x"))
        cases.append((name, rows, cols))
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model_benchmarks.kernel_limits",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES), help="name:ROWSxCOLS,... (default: %(default)s)")
    parser.add_argument("--cuobjdump", help="cuobjdump to read SASS with (default: next to ptxas, PATH, Triton's)")
    args = parser.parse_args(argv)
    cuobjdump = args.cuobjdump or find_cuobjdump()
    if cuobjdump is None:
        print("no cuobjdump found: instruction counts are PTX's (ptxas reorders and folds them)", file=sys.stderr)
    rows = []
    case_bytes: dict[str, int] = {}
    notes: dict[str, list[str]] = {}
    for name, nrows, ncols in parse_cases(args.cases):
        key = f"{name} {nrows}x{ncols}"
        notes[key] = []
        launches, case_bytes[key] = capture(name, nrows, ncols, notes[key])
        for launch in launches:
            rows.append(analyse(launch, cuobjdump))
            print(f"{name} {nrows}x{ncols} {launch.name}: {rows[-1].reason}", file=sys.stderr, flush=True)
    import datetime

    from . import report

    code = "SASS (cuobjdump)" if cuobjdump else "PTX (no cuobjdump found)"
    print(f"{datetime.date.today().isoformat()}, commit {report.commit()}: sm_90 PTX/SASS compiled on the CPU host, "
          f"not measured; instructions from the {code}; model ceilings in % of a {DEVICE.copy_bytes_per_s / 1e9:.0f}"
          f" GB/s copy ({DEVICE.name}: {DEVICE.sms} SMs, {DEVICE.clock_hz / 1e9:.2f} GHz, {DEVICE.latency_s * 1e9:.0f} ns "
          f"latency -> {DEVICE.in_flight_needed / 1024:.0f} KB in flight an SM)\n")
    print(table(rows))
    print()
    print(summary(rows, case_bytes, notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
