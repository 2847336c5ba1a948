"""Attention masks broadcast along the key dimension are made dense there before AOTAutograd
(`inductor_tile/sdpa_masks.py`), so that CUDA's fused attention kernels accept them."""

import pytest
import torch
import torch.nn.functional as F

from inductor_tile import sdpa_masks


def attention(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def two_attentions(q, k, v, mask):  # one mask, two layers: one copy
    h = F.scaled_dot_product_attention(q, k, v, mask)
    return F.scaled_dot_product_attention(h, k, v, mask)


def query_padding_mask(batch, seq, seed=0):
    """`[batch, 1, q, k]` with strides `(0, q, 1, 0)`: transformers' mask under torch.compile."""
    rows = torch.rand(seq, generator=torch.Generator().manual_seed(seed)) > 0.3
    rows[0] = True  # every row keeps a key somewhere: no all-masked softmax
    return rows[None, None, :, None].expand(batch, 1, seq, seq)


def inputs(batch=2, heads=3, seq=16, dim=8):
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(batch, heads, seq, dim, generator=gen) for _ in range(3))
    return q, k, v, query_padding_mask(batch, seq)


def traced(fn, args):
    graphs = []

    def capture(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=capture, fullgraph=True)(*args)
    return graphs[0]


def test_dense_along_keys_keeps_values_and_broadcasts():
    mask = query_padding_mask(4, 16)
    dense = sdpa_masks.dense_along_keys(mask)
    assert dense.shape == mask.shape and dense.dtype == mask.dtype
    assert torch.equal(dense, mask)
    assert dense.stride(-1) == 1
    assert dense.stride(0) == 0  # broadcast over the batch still: the copy is [1, 1, q, k]
    assert dense._base.numel() == 16 * 16


@pytest.mark.parametrize("fn, masks", [(attention, 1), (two_attentions, 1)])
def test_rewrite_gives_the_same_attention(monkeypatch, fn, masks):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    args = inputs()
    gm = traced(fn, args)
    assert sdpa_masks.dense_key_masks(gm) == masks
    calls = [n for n in gm.graph.nodes if n.op == "call_function" and n.target in sdpa_masks.SDPA_TARGETS]
    assert calls and all(n.args[3].target is sdpa_masks.dense_along_keys
                         if len(n.args) > 3 else n.kwargs["attn_mask"].target is sdpa_masks.dense_along_keys
                         for n in calls)
    expected = fn(*(a.double() if a.is_floating_point() else a for a in args))
    out = gm(*args)
    got = torch.full_like(expected, float("nan"), dtype=torch.float32)
    got.copy_(out[0] if isinstance(out, (tuple, list)) else out)
    torch.testing.assert_close(got.double(), expected, atol=1e-5, rtol=1e-5)


def test_masks_read_along_keys_stay(monkeypatch):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    q, k, v, _ = inputs()
    key_padding = (torch.rand(2, 1, 1, 16) > 0.3).expand(2, 1, 16, 16)  # last stride 1 already
    gm = traced(attention, (q, k, v, key_padding))
    assert sdpa_masks.dense_key_masks(gm) == 0
    gm = traced(attention, (q, k, v, None))
    assert sdpa_masks.dense_key_masks(gm) == 0


def test_cuda_only_by_default():
    gm = traced(attention, inputs())
    assert sdpa_masks.dense_key_masks(gm) == 0  # a CPU mask: the CPU's kernels read any strides


def test_tile_backend_rewrites_and_matches_eager(monkeypatch):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    import inductor_tile.config as config

    seen = []
    real = sdpa_masks.dense_key_masks
    monkeypatch.setattr(sdpa_masks, "dense_key_masks", lambda gm: seen.append(real(gm)) or seen[-1])
    args = inputs()
    torch._dynamo.reset()
    with config.patch(graph_cache=False):
        got = torch.compile(two_attentions, backend="tile")(*args)
    assert seen == [1]
    expected = two_attentions(*(a.double() if a.is_floating_point() else a for a in args))
    torch.testing.assert_close(got.double(), expected, atol=1e-5, rtol=1e-5)
