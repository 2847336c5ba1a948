"""Source generation for the torch.compile backend: tile kernels and the wrapper.

- ``kernel``: an Inductor ops handler that turns a fused group's loop IR into
  tile-language source (``TileKernelSource``).
- ``wrapper``: the host-side Python wrapper (Inductor's, plus the kernel loader import).
- ``runtime``: loads a generated kernel from its source at wrapper-import time.

Imports torch._inductor lazily: nothing here is loaded by ``import inductor_tile``.
"""
