"""Warm start: a process whose graphs and kernels all come from the caches imports none of the
compiler (no xdsl, no front end, passes or lowering) and starts no compile worker; workers start
only when Inductor lowers a tile graph (a graph-cache miss), and never for backend="inductor"."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_tile.codegen import compile_workers

REPO = Path(__file__).resolve().parent.parent

PROCESS = """
import sys, torch
from inductor_tile import metrics
from inductor_tile.codegen import compile_workers
from inductor_tile.kernel_compiler.runtime import disk_cache

def f(x, w):
    return torch.softmax(x * w - 0.25, dim=-1).sum(-1)

gen = torch.Generator().manual_seed(11)
x = torch.randn(7, 45, generator=gen, dtype=torch.float64, requires_grad=True)
w = torch.randn(45, generator=gen, dtype=torch.float64, requires_grad=True)
out = torch.compile(f, backend="tile")(x, w)
out.sum().backward()
rx, rw = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
expected = f(rx, rw)
expected.sum().backward()
torch.testing.assert_close(out, expected)
torch.testing.assert_close(x.grad, rx.grad)
torch.testing.assert_close(w.grad, rw.grad)
compiler = [m for m in ("xdsl", "inductor_tile.kernel_compiler.frontend.code_generator",
                        "inductor_tile.kernel_compiler.passes.pipeline", "inductor_tile.kernel_compiler.to_llvm.lowering",
                        "inductor_tile.kernel_compiler.ir_builder") if m in sys.modules]
print("RESULT", metrics.graph_cache_hits, disk_cache.stats.compiles, disk_cache.stats.hits,
      compile_workers._pool is not None, ",".join(compiler) or "-")
"""


def run_process(cache_dir: Path, workers: int) -> list[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               TILE_CACHE_DIR=str(cache_dir / "tile"), TORCHINDUCTOR_CACHE_DIR=str(cache_dir / "inductor"),
               TILE_GRAPH_CACHE="1", TILE_COMPILE_WORKERS=str(workers), TILE_PRECOMPILE="1")
    for name in ("TILE_CACHE_DISABLE", "TILE_INTERPRET", "TILE_DUMP_IR"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-c", PROCESS], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    line = [row for row in done.stdout.splitlines() if row.startswith("RESULT ")]
    assert line, done.stdout[-2000:]
    return line[0].split()[1:]


def test_warm_start_imports_no_compiler_and_starts_no_worker(tmp_path):
    # cold: compiled here (on threads: this machine may have 2 cores), the compiler imported
    hits, compiles, _, _, imported = run_process(tmp_path, workers=0)
    assert hits == "0" and int(compiles) > 0 and "xdsl" in imported
    # warm, with workers allowed: everything from the caches, nothing of the compiler, no worker
    hits, compiles, loaded, pool_started, imported = run_process(tmp_path, workers=2)
    assert int(hits) == 2 and compiles == "0" and int(loaded) > 0  # forward and backward graphs
    assert pool_started == "False"
    assert imported == "-"


@pytest.fixture
def fake_lowering(monkeypatch):
    """GraphLowering.run replaced by a stub (restored after the test), with our hook installed on it."""
    from torch._inductor.graph import GraphLowering

    ran = []
    monkeypatch.setattr(GraphLowering, "run", lambda self, *args: ran.append(args) or "lowered")
    started = []
    monkeypatch.setattr(compile_workers, "start_early", lambda: started.append(True))
    with compile_workers.start_at_lowering():  # installs the hook around the stub
        pass
    return GraphLowering, ran, started


def test_workers_start_when_a_tile_graph_is_lowered(fake_lowering):
    GraphLowering, ran, started = fake_lowering
    with compile_workers.start_at_lowering():
        assert started == []  # entering the compile starts nothing: the graph cache may still hit
        assert GraphLowering.run(object(), 1, 2) == "lowered"
    assert ran == [(1, 2)] and started == [True]


def test_lowering_outside_a_tile_compile_starts_no_worker(fake_lowering):
    GraphLowering, ran, started = fake_lowering
    GraphLowering.run(object(), 3)  # as backend="inductor" lowers its graphs
    assert ran == [(3,)] and started == []
    with compile_workers.start_at_lowering():  # installing again does not wrap twice
        GraphLowering.run(object())
    assert started == [True]


def test_fx_graph_hit_starts_no_worker(tmp_path, monkeypatch):
    """The AOTAutograd entry gone, the FX-graph entry there: the inner compile runs and loads the graph
    from the cache without lowering it, so no worker starts."""
    import shutil

    import torch
    from torch._dynamo.utils import counters

    from inductor_tile import config, metrics
    from inductor_tile.kernel_compiler.runtime import disk_cache

    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "tile"))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    for name in ("TILE_CACHE_DISABLE", "TILE_INTERPRET", "TILE_DUMP_IR"):
        monkeypatch.delenv(name, raising=False)
    disk_cache.clear_memory_state()
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(9, 20, generator=gen, dtype=torch.float64)

    def f(t):
        return torch.sigmoid(t) * 2.5 - t

    pools = []
    monkeypatch.setattr(compile_workers, "pool", lambda workers: pools.append(workers))
    try:
        with config.patch(graph_cache=True, compile_workers=0, precompile=True):
            torch._dynamo.reset()
            torch.testing.assert_close(torch.compile(f, backend="tile")(x), f(x))
        shutil.rmtree(tmp_path / "tile" / "graphs" / "aotautograd", ignore_errors=True)
        pools.clear()
        torch._dynamo.reset()
        metrics.reset()
        counters.clear()
        with config.patch(graph_cache=True, compile_workers=2, precompile=True):
            torch.testing.assert_close(torch.compile(f, backend="tile")(x), f(x))
        assert metrics.graph_cache_hits == 1 and metrics.generated_kernels == 0
        assert pools == []
    finally:
        torch._dynamo.reset()
        disk_cache.clear_memory_state()


def test_first_run_starts_workers_before_tracing(tmp_path, monkeypatch):
    """Nothing in the graph cache: the pool starts as the backend is entered, before AOTAutograd traces
    (and so before lowering)."""
    import torch
    from torch._functorch import aot_autograd

    from inductor_tile import config
    from inductor_tile.kernel_compiler.runtime import disk_cache

    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "tile"))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    for name in ("TILE_CACHE_DISABLE", "TILE_INTERPRET", "TILE_DUMP_IR"):
        monkeypatch.delenv(name, raising=False)
    disk_cache.clear_memory_state()
    events = []
    monkeypatch.setattr(compile_workers, "pool", lambda workers: events.append(("pool", workers)))
    original = aot_autograd.create_aot_state
    monkeypatch.setattr(aot_autograd, "create_aot_state", lambda *a, **k: (events.append(("trace",)), original(*a, **k))[1])
    x = torch.randn(11, 3, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    try:
        with config.patch(graph_cache=True, compile_workers=2, precompile=True):
            torch._dynamo.reset()
            torch.testing.assert_close(torch.compile(lambda t: torch.cos(t) + t * t, backend="tile")(x), torch.cos(x) + x * x)
        assert events and events[0] == ("pool", 2) and ("trace",) in events
    finally:
        torch._dynamo.reset()
        disk_cache.clear_memory_state()
