"""The fusion policy: which scheduler nodes may share one tile kernel.

Inductor's scheduler proposes pairs (it has already checked that a consumer reads a
producer's output at the same index it was written, and that fusing makes no cycle);
this module answers whether the pair fits one of our kernel shapes:

- vertical (producer -> consumer) and horizontal (independent siblings) fusion of
  pointwise nodes over the same loop sizes;
- a reduction with pointwise prologue/epilogue nodes over its output sizes, or over its
  output + reduced sizes (softmax / layernorm become one kernel), and reductions over
  the same sizes side by side.

``inductor_tile.config.fusion = False`` (``TILE_FUSION=0``) refuses every pair.
"""

from __future__ import annotations

import logging

from .. import config

log = logging.getLogger(__name__)

# a fused group never grows past this many nodes (bounds kernel size and compile time)
MAX_FUSED_NODES = 64


def can_fuse(node1, node2, vertical: bool) -> bool:
    if not config.fusion:
        return False
    from ..codegen.common import Unsupported
    from ..codegen.plan import plan_group

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
