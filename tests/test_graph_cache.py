"""The graph cache of backend="tile" (inductor_tile/graph_cache.py): compiled graphs reused by a
second process without codegen or kernel compiles, damaged entries rebuilt with a warning,
keys that change with our config, and Inductor's own caches neither read nor written."""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from torch._dynamo.utils import counters

from inductor_tile import config, graph_cache, metrics
from inductor_tile.kernel_compiler.runtime import disk_cache

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def caches(tmp_path, monkeypatch):
    """Fresh tile and Inductor cache directories, the graph cache on."""
    tile_dir, inductor_dir = tmp_path / "tile", tmp_path / "inductor"
    monkeypatch.setenv("TILE_CACHE_DIR", str(tile_dir))
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(inductor_dir))
    monkeypatch.delenv("TILE_CACHE_DISABLE", raising=False)
    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    disk_cache.clear_memory_state()
    torch._dynamo.reset()
    metrics.reset()
    counters.clear()
    with config.patch(graph_cache=True):
        yield tile_dir, inductor_dir
    torch._dynamo.reset()
    disk_cache.clear_memory_state()


def scaled_softmax(x, w):
    return torch.softmax(x * w + 0.5, dim=-1)


def inputs():
    gen = torch.Generator().manual_seed(7)
    return torch.randn(6, 40, generator=gen, dtype=torch.float64), torch.randn(40, generator=gen, dtype=torch.float64)


def check(fn, backend="tile"):
    x, w = inputs()
    torch.testing.assert_close(torch.compile(fn, backend=backend)(x, w), fn(x, w))


def entry_files(directory: Path) -> list[Path]:
    return sorted(p for sub in ("fxgraph", "aotautograd") if (directory / sub).is_dir()
                  for p in (directory / sub).rglob("*") if p.is_file() and not p.name.startswith("."))


PROCESS = """
import sys, torch
from torch._dynamo.utils import counters
from inductor_tile import metrics
from inductor_tile.kernel_compiler.runtime import disk_cache

def f(x, w):
    return (torch.tanh(x * w) - 1.5).sum(-1)

gen = torch.Generator().manual_seed(3)
x = torch.randn(5, 33, generator=gen, dtype=torch.float64, requires_grad=True)
w = torch.randn(33, generator=gen, dtype=torch.float64, requires_grad=True)
out = torch.compile(f, backend="tile")(x, w)
out.sum().backward()
rx, rw = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
f(rx, rw).sum().backward()
torch.testing.assert_close(out, f(rx, rw)); torch.testing.assert_close(x.grad, rx.grad)
torch.testing.assert_close(w.grad, rw.grad)
print(metrics.generated_kernels, metrics.graph_cache_hits, metrics.graph_cache_misses,
      disk_cache.stats.compiles, counters["aot_autograd"]["autograd_cache_hit"])
"""


def test_second_process_hits_the_graph_cache(caches, capsys):
    tile_dir, inductor_dir = caches
    with config.patch(compile_workers=0):  # the cold compile runs here, as `python -c PROCESS` would
        exec(compile(PROCESS, "<string>", "exec"), {"__name__": "__main__"})
    generated, hits, misses, compiles, aot_hits = [int(v) for v in capsys.readouterr().out.split()]
    assert generated > 0 and compiles > 0 and misses == 2 and hits == 0  # forward and backward compiled
    env = dict(os.environ, PYTHONPATH=_pythonpath(), TILE_GRAPH_CACHE="1", TILE_COMPILE_WORKERS="0")
    done = subprocess.run([sys.executable, "-c", PROCESS], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    generated, hits, misses, compiles, aot_hits = [int(v) for v in done.stdout.split()]
    assert (generated, compiles, misses) == (0, 0, 0)  # no codegen, no kernel compile
    assert hits == 2 and aot_hits == 1
    assert entry_files(tile_dir / "graphs")
    assert not entry_files(inductor_dir)  # Inductor's directory untouched


def test_damaged_entries_are_rebuilt_with_a_warning(caches):
    tile_dir, inductor_dir = caches
    check(scaled_softmax)
    files = entry_files(tile_dir / "graphs")
    assert files and metrics.graph_cache_misses == 1
    for path in files:  # flip one byte in the middle of every entry
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0x40
        path.write_bytes(bytes(data))
    torch._dynamo.reset()
    metrics.reset()
    with pytest.warns(UserWarning, match="damaged graph cache entry"):
        check(scaled_softmax)
    assert metrics.graph_cache_misses == 1 and metrics.graph_cache_hits == 0
    assert metrics.generated_kernels > 0
    assert all(not p.exists() or p.read_bytes() != b"" for p in files)
    torch._dynamo.reset()
    metrics.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the rebuilt entries load cleanly
        check(scaled_softmax)
    assert metrics.graph_cache_hits == 1 and metrics.generated_kernels == 0


def test_damaged_wrapper_module_is_rewritten(caches):
    tile_dir, _ = caches
    check(scaled_softmax)
    modules = [p for p in (tile_dir / "graphs").rglob("*.py") if "def call(" in p.read_text()]
    assert modules
    for path in modules:
        path.write_text(path.read_text().replace("def call(", "def call_broken("))
    torch._dynamo.reset()
    metrics.reset()
    with pytest.warns(UserWarning, match="wrapper module differs"):
        check(scaled_softmax)
    assert metrics.graph_cache_hits == 1


def test_config_change_misses(caches):
    check(scaled_softmax)
    torch._dynamo.reset()
    metrics.reset()
    with config.patch(fusion=False):
        check(scaled_softmax)
    assert metrics.graph_cache_hits == 0 and metrics.graph_cache_misses == 1 and metrics.generated_kernels > 1
    torch._dynamo.reset()
    metrics.reset()
    check(scaled_softmax)
    assert metrics.graph_cache_hits == 1 and metrics.generated_kernels == 0


def matmul_only(x, w):
    return x @ w.unsqueeze(-1)  # no kernel for either backend: Inductor compiles no C++ here


@pytest.mark.parametrize("first", ["tile", "inductor"])
def test_inductor_and_tile_keep_their_own_entries(caches, first):
    tile_dir, inductor_dir = caches
    second = "inductor" if first == "tile" else "tile"
    for backend in (first, second):
        torch._dynamo.reset()
        counters.clear()
        check(matmul_only, backend)
        assert counters["inductor"]["fxgraph_cache_hit"] == 0  # never the other backend's entry
        assert counters["inductor"]["fxgraph_cache_miss"] == 1
    tile_entries, inductor_entries = entry_files(tile_dir / "graphs"), entry_files(inductor_dir)
    assert tile_entries and inductor_entries
    assert not {p.name for p in tile_entries} & {p.name for p in inductor_entries}
    for backend in (first, second):  # each hits its own entry again
        torch._dynamo.reset()
        counters.clear()
        check(matmul_only, backend)
        assert counters["inductor"]["fxgraph_cache_hit"] == 1
    assert entry_files(tile_dir / "graphs") == tile_entries and entry_files(inductor_dir) == inductor_entries


def test_identity_follows_config():
    before = graph_cache.identity()
    with config.patch(max_rblock=config.max_rblock * 2):
        assert graph_cache.identity() != before
    assert graph_cache.identity() == before


def test_cli_stats_and_clear_graphs(caches, capsys):
    from inductor_tile import cache as cli

    tile_dir, _ = caches
    check(matmul_only)
    assert entry_files(tile_dir / "graphs")
    assert cli.main(["--dir", str(tile_dir), "stats"]) == 0
    assert "graphs:          2 entries" in capsys.readouterr().out  # the FX graph and its AOTAutograd entry
    assert cli.main(["--dir", str(tile_dir), "clear", "--graphs"]) == 0
    assert not entry_files(tile_dir / "graphs")


def _pythonpath() -> str:
    """This checkout first, then what the parent had (the GPU machine's packages live there)."""
    return os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
