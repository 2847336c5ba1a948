"""A second process reuses the tuning of generated kernels: the tuning database answers, nothing
is benchmarked again. On the CPU, with the CUDA heuristics' candidates (as test_codegen_heuristics'
GPU-config tests): the kernels run on the CPU, the autotuner times them there."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROCESS = """
import torch
from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from inductor_tile.kernel_compiler.runtime import autotuner
from inductor_tile.scheduler import scheduling

scheduling._heuristics_device = lambda nodes: "cuda"  # the GPU's candidate configs, run on the CPU
config.autotune = "reductions"

def f(x, w):
    return torch.softmax(x * w, -1), x.sum(0)

gen = torch.Generator().manual_seed(5)
x, w = torch.randn(64, 300, generator=gen, dtype=torch.float64), torch.randn(300, generator=gen, dtype=torch.float64)
out = torch.compile(f, backend=tile_backend)(x, w)
for o, r in zip(out, f(x, w)):
    torch.testing.assert_close(o, r, rtol=1e-12, atol=1e-12)
assert metrics.fallback_kernels == 0, metrics.fallback_reasons
print(metrics.generated_kernels, autotuner.stats.tunings, autotuner.stats.benchmarks, autotuner.stats.db_hits)
"""


def test_second_process_takes_generated_kernels_tuning_from_the_database(tmp_path):
    env = dict(os.environ, TILE_CACHE_DIR=str(tmp_path / "tile"), TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"),
               TILE_GRAPH_CACHE="0", TILE_COMPILE_WORKERS="0",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    env.pop("TILE_CACHE_DISABLE", None)

    def run():
        done = subprocess.run([sys.executable, "-c", PROCESS], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return [int(v) for v in done.stdout.split()]

    kernels, tunings, benchmarks, hits = run()
    assert kernels == 2 and tunings == 2 and benchmarks >= 2 * 2 and hits == 0  # two reductions, >= 2 candidates each
    kernels, tunings, benchmarks, hits = run()
    assert (kernels, tunings, benchmarks, hits) == (2, 0, 0, 2)
    assert (tmp_path / "tile" / "tuning.db").is_file()
