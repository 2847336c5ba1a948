"""CUDAKernel's generated launch against a fake driver (no GPU): the `void*[n]` of 8-byte slots it hands
to cuLaunchKernel holds each argument in its kind's format, the stream becomes a CUstream, and the
errors name the kernel and the argument. (The same slot packing serves HIPKernel: test_hip_launcher.py.)"""

from __future__ import annotations

import ctypes
import random
import struct

import pytest
import torch

from inductor_tile.kernel_compiler.runtime import cuda_launcher
from inductor_tile.kernel_compiler.runtime.slot_launcher import SCALAR_FORMAT

KINDS = ["*fp32", "*fp16", "i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "fp16", "fp32", "fp64"]


class FakeDriver:
    """cuLaunchKernel and CUstream as `cuda.bindings.driver` has them, recording each launch."""

    def __init__(self, kinds: list[str]):
        self.kinds = kinds
        self.launches: list[dict] = []
        self.error = 0

    class CUstream(int):
        """The driver's stream wrapper: int() of it is the raw handle."""

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        slots = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        values = []
        for i, kind in enumerate(self.kinds):
            fmt = "<" + ("Q" if kind.startswith("*") else SCALAR_FORMAT[kind])
            values.append(struct.unpack(fmt, ctypes.string_at(slots[i], struct.calcsize(fmt)))[0])
        self.launches.append({"function": fn, "grid": (gx, gy, gz), "block": (bx, by, bz), "shared": shared,
                              "stream": (type(stream).__name__, int(stream)), "args": values, "extra": extra})
        return (self.error,)

    @staticmethod
    def cuGetErrorName(err: int) -> tuple[int, bytes]:
        return 0, b"CUDA_ERROR_INVALID_VALUE"

    @staticmethod
    def cuGetErrorString(err: int) -> tuple[int, bytes]:
        return 0, b"invalid argument"


@pytest.fixture
def fake_driver(monkeypatch) -> FakeDriver:
    fake = FakeDriver(KINDS)
    monkeypatch.setattr(cuda_launcher, "_driver", lambda: fake)
    monkeypatch.setattr(cuda_launcher, "_current_device", lambda: 0)
    monkeypatch.setattr(cuda_launcher, "_current_raw_stream", lambda device: 0xABC)
    monkeypatch.setattr(cuda_launcher, "_stream_handles", {})
    monkeypatch.setattr(torch.cuda, "init", lambda: None)
    monkeypatch.setattr(cuda_launcher.CUDAKernel, "_load", lambda self, device: self._functions.setdefault(device, 7))
    return fake


def _random_arguments(rng: random.Random) -> tuple[tuple, list]:
    """Arguments for KINDS and the values the slots must hold (fp16 / fp32 as they round)."""
    x = torch.randn(16)
    half, single = rng.uniform(-4, 4), rng.uniform(-1e6, 1e6)
    args = (x, x.data_ptr() + 8 * rng.randrange(8), rng.random() < 0.5, rng.randrange(-128, 128),
            rng.randrange(-2**15, 2**15), rng.randrange(-2**31, 2**31), rng.randrange(-2**63, 2**63),
            rng.randrange(256), rng.randrange(2**16), rng.randrange(2**32), rng.randrange(2**64), half, single,
            rng.uniform(-1e300, 1e300))
    expected = list(args)
    expected[0] = x.data_ptr()
    expected[11] = struct.unpack("<e", struct.pack("<e", half))[0]
    expected[12] = struct.unpack("<f", struct.pack("<f", single))[0]
    return args, expected


def test_launch_packs_every_kind_into_its_slot(fake_driver):
    kernel = cuda_launcher.CUDAKernel(b"\x7fELF", "k", KINDS, num_warps=4, shared_bytes=4096)
    rng = random.Random(0)
    args, expected = _random_arguments(rng)
    kernel.launch(args, (3, 2, 1), stream=0x55)
    second_args, second_expected = _random_arguments(rng)
    kernel.launch((None,) + second_args[1:], (1, 1, 5))  # a null pointer, torch's current stream
    first, second = fake_driver.launches
    assert first == {"function": 7, "grid": (3, 2, 1), "block": (128, 1, 1), "shared": 4096,
                     "stream": ("CUstream", 0x55), "args": expected, "extra": 0}
    assert second["args"] == [0] + second_expected[1:]
    assert second["stream"] == ("CUstream", 0xABC) and second["grid"] == (1, 1, 5)
    kernel.launch(args, (2, 0, 1))  # an empty grid launches nothing
    assert len(fake_driver.launches) == 2


def test_launch_errors_name_the_kernel_and_argument(fake_driver):
    kernel = cuda_launcher.CUDAKernel(b"\x7fELF", "k", KINDS, num_warps=4)
    args, _ = _random_arguments(random.Random(1))
    with pytest.raises(TypeError, match=r"kernel 'k' takes 14 runtime arguments"):
        kernel.launch(args[:3], (1, 1, 1))
    with pytest.raises(ValueError, match=r"kernel 'k': grid must be 3 non-negative ints < 2\*\*31, got \(1, 1\)"):
        kernel.launch(args, (1, 1))
    with pytest.raises(TypeError, match=r"argument 5 \(i32\) cannot take 4294967296"):
        kernel.launch(args[:5] + (2**32,) + args[6:], (1, 1, 1))
    with pytest.raises(TypeError, match=r"argument 1 \(\*fp16\) cannot take 'x'"):
        kernel.launch(args[:1] + ("x",) + args[2:], (1, 1, 1))
    fake_driver.error = 1
    with pytest.raises(cuda_launcher.CUDADriverError, match=r"cuLaunchKernel failed for kernel 'k' \(grid=\(9, 1, 1\)"
                                                            r".*CUDA_ERROR_INVALID_VALUE: invalid argument"):
        kernel.launch(args, (9, 1, 1))
