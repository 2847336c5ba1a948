"""`tl.extra.cuda` (Triton's NVIDIA namespace): the launch geometry as compile-time values, and libdevice.

`num_warps()` and `num_threads()` are the launch's `num_warps` and `num_warps * 32` on every target
(the CPU target too), so a kernel that sizes its tiles by them computes the same there as on a GPU.
`globaltimer()` and `smid()` read NVIDIA special registers (inline PTX): they compile for NVIDIA GPUs only.
"""

from __future__ import annotations

from ..core import builtin, constexpr, current_semantic
from ..dtypes import int32, int64
from . import libdevice

#: threads in an NVIDIA warp
WARP_SIZE = 32
GLOBALTIMER_PTX = "mov.u64 $0, %globaltimer;"
SMID_PTX = "mov.u32 $0, %smid;"
#: the inline PTX of the register reads below, which other targets refuse by name (to_llvm/rules_inline_asm.py)
PTX_REGISTER_READS = {GLOBALTIMER_PTX: "globaltimer", SMID_PTX: "smid"}


@builtin
def num_warps() -> constexpr:
    """The launch's num_warps, a compile-time value."""
    return constexpr(current_semantic().num_warps)


@builtin
def num_threads() -> constexpr:
    """Threads per program, num_warps * 32, a compile-time value."""
    return constexpr(current_semantic().num_warps * WARP_SIZE)


@builtin
def globaltimer():
    """The GPU's global timer in nanoseconds (PTX `%globaltimer`), an int64 scalar read where the call is."""
    return current_semantic().inline_asm_elementwise(GLOBALTIMER_PTX, "=l", [], int64, False, 1)


@builtin
def smid():
    """The index of the streaming multiprocessor running the program (PTX `%smid`), an int32 scalar."""
    return current_semantic().inline_asm_elementwise(SMID_PTX, "=r", [], int32, False, 1)


__all__ = ["globaltimer", "libdevice", "num_threads", "num_warps", "smid"]
