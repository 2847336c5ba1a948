"""A generated Longformer kernel (constant_pad_nd + select + slice over the chunked attention,
with floor-rounding index forms for negative dividends) that faulted on the H100: LLVM narrows
part of its index math to packed `add.s16x2`, which ptxas 13.0 -O3 compiled with its constant
operand lost (ptx_fixups.py). The GPU result must equal the CPU target's, element for element."""

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
    out = torch.full((50462720,), float("nan"), dtype=torch.float16, device=device)  # padded strides
    fn[(49248,)](inp.to(device), out, 50429952, XBLOCK=1024, **({{"num_warps": 8}} if device == "cuda" else {{}}))
    outs.append(out.cpu())
written = ~outs[1].isnan()
assert written.sum() == 50429952, int(written.sum())
assert torch.equal(outs[0].isnan(), outs[1].isnan()), "GPU and CPU wrote different elements"
assert torch.equal(outs[0][written], outs[1][written]), "GPU and CPU results differ"
assert outs[1][written].abs().sum() > 0  # the loads did read the input
"""


def test_longformer_pad_kernel_runs_on_the_gpu_as_on_the_cpu():
    proc = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
