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

Decoders get the other kind: a bool `[batch, 1, q, k]` mask built inside the graph from `arange`
comparisons (transformers' causal mask under torch.compile, where eager passes `is_causal=True`
instead), which sends SDPA to a kernel that reads the mask and computes every block.
`causal_masks_to_flag(gm)` evaluates each bool mask that depends on no graph input (a function of the
static shapes only, the same at every call the guards admit) and, where it is exactly the lower
triangle, passes `is_causal=True` and no mask: the flash kernel's causal path
(`config.sdpa_causal_masks`).

T5 adds its relative position bias, computed as `[heads, q, k]` and permuted, to the mask: a float
mask whose key dimension is strided (strides `(q*k*h, 1, k*h, h)`), which the fused kernels refuse
too. `contiguous_float_masks(gm)` passes such a mask contiguous, its -inf entries raised to the
dtype's lowest finite value (so a fully masked row gives finite probabilities, and no NaN in the
backward), and zeroes the rows that were fully masked, as the math implementation does
(`config.sdpa_strided_masks`).

With performance warnings on (`TILE_PERF_WARNINGS=1`), `warn_unfused_masks(gm)` reports each attention
whose mask still has a key dimension that is not contiguous after these rewrites (a strided bool mask,
or a rewrite turned off), pointing at the user's line: CUDA runs it as the math implementation.
"""

from __future__ import annotations

import contextlib
import operator
import re
import warnings

import torch

SDPA_TARGETS = (torch._C._nn.scaled_dot_product_attention, torch.nn.functional.scaled_dot_product_attention)
DEVICES = ("cuda",)  # where the fused kernels refuse such masks (the CPU's flash attention reads any strides)


def _example(node) -> object:
    return node.meta.get("example_value") if isinstance(node, torch.fx.Node) else None


SDPA_PARAMETERS = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal")  # scale, enable_gqa: keywords


def _attentions(gm: torch.fx.GraphModule) -> list[torch.fx.Node]:
    """The `scaled_dot_product_attention` calls of `gm` (a list: callers insert nodes as they go)."""
    return [n for n in gm.graph.nodes if n.op == "call_function" and n.target in SDPA_TARGETS]


def _arguments(node: torch.fx.Node) -> dict:
    """An attention call's arguments by name, positional ones included."""
    return {**dict(zip(SDPA_PARAMETERS, node.args)), **node.kwargs}


def _set_arguments(node: torch.fx.Node, named: dict) -> None:
    """Give the attention call `named` as its arguments: query, key and value positional, the rest by name."""
    named = dict(named)
    node.args, node.kwargs = tuple(named.pop(p) for p in SDPA_PARAMETERS[:3]), named


def _key_stride(mask: object) -> int | None:
    """The stride along the keys (last dimension) of a tensor mask on one of `DEVICES` with more
    than one key; None for anything else."""
    if (isinstance(mask, torch.Tensor) and mask.dim() >= 2 and mask.device.type in DEVICES
            and mask.shape[-1] != 1):
        return mask.stride(-1)
    return None


def constant_along_keys(mask: object) -> bool:
    """A tensor mask on one of `DEVICES` broadcast along its key (last) dimension."""
    return _key_stride(mask) == 0


def drop_key_constant_masks(gm: torch.fx.GraphModule) -> int:
    """Rewrite the attention calls of `gm` whose mask is constant along the keys; the number rewritten.

    The new nodes are builtins and a tensor method, which AOTAutograd's cache accepts (a Python
    function of ours in the graph would make it bypass the cache)."""
    count = 0
    for node in _attentions(gm):
        named = _arguments(node)
        mask = named.get("attn_mask")
        example = _example(mask)
        if not constant_along_keys(example) or named.get("is_causal", False) is not False:
            continue
        named["attn_mask"] = None
        _set_arguments(node, named)
        with gm.graph.inserting_before(node):
            row = _call(gm, "call_function", operator.getitem, (mask, (Ellipsis, slice(None, 1))))
            kept = row if example.dtype == torch.bool else _call(gm, "call_function", operator.ne,
                                                                 (row, float("-inf")))
            dropped = _call(gm, "call_function", operator.invert, (kept,))
        _zero_rows(gm, node, dropped)
        count += 1
    return _recompiled(gm, count)


def _zero_rows(gm: torch.fx.GraphModule, node: torch.fx.Node, dropped: torch.fx.Node) -> None:
    """The users of the attention `node` read `node.masked_fill(dropped, 0)` instead (the math
    implementation's zeros for fully masked rows)."""
    users = list(node.users)
    with gm.graph.inserting_after(node):
        out = _call(gm, "call_method", "masked_fill", (node, dropped, 0))
    for user in users:
        user.replace_input_with(node, out)


def _recompiled(gm: torch.fx.GraphModule, count: int) -> int:
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


def strided_float_mask(mask: object) -> bool:
    """A floating-point tensor mask on one of `DEVICES` whose key dimension is strided (neither
    contiguous nor broadcast)."""
    return _key_stride(mask) not in (None, 0, 1) and mask.is_floating_point()


def contiguous_float_masks(gm: torch.fx.GraphModule) -> int:
    """Give the attention calls of `gm` whose float mask has a strided key dimension a contiguous
    copy instead (see the module's docstring); the number rewritten."""
    count, copies = 0, {}
    for node in _attentions(gm):
        named = _arguments(node)
        mask, example = named.get("attn_mask"), _example(named.get("attn_mask"))
        if not strided_float_mask(example):
            continue
        if mask not in copies:  # once per mask, before its first attention (in order)
            with gm.graph.inserting_before(node):
                floor = _call(gm, "call_method", "clamp_min", (mask, torch.finfo(example.dtype).min))
                contiguous = _call(gm, "call_method", "contiguous", (floor,))
                kept = _call(gm, "call_function", operator.ne,
                             (_call(gm, "call_method", "amax", (mask, -1, True)), float("-inf")))
                copies[mask] = contiguous, _call(gm, "call_function", operator.invert, (kept,))
        named["attn_mask"], dropped = copies[mask]
        _set_arguments(node, named)
        _zero_rows(gm, node, dropped)
        count += 1
    return _recompiled(gm, count)


MAX_EVALUATED_MASK = 1 << 26  # elements: evaluating larger masks at compile time is not worth it
RANDOM_TARGETS = ("rand", "bernoulli", "dropout", "normal", "multinomial", "randperm", "poisson", "uniform")


def _shape_only_subgraph(mask: torch.fx.Node) -> list[torch.fx.Node] | None:
    """The nodes `mask` is computed from, in graph order, when none is a graph input, a module, an
    attribute or a random function (so its value depends on the static shapes alone); else None."""
    needed, pending = set(), [mask]
    while pending:
        node = pending.pop()
        if node in needed:
            continue
        if node.op not in ("call_function", "call_method") or any(
                word in str(node.target).lower() for word in RANDOM_TARGETS):
            return None
        needed.add(node)
        pending.extend(node.all_input_nodes)
    return [n for n in mask.graph.nodes if n in needed]


def _evaluate(nodes: list[torch.fx.Node]) -> object:
    """Run `nodes` (a shape-only subgraph, see above) eagerly: the value of the last one."""
    graph = torch.fx.Graph()
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    for node in nodes:
        env[node] = graph.node_copy(node, lambda n: env[n])
    graph.output(env[nodes[-1]])
    with torch.no_grad():
        return torch.fx.GraphModule(torch.nn.Module(), graph)()


def is_lower_triangle(mask: object) -> bool:
    """A bool mask whose every `[q, k]` matrix is the lower triangle (SDPA's `is_causal`, q == k)."""
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.dim() < 2:
        return False
    q, k = mask.shape[-2:]
    return q == k and torch.equal(mask, torch.ones(q, k, dtype=torch.bool, device=mask.device).tril().expand_as(mask))


def causal_masks_to_flag(gm: torch.fx.GraphModule) -> int:
    """Replace the causal masks computed from shapes alone by `is_causal=True`; the number of calls rewritten."""
    count, verdicts = 0, {}
    for node in _attentions(gm):
        named = _arguments(node)
        mask = named.get("attn_mask")
        example = _example(mask)
        if (named.get("is_causal", False) is not False or not isinstance(example, torch.Tensor)
                or example.dtype != torch.bool or example.device.type not in DEVICES
                or any(not isinstance(d, int) for d in example.shape) or example.numel() > MAX_EVALUATED_MASK):
            continue
        if mask not in verdicts:
            nodes = _shape_only_subgraph(mask)
            try:
                verdicts[mask] = nodes is not None and is_lower_triangle(_evaluate(nodes))
            except Exception:  # noqa: BLE001 - anything we cannot evaluate stays as traced
                verdicts[mask] = False
        if verdicts[mask]:
            named.update(attn_mask=None, is_causal=True)
            _set_arguments(node, named)
            count += 1
    if count:
        gm.recompile()  # the masks' own nodes stay; Inductor drops what nothing reads
    return count


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def warn_unfused_masks(gm: torch.fx.GraphModule) -> int:
    """A `PerformanceWarning` at the user's line for each attention on one of `DEVICES` whose mask is not
    contiguous along the keys (CUDA's fused kernels refuse it); the number reported."""
    from .kernel_compiler.errors import PerformanceWarning

    count = 0
    for node in _attentions(gm):
        mask = _example(_arguments(node).get("attn_mask"))
        if _key_stride(mask) in (None, 1):
            continue
        frames = _FRAME.findall(node.meta.get("stack_trace") or "")
        file, line = (frames[-1][0], int(frames[-1][1])) if frames else ("<unknown>", 0)
        warnings.warn_explicit(
            f"scaled_dot_product_attention runs as the math implementation (fp32 matrix products and a separate "
            f"softmax) on CUDA: its {str(mask.dtype).removeprefix('torch.')} mask of shape {tuple(mask.shape)} has "
            f"strides {tuple(mask.stride())}, and the fused kernels read a mask contiguous along the keys "
            f"(pass `mask.contiguous()`)", PerformanceWarning, file, line)
        count += 1
    return count
