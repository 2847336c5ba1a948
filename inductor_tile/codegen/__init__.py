"""Source generation for the torch.compile backend: one tile kernel per fused group.

- ``plan``: which loop variables each scheduler node of a group gets (pointwise or reduction shape).
- ``ops``: the ops handler: each op of a node's loop body becomes one line of tile source.
- ``reductions``: persistent and looped reductions (sum, max, min, welford).
- ``kernel``: ``TileKernelSource`` puts the lines together into an ``@inductor_tile.jit`` function.
- ``heuristics``: block sizes and num_warps per device (CPU: small tiles; CUDA: Triton-like).
- ``common``: errors (``Unsupported``), dtype names, literals, sympy index expressions as source.
- ``runtime``: loads a generated kernel from its source at wrapper-import time.

Imports torch._inductor lazily: nothing here is loaded by ``import inductor_tile``.
"""
