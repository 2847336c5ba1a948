"""Reductions that Triton's language lacks as builtins (Triton writes them with `tl.reduce` and a
combine function, which this language does not have). Not Triton API: kernels that use them do
not port to Triton by changing imports.

`prod` is what the torch.compile backend generates for `torch.prod`.
"""

from __future__ import annotations

from typing import Any

from ..builtins import _c, _reduce
from ..core import builtin, tensor


@builtin
def prod(input: Any, axis: Any = None, keep_dims: Any = False) -> tensor:
    """Product along `axis` (all elements if None) in the input's type; integers wrap. Like sums,
    fp16/bf16 multiply in fp32 and round once (the interpreter, the CPU; NVIDIA multiplies fp16
    natively). The order of the multiplications is the target's (a tree)."""
    return _reduce(input, _c(axis), "prod", keep_dims)


__all__ = ["prod"]
