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
the kernel, into attention without a mask (a fused kernel) followed by
`out.masked_fill(~kept_rows, 0)`, which is what the math implementation computes.
"""

from __future__ import annotations

import contextlib
import operator

import torch

SDPA_TARGETS = (torch._C._nn.scaled_dot_product_attention, torch.nn.functional.scaled_dot_product_attention)
MASK_POSITION = 3  # query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa
DEVICES = ("cuda",)  # where the fused kernels refuse such masks (the CPU's flash attention reads any strides)


def _example(node) -> object:
    return node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None


def constant_along_keys(mask: object) -> bool:
    """A tensor mask on one of `DEVICES` broadcast along its key (last) dimension."""
    return (isinstance(mask, torch.Tensor) and mask.dim() >= 2 and mask.device.type in DEVICES
            and mask.shape[-1] != 1 and mask.stride(-1) == 0)


def drop_key_constant_masks(gm: torch.fx.GraphModule) -> int:
    """Rewrite the attention calls of `gm` whose mask is constant along the keys; the number rewritten.

    The new nodes are builtins and a tensor method, which AOTAutograd's cache accepts (a Python
    function of ours in the graph would make it bypass the cache)."""
    count = 0
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or node.target not in SDPA_TARGETS:
            continue
        args, kwargs = list(node.args), dict(node.kwargs)
        if "attn_mask" in kwargs:
            mask = kwargs["attn_mask"]
            kwargs["attn_mask"] = None
        elif len(args) > MASK_POSITION:
            mask = args[MASK_POSITION]
            args[MASK_POSITION] = None
        else:
            continue
        causal = kwargs.get("is_causal", args[5] if len(args) > 5 else False)
        example = _example(mask)
        if not constant_along_keys(example) or causal is not False:
            continue
        users = list(node.users)
        node.args, node.kwargs = tuple(args), kwargs
        with gm.graph.inserting_before(node.next):  # in order, right after the attention
            row = _call(gm, "call_function", operator.getitem, (mask, (Ellipsis, slice(None, 1))))
            kept = row if example.dtype == torch.bool else _call(gm, "call_function", operator.ne,
                                                                 (row, float("-inf")))
            dropped = _call(gm, "call_function", operator.invert, (kept,))
            out = _call(gm, "call_method", "masked_fill", (node, dropped, 0))
        for user in users:
            user.replace_input_with(node, out)
        count += 1
    if count:
        gm.graph.lint()
        gm.recompile()
    return count


def _call(gm: torch.fx.GraphModule, op: str, target, args: tuple) -> torch.fx.Node:
    """A new node after the graph's insertion point, with the example value Dynamo's nodes carry."""
    node = gm.graph.create_node(op, target, args)
    values = [_example(a) if isinstance(a, torch.fx.Node) else a for a in args]
    fake_mode = next((v.fake_mode for v in values if hasattr(v, "fake_mode")), None)
    with fake_mode if fake_mode is not None else contextlib.nullcontext():
        node.meta["example_value"] = (getattr(values[0], target)(*values[1:]) if op == "call_method"
                                      else target(*values))
    return node
