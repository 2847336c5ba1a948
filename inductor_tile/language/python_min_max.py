"""Python's `min` and `max` called in a kernel.

On compile-time values they are Python's. Given a tile value they are `tl.minimum` / `tl.maximum`
(Triton's rule: kernels write `min(start + BLOCK, n_rows)` with a runtime `n_rows`), folded left to
right over two or more arguments. The compiler's front end and the interpreter both call these.
"""

from __future__ import annotations

import builtins as _py
from typing import Any

from .builtins import maximum, minimum
from .core import constexpr, tensor


def _has_tile(values: Any) -> bool:
    return any(isinstance(v, tensor) for v in values)


def _fold(python_fn: Any, tile_fn: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    if not _has_tile(args) and not _has_tile(kwargs.values()):
        plain = [a.value if isinstance(a, constexpr) else a for a in args]
        return python_fn(*plain, **kwargs)
    if kwargs or len(args) < 2:
        raise TypeError(f"{python_fn.__name__}() of tile values takes two or more positional arguments "
                        f"(as tl.{tile_fn.__name__}); got {len(args)} and keywords {sorted(kwargs)}")
    result = args[0]
    for value in args[1:]:
        result = tile_fn(result, value)
    return result


def kernel_min(*args: Any, **kwargs: Any) -> Any:
    """`min(...)` in a kernel: `tl.minimum` over tile values, Python's `min` otherwise."""
    return _fold(_py.min, minimum, args, kwargs)


def kernel_max(*args: Any, **kwargs: Any) -> Any:
    """`max(...)` in a kernel: `tl.maximum` over tile values, Python's `max` otherwise."""
    return _fold(_py.max, maximum, args, kwargs)
