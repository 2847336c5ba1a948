"""Attention masks that do not vary along the keys, taken out of `scaled_dot_product_attention`.

PyTorch's fused attention kernels (flash, memory-efficient, cuDNN) read a mask along the key
dimension with unit stride. A mask broadcast along that dimension (last stride 0; transformers
builds such a query-padding mask under torch.compile, `[batch, 1, q, k]` with strides
`(0, q, 1, 0)`) makes the dispatcher fall back to the math implementation, which on CUDA computes
fp16/bf16 attention as fp32 matrix products plus a softmax kernel: BERT-base at batch 32 spent 11
of its 19 ms per forward there on an H200, under Inductor as under this backend.

Such a mask holds one value per query row, and a constant added to a row of scores does not change
its softmax: the row either attends as if unmasked (True, or a finite additive value) or is fully
masked (False, or -inf), where the math implementation returns zeros (`_safe_softmax`).
`drop_key_constant_masks(gm)` rewrites each such call in a Dynamo graph, before AOTAutograd picks
the kernel, into attention without a mask (a fused kernel) followed by zeroing the fully masked
rows, which is what the math implementation computes.
"""

from __future__ import annotations

import torch

SDPA_TARGETS = (torch._C._nn.scaled_dot_product_attention, torch.nn.functional.scaled_dot_product_attention)
MASK_POSITION = 3  # query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa
DEVICES = ("cuda",)  # where the fused kernels refuse such masks (the CPU's flash attention reads any strides)


def attention_with_row_mask(query, key, value, attn_mask, *args, **kwargs):
    """`scaled_dot_product_attention(query, key, value, attn_mask, ...)` for a mask constant along the
    keys: unmasked attention, then zeros in the rows the mask removes entirely."""
    out = torch.nn.functional.scaled_dot_product_attention(query, key, value, None, *args, **kwargs)
    row = attn_mask[..., :1]  # one value per query row: [..., q, 1] broadcasts over the output's last dim
    kept = row if row.dtype == torch.bool else row != float("-inf")
    return out.masked_fill(~kept, 0)


def _example(node) -> object:
    return node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None


def constant_along_keys(mask: object) -> bool:
    """A tensor mask on one of `DEVICES` broadcast along its key (last) dimension."""
    return (isinstance(mask, torch.Tensor) and mask.dim() >= 2 and mask.device.type in DEVICES
            and mask.shape[-1] != 1 and mask.stride(-1) == 0)


def drop_key_constant_masks(gm: torch.fx.GraphModule) -> int:
    """Rewrite the attention calls of `gm` whose mask is constant along the keys; the number rewritten."""
    count = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in SDPA_TARGETS:
            continue
        args, kwargs = list(node.args), dict(node.kwargs)
        if "attn_mask" in kwargs:
            mask = kwargs.pop("attn_mask")
        elif len(args) > MASK_POSITION:
            mask = args.pop(MASK_POSITION)
        else:
            continue
        args[MASK_POSITION:MASK_POSITION] = [mask]
        causal = kwargs.get("is_causal", args[5] if len(args) > 5 else False)
        if not isinstance(mask, torch.fx.Node) or not constant_along_keys(_example(mask)) or causal is not False:
            continue
        node.target, node.args, node.kwargs = attention_with_row_mask, tuple(args), kwargs
        count += 1
    if count:
        gm.graph.lint()
        gm.recompile()
    return count
