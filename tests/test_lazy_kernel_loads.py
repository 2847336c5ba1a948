"""A cached graph's kernels load at their first launch, not when the graph's wrapper module is loaded: loading a
generated kernel and making its launch site reads no disk cache entry and builds no launcher (binary, driver
module); the first launch loads exactly that kernel's entry, and later launches none.  On NVIDIA the launcher
is generated code compiled once a process per distinct source (runtime/generated_code.py): checked here
against a fake driver: the binary handed to the driver once, however often the kernel launches."""

from __future__ import annotations

import pytest
import torch

from inductor_tile.codegen.runtime import load_kernel
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.runtime import cuda_launcher, disk_cache, tuning_db
from model_benchmarks.nvidia_warm_loads import FakeDriver

SOURCE = '''
import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def lazy_scale_{tag}(in_ptr, out_ptr, n, XBLOCK: tl.constexpr):
    i = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    tl.store(out_ptr + i, tl.load(in_ptr + i, mask=i < n) * {factor} + 0.5, mask=i < n)
'''


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("TILE_CACHE_DISABLE", "TILE_INTERPRET", "TILE_DUMP_IR"):
        monkeypatch.delenv(name, raising=False)
    disk_cache.stats.reset()
    yield tmp_path / "cache"
    tuning_db.forget_connections()


def _load(tag: str, factor: float):
    return load_kernel(f"lazy_scale_{tag}", SOURCE.format(tag=tag, factor=factor))


def test_the_binary_loads_at_the_first_launch_not_at_the_graphs_load(cache_dir, gen):
    factor = float(torch.rand((), generator=gen)) + 1.0
    tag = f"cpu_{abs(hash(factor)) % 10**8}"
    x = torch.randn(300, generator=gen)
    first = torch.full_like(x, float("nan"))
    _load(tag, factor).launcher(XBLOCK=128)((3, 1, 1), x, first, 300)  # compiles, stores the entry
    assert disk_cache.stats.writes == 1

    # a warm process: the module loaded again (a new @jit function) and its launch site made
    import inductor_tile.codegen.runtime as runtime

    runtime._loaded.clear()
    fn = _load(tag, factor)
    site = fn.launcher(XBLOCK=128)
    assert disk_cache.stats.hits == 0 and not fn.cache and "binder" not in fn.__dict__
    out = torch.full_like(x, float("nan"))
    site.run((3, 1, 1), x, out, 300)
    assert (disk_cache.stats.hits, disk_cache.stats.compiles) == (1, 1)  # the one compile was the cold launch's
    site.run((3, 1, 1), x, out, 300)
    assert disk_cache.stats.hits == 1
    torch.testing.assert_close(out.double(), x.double() * factor + 0.5)


def test_cuda_kernels_hand_their_module_to_the_driver_once_and_share_one_launch_source(monkeypatch, gen):
    fake = FakeDriver()
    monkeypatch.setattr(cuda_launcher, "_driver", lambda: fake)
    monkeypatch.setattr(cuda_launcher, "_current_device", lambda: 0)
    monkeypatch.setattr(cuda_launcher, "_current_raw_stream", lambda device: 0)
    monkeypatch.setattr(cuda_launcher, "_stream_handles", {})
    monkeypatch.setattr(torch.cuda, "init", lambda: None)
    kernels = [cuda_launcher.CUDAKernel(b"\x7fELF fake cubin", f"kernel_{i}", ["*fp32", "i32"], 4) for i in range(3)]
    assert fake.calls.get("cuModuleLoadData") == 3  # at construction, which the first launch of a kernel makes
    x = torch.randn(8, generator=gen)
    for kernel in kernels:
        kernel.launch((x, 8), (1, 1, 1))
        kernel.launch((x, 8), (2, 1, 1))
    assert fake.calls["cuModuleLoadData"] == 3 and fake.calls["cuLaunchKernel"] == 6
    assert len({kernel.launch_source for kernel in kernels}) == 1  # one source, compiled once
    assert len({kernel.launch.__code__.co_filename for kernel in kernels}) == 3  # each named for its kernel
