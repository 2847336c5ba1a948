"""A generated Longformer kernel (constant_pad_nd + select + slice over the chunked attention,
with floor-rounding index forms for negative dividends) that faulted on the H100
(CUDA_ERROR_ILLEGAL_ADDRESS) although its addresses stay inside its input (checked on the
CPU). GPUs fall back for such indices until this passes; see NOTES.md, Known gaps."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.gpu

HERE = os.path.dirname(__file__)
RUN = f"""
import sys, torch
from inductor_tile.codegen.runtime import load_kernel
name = "tile_poi_constant_pad_nd_copy_new_zeros_permute_select_slice_5"
fn = load_kernel(name, open({os.path.join(HERE, 'data', 'longformer_pad_kernel.py')!r}).read())
g = torch.Generator().manual_seed(0)
inp = torch.randn(75497472, generator=g).to(torch.float16)
outs = []
for device in ("cuda", "cpu"):
    out = torch.full((50429952,), float("nan"), dtype=torch.float16, device=device)
    fn[(49248,)](inp.to(device), out, 50429952, XBLOCK=1024, **({{"num_warps": 8}} if device == "cuda" else {{}}))
    outs.append(out.cpu())
assert torch.equal(outs[0], outs[1]), "GPU and CPU results differ"
"""


@pytest.mark.xfail(reason="faulted on the H100 on 2026-11-22; not yet understood", strict=False)
def test_longformer_pad_kernel_runs_on_the_gpu_as_on_the_cpu():
    proc = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
