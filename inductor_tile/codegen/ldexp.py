"""``ops.ldexp(x, n)``: x * 2**n rounded once, as eager's ``torch.ldexp`` (C's ldexp) computes it.

Inductor emits the op for a float ``x`` and an integer ``n``.  Eager passes ``n`` as a C int, so a
64-bit exponent wraps to 32 bits first; fp16/bf16 compute in float32 and round back.

Here every dtype computes in float64, where a float32 value times any power of two that keeps it
finite in float32 is exact, and is then rounded once to its own dtype.  A power of two outside
float64's normal exponents [-1022, 1023] cannot be one factor, so the value is first scaled
toward the target in at most two steps of 2**1023 (up) or 2**-969 (down), then by the rest.  A
step down by 2**-969 leaves the remaining exponent below -53 whenever it is needed again, so a
result in float64's subnormal range is rounded only by the last product.
"""

from __future__ import annotations

import torch

from .common import Unsupported, tl_dtype

_UP, _DOWN = 1023, -969  # exponents of the scaling steps
_STEPS = 2  # two steps of either kind reach any int32 exponent's saturated result


def ldexp(ops, x, n) -> str:
    """Tile source for ``x * 2**n``; ``ops`` is the TileOps handler (for operand dtypes and variables)."""
    dtype, n_dtype = ops._dtype(x), ops._dtype(n)
    if not dtype.is_floating_point or n_dtype.is_floating_point or n_dtype == torch.bool:
        raise Unsupported(f"ldexp of {dtype} by {n_dtype} (Inductor emits it for a float and an int)")
    f64, i32 = torch.float64, torch.int32
    value = ops._def(f"{ops._src(x)}.to(tl.float64)", f64) if dtype != f64 else ops._src(x)
    exponent = ops._def(f"{ops._src(n)}.to(tl.int32)", i32)  # eager's C int: int64 exponents wrap
    for _ in range(_STEPS):
        up = ops._def(f"{exponent} > 1023", torch.bool)
        down = ops._def(f"{exponent} < -1022", torch.bool)
        value = ops._def(f"tl.where({up}, {value} * {2.0 ** _UP!r}, tl.where({down}, {value} * {2.0 ** _DOWN!r}, "
                         f"{value}))", f64)
        exponent = ops._def(f"tl.where({up}, {exponent} - {_UP}, tl.where({down}, {exponent} + {-_DOWN}, "
                            f"{exponent}))", i32)
    exponent = ops._def(f"tl.minimum(tl.maximum({exponent}, -1022), 1023)", i32)
    scale = ops._def(f"(({exponent} + 1023).to(tl.int64) << 52).to(tl.float64, bitcast=True)", f64)
    result = ops._def(f"{value} * {scale}", f64)
    if dtype == f64:
        return result
    # float64 -> float32 is exact for every fp16/bf16 result in range; the second rounding is the only one
    if dtype != torch.float32:
        result = ops._def(f"{result}.to(tl.float32)", torch.float32)
    return ops._def(f"{result}.to({tl_dtype(dtype)})", dtype)
