"""Device assertions (tl.device_assert in debug mode) on the CPU target, and their error.

A failing check in a CPU kernel calls `tile_device_assert_fail(message, pid_x, pid_y, pid_z)`,
a callback into this module that records the failure; the launch then raises
`DeviceAssertionError` naming the kernel line and the program id(s). The interpreter raises
the same error at once. (NVIDIA kernels call CUDA's `__assertfail`, which reports the block
and ends the CUDA context, as CUDA's own assert does.)
"""

from __future__ import annotations

import ctypes
import threading

SYMBOL = "tile_device_assert_fail"
MAX_REPORTED = 5


class DeviceAssertionError(AssertionError):
    """A tl.device_assert failed while a kernel ran."""


_lock = threading.Lock()
failures: list[tuple[str, tuple[int, int, int]]] = []


def _record(message: bytes, x: int, y: int, z: int) -> None:
    with _lock:
        if len(failures) < 1000:
            failures.append((message.decode("utf-8", "replace"), (x, y, z)))


_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32, ctypes.c_int32)(_record)
_registered: list[bool] = []


def register_symbol() -> None:
    """Make the callback known to LLVM's JIT; the CPU launcher does this before linking any kernel
    (here, not at import: launching kernels on a GPU never loads LLVM)."""
    if not _registered:
        import llvmlite.binding as llvm

        llvm.add_symbol(SYMBOL, ctypes.cast(_CALLBACK, ctypes.c_void_p).value)
        _registered.append(True)


def raise_failures() -> None:
    """Raise the failures recorded by the last launch (and forget them)."""
    with _lock:
        found, failures[:] = list(failures), []
    if not found:
        return
    messages: dict[str, list[tuple[int, int, int]]] = {}
    for message, pid in found:
        messages.setdefault(message, []).append(pid)
    lines = []
    for message, pids in messages.items():
        shown = ", ".join(str(p) for p in sorted(set(pids))[:MAX_REPORTED])
        more = "" if len(set(pids)) <= MAX_REPORTED else f" and {len(set(pids)) - MAX_REPORTED} more"
        lines.append(f"{message} (program id {shown}{more})")
    raise DeviceAssertionError("\n".join(lines))
