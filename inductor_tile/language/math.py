"""`tl.math`: Triton's math namespace, the same functions as the `tl.` names.

`tl.math.max` / `tl.math.min` are elementwise (tl.maximum / tl.minimum), as in Triton.
"""

from .builtins import (  # noqa: F401
    abs, ceil, cdiv, cos, div_rn, erf, exp, exp2, floor, fma, log, log2, rsqrt, sigmoid, sin, sqrt, sqrt_rn, umulhi,
)
from .builtins import maximum as max  # noqa: F401
from .builtins import minimum as min  # noqa: F401
from .builtins_lang import clamp, fdiv  # noqa: F401

__all__ = [
    "abs", "ceil", "cdiv", "clamp", "cos", "div_rn", "erf", "exp", "exp2", "fdiv", "floor", "fma", "log", "log2", "max",
    "min", "rsqrt", "sigmoid", "sin", "sqrt", "sqrt_rn", "umulhi",
]
