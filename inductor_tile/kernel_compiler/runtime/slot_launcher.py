"""The host side both GPU launchers share (cuda_launcher.py, hip_launcher.py): arguments packed
into 8-byte parameter slots, and the `launch` function generated once per signature.

A kernel's runtime arguments are written with ONE precompiled `struct.Struct.pack_into` into a
per-thread byte buffer of one 8-byte slot per parameter; a per-thread `void*[n]` array (built
once) points at the slots, and its address goes to the driver, which copies the values during
the launch call, so the buffer can be reused at once. Buffer and array are per kernel *and per
thread* (`threading.local`) because the drivers' launch calls release the GIL while reading them.

What differs between the drivers is data: a `DriverCall` (the lines of the generated `launch`
that hand the slots to the driver) and three class attributes of the `SlotLauncher` subclass.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import torch

from .generated_code import run_generated

#: struct format (little-endian, standard sizes) of each scalar kind; pointers are "Q"
SCALAR_FORMAT = {"i1": "?", "i8": "b", "i16": "h", "i32": "i", "i64": "q", "u8": "B", "u16": "H",
                 "u32": "I", "u64": "Q", "fp16": "e", "fp32": "f", "fp64": "d"}
SLOT = 8  # bytes per parameter slot; every supported kind fits, and the unused bytes stay 0


def slots_format(formats: list[str]) -> str:
    """The struct format of arguments of `formats` packed one to an 8-byte slot, little-endian, each
    padded to its slot (the GPU launchers' parameter buffer; the start of a CPU kernel's frame)."""
    return "<" + "".join(f + "x" * (SLOT - struct.calcsize("<" + f)) for f in formats)


def as_pointer(value: Any) -> int:
    """Device address of a pointer argument that is not a plain torch.Tensor."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    data_ptr = getattr(value, "data_ptr", None)
    if data_ptr is None:
        raise TypeError(f"expected a tensor, None or an int address, got {type(value).__name__}")
    return data_ptr()


def format_of(kind: str, kernel_name: str) -> str:
    """The struct format of one argument kind ("*fp32", "i32", ...)."""
    if kind.startswith("*"):
        return "Q"
    try:
        return SCALAR_FORMAT[kind]
    except KeyError:
        raise ValueError(f"kernel '{kernel_name}': unsupported argument kind {kind!r}; expected a pointer "
                         f"('*fp32', ...) or one of {sorted(SCALAR_FORMAT)}") from None


@dataclass(frozen=True)
class DriverCall:
    """The lines of the generated `launch` that hand the packed slots to one driver.

    They run once `fn` (the loaded function), `device`, `stream` (a raw stream), `slot` (the
    buffer, then the `void*[n]` address) and `gx, gy, gz` are known; the call sets `err`."""

    prepare: str  # statements before the call, each line indented 4 spaces ("" for none)
    call: str  # the statement that launches and sets `err`; {names} stand for the kernel's constants
    malformed: str  # the exceptions of that call that mean an out-of-range grid
    failed_args: str  # the arguments of `_launch_failed` after (err, (gx, gy, gz), device)


_LAUNCH_SOURCE = """
def launch(args, grid, stream=None):
    try:
        gx, gy, gz = grid
        {unpack}
    except (TypeError, ValueError):
        _bad_call(args, grid)
    if not (gx and gy and gz):
        return
    try:
        slot = _tls.slot
    except AttributeError:
        slot = _new_slot()
    try:
        _pack_into(slot[0], 0{values})
    except (struct.error, TypeError, OverflowError) as e:
        _bad_args(args, e)
    device = _current_device()
    fn = _functions_get(device)
    if fn is None:
        fn = _load(device)
    if stream is None:
        stream = _current_raw_stream(device)
{prepare}    try:
        {call}
    except {malformed}:
        _bad_call(args, grid)
    if err:
        _launch_failed(err, (gx, gy, gz), device, {failed_args})
"""


class SlotLauncher:
    """Argument packing and the generated `launch` of a GPU kernel object (CUDAKernel, HIPKernel).

    A subclass sets `kernel_name` and `arg_kinds`, calls `_init_slots()`, and builds its `launch`
    with `_generate_launch`; it provides `_functions` (device -> loaded function), `_load(device)`
    and `_launch_failed(err, grid, device, *failed_args)`."""

    source_label: ClassVar[str]  # the generated source's file name starts "<{source_label} "
    grid_limit: ClassVar[str]  # the grid bound named in the malformed-launch error
    no_parameters: ClassVar[int | None]  # the `void*[n]` address passed for a kernel without parameters

    kernel_name: str
    arg_kinds: list[str]
    _functions: dict[int, Any]
    _load: Callable[[int], Any]
    _launch_failed: Callable[..., None]

    def launch(self, args: tuple, grid: tuple[int, int, int], stream: int | None = None) -> None:
        """Launch on `grid` (3 ints; a 0 in any is a no-op) with `args`, one per `arg_kinds`.

        `stream` is a raw stream handle as an int (a CUstream, e.g. `torch.cuda.Stream.cuda_stream`,
        or a hipStream_t); None means torch's current stream on the current device. Raises the
        driver's error (CUDADriverError, HIPError), naming the kernel, the grid and the driver's
        message, when the driver refuses the launch.

        (The real implementation is generated per signature by `_generate_launch` and set on
        each instance by its constructor.)
        """
        raise AssertionError("replaced in __init__")

    def _init_slots(self) -> None:
        """The formats of `arg_kinds`, their packing struct and the per-thread slot storage."""
        self._formats = [format_of(kind, self.kernel_name) for kind in self.arg_kinds]
        self._struct = struct.Struct(slots_format(self._formats))
        self._tls = threading.local()

    def _new_slot(self) -> tuple[bytearray, int | None, Any, Any]:
        """This thread's parameter buffer and the address of its `void*[n]` array."""
        n = len(self.arg_kinds)
        buffer = bytearray(max(n, 1) * SLOT)
        view = (ctypes.c_char * len(buffer)).from_buffer(buffer)
        base = ctypes.addressof(view)
        pointers = (ctypes.c_void_p * max(n, 1))(*[base + SLOT * i for i in range(n)])
        address = ctypes.addressof(pointers) if n else self.no_parameters
        slot = (buffer, address, pointers, view)  # the last two: kept alive
        self._tls.slot = slot
        return slot

    def _generate_launch(self, driver: DriverCall, driver_scope: dict[str, Any],
                         **constants: int) -> Callable[..., None]:
        """Generate `launch(args, grid, stream=None)` specialized to `arg_kinds`; `driver_scope`
        holds the names the driver's lines use, `_current_device` and `_current_raw_stream`, and
        `constants` the values `driver.call` names (the block size, ...): names of the scope, not literals in
        the source, so that kernels with the same argument kinds share one source (compiled once a process)."""
        names = [f"a{i}" for i in range(len(self.arg_kinds))]
        values = [f"({a}.data_ptr() if {a}.__class__ is _Tensor else _as_pointer({a}))" if kind.startswith("*") else a
                  for a, kind in zip(names, self.arg_kinds)]
        source = _LAUNCH_SOURCE.format(
            unpack=f"{', '.join(names)}, = args" if names else "() = args",
            values="".join(", " + v for v in values),
            prepare=driver.prepare, call=driver.call.format(**{name: f"_k_{name}" for name in constants}), malformed=driver.malformed,
            failed_args=driver.failed_args)
        scope: dict[str, Any] = {
            "struct": struct, "_Tensor": torch.Tensor, "_as_pointer": as_pointer, "_tls": self._tls,
            "_new_slot": self._new_slot, "_pack_into": self._struct.pack_into, "_bad_call": self._bad_call,
            "_bad_args": self._bad_args, "_functions_get": self._functions.get, "_load": self._load,
            "_launch_failed": self._launch_failed, **driver_scope, **{f"_k_{n}": v for n, v in constants.items()},
        }
        run_generated(source, f"<{self.source_label} {self.kernel_name} {id(self):#x}>", scope)
        self.launch_source = source
        return scope["launch"]

    def _bad_call(self, args: Any, grid: Any) -> None:
        """Raise the error for a malformed launch (argument count, grid shape)."""
        try:
            n = len(args)
        except TypeError:
            raise TypeError(f"kernel '{self.kernel_name}': args must be a tuple, got {type(args).__name__}") from None
        if n != len(self.arg_kinds):
            raise TypeError(f"kernel '{self.kernel_name}' takes {len(self.arg_kinds)} runtime arguments "
                            f"{self.arg_kinds}, got {n}")
        raise ValueError(f"kernel '{self.kernel_name}': grid must be 3 non-negative ints < {self.grid_limit}, "
                         f"got {grid!r}")

    def _bad_args(self, args: tuple, error: Exception) -> None:
        """Raise the error for an argument that does not fit its kind, naming it."""
        for i, (value, kind, fmt) in enumerate(zip(args, self.arg_kinds, self._formats)):
            try:
                struct.pack("<" + fmt, as_pointer(value) if kind.startswith("*") else value)
            except (struct.error, TypeError, OverflowError) as e:
                raise TypeError(f"kernel '{self.kernel_name}': argument {i} ({kind}) cannot take {value!r}: {e}") \
                    from None
        raise TypeError(f"kernel '{self.kernel_name}': bad arguments: {error}") from error
