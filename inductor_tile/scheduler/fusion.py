"""The fusion policy: which scheduler nodes may share one tile kernel.

Inductor's scheduler proposes pairs (it has already checked that a consumer reads a
producer's output at the same index it was written, and that fusing makes no cycle);
this module answers whether the pair fits one of our kernel shapes:

- vertical (producer -> consumer) and horizontal (independent siblings) fusion of
  pointwise nodes over the same loop sizes;
- a reduction with pointwise prologue/epilogue nodes over its output sizes, or over its
  output + reduced sizes (softmax / layernorm become one kernel), and reductions over
  the same sizes side by side.

``inductor_tile.config.fusion = False`` (``TILE_FUSION=0``) refuses every pair but one
kind: a float16/bfloat16 sum with the single pointwise node that consumes it. A sum
accumulates in float32 inside its kernel; stored on its own it is rounded to its
16-bit buffer first, and a cross-entropy loss summed over a batch (8192 tokens x ~10)
overflows float16 there although eager computes it as one op. Keeping that pair
together costs the ablation one kernel launch per such sum and keeps its results right.
"""

from __future__ import annotations

import logging

from .. import config

log = logging.getLogger(__name__)

# a fused group never grows past this many nodes (bounds kernel size and compile time)
MAX_FUSED_NODES = 64


def can_fuse(node1, node2, vertical: bool) -> bool:
    if not config.fusion and not (vertical and _narrow_sum_epilogue(node1, node2)):
        return False
    from ..codegen.common import Unsupported
    from ..codegen.plan import plan_group
    from . import mix_order

    if mix_order.enabled() and mix_order.can_pair(node1, node2):
        return True  # Inductor makes the pair a FusedMixOrderReductions (mix_order.py)
    if node1.is_template() or node2.is_template():  # a matmul template takes pointwise epilogues only
        from .matmul_templates import can_fuse_epilogue

        return vertical and can_fuse_epilogue(node1, node2)
    nodes = list(node1.get_nodes()) + list(node2.get_nodes())
    if len(nodes) > MAX_FUSED_NODES:
        return False
    try:
        plan_group(nodes)
    except Unsupported as e:
        log.debug("not fusing %s and %s: %s", node1.get_name(), node2.get_name(), e)
        return False
    if not vertical:
        # horizontal fusion only pays off when the nodes share an iteration space
        # and some input; the plan check above guarantees the former
        shared = {d.name for d in node1.read_writes.reads} & {d.name for d in node2.read_writes.reads}
        if not shared:
            return False
    return True


def _narrow_sum_epilogue(node1, node2) -> bool:
    """Is node1 one float16/bfloat16 sum and node2 one pointwise node reading it?"""
    import torch

    if len(node1.get_nodes()) != 1 or len(node2.get_nodes()) != 1:
        return False
    if not node1.is_reduction() or node2.is_reduction():
        return False
    buffer = getattr(node1, "node", None)
    if getattr(getattr(buffer, "data", None), "reduction_type", None) != "sum":
        return False
    if buffer.get_dtype() not in (torch.float16, torch.bfloat16):
        return False
    if buffer.get_name() not in {d.name for d in node2.read_writes.reads}:
        return False
    log.debug("fusion off, but keeping %s with its consumer %s: a 16-bit sum must not be rounded "
              "before its epilogue", node1.get_name(), node2.get_name())
    return True
