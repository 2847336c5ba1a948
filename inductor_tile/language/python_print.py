"""Python's `print` called in a kernel.

Given a tile value it is `tl.device_print` (Triton's rule): each program prints when the kernel runs, the
first argument being the prefix when it is a string (followed by a space, as `print` separates its
arguments). Given only compile-time values it is Python's print (once per compile in the compiler, each
time in the interpreter). The compiler's front end and the interpreter both call `kernel_print`.
"""

from __future__ import annotations

import builtins as _py
from typing import Any

from .builtins_lang import device_print
from .core import constexpr, tensor


def kernel_print(*args: Any, **kwargs: Any) -> None:
    if not _py.any(isinstance(a, tensor) for a in args):
        _py.print(*[a.value if isinstance(a, constexpr) else a for a in args], **kwargs)
        return
    first = args[0].value if isinstance(args[0], constexpr) else args[0]
    if isinstance(first, str):
        prefix, values = (first if first.endswith((" ", ":")) else first + " "), args[1:]
    else:
        prefix, values = "", args
    device_print(prefix, *values)
