"""On CUDA, attention with a mask broadcast along the keys no longer sends `backend="tile"` graphs to
the fp32 math attention (`inductor_tile/sdpa_masks.py`); results, fully masked rows included, match
float64 attention."""

import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.gpu

MATH = 0  # torch._fused_sdp_choice's number of the math implementation


def attention_layers(q, k, v, mask):
    h = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return F.scaled_dot_product_attention(h, k, v, attn_mask=mask)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_row_mask_attention_matches_math(dtype):
    from inductor_tile import sdpa_masks

    gen = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(4, 12, 512, 64, device="cuda", dtype=dtype, generator=gen) for _ in range(3))
    rows = torch.rand(512, device="cuda", generator=gen) > 0.2
    rows[0] = True
    mask = rows[None, None, :, None].expand(4, 1, 512, 512)
    assert torch._fused_sdp_choice(q, k, v, mask, 0.0, False) == MATH  # the case this exists for
    assert torch._fused_sdp_choice(q, k, v, None, 0.0, False) != MATH
    torch._dynamo.reset()
    got = torch.compile(attention_layers, backend="tile")(q, k, v, mask)
    expected = attention_layers(q.double(), k.double(), v.double(), mask)
    assert torch.count_nonzero(expected[:, :, ~rows]) == 0
    torch.testing.assert_close(got.double(), expected, atol=2e-2, rtol=2e-2)


def causal_from_shapes(q, k, v):
    positions = torch.arange(q.shape[2], device=q.device)
    mask = (positions[None, :] <= positions[:, None])[None, None].expand(q.shape[0], 1, q.shape[2], q.shape[2])
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_causal_mask_from_shapes_as_the_flag(dtype):
    import inductor_tile.config as config

    gen = torch.Generator(device="cuda").manual_seed(1)
    q, k, v = (torch.randn(4, 12, 512, 64, device="cuda", dtype=dtype, generator=gen) for _ in range(3))
    torch._dynamo.reset()
    with config.patch(sdpa_causal_masks=True):
        got = torch.compile(causal_from_shapes, backend="tile")(q, k, v)
    expected = causal_from_shapes(q.double(), k.double(), v.double())
    torch.testing.assert_close(got.double(), expected, atol=2e-2, rtol=2e-2)


def biased_attention(bias, additive, q, k, v):  # T5: a permuted position bias plus an additive mask
    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias + additive)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_strided_float_mask_forward_and_backward_match_math(dtype):
    gen = torch.Generator(device="cuda").manual_seed(2)
    q, k, v = (torch.randn(2, 8, 256, 64, device="cuda", dtype=dtype, generator=gen) for _ in range(3))
    bias = torch.randn(256, 256, 8, device="cuda", dtype=dtype, generator=gen).permute(2, 0, 1)[None]
    masked = torch.rand(2, 1, 256, 256, device="cuda", generator=gen) < 0.3
    masked[:, :, 5] = True  # a fully masked query row
    additive = torch.zeros(2, 1, 256, 256, device="cuda", dtype=dtype).masked_fill(masked, float("-inf"))
    mask = bias + additive
    assert mask.stride(-1) == 8 and torch._fused_sdp_choice(q, k, v, mask, 0.0, False) == MATH
    assert torch._fused_sdp_choice(q, k, v, mask.contiguous(), 0.0, False) != MATH
    leaves = [t.clone().requires_grad_() for t in (bias, q, k, v)]
    reference = [t.detach().double().requires_grad_() for t in (bias, q, k, v)]
    torch._dynamo.reset()
    got = torch.compile(biased_attention, backend="tile")(leaves[0], additive, *leaves[1:])
    expected = biased_attention(reference[0], additive.double(), *reference[1:])
    assert torch.count_nonzero(expected[:, :, 5]) == 0
    torch.testing.assert_close(got.double(), expected, atol=2e-2, rtol=2e-2)
    grad = torch.randn_like(expected)
    got.backward(grad.to(dtype))
    expected.backward(grad)
    for mine, want in zip(leaves, reference):
        assert torch.isfinite(mine.grad).all()
        torch.testing.assert_close(mine.grad.double(), want.grad, atol=5e-2, rtol=5e-2)
