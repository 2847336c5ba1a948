"""`tl.extra.cuda` (Triton's NVIDIA namespace): the launch geometry as compile-time values, and libdevice.

`num_warps()` and `num_threads()` are the launch's `num_warps` and `num_warps * 32` on every target
(the CPU target too), so a kernel that sizes its tiles by them computes the same there as on a GPU.
"""

from __future__ import annotations

from ..core import builtin, constexpr, current_semantic
from . import libdevice

#: threads in an NVIDIA warp
WARP_SIZE = 32


@builtin
def num_warps() -> constexpr:
    """The launch's num_warps, a compile-time value."""
    return constexpr(current_semantic().num_warps)


@builtin
def num_threads() -> constexpr:
    """Threads per program, num_warps * 32, a compile-time value."""
    return constexpr(current_semantic().num_warps * WARP_SIZE)


__all__ = ["libdevice", "num_threads", "num_warps"]
