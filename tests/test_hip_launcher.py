"""The HIP launcher against a fake HIP runtime: the same ctypes prototypes bound to Python
functions, so argument packing (the `void*[n]` of 8-byte slots hipModuleLaunchKernel reads),
workgroup size, stream and error paths run exactly as with libamdhip64 (no AMD GPU here)."""

from __future__ import annotations

import ctypes
import struct

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.runtime import cuda_launcher, hip_launcher
from inductor_tile.kernel_compiler.runtime.hip_launcher import PROTOTYPES, HIPError, HIPKernel, HIPRuntime
from inductor_tile.kernel_compiler.to_llvm import hsaco

pytestmark = pytest.mark.skipif(not hsaco.has_linker(), reason="needs ld.lld (lld-16 or ROCm) to link code objects")

_ERRORS = {0: ("hipSuccess", "no error"), 1: ("hipErrorInvalidValue", "invalid argument"),
           209: ("hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"),
           500: ("hipErrorNotFound", "named symbol not found")}
_UNPACK = {"*": "<Q", "i32": "<i", "i64": "<q", "fp32": "<f", "fp16": "<e", "i1": "<?"}


class FakeHIP:
    """Python implementations of the HIP entry points, exposed as C function pointers."""

    def __init__(self, kinds: list[str], kernel_name: str):
        self.kinds, self.kernel_name = kinds, kernel_name
        self.load_error = self.launch_error = 0
        self.max_threads = 1024
        self.launches: list[dict] = []
        self.loaded: list[bytes] = []
        self._strings: dict[int, ctypes.Array] = {}
        self._callbacks = {}
        for name, (restype, argtypes) in PROTOTYPES.items():
            self._callbacks[name] = ctypes.CFUNCTYPE(restype, *argtypes)(getattr(self, name))

    def runtime(self) -> HIPRuntime:
        return HIPRuntime(lambda name: ctypes.cast(self._callbacks[name], ctypes.c_void_p).value, origin="fake")

    # --- the entry points --------------------------------------------------------------
    def hipModuleLoadData(self, module, image):
        if self.load_error:
            return self.load_error
        self.loaded.append(ctypes.string_at(image, 4))
        module[0] = 0x1000
        return 0

    def hipModuleUnload(self, module):
        return 0

    def hipModuleGetFunction(self, function, module, name):
        if name.decode() != self.kernel_name or module != 0x1000:
            return 500
        function[0] = 0x2000
        return 0

    def hipFuncGetAttribute(self, value, attribute, function):
        assert attribute == hip_launcher.HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK and function == 0x2000
        value[0] = self.max_threads
        return 0

    def hipModuleLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        slots = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        values = []
        for i, kind in enumerate(self.kinds):
            fmt = _UNPACK["*" if kind.startswith("*") else kind]
            values.append(struct.unpack(fmt, ctypes.string_at(slots[i], struct.calcsize(fmt)))[0])
        self.launches.append({"function": f, "grid": (gx, gy, gz), "block": (bx, by, bz), "shared": shared,
                              "stream": stream, "args": values, "extra": extra})
        return self.launch_error

    def _string(self, text: str) -> int:
        buffer = self._strings.setdefault(hash(text), ctypes.create_string_buffer(text.encode()))
        return ctypes.addressof(buffer)

    def hipGetErrorName(self, err):
        return self._string(_ERRORS.get(err, (f"hipError{err}", ""))[0])

    def hipGetErrorString(self, err):
        return self._string(_ERRORS.get(err, ("", "unknown"))[1])


@inductor_tile.jit
def axpy_kernel(x_ptr, out_ptr, n, alpha, big, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha + big, mask=mask)


SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "alpha": "fp32", "big": "i64"}
KINDS = list(SIGNATURE.values())


@pytest.fixture(scope="module")
def code_objects() -> dict[str, bytes]:
    out = {}
    for arch in ("gfx942", "gfx1100"):
        kernel = inductor_tile.compile(axpy_kernel, signature=SIGNATURE, constexprs={"BLOCK": 512},
                                       target=f"hip:{arch}")
        out[arch] = kernel.asm["hsaco"]
    return out


@pytest.fixture
def no_gpu_torch(monkeypatch):
    """torch's device and stream queries as a ROCm build answers them (device 0, stream 0xabc)."""
    monkeypatch.setattr(cuda_launcher, "_current_device", lambda: 0)
    monkeypatch.setattr(cuda_launcher, "_current_raw_stream", lambda device: 0xABC)


@pytest.mark.parametrize("arch, wave", [("gfx942", 64), ("gfx1100", 32)])
def test_launch_packs_arguments_into_slots(code_objects, no_gpu_torch, arch, wave):
    fake = FakeHIP(KINDS, "axpy_kernel")
    kernel = HIPKernel(code_objects[arch], "axpy_kernel", KINDS, num_warps=4, runtime=fake.runtime())
    assert fake.loaded == [b"\x7fELF"]
    x, out = torch.randn(1000), torch.empty(1000)
    kernel.launch((x, out, 1000, 1.5, -(2**40)), (2, 1, 1), stream=0x55)
    kernel.launch((x.data_ptr() + 64, None, 7, -0.25, 3), (3, 2, 1))  # int address, null pointer, current stream
    first, second = fake.launches
    assert first == {"function": 0x2000, "grid": (2, 1, 1), "block": (4 * wave, 1, 1), "shared": 0, "stream": 0x55,
                     "args": [x.data_ptr(), out.data_ptr(), 1000, 1.5, -(2**40)], "extra": None}
    assert second["args"] == [x.data_ptr() + 64, 0, 7, -0.25, 3]
    assert second["stream"] == 0xABC and second["grid"] == (3, 2, 1)
    kernel.launch((x, out, 1, 1.0, 0), (0, 1, 1))  # an empty grid launches nothing
    assert len(fake.launches) == 2


def test_errors_name_the_kernel(code_objects, no_gpu_torch):
    fake = FakeHIP(KINDS, "axpy_kernel")
    kernel = HIPKernel(code_objects["gfx942"], "axpy_kernel", KINDS, num_warps=4, runtime=fake.runtime())
    x = torch.randn(4)
    with pytest.raises(TypeError, match=r"'axpy_kernel' takes 5 runtime arguments"):
        kernel.launch((x, x, 4), (1, 1, 1))
    with pytest.raises(TypeError, match=r"'axpy_kernel': argument 2 \(i32\) cannot take 'four'"):
        kernel.launch((x, x, "four", 1.0, 0), (1, 1, 1))
    with pytest.raises(TypeError, match=r"argument 2 \(i32\) cannot take 4294967296"):
        kernel.launch((x, x, 2**32, 1.0, 0), (1, 1, 1))
    fake.launch_error = 1
    with pytest.raises(HIPError, match=r"hipModuleLaunchKernel failed for kernel 'axpy_kernel' \(grid=\(9, 1, 1\), "
                                       r"block=256.*hipErrorInvalidValue: invalid argument"):
        kernel.launch((x, x, 4, 1.0, 0), (9, 1, 1))


def test_load_errors(code_objects, no_gpu_torch):
    fake = FakeHIP(KINDS, "axpy_kernel")
    fake.load_error = 209
    with pytest.raises(HIPError, match=r"hipModuleLoadData failed for kernel 'axpy_kernel' on device 0: "
                                       r"hipErrorNoBinaryForGpu") as info:
        HIPKernel(code_objects["gfx942"], "axpy_kernel", KINDS, num_warps=4, runtime=fake.runtime())
    assert info.value.result == 209
    fake = FakeHIP(KINDS, "axpy_kernel")
    fake.max_threads = 128
    with pytest.raises(cuda_launcher.KernelResourceError, match=r"at most 128 work-items.*asks for 256"):
        HIPKernel(code_objects["gfx942"], "axpy_kernel", KINDS, num_warps=4, runtime=fake.runtime())
    with pytest.raises(ValueError, match=r"takes 5 arguments in its code object, but the signature gives 4"):
        HIPKernel(code_objects["gfx942"], "axpy_kernel", KINDS[:4], num_warps=4, runtime=fake.runtime())
    with pytest.raises(ValueError, match=r"kernel 'other': not a usable HIP code object"):
        HIPKernel(code_objects["gfx942"], "other", KINDS, num_warps=4, runtime=fake.runtime())
    with pytest.raises(ValueError, match=r"at most 256 work-items per workgroup, but num_warps=8 needs 512"):
        HIPKernel(code_objects["gfx942"], "axpy_kernel", KINDS, num_warps=8, runtime=fake.runtime())


def test_compiled_kernel_launches_through_the_hip_runner(no_gpu_torch, monkeypatch):
    """compile_specialized(target="hip:...") gives a runner that drops constexprs and launches through HIP."""
    fake = FakeHIP(KINDS, "axpy_kernel")
    monkeypatch.setattr(hip_launcher, "_runtime", fake.runtime())
    specs = [spec_from_signature(name, kind) for name, kind in SIGNATURE.items()]
    specs.append(spec_from_signature("BLOCK", "constexpr", 256))
    kernel = compile_specialized(axpy_kernel, specs, target="hip:gfx90a", num_warps=2)
    assert kernel.asm["hsaco"] == kernel.binary and kernel.asm["amdgcn"]
    x = torch.randn(3)
    kernel.launch_values(axpy_kernel, (x, x, 3, 2.0, 5, 256), (1, 1, 1))
    assert fake.launches[0]["args"] == [x.data_ptr(), x.data_ptr(), 3, 2.0, 5]
    assert fake.launches[0]["block"] == (128, 1, 1)


def test_missing_runtime_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(hip_launcher, "_runtime", None)
    monkeypatch.setattr(hip_launcher, "_library_candidates", lambda: ["/nonexistent/libamdhip64.so", "libnothip.so"])
    with pytest.raises(ImportError, match="needs the HIP runtime libamdhip64"):
        hip_launcher.hip_runtime()
