"""Attention masks constant along the key dimension are taken out of `scaled_dot_product_attention`
before AOTAutograd (`inductor_tile/sdpa_masks.py`): unmasked attention, then the fully masked rows
zeroed, as the math implementation computes them."""

import pytest
import torch
import torch.nn.functional as F

from torch._functorch._aot_autograd.autograd_cache import check_node_safe

from inductor_tile import sdpa_masks


def attention(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def two_attentions(q, k, v, mask):  # the mask positional, and a second layer fed by the first
    h = F.scaled_dot_product_attention(q, k, v, mask, 0.0, False, scale=0.3)
    return F.scaled_dot_product_attention(h, k, v, mask)


def row_mask(batch, seq, dtype=torch.bool, seed=0):
    """`[batch, 1, q, k]` with strides `(0, q, 1, 0)`, as transformers' mask under torch.compile; about
    a third of the rows fully masked (False, or -inf in an additive mask; others 0 or a finite value)."""
    gen = torch.Generator().manual_seed(seed)
    kept = torch.rand(seq, generator=gen) > 0.3
    kept[0] = True
    if dtype == torch.bool:
        rows = kept
    else:
        rows = torch.where(kept, -3 * torch.rand(seq, generator=gen), torch.tensor(float("-inf"))).to(dtype)
    return rows[None, None, :, None].expand(batch, 1, seq, seq), kept


def inputs(dtype=torch.bool, batch=2, heads=3, seq=16, dim=8):
    gen = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(batch, heads, seq, dim, generator=gen) for _ in range(3))
    mask, kept = row_mask(batch, seq, dtype)
    return (q, k, v, mask), kept


def double(args):
    return tuple(a.double() if a.is_floating_point() else a for a in args)


def traced(fn, args):
    graphs = []

    def capture(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=capture, fullgraph=True)(*args)
    return graphs[0]


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32])
@pytest.mark.parametrize("fn, calls", [(attention, 1), (two_attentions, 2)])
def test_rewrite_computes_what_the_math_attention_does(monkeypatch, dtype, fn, calls):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    args, kept = inputs(dtype)
    gm = traced(fn, args)
    assert sdpa_masks.drop_key_constant_masks(gm) == calls
    assert sum(n.target == "masked_fill" for n in gm.graph.nodes) == calls
    assert all(n.kwargs.get("attn_mask", n.args[3] if len(n.args) > 3 else None) is None
               for n in gm.graph.nodes if n.target in sdpa_masks.SDPA_TARGETS)
    from torch._functorch._aot_autograd.autograd_cache import check_node_safe

    for n in gm.graph.nodes:  # AOTAutograd's cache (the graph cache) still takes the graph
        check_node_safe(n)
    expected = fn(*double(args))
    assert torch.count_nonzero(expected[:, :, ~kept]) == 0  # the math attention's fully masked rows
    out = gm(*args)
    got = torch.full_like(expected, float("nan"), dtype=torch.float32)
    got.copy_(out[0] if isinstance(out, (tuple, list)) else out)
    torch.testing.assert_close(got.double(), expected, atol=1e-5, rtol=1e-5)


def test_masks_that_vary_along_keys_stay(monkeypatch):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    (q, k, v, _), _ = inputs()
    key_padding = (torch.rand(2, 1, 1, 16) > 0.3).expand(2, 1, 16, 16)  # last stride 1
    assert sdpa_masks.drop_key_constant_masks(traced(attention, (q, k, v, key_padding))) == 0
    assert sdpa_masks.drop_key_constant_masks(traced(attention, (q, k, v, None))) == 0


def test_cuda_only_by_default():
    args, _ = inputs()
    assert sdpa_masks.drop_key_constant_masks(traced(attention, args)) == 0  # the CPU's kernels read any strides


def test_tile_backend_rewrites_and_matches_eager(monkeypatch):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    import inductor_tile.config as config

    seen = []
    real = sdpa_masks.drop_key_constant_masks
    monkeypatch.setattr(sdpa_masks, "drop_key_constant_masks", lambda gm: seen.append(real(gm)) or seen[-1])
    args, _ = inputs()
    torch._dynamo.reset()
    with config.patch(graph_cache=False):
        got = torch.compile(two_attentions, backend="tile")(*args)
    assert seen == [2]
    torch.testing.assert_close(got.double(), two_attentions(*double(args)), atol=1e-5, rtol=1e-5)


def causal_from_shapes(q, k, v):
    """A decoder's mask as transformers builds it under torch.compile: from aranges, then expanded."""
    batch, _, seq, _ = q.shape
    positions = torch.arange(seq)
    mask = (positions[None, :] <= positions[:, None])[None, None].expand(batch, 1, seq, seq)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def shifted_from_shapes(q, k, v):  # a band that is not the lower triangle: stays
    seq = q.shape[2]
    positions = torch.arange(seq)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=positions[None, :] <= positions[:, None] + 1)


def causal_from_input(q, k, v, lengths):  # a mask that reads a graph input: never evaluated
    positions = torch.arange(q.shape[2])
    mask = (positions[None, :] <= positions[:, None]) & (positions[None, :] < lengths[:, None, None, None])
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


@pytest.mark.parametrize("fn, rewritten", [(causal_from_shapes, 1), (shifted_from_shapes, 0)])
def test_causal_mask_from_shapes_becomes_the_flag(monkeypatch, fn, rewritten):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    (q, k, v, _), _ = inputs()
    gm = traced(fn, (q, k, v))
    assert sdpa_masks.causal_masks_to_flag(gm) == rewritten
    calls = [n for n in gm.graph.nodes if n.target in sdpa_masks.SDPA_TARGETS]
    assert [n.kwargs.get("is_causal", False) for n in calls] == [bool(rewritten)]
    expected = fn(q.double(), k.double(), v.double())
    out = gm(q, k, v)
    got = torch.full_like(expected, float("nan"), dtype=torch.float32)
    got.copy_(out[0] if isinstance(out, (tuple, list)) else out)
    torch.testing.assert_close(got.double(), expected, atol=1e-5, rtol=1e-5)


def test_masks_reading_inputs_are_not_evaluated(monkeypatch):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    (q, k, v, _), _ = inputs()
    gm = traced(causal_from_input, (q, k, v, torch.tensor([16, 16])))  # causal at run time, but not by shape
    assert sdpa_masks.causal_masks_to_flag(gm) == 0


def test_tile_backend_flags_causal_masks_when_enabled(monkeypatch):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    import inductor_tile.config as config

    seen = []
    real = sdpa_masks.causal_masks_to_flag
    monkeypatch.setattr(sdpa_masks, "causal_masks_to_flag", lambda gm: seen.append(real(gm)) or seen[-1])
    (q, k, v, _), _ = inputs()
    for enabled in (False, True):
        torch._dynamo.reset()
        with config.patch(graph_cache=False, sdpa_causal_masks=enabled):
            got = torch.compile(causal_from_shapes, backend="tile")(q, k, v)
        torch.testing.assert_close(got.double(), causal_from_shapes(q.double(), k.double(), v.double()),
                                   atol=1e-5, rtol=1e-5)
    assert seen == [1]  # only when enabled


def position_bias_mask(batch=2, heads=3, seq=16, seed=2):
    """T5's mask: a `[heads, q, k]` bias permuted into `[1, heads, q, k]` (strided key dimension) plus a
    `[batch, 1, q, k]` additive mask with -inf entries, some rows fully -inf."""
    gen = torch.Generator().manual_seed(seed)
    bias = torch.randn(seq, seq, heads, generator=gen).permute(2, 0, 1)[None]
    masked = torch.rand(batch, 1, seq, seq, generator=gen) < 0.3
    masked[:, :, 3] = True  # every key of query 3
    return bias, torch.where(masked, float("-inf"), 0.0)


def biased_attention(bias, additive, q, k, v):  # arguments in the order Dynamo's graph takes them (first use)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias + additive)


def test_strided_float_masks_become_contiguous(monkeypatch):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    (q, k, v, _), _ = inputs()
    bias, additive = position_bias_mask()
    assert (bias + additive).stride(-1) == 3  # strided along the keys, as T5's
    gm = traced(biased_attention, (bias, additive, q, k, v))
    assert sdpa_masks.contiguous_float_masks(gm) == 1
    for node in gm.graph.nodes:
        check_node_safe(node)
        if node.target in sdpa_masks.SDPA_TARGETS:
            assert node.kwargs["attn_mask"].meta["example_value"].is_contiguous()
    expected = biased_attention(*double((bias, additive, q, k, v)))
    assert torch.count_nonzero(expected[:, :, 3]) == 0  # the math attention zeroes a fully masked row
    got = torch.full_like(expected, float("nan"), dtype=torch.float32)
    got.copy_(gm(bias, additive, q, k, v)[0])
    torch.testing.assert_close(got.double(), expected, atol=1e-5, rtol=1e-5)


def test_strided_float_masks_backward_matches_math(monkeypatch):
    """The bias is learned in T5: gradients of q, k, v and the bias, finite where rows are fully masked."""
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    import inductor_tile.config as config

    (q, k, v, _), _ = inputs()
    bias, additive = position_bias_mask()
    leaves = [t.clone().requires_grad_() for t in (bias, q, k, v)]
    reference = [t.detach().double().requires_grad_() for t in (bias, q, k, v)]
    seen = []
    real = sdpa_masks.contiguous_float_masks
    monkeypatch.setattr(sdpa_masks, "contiguous_float_masks", lambda gm: seen.append(real(gm)) or seen[-1])
    torch._dynamo.reset()
    with config.patch(graph_cache=False):
        torch.compile(biased_attention, backend="tile")(leaves[0], additive, *leaves[1:]).square().sum().backward()
    biased_attention(reference[0], additive.double(), *reference[1:]).square().sum().backward()
    assert seen == [1]
    for got, want in zip(leaves, reference):
        assert torch.isfinite(got.grad).all()
        torch.testing.assert_close(got.grad.double(), want.grad, atol=1e-4, rtol=1e-4)


def permuted_bool_attention(q, k, v, keep):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=keep.transpose(-1, -2))  # a strided bool mask


def test_unfused_masks_warn_at_the_users_line(monkeypatch):
    monkeypatch.setattr(sdpa_masks, "DEVICES", ("cpu",))
    import inductor_tile.config as config
    from inductor_tile.kernel_compiler.errors import PerformanceWarning

    (q, k, v, _), _ = inputs()
    keep = torch.rand(2, 3, 16, 16) > 0.2
    keep[..., 0, :] = True  # every query keeps key 0 (after the transpose)
    torch._dynamo.reset()
    with config.patch(graph_cache=False, perf_warnings=True), pytest.warns(PerformanceWarning) as caught:
        got = torch.compile(permuted_bool_attention, backend="tile")(q, k, v, keep)
    ours = [w for w in caught if issubclass(w.category, PerformanceWarning) and "math implementation" in str(w.message)]
    assert len(ours) == 1 and ours[0].filename == __file__ and "strides (768, 256, 1, 16)" in str(ours[0].message)
    assert ours[0].lineno == permuted_bool_attention.__code__.co_firstlineno + 1
    torch.testing.assert_close(got.double(), permuted_bool_attention(*double((q, k, v)), keep), atol=1e-5, rtol=1e-5)
    contiguous = (q, k, v, keep.transpose(-1, -2).contiguous())
    assert sdpa_masks.warn_unfused_masks(traced(attention, contiguous)) == 0
