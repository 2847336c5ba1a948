"""Launching AMD kernels (HSACO code objects) through the HIP runtime, with ctypes.

On a ROCm build of torch (`torch.version.hip` is set, tensors are `device="cuda"`) the HIP
runtime `libamdhip64` is already loaded by torch; `HIPRuntime` binds the five entry points
used here (hipModuleLoadData, hipModuleGetFunction, hipFuncGetAttribute,
hipModuleLaunchKernel, hipGetErrorName/String) as ctypes function pointers. Tests bind the
same prototypes to a fake runtime written in Python (`HIPRuntime(symbol_address)`), so the
packing below is exercised exactly as a real launch would run it.

`HIPKernel` is the NVIDIA launcher's sibling (cuda_launcher.py): the code object is loaded per
device (the current one at construction), and the launch function generated once per
signature (slot_launcher.py, as for CUDA) packs the arguments into per-thread 8-byte slots,
whose `void*[n]` array goes to `hipModuleLaunchKernel` on torch's current stream (no
synchronization, no allocation: graph-capturable; `HIP_LAUNCH` below is the driver call as
data). The workgroup size is `num_warps` times the wavefront size the code object's metadata
records (64 on gfx9, 32 on gfx11), and the metadata's argument count is checked against the
signature.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any, Callable

import torch

from . import cuda_launcher
from .slot_launcher import DriverCall, SlotLauncher

__all__ = ["HIPKernel", "HIPError", "HIPRuntime", "hip_runtime"]

_c_int_p = ctypes.POINTER(ctypes.c_int)
_c_void_pp = ctypes.POINTER(ctypes.c_void_p)
#: name -> (restype, argtypes) of each entry point used (hipError_t is an int; handles are pointers)
PROTOTYPES: dict[str, tuple[Any, tuple[Any, ...]]] = {
    "hipModuleLoadData": (ctypes.c_int, (_c_void_pp, ctypes.c_void_p)),
    "hipModuleUnload": (ctypes.c_int, (ctypes.c_void_p,)),
    "hipModuleGetFunction": (ctypes.c_int, (_c_void_pp, ctypes.c_void_p, ctypes.c_char_p)),
    "hipFuncGetAttribute": (ctypes.c_int, (_c_int_p, ctypes.c_int, ctypes.c_void_p)),
    "hipModuleLaunchKernel": (ctypes.c_int, (ctypes.c_void_p,) + (ctypes.c_uint,) * 7
                              + (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)),
    "hipGetErrorName": (ctypes.c_void_p, (ctypes.c_int,)),  # const char*, read with string_at
    "hipGetErrorString": (ctypes.c_void_p, (ctypes.c_int,)),
}
HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0
_HIP_ERROR_NOT_FOUND = 500

_runtime: HIPRuntime | None = None
_init_lock = threading.RLock()


class HIPError(RuntimeError):
    """A HIP runtime call failed; `result` is the hipError_t (int) and `error_name` its name."""

    def __init__(self, message: str, result: int = 0, error_name: str = ""):
        super().__init__(message)
        self.result = result
        self.error_name = error_name


class HIPRuntime:
    """The HIP entry points, bound from `symbol(name) -> address` (ctypes releases the GIL in each call)."""

    def __init__(self, symbol: Callable[[str], int], origin: str = "libamdhip64"):
        self.origin = origin
        for name, (restype, argtypes) in PROTOTYPES.items():
            setattr(self, name, ctypes.CFUNCTYPE(restype, *argtypes)(symbol(name)))

    def error_name(self, err: int) -> tuple[str, str]:
        """(name, description) of a hipError_t, e.g. ("hipErrorInvalidValue", "invalid argument")."""
        name_ptr, text_ptr = self.hipGetErrorName(err), self.hipGetErrorString(err)
        name = ctypes.string_at(name_ptr).decode(errors="replace") if name_ptr else f"hipError_t {err}"
        text = ctypes.string_at(text_ptr).decode(errors="replace") if text_ptr else "unknown error"
        return name, text

    def check(self, err: int, what: str) -> None:
        if err:
            name, text = self.error_name(err)
            raise HIPError(f"{what} failed: {name}: {text}", err, name)


def _library_candidates() -> list[str]:
    names = []
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libamdhip64.so")
    names.append(torch_lib)  # a ROCm wheel of torch bundles the runtime it was built with
    rocm = os.environ.get("ROCM_PATH") or os.environ.get("ROCM_HOME") or "/opt/rocm"
    names.append(os.path.join(rocm, "lib", "libamdhip64.so"))
    names += ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"]
    return names


def hip_runtime() -> HIPRuntime:
    """The process's HIP runtime (libamdhip64), bound on first use."""
    global _runtime
    with _init_lock:
        if _runtime is None:
            errors = []
            for name in _library_candidates():
                if os.path.isabs(name) and not os.path.exists(name):
                    continue
                try:
                    library = ctypes.CDLL(name)
                except OSError as e:
                    errors.append(f"{name}: {e}")
                    continue
                _runtime = HIPRuntime(lambda symbol, lib=library: ctypes.cast(getattr(lib, symbol), ctypes.c_void_p)
                                      .value, origin=name)
                break
            else:
                raise ImportError("the AMD launcher needs the HIP runtime libamdhip64 (a ROCm install or a ROCm build "
                                  "of torch) and found none: " + "; ".join(errors or ["no candidate exists"]))
        return _runtime


#: how the generated launch calls the runtime: the raw stream as it is, no dynamic shared memory
HIP_LAUNCH = DriverCall(
    prepare="",
    call="err = _launch_kernel(fn, gx, gy, gz, {block}, 1, 1, 0, stream, slot[1], None)",
    malformed="(ctypes.ArgumentError, OverflowError)",
    failed_args="stream",
)


class HIPKernel(SlotLauncher):
    """One kernel of a HIP code object, loaded per device and launched from Python.

    Args:
        code_object: the HSACO (linked ELF shared object) as bytes.
        kernel_name: the kernel symbol to launch.
        arg_kinds: the type of each runtime parameter, Triton style, as in CUDAKernel.
        num_warps: wavefronts per workgroup.
        runtime: the HIP entry points (default: libamdhip64 of this process).
    """

    source_label = "hip launch"
    grid_limit = "2**32"
    no_parameters = None

    def __init__(self, code_object: bytes, kernel_name: str, arg_kinds: list[str], num_warps: int,
                 runtime: HIPRuntime | None = None):
        from ..to_llvm.hsaco import kernel_metadata

        self.kernel_name = kernel_name
        self.arg_kinds = list(arg_kinds)
        self.num_warps = num_warps
        self.image = bytes(code_object)
        try:
            self.metadata = kernel_metadata(self.image, kernel_name)
        except (KeyError, ValueError) as e:
            raise ValueError(f"kernel '{kernel_name}': not a usable HIP code object: {e}") from None
        self.wave_size = int(self.metadata[".wavefront_size"])
        self.block = self.wave_size * num_warps
        declared = len(self.metadata.get(".args", []))
        if declared != len(self.arg_kinds):
            raise ValueError(f"kernel '{kernel_name}' takes {declared} arguments in its code object, but the "
                             f"signature gives {len(self.arg_kinds)}: {self.arg_kinds}")
        if self.block > int(self.metadata[".max_flat_workgroup_size"]):
            raise ValueError(f"kernel '{kernel_name}' was compiled for at most {self.metadata['.max_flat_workgroup_size']}"
                             f" work-items per workgroup, but num_warps={num_warps} needs {self.block}")
        self.runtime = runtime or hip_runtime()
        self._init_slots()
        self._modules: dict[int, int] = {}
        self._functions: dict[int, int] = {}
        self.launch = self._build_launch()  # shadows SlotLauncher.launch, the documented method
        self._load(cuda_launcher._current_device())

    # -- loading ----------------------------------------------------------------------------
    def _load(self, device: int) -> int:
        with _init_lock:
            fn = self._functions.get(device)
            if fn is not None:
                return fn
            hip = self.runtime
            module = ctypes.c_void_p()
            err = hip.hipModuleLoadData(ctypes.byref(module), self.image)
            if err:
                name, text = hip.error_name(err)
                raise HIPError(f"hipModuleLoadData failed for kernel '{self.kernel_name}' on device {device}: "
                               f"{name}: {text} (is the code object built for this GPU's architecture?)", err, name)
            function = ctypes.c_void_p()
            err = hip.hipModuleGetFunction(ctypes.byref(function), module, self.kernel_name.encode())
            if err:
                hip.hipModuleUnload(module)
                name, text = hip.error_name(err)
                raise HIPError(f"hipModuleGetFunction('{self.kernel_name}') failed on device {device}: {name}: {text}",
                               err, name)
            limit = ctypes.c_int()
            hip.check(hip.hipFuncGetAttribute(ctypes.byref(limit), HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function),
                      f"hipFuncGetAttribute(MAX_THREADS_PER_BLOCK) for kernel '{self.kernel_name}'")
            if self.block > limit.value:
                hip.hipModuleUnload(module)
                raise cuda_launcher.KernelResourceError(
                    f"kernel '{self.kernel_name}' can run at most {limit.value} work-items per workgroup on device "
                    f"{device}, but num_warps={self.num_warps} asks for {self.block}")
            self._modules[device] = module.value
            self._functions[device] = function.value
            return function.value

    # -- launching --------------------------------------------------------------------------
    def _build_launch(self) -> Callable[..., None]:
        """Generate `launch(args, grid, stream=None)` specialized to `arg_kinds`."""
        scope = {"ctypes": ctypes, "_current_device": cuda_launcher._current_device,
                 "_current_raw_stream": cuda_launcher._current_raw_stream,
                 "_launch_kernel": self.runtime.hipModuleLaunchKernel}
        return self._generate_launch(HIP_LAUNCH, scope, block=self.block)

    def _launch_failed(self, err: int, grid: tuple[int, int, int], device: int, stream: Any) -> None:
        name, text = self.runtime.error_name(err)
        raise HIPError(f"hipModuleLaunchKernel failed for kernel '{self.kernel_name}' (grid={grid}, "
                       f"block={self.block}, device={device}, stream={int(stream or 0):#x}): {name}: {text}", err, name)
