"""Reductions inside a tile kernel: persistent (one block) or looped (an accumulator per loop).

``reduction(kernel, ...)`` is called by the ops handler with the ``TileKernelSource`` being built
(``k`` below); it emits lines and returns the variable holding each row's result, or, in a
looped reduction, a handle the loop resolves after it closes.
"""

from __future__ import annotations

import torch

from .common import Unsupported, literal, tl_dtype

_REDUCE_INIT = {"sum": 0, "max": float("-inf"), "min": float("inf")}


def reduction(k, dtype, src_dtype, reduction_type, value):
    if reduction_type == "welford_reduce" and k.persistent and dtype.is_floating_point:
        return _welford(k, dtype, src_dtype, value)
    if reduction_type not in _REDUCE_INIT:
        raise Unsupported(f"reduction {reduction_type}" + ("" if k.persistent else " in a looped reduction"))
    if dtype == torch.bool or src_dtype == torch.bool:
        raise Unsupported("bool reduction")
    tdt = tl_dtype(dtype)
    init = _REDUCE_INIT[reduction_type]
    if not dtype.is_floating_point and reduction_type != "sum":
        info = torch.iinfo(dtype)
        init = info.min if reduction_type == "max" else info.max
    v = k.define(f"{value}.to({tdt})") if dtype != src_dtype else value
    fn = {"sum": "tl.sum", "max": "tl.max", "min": "tl.min"}[reduction_type]
    init_src = literal(init, dtype)
    if k.persistent:
        masked = k.define(f"tl.where(rmask & xmask, {v}, {init_src})")
        return k.define(f"{fn}({masked}, 1)[:, None]")
    # looped: accumulate elementwise into an [XBLOCK, RBLOCK] accumulator
    acc = f"acc{k.counter}"
    k.counter += 1
    k.acc_inits.append(f"{acc} = tl.full([XBLOCK, RBLOCK], {init_src}, {tdt})")
    masked = k.define(f"tl.where(rmask & xmask, {v}, {init_src})")
    if reduction_type == "sum":
        k.emit(f"{acc} = {acc} + {masked}")
    else:
        op = ">" if reduction_type == "max" else "<"
        k.emit(f"{acc} = tl.where(({acc} {op} {masked}) | ({acc} != {acc}), {acc}, {masked})")
    k.acc_finals.append(f"{fn}({acc}, 1)[:, None]")
    return ("__acc__", len(k.acc_finals) - 1)


def _welford(k, dtype, src_dtype, value):
    """(mean, m2, count) of each row, two-pass inside the block (persistent only)."""
    tdt = tl_dtype(dtype)
    v = k.define(f"{value}.to({tdt})") if dtype != src_dtype else value
    n = k.plan.rnumel
    total = k.define(f"tl.sum(tl.where(rmask & xmask, {v}, 0.0), 1)[:, None]")
    mean = k.define(f"{total} / {float(n)!r}")
    dev = k.define(f"tl.where(rmask & xmask, {v} - {mean}, 0.0)")
    m2 = k.define(f"tl.sum({dev} * {dev}, 1)[:, None]")
    weight = k.define(f"tl.full([1, 1], {float(n)!r}, {tdt})")
    return (mean, m2, weight)
