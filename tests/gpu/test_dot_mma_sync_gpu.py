"""tl.dot on Hopper with wgmma switched off (TILE_WGMMA=0: the mma.sync path sm_80 GPUs take; on
sm_90 wgmma is the default, which test_dot_gpu.py covers): the matmul and attention kernels of
dot_kernels.py, random inputs, NaN-poisoned outputs, float64 references. The kernels' in-memory
caches are emptied around each test so that the switch takes effect.
"""

from __future__ import annotations

import pytest
import torch

from gpu.test_dot_gpu import TOLERANCE, _random, _relative_error, check_matmul
from model_benchmarks import dot_kernels

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0), reason="the switch exists on sm_90")]



@pytest.fixture(autouse=True)
def wgmma_off(monkeypatch):
    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    monkeypatch.setenv("TILE_WGMMA", "0")
    monkeypatch.setenv("TILE_PIPELINE", "1")  # the cp.async rings are opt-in until these pass on a GPU
    for kernel in (dot_kernels.matmul_kernel, dot_kernels.attention_fwd_kernel):
        monkeypatch.setattr(kernel, "cache", {})
        monkeypatch.setattr(kernel, "launch_cache", {})


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("blocks", [(128, 128, 32, 4), (64, 64, 32, 4), (128, 64, 64, 4), (64, 256, 16, 4),
                                    (128, 128, 32, 8), (128, 256, 32, 8)],
                         ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("shape", [(512, 256, 384), (333, 271, 145)], ids=["aligned", "edges"])
def test_matmul(dtype, blocks, shape):
    ptx = check_matmul(dtype, blocks, shape)
    assert ptx and all("mma.sync.aligned" in text and "wgmma" not in text for text in ptx)


@pytest.mark.parametrize("num_stages", [1, 2, 4])
@pytest.mark.parametrize("blocks", [(128, 128, 32, 4), (64, 64, 32, 4)], ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("shape", [(512, 256, 384), (333, 271, 145)], ids=["aligned", "edges"])
def test_matmul_num_stages(num_stages, blocks, shape):
    """cp.async rings read with ldmatrix (passes/pipeline_async_copies.py), masked edges."""
    check_matmul(torch.float16, blocks, shape, seed=8, num_stages=num_stages)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_matmul_transposed_operands(dtype):
    """a and b transposed through strides: a M-major, b K-major in shared memory."""
    gen = torch.Generator().manual_seed(1)
    M, N, K = 200, 136, 96
    a = _random((K, M), dtype, gen).t()
    b = _random((N, K), dtype, gen).t()
    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    dot_kernels.matmul(a, b, c, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    assert _relative_error(c, a.double() @ b.double()) <= TOLERANCE[dtype] + 1e-3


@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("blocks", [(64, 64, 4), (128, 64, 8), (64, 32, 4)], ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("seq", [1024, 333])
def test_causal_attention(head_dim, blocks, seq):
    """Both dots on mma.sync, k and v through cp.async rings."""
    gen = torch.Generator().manual_seed(3)
    heads = 6
    q, k, v = (_random((heads, seq, head_dim), torch.float16, gen) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    bm, bn, warps = blocks
    dot_kernels.attention(q, k, v, head_dim**-0.5, o, BLOCK_M=bm, BLOCK_N=bn, num_warps=warps)
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True,
                                                           scale=head_dim**-0.5)
    assert not o.isnan().any()
    torch.testing.assert_close(o.double(), ref, atol=2e-3, rtol=2e-3)
