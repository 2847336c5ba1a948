"""A CPU tile wider than LLVM's code generator takes (65536 elements in one program) is refused with
an error naming the kernel, instead of an LLVM assertion that aborts the process. In a child
process, so that a regression fails this test rather than killing the test run."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import torch
import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.to_llvm.context import LoweringError

@inductor_tile.jit
def double_tile(x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)

x = torch.randn(256 * 256, generator=torch.Generator().manual_seed(0))
y = torch.full_like(x, float("nan"))
double_tile[(1,)](x[:128 * 256], y, R=128, C=256)  # 32768 elements: compiles and runs
assert torch.equal(y[:128 * 256], x[:128 * 256] * 2) and y[128 * 256:].isnan().all()
try:
    double_tile[(1,)](x, y, R=256, C=256)
except LoweringError as e:
    print("refused:", e)
"""


def test_cpu_tile_over_the_llvm_limit_is_an_error(tmp_path):
    env = dict(os.environ, TILE_CACHE_DIR=str(tmp_path), TILE_DEVICES="cpu",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    script = tmp_path / "child.py"  # a file: @jit reads its kernels' source
    script.write_text(CHILD)
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused: double_tile: a tile of 65536 elements" in done.stdout, done.stdout
