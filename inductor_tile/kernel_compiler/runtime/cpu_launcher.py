"""Running CPU-target kernels: JIT with llvmlite's MCJIT, the grid split across cores.

The compiled entry `<kernel>_grid(args, gx, gy, gz, start, end)` runs programs
[start, end) of the grid; the launcher packs the arguments once per launch and calls it
from a thread pool (ctypes releases the GIL), one contiguous chunk of programs per thread,
as many threads as torch uses (`torch.set_num_threads`).

Handing work to the pool costs tens of microseconds (more on a loaded machine), which is
more than a small kernel runs: a model's small layers ran 2x slower split across two
cores than on one.  So the first launch of each grid size runs on the calling thread and
is timed; later launches of that size use the pool only if that one took at least
`PARALLEL_MIN_SECONDS`.
"""

from __future__ import annotations

import ctypes
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
from . import device_assert

device_assert.register_symbol()  # kernels compiled in debug mode call it

_ENTRY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int64,
                          ctypes.c_int64)
#: struct format of each scalar kind (native sizes, as the kernel reads them); pointers are "Q"
_FORMAT_OF = {"i1": "?", "i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B", "u16": "H", "u32": "I",
              "u64": "Q", "fp32": "f", "fp64": "d"}
_SLOT = 8  # bytes per argument slot
_POOL: ThreadPoolExecutor | None = None
#: programs per launch below which the grid runs on the calling thread
SERIAL_GRID = 4
#: a grid whose first (serial) launch took less than this keeps running on the calling thread
PARALLEL_MIN_SECONDS = 250e-6


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="tile-cpu")
    return _POOL


def _threads() -> int:
    """How many threads a launch may use: torch's intra-op setting, as torch's own CPU kernels."""
    return max(1, torch.get_num_threads())


class CPUKernel:
    """A kernel JIT-compiled for this machine."""

    def __init__(self, optimized_ir: str | None, entry: str, specs: list[ArgSpec], object_file: bytes | None = None):
        machine = llvm_tools.host_target_machine()
        if object_file is None:
            self.engine = llvm.create_mcjit_compiler(llvm_tools.parse(optimized_ir or ""), machine)
        else:
            # an object file from `machine.emit_object` (maybe from the disk cache): the engine only
            # links it; external symbols (libm's expf, ...) resolve against this process as for IR
            self.engine = llvm.create_mcjit_compiler(llvm_tools.parse(""), machine)
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(object_file))
        self.engine.finalize_object()
        address = self.engine.get_function_address(entry)
        if not address:
            raise RuntimeError(f"the compiled code has no entry `{entry}`")
        self.entry = _ENTRY(address)
        runtime = [(i, s) for i, s in enumerate(specs) if s.kind != "constexpr"]
        self.positions = [i for i, _ in runtime]
        self.pointers = [s.kind == "pointer" for _, s in runtime]
        formats = ["Q" if s.kind == "pointer" else _scalar_format(s) for _, s in runtime]
        self._struct = struct.Struct("<" + "".join(f + "x" * (_SLOT - struct.calcsize("<" + f)) for f in formats))
        self._tls = threading.local()
        self.parallel: dict[int, bool] = {}  # programs per launch -> whether the pool pays off

    @classmethod
    def from_object(cls, object_file: bytes, entry: str, specs: list[ArgSpec]) -> "CPUKernel":
        """Load a relocatable object file (as `TargetMachine.emit_object` makes) for this process."""
        return cls(None, entry, specs, object_file=object_file)

    def pack(self, values: tuple) -> int:
        """The address of this thread's `void*[n]` array pointing at each runtime argument's value
        (from the launch values in parameter order), written into 8-byte slots with one
        `struct.pack_into`; valid until this thread's next launch of this kernel."""
        try:
            buffer, array = self._tls.slot
        except AttributeError:
            buffer, array = self._new_slot()
        args = [values[i].data_ptr() if pointer else values[i] for i, pointer in zip(self.positions, self.pointers)]
        self._struct.pack_into(buffer, 0, *args)
        return array

    def _new_slot(self) -> tuple[Any, int]:
        n = max(1, len(self.positions))
        buffer = (ctypes.c_char * (n * _SLOT))()
        base = ctypes.addressof(buffer)
        pointers = (ctypes.c_void_p * n)(*[base + _SLOT * i for i in range(n)])
        self._tls.keep = pointers  # the array must outlive the slot's address
        self._tls.slot = (buffer, ctypes.addressof(pointers))
        return self._tls.slot

    def launch(self, values: tuple, grid: tuple[int, int, int]) -> None:
        array = self.pack(values)
        total = grid[0] * grid[1] * grid[2]
        if total == 0:
            return
        workers = min(total, _threads())
        parallel = self.parallel.get(total)
        if total <= SERIAL_GRID or workers == 1 or not parallel:
            start = time.perf_counter()
            self.entry(array, *grid, 0, total)
            if parallel is None and total > SERIAL_GRID and workers > 1:
                self.parallel[total] = time.perf_counter() - start >= PARALLEL_MIN_SECONDS
            return
        chunk = -(-total // workers)
        futures = [_pool().submit(self.entry, array, *grid, start, min(start + chunk, total))
                   for start in range(0, total, chunk)]
        for future in futures:
            future.result()


def _scalar_format(spec: ArgSpec) -> str:
    kind = spec.type.to_ir_string()
    if kind not in _FORMAT_OF:
        raise TypeError(f"argument `{spec.name}`: CPU kernels cannot take a {kind} scalar")
    return _FORMAT_OF[kind]
