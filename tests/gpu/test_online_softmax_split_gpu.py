"""Cross-entropy over a vocabulary for few rows on CUDA: Inductor splits each row's online softmax (blocks, then
the blocks' (max, sum) pairs), which our codegen generates (it handed the node to Triton before), compared with
eager in float64."""

import pytest
import torch
import torch.nn.functional as F

from inductor_tile import metrics
from inductor_tile.backend import tile_backend

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("cols", [32000, 50257])
def test_split_cross_entropy_gpu(cols):
    g = torch.Generator(device="cuda").manual_seed(cols)
    logits = torch.randn(64, cols, device="cuda", dtype=torch.float16, generator=g) * 3
    target = torch.randint(0, cols, (64,), device="cuda", generator=g)
    torch._dynamo.reset()
    metrics.reset()
    loss = torch.compile(lambda x, t: F.cross_entropy(x.float(), t), backend=tile_backend)(logits, target)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    sources = "".join(metrics.kernel_sources.values())
    assert sources.count("@inductor_tile.jit") >= 3, sources  # the blocks, their pairs, the loss
    ref = F.cross_entropy(logits.double(), target)
    torch.testing.assert_close(loss.double(), ref, rtol=1e-4, atol=1e-4)
