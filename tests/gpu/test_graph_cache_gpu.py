"""The graph cache on CUDA (torch 2.11 on the GPU machine): a second process loads forward and
backward graphs from the cache, compiles nothing, and Inductor's directory stays untouched;
Inductor compiling the same function afterwards gets its own Triton code."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]

PROCESS = """
import sys, torch
from torch._dynamo.utils import counters
from inductor_tile import metrics
from inductor_tile.kernel_compiler.runtime import disk_cache

def f(x, w):
    return torch.nn.functional.layer_norm(torch.relu(x * w), (x.shape[-1],)).sum(-1)

backend = sys.argv[1]
gen = torch.Generator(device="cuda").manual_seed(3)
x = torch.randn(64, 300, generator=gen, device="cuda", dtype=torch.float16, requires_grad=True)
w = torch.randn(300, generator=gen, device="cuda", dtype=torch.float16, requires_grad=True)
out = torch.compile(f, backend=backend)(x, w)
out.float().sum().backward()
rx, rw = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
f(rx, rw).sum().backward()
torch.testing.assert_close(out.double(), f(rx, rw), rtol=2e-2, atol=5e-2)
torch.testing.assert_close(x.grad.double(), rx.grad, rtol=2e-2, atol=5e-2)
print(metrics.generated_kernels, metrics.graph_cache_hits, metrics.graph_cache_misses,
      disk_cache.stats.compiles, counters["inductor"]["fxgraph_cache_hit"])
"""


def entry_files(directory: Path) -> list[Path]:
    return sorted(p for sub in ("fxgraph", "aotautograd") if (directory / sub).is_dir()
                  for p in (directory / sub).rglob("*") if p.is_file() and not p.name.startswith("."))


def test_second_process_hits_the_graph_cache_on_gpu(tmp_path):
    env = dict(os.environ, TILE_CACHE_DIR=str(tmp_path / "tile"), TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"),
               TILE_GRAPH_CACHE="1", PYTHONPATH=_pythonpath(),
               TILE_COMPILE_WORKERS="0")  # compiles in this process, where disk_cache.stats counts them
    env.pop("TILE_CACHE_DISABLE", None)

    def run(backend):
        done = subprocess.run([sys.executable, "-c", PROCESS, backend], env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return [int(v) for v in done.stdout.split()]

    generated, hits, misses, compiles, _ = run("tile")
    assert generated > 0 and compiles > 0 and misses == 2 and hits == 0
    generated, hits, misses, compiles, _ = run("tile")
    assert (generated, misses, compiles, hits) == (0, 0, 0, 2)
    assert not entry_files(tmp_path / "inductor")
    _, _, _, _, inductor_hits = run("inductor")  # Inductor after tile: compiles its own code
    assert inductor_hits == 0 and entry_files(tmp_path / "inductor")
    generated, hits, _, _, _ = run("tile")  # and tile after Inductor still gets its own
    assert generated == 0 and hits == 2


def _pythonpath() -> str:
    """This checkout first, then what the parent had (the GPU machine's packages live there)."""
    return os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
