"""The torch.compile backend's scheduler side: fusion policy and Inductor scheduling.

- ``fusion``: which scheduler nodes may share one tile kernel (``config.fusion``).
- ``scheduling``: ``TileScheduling``, the class registered with Inductor for a device;
  it emits one tile kernel per fused group and falls back to Inductor's own kernels
  for what it cannot generate.

Imports torch._inductor lazily: nothing here is loaded by ``import inductor_tile``.
"""
