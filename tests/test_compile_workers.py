"""Compile worker processes (codegen/compile_workers.py): a kernel given as source text is
compiled in another process into the disk cache; the launch here loads it from there."""

import platform
import sys

import pytest
import torch

from inductor_tile import config, metrics
from inductor_tile.codegen import compile_workers
from inductor_tile.codegen.runtime import load_kernel
from inductor_tile.kernel_compiler import compiler
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.runtime import disk_cache

SOURCE = '''
import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def {name}(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tmp0 = tl.load(in_ptr0 + xindex, mask=xmask, other=0)
    tl.store(out_ptr0 + xindex, tl.exp(tmp0) * {scale} - tmp0, mask=xmask)
'''
SPECS = [("in_ptr0", "*fp32", None, True, False), ("out_ptr0", "*fp32", None, True, False),
         ("xnumel", "i32", None, False, False), ("XBLOCK", "constexpr", 64, False, False)]


@pytest.fixture
def count_compiles(monkeypatch):
    """Names of the kernels this process runs the compiler pipeline for (disk cache loads are not)."""
    calls = []
    original = compiler._run_pipeline

    def recording(jit_fn, *args, **kwargs):
        calls.append(jit_fn.__name__)
        return original(jit_fn, *args, **kwargs)

    monkeypatch.setattr(compiler, "_run_pipeline", recording)
    return calls


def test_worker_fills_the_disk_cache_and_the_launch_loads_it(count_compiles):
    name, source = "worker_scale_kernel", SOURCE.format(name="worker_scale_kernel", scale="1.25")
    future = compile_workers.compile_source(name, source, SPECS, "cpu", 4, workers=2)
    assert future is not None and future.result(timeout=300) is True
    fn = load_kernel(name, source)
    x = torch.randn(1000, generator=torch.Generator().manual_seed(3))
    out = torch.full_like(x, float("nan"))
    hits = disk_cache.stats.hits
    fn[((1000 + 63) // 64,)](x, out, 1000, XBLOCK=64)
    torch.testing.assert_close(out.double(), x.double().exp() * 1.25 - x.double(), rtol=1e-6, atol=1e-6)
    assert disk_cache.stats.hits == hits + 1 and not count_compiles


def test_worker_error_reaches_the_launch_which_reports_it():
    name = "worker_broken_kernel"
    source = SOURCE.format(name=name, scale="tl.no_such_function(1)")
    future = compile_workers.compile_source(name, source, SPECS, "cpu", 4, workers=2)
    with pytest.raises(RuntimeError, match="no_such_function"):
        future.result(timeout=300)
    fn = load_kernel(name, source)
    fn.precompile([], "cpu", elsewhere=lambda: future)  # as the backend hands it over
    x = torch.randn(64)
    with pytest.raises(CompilationError, match="no_such_function"):
        fn[(1,)](x, torch.empty_like(x), 64, XBLOCK=64)


def test_a_running_pool_fills_the_cache_directory_of_each_compile(tmp_path, monkeypatch):
    """TILE_CACHE_DIR may change between compiles (a user's choice, or a test's): workers started
    under one directory store each kernel where the compiling process looks for it now."""
    name, source = "worker_moving_dir_kernel", SOURCE.format(name="worker_moving_dir_kernel", scale="1.5")
    fn = load_kernel(name, source)
    specs = [spec_from_signature(n, t, v, divisible_by_16=d, equal_to_1=o) for n, t, v, d, o in SPECS]
    pools = set()
    for directory in ("first", "second"):
        monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / directory))
        assert disk_cache.load(disk_cache.kernel_key(fn, specs, 4, "cpu")) is None
        future = compile_workers.compile_source(name, source, SPECS, "cpu", 4, workers=2)
        assert future is not None and future.result(timeout=300) is True
        assert disk_cache.load(disk_cache.kernel_key(fn, specs, 4, "cpu")) is not None
        pools.add(id(compile_workers.pool(2)))
    assert len(pools) == 1  # one pool served both directories


def test_a_worker_refuses_a_task_of_another_compiler(monkeypatch, count_compiles):
    """When the compiler's source files changed on disk between the start of this process and of
    a worker, the worker's binary would be stored under a key this process never looks up: the
    worker refuses the task and the launch compiles the kernel here, with its own compiler."""
    name, source = "worker_other_compiler_kernel", SOURCE.format(name="worker_other_compiler_kernel", scale="0.25")
    fingerprint = disk_cache.compiler_fingerprint()
    with monkeypatch.context() as patched:
        patched.setattr(disk_cache, "compiler_fingerprint", lambda: "f" * 64)  # as if edited after our start
        future = compile_workers.compile_source(name, source, SPECS, "cpu", 4, workers=2)
    with pytest.raises(RuntimeError, match="source files changed on disk"):
        future.result(timeout=300)
    assert disk_cache.compiler_fingerprint() == fingerprint
    fn = load_kernel(name, source)
    specs = [spec_from_signature(n, t, v, divisible_by_16=d, equal_to_1=o) for n, t, v, d, o in SPECS]
    assert disk_cache.load(disk_cache.kernel_key(fn, specs, 4, "cpu")) is None  # the worker compiled nothing
    fn.precompile([], "cpu", elsewhere=lambda: future)  # as the backend hands it over
    x = torch.randn(200, generator=torch.Generator().manual_seed(5))
    out = torch.full_like(x, float("nan"))
    fn[((200 + 63) // 64,)](x, out, 200, XBLOCK=64)
    torch.testing.assert_close(out.double(), x.double().exp() * 0.25 - x.double(), rtol=1e-6, atol=1e-6)
    assert count_compiles == [name]


def test_a_worker_fingerprints_the_compiler_it_imports_at_its_start(monkeypatch):
    """Taken at the first task instead, an edit in between would file the old compiler's binaries
    under the new source's key, where later processes would load them."""
    from inductor_tile.codegen import compile_worker

    monkeypatch.setattr(disk_cache, "_fingerprint", None)
    compile_worker.warm_up()
    assert disk_cache._fingerprint is not None


def test_no_worker_without_a_disk_cache(monkeypatch):
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    assert compile_workers.compile_source("k", SOURCE.format(name="k", scale="2.0"), SPECS, "cpu", 4, workers=2) is None


def test_torch_compile_with_workers_matches_eager(count_compiles):
    def fn(x, w):
        return torch.nn.functional.gelu(x @ w).softmax(-1) * 3 + x.sum(-1, keepdim=True)

    g = torch.Generator().manual_seed(8)
    x, w = torch.randn(24, 40, generator=g), torch.randn(40, 40, generator=g)
    torch._dynamo.reset()
    metrics.reset()
    with config.patch(compile_workers=2):
        out = torch.compile(fn, backend="tile")(x, w)
    torch.testing.assert_close(out.double(), fn(x.double(), w.double()), rtol=1e-5, atol=1e-5)
    assert metrics.generated_kernels >= 1 and metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert not count_compiles  # every kernel came from a worker through the disk cache


@pytest.mark.skipif(not (sys.platform == "linux" and platform.machine() == "x86_64"),
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
def test_worker_compiles_for_a_gpu_without_loading_it():
    """A cuda target is assembled to a cubin and stored; nothing is loaded (this machine may have no GPU)."""
    name, source = "worker_cuda_kernel", SOURCE.format(name="worker_cuda_kernel", scale="0.5")
    future = compile_workers.compile_source(name, source, SPECS, "cuda:90", 4, workers=2)
    assert future.result(timeout=300) is True
    fn = load_kernel(name, source)
    specs = [spec_from_signature(n, t, v, divisible_by_16=d, equal_to_1=o) for n, t, v, d, o in SPECS]
    entry = disk_cache.load(disk_cache.kernel_key(fn, specs, 4, "cuda:90"))
    assert entry is not None and entry.binary and ".target sm_90" in entry.asm["ptx"]


def test_workers_that_cannot_start_fail_every_task_instead_of_hanging(monkeypatch):
    monkeypatch.setattr(compile_workers, "WORKER_COMMAND", [sys.executable, "-c", "pass"])
    pool = compile_workers.WorkerPool(2)
    try:
        futures = [pool.submit((f"k{i}", "", [], "cpu", 4, {})) for i in range(6)]
        for future in futures:
            with pytest.raises(RuntimeError, match="exited|not compiled|stopped"):
                future.result(timeout=60)
        assert pool.broken
        with pytest.raises(RuntimeError, match="stopped"):
            pool.submit(("late", "", [], "cpu", 4, {})).result(timeout=5)
    finally:
        pool.close()


def test_a_pool_whose_worker_died_is_replaced(monkeypatch):
    """A dead worker breaks its pool (its queued tasks compile at their launches); the next
    compile starts a fresh pool instead of leaving the rest of the process on threads."""
    monkeypatch.setattr(compile_workers, "_restarts", 0)
    first = compile_workers.pool(2)
    assert first is not None
    first.fail("a worker died (test)")
    name, source = "worker_after_restart_kernel", SOURCE.format(name="worker_after_restart_kernel", scale="0.75")
    future = compile_workers.compile_source(name, source, SPECS, "cpu", 4, workers=2)
    assert future is not None and future.result(timeout=300) is True
    assert compile_workers.pool(2) is not first
