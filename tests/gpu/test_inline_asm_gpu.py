"""tl.inline_asm_elementwise on an NVIDIA GPU: the PTX kernels of tests/test_inline_asm_ptx.py (one and two
results, a scalar argument, four int8 and two fp16 per register) on random inputs into poisoned outputs,
against torch in int64 / float64, over several programs and warp counts."""

from __future__ import annotations

import pytest
import torch

from test_inline_asm_ptx import BLOCK, SIGNATURES, inputs, reference

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("warps", [1, 4, 8])
@pytest.mark.parametrize("name", list(SIGNATURES))
def test_inline_asm_on_gpu(name, warps):
    gen = torch.Generator().manual_seed(11)
    programs = 3
    blocks = [inputs(name, gen) for _ in range(programs)]
    ins = [torch.cat([b[0][i] for b in blocks]) for i in range(len(blocks[0][0]))]
    outs = [torch.cat([b[1][i] for b in blocks]) for i in range(len(blocks[0][1]))]
    scalars = blocks[0][2]
    kernel, _ = SIGNATURES[name]
    gpu_outs = [o.cuda() for o in outs]
    kernel[(programs,)](*[t.cuda() for t in ins], *gpu_outs, *scalars.values(), BLOCK=BLOCK, num_warps=warps)
    for got, want in zip(gpu_outs, reference(name, ins, scalars)):
        assert torch.equal(got.cpu(), want)
