"""Running CPU-target kernels: JIT with llvmlite's MCJIT, the grid split across cores.

The compiled entry `<kernel>_grid(frame)` runs programs [start, end) of the grid; the
frame holds every runtime argument in an 8-byte slot, then the grid and the range
(to_llvm/targets/cpu.py, `finish_kernel`). A launch packs the frame with one
`struct.pack_into` into a buffer of the calling thread and makes one ctypes call with
one pointer argument (ctypes converts each argument in Python: six of them cost more
than the rest of a launch).

Two ways in: `launch(values, grid)` takes the launch values in parameter order (tensors
for pointers), for `CompiledKernel.launch`; `kernel.launch(picked, grid)` with `pick`
takes the runtime values alone with pointers already as addresses, for the fast path of
generated wrappers (`LaunchSite`, which treats this runner like the GPU ones).

Handing work to the pool costs tens of microseconds (more on a loaded machine), which is
more than a small kernel runs: a model's small layers ran 2x slower split across two
cores than on one.  So the first launch of each grid size runs on the calling thread and
is timed; later launches of that size use the pool only if that one took at least
`PARALLEL_MIN_SECONDS`, as many threads as torch uses (`torch.set_num_threads`), one
contiguous chunk of programs per thread, each with its own copy of the frame.
"""

from __future__ import annotations

import ctypes
import logging
import operator
import os
import struct
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import llvmlite.binding as llvm
import torch

from ..frontend.specialization import ArgSpec
from ..to_llvm import llvm_tools
from ..cpu_frame import FRAME_SLOT
from . import cpu_trampoline, device_assert
from .slot_launcher import SCALAR_FORMAT, SLOT, slots_format

device_assert.register_symbol()  # kernels compiled in debug mode call it

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
assert FRAME_SLOT == SLOT  # the frame's arguments are packed as the GPU launchers pack their parameters
#: the scalar kinds of the GPU launchers that a CPU kernel's frame cannot carry (no half-float scalars)
_NOT_ON_CPU = frozenset({"fp16"})
#: after the arguments: gx, gy, gz (i32), 4 bytes of padding, start and end (i64)
_GRID_FORMAT = "iiixxxxqq"
_RANGE_OFFSET = 16  # bytes from the grid's fields to `start`
_POOL: ThreadPoolExecutor | None = None
#: programs per launch below which the grid runs on the calling thread
SERIAL_GRID = 4
#: a grid whose first (serial) launch took less than this keeps running on the calling thread
PARALLEL_MIN_SECONDS = 250e-6
#: serial launches through a compiled trampoline (cpu_trampoline.py) instead of struct + ctypes
DIRECT_CALLS = os.environ.get("TILE_CPU_DIRECT_CALLS", "1") != "0"


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="tile-cpu")
    return _POOL


def _threads() -> int:
    """How many threads a launch may use: torch's intra-op setting, as torch's own CPU kernels."""
    return max(1, torch.get_num_threads())



log = logging.getLogger(__name__)
_trampoline_failed = False


def _direct_launcher(formats: list[str], address: int):
    """The compiled trampoline for these argument formats, or None (ctypes launches) where it cannot be
    built in this process (an interpreter whose C API the IR does not match): slower, never an error."""
    global _trampoline_failed
    if _trampoline_failed:
        return None
    try:
        return cpu_trampoline.direct_launcher(formats, address)
    except Exception as e:  # noqa: BLE001 - any failure: the ctypes path serves every launch
        _trampoline_failed = True
        log.warning("inductor_tile: CPU launches go through ctypes (the launch trampoline failed: %s: %s)",
                    type(e).__name__, e)
        return None

class CPUKernel:
    """A kernel JIT-compiled for this machine."""

    def __init__(self, optimized_ir: str | None, entry: str, specs: list[ArgSpec], object_file: bytes | None = None):
        machine = llvm_tools.host_target_machine()
        if object_file is None:
            self.engine = llvm_tools.jit_engine(llvm_tools.parse(optimized_ir or ""), machine)
        else:
            # an object file from `machine.emit_object` (maybe from the disk cache): the engine only
            # links it; external symbols (libm's expf, ...) resolve against this process as for IR
            self.engine = llvm_tools.jit_engine(llvm_tools.parse(""), machine)
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(object_file))
        self.engine.finalize_object()
        address = self.engine.get_function_address(entry)
        if not address:
            raise RuntimeError(f"the compiled code has no entry `{entry}`")
        self.entry = _ENTRY(address)
        self.name = entry
        runtime = [(i, s) for i, s in enumerate(specs) if s.kind != "constexpr"]
        self.positions = [i for i, _ in runtime]
        self.pointers = [s.kind == "pointer" for _, s in runtime]
        formats = ["Q" if s.kind == "pointer" else _scalar_format(s) for _, s in runtime]
        self._struct = struct.Struct(slots_format(formats) + _GRID_FORMAT)
        # launches on the calling thread: `direct(*values, gx, gy, gz)`, a built-in function that packs
        # the frame and calls the entry in machine code (cpu_trampoline.py); None: ctypes as the pool does
        self.direct = _direct_launcher(formats, address) if DIRECT_CALLS else None
        self._range_at = FRAME_SLOT * len(formats) + _RANGE_OFFSET
        self._tls = threading.local()
        self.parallel: dict[int, bool] = {}  # programs per launch -> whether the pool pays off
        # the GPU runners' protocol, which LaunchSite's fast path uses: `kernel.launch(pick(values), grid)`
        self.pick = _picker(self.positions)

    @classmethod
    def from_object(cls, object_file: bytes, entry: str, specs: list[ArgSpec]) -> "CPUKernel":
        """Load a relocatable object file (as `TargetMachine.emit_object` makes) for this process."""
        return cls(None, entry, specs, object_file=object_file)

    @property
    def kernel(self) -> "_AddressLaunch":
        # made on demand: stored, it would close a reference cycle through the bound method, and
        # collecting such a cycle can free the execution engine in the wrong order (a segfault)
        return _AddressLaunch(self.launch_addresses)

    def launch(self, values: tuple, grid: tuple[int, int, int]) -> None:
        """Launch with the values of every parameter in order (tensors for pointers)."""
        picked = [values[i].data_ptr() if pointer else values[i] for i, pointer in zip(self.positions, self.pointers)]
        self.launch_addresses(picked, grid)

    def launch_addresses(self, picked: Any, grid: tuple[int, int, int]) -> None:
        """Launch with the runtime values alone, pointers as addresses."""
        gx, gy, gz = grid
        total = gx * gy * gz
        if self.direct is not None and (total <= SERIAL_GRID or self.parallel.get(total) is False
                                        or _threads() == 1):
            self.direct(*picked, gx, gy, gz)
            if device_assert.failures:  # a tl.device_assert failed (debug mode)
                device_assert.raise_failures()
            return
        try:
            buffer, address = self._tls.frame
        except AttributeError:
            buffer, address = self._new_frame()
        self._struct.pack_into(buffer, 0, *picked, gx, gy, gz, 0, total)
        parallel = self.parallel.get(total, None) if total > SERIAL_GRID else False
        if parallel is False:
            self.entry(address)
        elif total:
            self._launch_unsure_or_parallel(buffer, address, total, parallel)
        if device_assert.failures:  # a tl.device_assert failed (debug mode)
            device_assert.raise_failures()

    def _launch_unsure_or_parallel(self, buffer: Any, address: int, total: int, parallel: bool | None) -> None:
        workers = min(total, _threads())
        if workers == 1 or not parallel:
            start = time.perf_counter()
            self.entry(address)
            if parallel is None and workers > 1:
                self.parallel[total] = time.perf_counter() - start >= PARALLEL_MIN_SECONDS
            return
        chunk = -(-total // workers)
        template = bytes(buffer)
        futures = [_pool().submit(self._run_range, template, first, min(first + chunk, total))
                   for first in range(0, total, chunk)]
        for future in futures:
            future.result()

    def _run_range(self, template: bytes, start: int, end: int) -> None:
        """Programs [start, end) with a copy of the frame `template` (on a pool thread)."""
        frame = ctypes.create_string_buffer(template, len(template))
        struct.pack_into("<qq", frame, self._range_at, start, end)
        self.entry(ctypes.addressof(frame))

    def _new_frame(self) -> tuple[Any, int]:
        buffer = ctypes.create_string_buffer(self._struct.size)
        self._tls.frame = (buffer, ctypes.addressof(buffer))
        return self._tls.frame


class _AddressLaunch:
    """`kernel.launch(picked, grid)` of the GPU runners' protocol, for CPUKernel."""

    def __init__(self, launch: Any):
        self.launch = launch


def _picker(positions: list[int]) -> Any:
    if len(positions) == 1:
        return lambda values: (values[positions[0]],)
    return operator.itemgetter(*positions) if positions else (lambda values: ())


def _scalar_format(spec: ArgSpec) -> str:
    kind = spec.type.to_ir_string()
    if kind not in SCALAR_FORMAT or kind in _NOT_ON_CPU:
        raise TypeError(f"argument `{spec.name}`: CPU kernels cannot take a {kind} scalar")
    return SCALAR_FORMAT[kind]
