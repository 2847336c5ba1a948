"""Launching NVIDIA kernels (cubin or PTX) through the CUDA driver API of `cuda.bindings`.

`CUDAKernel` loads one module per device into the device's primary context (the one torch
uses) and launches with `cuLaunchKernel` on torch's current stream, so launches order with
torch's own work and can be captured in CUDA graphs (a launch neither synchronizes nor
allocates).

Host cost. Each kernel gets a launch function generated for its signature (`arg_kinds`,
slot_launcher.py): it packs the arguments into per-thread 8-byte parameter slots and passes the
address of their `void*[n]` array to `cuLaunchKernel` as an int, which `cuda.bindings` hands to
the driver as `void**` without looking at it (`CUDA_LAUNCH` below: the driver call as data).
"""

from __future__ import annotations

import re
import threading
from typing import Any, Callable

import torch

from .slot_launcher import DriverCall, SlotLauncher

__all__ = ["CUDAKernel", "CUDADriverError", "KernelResourceError", "SharedMemoryError"]

_DEFAULT_SHARED_LIMIT = 48 * 1024  # dynamic + static shared memory allowed without opting in
_CUDA_ERROR_INVALID_CONTEXT = 201
_ELF_MAGIC = b"\x7fELF"
_FATBIN_MAGIC = b"\x50\xed\x55\xba"

_driver_module: Any = None
_init_lock = threading.RLock()
_primary_contexts: dict[int, Any] = {}  # device ordinal -> retained primary CUcontext
_stream_handles: dict[Any, Any] = {}  # torch raw stream (int) -> CUstream wrapper


class CUDADriverError(RuntimeError):
    """A CUDA driver call failed; `result` is the CUresult (int) and `error_name` its name."""

    def __init__(self, message: str, result: int = 0, error_name: str = ""):
        super().__init__(message)
        self.result = result
        self.error_name = error_name


class KernelResourceError(RuntimeError):
    """The kernel cannot run on the device with the requested resources (threads, shared memory)."""


class SharedMemoryError(KernelResourceError):
    """The kernel needs more shared memory per block than the device allows."""


def _driver() -> Any:
    """`cuda.bindings.driver`, imported on first use (old cuda-python: `cuda.cuda`)."""
    global _driver_module
    if _driver_module is None:
        try:
            from cuda.bindings import driver
        except ImportError:
            try:
                from cuda import cuda as driver  # cuda-python < 12.6
            except ImportError as e:
                raise ImportError("the NVIDIA launcher needs the CUDA driver bindings: "
                                  "`pip install cuda-bindings` (or cuda-python)") from e
        (err,) = driver.cuInit(0)
        if err:
            raise CUDADriverError(f"cuInit failed: {err!r} (is there an NVIDIA GPU and driver?)", int(err))
        _driver_module = driver
    return _driver_module


def _error_name(err: Any) -> tuple[str, str]:
    """(name, description) of a CUresult, e.g. ("CUDA_ERROR_INVALID_VALUE", "invalid argument")."""
    d = _driver()
    try:
        e1, name = d.cuGetErrorName(err)
        e2, text = d.cuGetErrorString(err)
    except Exception:  # an unknown code the bindings cannot turn into a CUresult
        return f"CUresult {int(err)}", "unknown error"
    name = name.decode() if (not e1 and name) else f"CUresult {int(err)}"
    text = text.decode() if (not e2 and text) else "unknown error"
    return name, text


def _check(err: Any, what: str) -> None:
    """Raise CUDADriverError when `err` (a CUresult) is not CUDA_SUCCESS."""
    if err:
        name, text = _error_name(err)
        raise CUDADriverError(f"{what} failed: {name}: {text}", int(err), name)


def _primary_context(device: int) -> Any:
    """The primary context of `device`, retained once for the process."""
    ctx = _primary_contexts.get(device)
    if ctx is None:
        d = _driver()
        err, dev = d.cuDeviceGet(device)
        _check(err, f"cuDeviceGet({device})")
        err, ctx = d.cuDevicePrimaryCtxRetain(dev)
        _check(err, f"cuDevicePrimaryCtxRetain(device {device})")
        _primary_contexts[device] = ctx
    return ctx


def _make_context_current(device: int) -> None:
    """Make `device`'s primary context current on this thread, as torch's runtime calls would."""
    d = _driver()
    primary = _primary_context(device)
    err, current = d.cuCtxGetCurrent()
    _check(err, "cuCtxGetCurrent")
    if int(current) != int(primary):
        (err,) = d.cuCtxSetCurrent(primary)
        _check(err, f"cuCtxSetCurrent(primary context of device {device})")


def _stream_handle(stream: Any) -> Any:
    """The CUstream for a raw stream (an int, or a torch.cuda.Stream), memoized."""
    handle = _stream_handles.get(stream)
    if handle is None:
        raw = stream.cuda_stream if hasattr(stream, "cuda_stream") else int(stream)
        handle = _driver().CUstream(raw)
        if len(_stream_handles) > 4096:
            _stream_handles.clear()
        _stream_handles[stream] = handle
    return handle


if hasattr(torch._C, "_cuda_getCurrentRawStream"):
    _current_device: Callable[[], int] = torch._C._cuda_getDevice
    _current_raw_stream: Callable[[int], int] = torch._C._cuda_getCurrentRawStream
else:  # a torch without CUDA (the launcher cannot run) or without these private helpers
    _current_device = torch.cuda.current_device

    def _current_raw_stream(device: int) -> int:
        return torch.cuda.current_stream(device).cuda_stream


#: how the generated launch calls the driver: the raw stream becomes a (memoized) CUstream
CUDA_LAUNCH = DriverCall(
    prepare="""    handle = _stream_handles_get(stream)
    if handle is None:
        handle = _stream_handle(stream)
""",
    call="(err,) = _cuLaunchKernel(fn, gx, gy, gz, {block}, 1, 1, {shared_bytes}, handle, slot[1], 0)",
    malformed="OverflowError",
    failed_args="fn, handle, slot[1]",
)


class CUDAKernel(SlotLauncher):
    """One kernel of a cubin or PTX module, loaded lazily per device and launched from Python.

    Args:
        cubin_or_ptx: a cubin (or fatbin) as bytes, or PTX as str or bytes (loaded by the
            driver's JIT; a NUL is appended when missing).
        kernel_name: the `.entry` to launch.
        arg_kinds: the type of each runtime parameter, in order, Triton style: "*fp32",
            "*i8", ... for pointers (pass a tensor, None for a null pointer, or an int address),
            and "i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "fp16", "fp32",
            "fp64" for scalars (pass Python numbers).
        num_warps: threads per block / 32.
        shared_bytes: dynamic shared memory per block. Above 48 KiB (with the kernel's static
            shared memory) the kernel opts in to the device's larger limit; over that limit
            loading raises SharedMemoryError.

    The module is loaded into the current device's primary context here (so errors show
    early and no loading happens during a CUDA graph capture), and into another device's
    on the first launch there. Pointer arguments are not checked (device, dtype): a tensor
    on the wrong device faults on the GPU, as in Triton.
    """

    source_label = "launch"
    grid_limit = "2**31"
    no_parameters = 0

    def __init__(self, cubin_or_ptx: bytes | str, kernel_name: str, arg_kinds: list[str], num_warps: int,
                 shared_bytes: int = 0):
        self.kernel_name = kernel_name
        self.arg_kinds = list(arg_kinds)
        self.num_warps = num_warps
        self.block = 32 * num_warps
        self.shared_bytes = shared_bytes
        self.image, self.is_ptx = _normalize_image(cubin_or_ptx)
        self._init_slots()
        self._modules: dict[int, Any] = {}
        self._functions: dict[int, Any] = {}
        self.launch = self._build_launch()  # shadows SlotLauncher.launch, the documented method
        torch.cuda.init()
        self._load(_current_device())

    # -- loading ----------------------------------------------------------------------------

    def _load(self, device: int) -> Any:
        """Load the module on `device` (once) and return the CUfunction."""
        with _init_lock:
            fn = self._functions.get(device)
            if fn is not None:
                return fn
            d = _driver()
            _make_context_current(device)
            err, module = d.cuModuleLoadData(self.image)
            if err:
                name, text = _error_name(err)
                raise CUDADriverError(f"cuModuleLoadData failed for kernel '{self.kernel_name}' on device {device}: "
                                      f"{name}: {text}{self._ptx_diagnostics()}", int(err), name)
            try:
                fn = self._get_function(d, module, device)
            except BaseException:
                d.cuModuleUnload(module)
                raise
            self._modules[device] = module
            self._functions[device] = fn
            return fn

    def _get_function(self, d: Any, module: Any, device: int) -> Any:
        err, fn = d.cuModuleGetFunction(module, self.kernel_name.encode())
        _check(err, f"cuModuleGetFunction('{self.kernel_name}')")
        attr = d.CUfunction_attribute
        err, max_threads = d.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn)
        _check(err, "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)")
        if self.block > max_threads:
            raise KernelResourceError(f"kernel '{self.kernel_name}' can run at most {max_threads} threads per block "
                                      f"(registers), but num_warps={self.num_warps} asks for {self.block}")
        err, static = d.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn)
        _check(err, "cuFuncGetAttribute(SHARED_SIZE_BYTES)")
        if static + self.shared_bytes > _DEFAULT_SHARED_LIMIT:
            err, dev = d.cuDeviceGet(device)
            _check(err, f"cuDeviceGet({device})")
            err, limit = d.cuDeviceGetAttribute(
                d.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev)
            _check(err, "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)")
            if static + self.shared_bytes > limit:
                raise SharedMemoryError(
                    f"kernel '{self.kernel_name}' needs {static + self.shared_bytes} bytes of shared memory per block "
                    f"({self.shared_bytes} dynamic + {static} static), but device {device} allows at most {limit}")
            (err,) = d.cuFuncSetAttribute(fn, attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, self.shared_bytes)
            _check(err, f"cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES={self.shared_bytes}) "
                        f"for kernel '{self.kernel_name}'")
        return fn

    def _ptx_diagnostics(self) -> str:
        """For a PTX image the driver refused: what ptxas says about it, if ptxas is around."""
        if not self.is_ptx:
            return ""
        from .cuda_tools import PTXASError, check_ptx
        ptx = self.image.rstrip(b"\0").decode(errors="replace")
        target = re.search(r"^\s*\.target\s+(\w+)", ptx, re.M)
        try:
            check_ptx(ptx, target.group(1) if target else "sm_90", self.kernel_name)
        except PTXASError as e:
            return f"\n{e}"
        except Exception as e:  # no ptxas: say so and move on
            return f"\n(no ptxas diagnostics: {e})"
        return "\n(ptxas accepts this PTX; the driver may be older than its .version)"

    # -- launching --------------------------------------------------------------------------

    def _build_launch(self) -> Callable[..., None]:
        """Generate `launch(args, grid, stream=None)` specialized to `arg_kinds`."""
        scope = {"_current_device": _current_device, "_current_raw_stream": _current_raw_stream,
                 "_stream_handles_get": _stream_handles.get, "_stream_handle": _stream_handle,
                 "_cuLaunchKernel": _driver().cuLaunchKernel}
        return self._generate_launch(CUDA_LAUNCH, scope, block=self.block, shared_bytes=self.shared_bytes)

    def _launch_failed(self, err: Any, grid: tuple[int, int, int], device: int, fn: Any, handle: Any,
                       params: int) -> None:
        """Retry once when this thread has no (or the wrong) context; otherwise raise."""
        if int(err) == _CUDA_ERROR_INVALID_CONTEXT:
            _make_context_current(device)
            (err,) = _driver().cuLaunchKernel(fn, *grid, self.block, 1, 1, self.shared_bytes, handle, params, 0)
            if not err:
                return
        name, text = _error_name(err)
        raise CUDADriverError(f"cuLaunchKernel failed for kernel '{self.kernel_name}' (grid={grid}, "
                              f"block={self.block}, shared_bytes={self.shared_bytes}, device={device}, "
                              f"stream={int(handle):#x}): {name}: {text}", int(err), name)


def _normalize_image(image: bytes | bytearray | memoryview | str) -> tuple[bytes, bool]:
    """(bytes for cuModuleLoadData, is it PTX): PTX gets its terminating NUL."""
    if isinstance(image, str):
        return image.encode() + b"\0", True
    data = bytes(image)
    if data[:4] in (_ELF_MAGIC, _FATBIN_MAGIC):
        return data, False
    return (data if data.endswith(b"\0") else data + b"\0"), True

