"""model_benchmarks/nvidia_warm_loads.py: recorded kernels compiled for sm_90 into a cache, then loaded from it as a
warm start does, against a fake driver (no GPU): every step timed, every kernel a cache hit, each binary handed to
the driver once."""

import pickle

import pytest

from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.runtime import cuda_tools, disk_cache
from model_benchmarks import nvidia_warm_loads

SOURCE = '''import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def warm_loads_axpy(x_ptr, y_ptr, n, XBLOCK: tl.constexpr):
    i = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=i < n) * 1.5 + tl.load(y_ptr + i, mask=i < n), mask=i < n)
'''


def _ptxas_found() -> bool:
    try:
        cuda_tools.find_ptxas()
    except Exception:  # noqa: BLE001 - no CUDA toolkit here
        return False
    return True


@pytest.mark.skipif(not _ptxas_found(), reason="needs ptxas")
def test_recorded_kernels_load_from_the_cache_with_a_fake_driver(tmp_path, monkeypatch):
    specs = [[spec_from_signature("x_ptr", "*fp32", divisible_by_16=True),
              spec_from_signature("y_ptr", "*fp32", divisible_by_16=True), spec_from_signature("n", "i32"),
              spec_from_signature("XBLOCK", "constexpr", block)] for block in (128, 256)]
    recording = tmp_path / "kernels.pkl"
    recording.write_bytes(pickle.dumps([("warm_loads_axpy", SOURCE, s, 4) for s in specs]))
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILE_CACHE_DISABLE", raising=False)
    monkeypatch.delenv("TILE_DUMP_IR", raising=False)
    real_install = nvidia_warm_loads.install_fake_driver
    monkeypatch.setattr(nvidia_warm_loads, "install_fake_driver", lambda: real_install(monkeypatch.setattr))
    disk_cache.stats.reset()
    assert nvidia_warm_loads.fill(str(recording), "cuda:90") == 0
    assert disk_cache.stats.writes == 2
    result = nvidia_warm_loads.load_once(str(recording), "cuda:90", "fake")
    assert result["kernels"] == 2 and set(result["steps"]) == set(nvidia_warm_loads.STEPS)
    assert result["steps"]["total"] >= result["steps"]["runner"] >= 0
    # the first kernel again apart (one-time costs), then each of the two: one module load each
    assert result["driver_calls"]["cuModuleLoadData"] == 3


@pytest.mark.skipif(not _ptxas_found(), reason="needs ptxas")
def test_an_nvidia_kernel_loaded_from_the_cache_reads_its_cubin_and_no_text(tmp_path, monkeypatch):
    """The warm load of an sm_90 kernel (fake driver) reads the metadata and the cubin; its PTX is read from the
    entry, checked, at the first read of `asm["ptx"]`, and is the PTX the compile stored."""
    from pathlib import Path

    from inductor_tile.codegen.runtime import load_kernel
    from inductor_tile.kernel_compiler import compiler

    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILE_CACHE_DISABLE", raising=False)
    monkeypatch.delenv("TILE_DUMP_IR", raising=False)
    nvidia_warm_loads.install_fake_driver(monkeypatch.setattr)
    specs = [spec_from_signature("x_ptr", "*fp32", divisible_by_16=True),
             spec_from_signature("y_ptr", "*fp32", divisible_by_16=True), spec_from_signature("n", "i32"),
             spec_from_signature("XBLOCK", "constexpr", 512)]
    fn = load_kernel("warm_loads_axpy", SOURCE)
    compiler.compile_specialized(fn, specs, target="cuda:90", num_warps=4, load=False)
    read = []
    original = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self.suffix) or original(self))
    loaded = compiler.compile_specialized(fn, specs, target="cuda:90", num_warps=4)
    assert loaded.from_disk and loaded.runner is not None and sorted(read) == [".cubin", ".json"]
    ptx = loaded.asm["ptx"]
    assert ".target sm_90" in ptx and ".visible .entry warm_loads_axpy(" in ptx and ".ptx" in read
