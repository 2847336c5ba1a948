"""Attention masks that let `scaled_dot_product_attention` pick a fused kernel.

PyTorch's fused attention kernels (flash, memory-efficient, cuDNN) read the mask along the key
dimension with unit stride. A mask broadcast along that dimension (last stride 0, as transformers
builds a query-padding mask under torch.compile: `[batch, 1, q, k]` with strides `(0, q, 1, 0)`)
makes the dispatcher fall back to the math implementation, which on CUDA computes fp16/bf16
attention as fp32 matrix products plus a softmax kernel: BERT-base at batch 32 spends 11 of its
19 ms per forward there on an H200, under Inductor as under this backend.

`dense_key_masks(gm)` rewrites such masks in a Dynamo graph before AOTAutograd traces it: the mask
is materialized along the key dimension (and every other dimension it varies along), then
broadcast back to its shape, so the last stride is 1 and the fused kernels accept it. The values
are unchanged; the cost is one small copy per distinct mask (`[1, 1, q, k]` for the example).
"""

from __future__ import annotations

import torch

SDPA_TARGETS = (torch._C._nn.scaled_dot_product_attention, torch.nn.functional.scaled_dot_product_attention)
MASK_POSITION = 3  # query, key, value, attn_mask, ...
DEVICES = ("cuda",)  # where the fused kernels need it (the CPU's flash attention reads any strides)


def dense_along_keys(mask: torch.Tensor) -> torch.Tensor:
    """`mask` with unit stride along its last dimension, the same values and shape; dimensions it is
    broadcast along (stride 0) other than the last stay broadcast, so the copy is as small as can be."""
    index = tuple(slice(0, 1) if mask.stride(d) == 0 else slice(None) for d in range(mask.dim() - 1))
    return mask[index].contiguous().expand(mask.shape)


def _example(node) -> object:
    return node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None


def _dense_example(example: torch.Tensor) -> torch.Tensor:
    """The new node's example value, as Dynamo gives every node one (computed in the fake mode)."""
    fake_mode = getattr(example, "fake_mode", None)
    if fake_mode is None:
        return dense_along_keys(example)
    with fake_mode:
        return dense_along_keys(example)


def needs_dense_keys(mask: object) -> bool:
    """A tensor mask on one of `DEVICES` broadcast along its key (last) dimension."""
    return (isinstance(mask, torch.Tensor) and mask.dim() >= 2 and mask.device.type in DEVICES
            and mask.shape[-1] != 1 and mask.stride(-1) == 0)


def dense_key_masks(gm: torch.fx.GraphModule) -> int:
    """Rewrite the attention masks of `gm` that no fused kernel accepts; the number rewritten."""
    rewritten: dict[torch.fx.Node, torch.fx.Node] = {}
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in SDPA_TARGETS:
            continue
        in_kwargs = "attn_mask" in node.kwargs
        mask = node.kwargs["attn_mask"] if in_kwargs else (
            node.args[MASK_POSITION] if len(node.args) > MASK_POSITION else None)
        if not isinstance(mask, torch.fx.Node) or not needs_dense_keys(_example(mask)):
            continue
        dense = rewritten.get(mask)
        if dense is None:
            with gm.graph.inserting_after(mask):
                dense = rewritten[mask] = gm.graph.call_function(dense_along_keys, (mask,))
            dense.meta["example_value"] = _dense_example(_example(mask))
        if in_kwargs:
            node.kwargs = {**node.kwargs, "attn_mask": dense}
        else:
            node.args = node.args[:MASK_POSITION] + (dense,) + node.args[MASK_POSITION + 1:]
    if rewritten:
        gm.graph.lint()
        gm.recompile()
    return len(rewritten)
