"""Reductions inside a tile kernel: persistent (one block) or looped (an accumulator per loop).

``reduction(kernel, ...)`` is called by the ops handler with the ``TileKernelSource`` being built
(``k`` below); it emits lines and returns the variable holding each row's result, or, in a
looped reduction, a handle the loop resolves after it closes.  Multi-output reductions
(welford, online softmax) return one result or handle per output.

Persistent reductions see a whole row in one [XBLOCK, RBLOCK] tile and reduce it with the
language's ``tl.sum``/``tl.xor_sum``/``tl.max``/``tl.min``/``tl.argmax`` (products: our own
``tl.extra.reductions.prod``; Triton has no builtin for them).  Looped reductions keep an
[XBLOCK, RBLOCK] accumulator (one partial result per lane), update it elementwise in the
loop, and combine the lanes once after it.

Semantics follow torch: max/min propagate NaN; argmax/argmin return the first index of the
extreme, a NaN counting as the extreme; bools reduce as 0/1 integers.
"""

from __future__ import annotations

import torch

from .. import config
from .common import Unsupported, literal, tl_dtype

_SIMPLE = ("sum", "prod", "xor_sum", "max", "min", "any")
# the language's reduction of each kind (prod is this project's own: tl.extra.reductions, not Triton API)
_LANGUAGE_REDUCTION = {"sum": "tl.sum", "prod": "tl.extra.reductions.prod", "xor_sum": "tl.xor_sum", "max": "tl.max",
                       "min": "tl.min"}
_INT32_MAX = 2**31 - 1


def reduction(k, dtype, src_dtype, reduction_type, value):
    if reduction_type == "welford_reduce":
        return _welford(k, dtype, src_dtype, value)
    if reduction_type == "welford_combine":
        return _welford_combine(k, dtype, value)
    if reduction_type == "online_softmax_reduce":
        return _online_softmax(k, dtype, src_dtype, value)
    if reduction_type in ("argmax", "argmin"):
        return _arg_reduction(k, src_dtype, reduction_type, value)
    if reduction_type not in _SIMPLE:
        raise Unsupported(f"reduction {reduction_type}")
    return _simple(k, dtype, src_dtype, reduction_type, value)


# -- sum, prod, xor_sum, max, min, any -------------------------------------------------
def _identity(dtype: torch.dtype, kind: str):
    """The value a `kind` reduction ignores: what masked-off lanes and accumulators start with."""
    if kind in ("sum", "xor_sum"):
        return 0
    if kind == "prod":
        return 1
    return _extreme(dtype, kind)


def _extreme(dtype: torch.dtype, kind: str):
    """The identity of max (kind "max") or min over `dtype`: -inf/+inf or the integer limits."""
    if dtype.is_floating_point:
        return float("-inf") if kind == "max" else float("inf")
    info = torch.iinfo(dtype)
    return info.min if kind == "max" else info.max


def result_dtype(dtype: torch.dtype, kind: str) -> torch.dtype:
    """The type of a reduction's value inside the kernel.

    fp16/bf16 sums and products accumulate in fp32 and stay fp32 until stored, as in
    Inductor's Triton kernels: a loss summed over 8192 tokens (~8e4) exceeds fp16's range
    before the division by the count that brings it back.
    """
    if kind in ("sum", "prod") and dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    return dtype


def _simple(k, dtype, src_dtype, kind, value):
    if kind == "any" or dtype == torch.bool or src_dtype == torch.bool:
        return _bool_reduction(k, dtype, src_dtype, kind, value)
    if kind == "xor_sum" and dtype.is_floating_point:
        raise Unsupported(f"xor_sum over {dtype}")
    acc_dtype = result_dtype(dtype, kind)
    tdt = tl_dtype(acc_dtype)
    init = literal(_identity(dtype, kind), acc_dtype)
    v = k.define(f"{value}.to({tdt})") if acc_dtype != src_dtype else value
    fn = _LANGUAGE_REDUCTION[kind]
    masked = k.define(f"tl.where(rmask & xmask, {v}, {init})")
    if k.persistent:
        return k.define(f"{fn}({masked}, 1)[:, None]")
    acc = _accumulator(k, init, tdt)
    k.emit(f"{acc} = {_combine(kind, acc, masked)}")
    return _final(k, f"{fn}({acc}, 1)[:, None]")


_ACCUMULATE = {"sum": "+", "prod": "*", "xor_sum": "^"}  # the operator of a looped accumulator


def _combine(kind: str, acc: str, v: str) -> str:
    if kind in _ACCUMULATE:
        return f"{acc} {_ACCUMULATE[kind]} {v}"
    op = ">" if kind == "max" else "<"
    return f"tl.where(({acc} {op} {v}) | ({acc} != {acc}), {acc}, {v})"  # NaN-propagating


def _bool_reduction(k, dtype, src_dtype, kind, value):
    """any / max / min over bools: the max or min of 0/1 as int32, then != 0 (sums count the trues)."""
    if kind == "any":
        kind = "max"
    if dtype != torch.bool:  # e.g. a sum or product of bools into int64
        if kind not in ("sum", "prod", "xor_sum"):
            raise Unsupported(f"{kind} reduction of bools into {dtype}")
        return _simple(k, dtype, dtype, kind, k.define(f"{value}.to({tl_dtype(dtype)})"))
    if kind in ("sum", "prod", "xor_sum"):
        raise Unsupported(f"{kind} reduction into bool")
    fill = 0 if kind == "max" else 1
    as_int = k.define(f"tl.where(rmask & xmask, {value}.to(tl.int32), {fill})")
    fn = "tl.max" if kind == "max" else "tl.min"
    if k.persistent:
        return k.define(f"{fn}({as_int}, 1)[:, None] != 0")
    acc = _accumulator(k, str(fill), "tl.int32")
    k.emit(f"{acc} = tl.{'maximum' if kind == 'max' else 'minimum'}({acc}, {as_int})")
    return _final(k, f"{fn}({acc}, 1)[:, None] != 0")


# -- looped-reduction plumbing ---------------------------------------------------------
def _accumulator(k, init: str, tdt: str) -> str:
    """A new [XBLOCK, RBLOCK] accumulator, set to `init` before the reduction loop."""
    acc = f"acc{k.counter}"
    k.counter += 1
    k.acc_inits.append(f"{acc} = tl.full([XBLOCK, RBLOCK], {init}, {tdt})")
    return acc


def _final(k, expr: str):
    """Register the expression that combines the lanes after the loop; return its handle."""
    k.acc_finals.append(expr)
    return ("__acc__", len(k.acc_finals) - 1)


# -- argmax / argmin ------------------------------------------------------------------
def _arg_reduction(k, src_dtype, kind, value):
    """The int64 index (along the flattened reduced dims) of the first max/min; NaN wins."""
    if src_dtype == torch.bool:  # as 0/1 (cumprod's backward looks for the first zero this way)
        value, src_dtype = k.define(f"{value}.to(tl.int8)"), torch.int8
    tdt = tl_dtype(src_dtype)
    init = literal(_extreme(src_dtype, "max" if kind == "argmax" else "min"), src_dtype)
    masked = k.define(f"tl.where(rmask & xmask, {value}, {init})")
    if k.persistent:  # lanes are the row's elements in order: the language's argmax keeps the first
        return k.define(f"tl.{kind}({masked}, 1)[:, None].to(tl.int64)")
    best = _accumulator(k, init, tdt)
    index = _accumulator(k, str(_INT32_MAX), "tl.int32")  # no element taken yet
    op = ">" if kind == "argmax" else "<"
    take = k.define(f"(rmask & xmask) & (({masked} {op} {best}) | (({masked} != {masked}) & ({best} == {best}))"
                    f" | ({index} == {_INT32_MAX}))")
    k.emit(f"{best} = tl.where({take}, {masked}, {best})")
    k.emit(f"{index} = tl.where({take}, rindex, {index})")
    # lanes hold interleaved indices: the smallest index among the lanes holding the extreme
    fn = "tl.max" if kind == "argmax" else "tl.min"
    extreme = f"{fn}({best}, 1)[:, None]"
    holds = f"(({best} == {extreme}) | (({best} != {best}) & ({extreme} != {extreme})))"
    return _final(k, f"tl.min(tl.where({holds}, {index}, {_INT32_MAX}), 1)[:, None].to(tl.int64)")


# -- welford (mean, m2, weight) -------------------------------------------------------
def _welford(k, dtype, src_dtype, value):
    """(mean, m2, count) of each row: two passes inside the block, or Welford per lane in a loop."""
    if not dtype.is_floating_point:
        raise Unsupported(f"welford over {dtype}")
    tdt = tl_dtype(dtype)
    v = k.define(f"{value}.to({tdt})") if dtype != src_dtype else value
    if not k.persistent:
        return _welford_looped(k, tdt, v)
    n = float(k.plan.rnumel)
    total = k.define(f"tl.sum(tl.where(rmask & xmask, {v}, 0.0), 1)[:, None]")
    mean = k.define(f"{total} / {n!r}")
    dev = k.define(f"tl.where(rmask & xmask, {v} - {mean}, 0.0)")
    m2 = k.define(f"tl.sum({dev} * {dev}, 1)[:, None]")
    weight = k.define(f"tl.full([1, 1], {n!r}, {tdt})")
    return (mean, m2, weight)


def _welford_looped(k, tdt, v):
    mean, m2, count = (_accumulator(k, "0.0", tdt) for _ in range(3))
    valid = k.define("rmask & xmask")
    k.emit(f"{count} = {count} + tl.where({valid}, 1.0, 0.0)")
    delta = k.define(f"tl.where({valid}, {v} - {mean}, 0.0)")
    k.emit(f"{mean} = {mean} + tl.where({valid}, {delta} / tl.maximum({count}, 1.0), 0.0)")
    k.emit(f"{m2} = {m2} + tl.where({valid}, {delta} * ({v} - {mean}), 0.0)")
    return _combine_lanes(k, mean, m2, count)


def _chan_combine(mean: str, m2: str, weight: str, name) -> tuple[str, str, str]:
    """A row's (mean, m2, weight) from its lanes' partial triples (Chan et al.): the weights add up,
    the mean is the weighted mean of the lanes' means, and m2 adds up each lane's m2 plus its weight
    times the squared distance of its mean to the row's.  Lanes of weight 0 must hold finite values.

    ``name(expr)`` gives each intermediate a name that later expressions use: a variable in a
    persistent reduction, the parenthesized expression itself in a looped one (whose results are
    computed after the loop from self-contained expressions)."""
    total = name(f"tl.sum({weight}, 1)[:, None]")
    row_mean = name(f"tl.sum({mean} * {weight}, 1)[:, None] / {total}")
    deviation = name(f"{mean} - {row_mean}")
    spread = name(f"tl.sum({m2} + {weight} * {deviation} * {deviation}, 1)[:, None]")
    return row_mean, spread, total


def _combine_lanes(k, mean, m2, weight):
    """Handles of the row's (mean, m2, weight), computed after the loop from the per-lane accumulators."""
    return tuple(_final(k, expr) for expr in _chan_combine(mean, m2, weight, lambda expr: f"({expr})"))


def _welford_combine(k, dtype, value):
    """Combine rows of partial (mean, m2, weight) triples (the second stage of a split welford)."""
    tdt = tl_dtype(dtype)
    mean, m2, weight = value
    if not k.persistent:
        return _welford_combine_looped(k, tdt, mean, m2, weight)
    w = k.define(f"tl.where(rmask & xmask, {weight}, 0.0).to({tdt})")
    mu = k.define(f"tl.where(rmask & xmask, {mean}, 0.0)")
    s2 = k.define(f"tl.where(rmask & xmask, {m2}, 0.0)")
    return _chan_combine(mu, s2, w, k.define)


def _welford_combine_looped(k, tdt, mean, m2, weight):
    """Per lane, merge each chunk's (mean, m2, weight) into the running triple (Chan et al.)."""
    acc_mean, acc_m2, acc_w = (_accumulator(k, "0.0", tdt) for _ in range(3))
    valid = k.define("rmask & xmask")
    w = k.define(f"tl.where({valid}, {weight}, 0.0).to({tdt})")
    new_w = k.define(f"{acc_w} + {w}")
    ratio = k.define(f"tl.where({new_w} == 0.0, 0.0, {w} / tl.maximum({new_w}, 1e-30))")
    delta = k.define(f"tl.where({valid}, {mean} - {acc_mean}, 0.0)")
    k.emit(f"{acc_m2} = {acc_m2} + tl.where({valid}, {m2}, 0.0) + {delta} * {delta} * {acc_w} * {ratio}")
    k.emit(f"{acc_mean} = {acc_mean} + {delta} * {ratio}")
    k.emit(f"{acc_w} = {new_w}")
    return _combine_lanes(k, acc_mean, acc_m2, acc_w)


# -- online softmax (max, sum of exp(x - max)) ---------------------------------------
def _online_softmax(k, dtype, src_dtype, value):
    """The row max and the sum of exp(x - max), as eager computes them (a row of -inf sums to NaN)."""
    if not dtype.is_floating_point:
        raise Unsupported(f"online_softmax_reduce over {dtype}")
    tdt = tl_dtype(dtype)
    if isinstance(value, tuple):
        return _online_softmax_pairs(k, tdt, value)
    v = k.define(f"{value}.to({tdt})") if dtype != src_dtype else value
    masked = k.define(f"tl.where(rmask & xmask, {v}, float(\"-inf\"))")
    if k.persistent:  # as eager: a row of -inf (or with +inf) sums NaN
        top = k.define(f"tl.max({masked}, 1)[:, None]")
        total = k.define(f"tl.sum(tl.where(rmask & xmask, tl.exp({v} - {top}), 0.0), 1)[:, None]")
        return (top, total)
    # per lane: the running max and the sum of exp(x - running max), rescaled when the max
    # grows.  One exp per element: of the old max and x, the smaller one's exp relative to
    # the larger is either the rescale factor (x is the new max: total * e + 1) or x's term
    # (total + e).  The exponential units, not memory, bound a two-exp loop on an H100.
    top = _accumulator(k, 'float("-inf")', tdt)
    total = _accumulator(k, "0.0", tdt)
    _online_update(k, masked, top, total)
    # a lane whose max is below the row's weighs exp(lane max - row max); an all -inf row is NaN, as eager
    row_top = f"tl.max({top}, 1)[:, None]"
    row_total = f"tl.sum({total} * tl.exp({top} - {row_top}), 1)[:, None]"
    return (_final(k, row_top), _final(k, f"tl.where({row_top} == float(\"-inf\"), float(\"nan\"), {row_total})"))


def _online_softmax_pairs(k, tdt, value):
    """A split online softmax's stages (Inductor's ``create_multilayer``) reduce (max, weight) pairs: the first
    stage (x, 1) over each block of a row (-inf, 0 past the row's end), the second the blocks' (max, sum). The
    row's max, and the sum of weight * exp(max_i - row max) over the pairs whose max is not -inf: a block of
    -inf alone (its sum NaN, as eager's for such a row) adds nothing to its row; a row whose max is -inf sums
    NaN, and NaN or +inf anywhere makes it NaN, as eager's."""
    v, w = (k.define(f"{part}.to({tdt})") for part in value)
    masked = k.define(f"tl.where(rmask & xmask, {v}, float(\"-inf\"))")
    if k.persistent:
        top = k.define(f"tl.max({masked}, 1)[:, None]")
        terms = f"tl.where({masked} == float(\"-inf\"), 0.0, {w} * tl.exp({masked} - {top}))"
        total = k.define(f"tl.sum({terms}, 1)[:, None]")
        return (top, k.define(f"tl.where({top} == float(\"-inf\"), float(\"nan\"), {total})"))
    # per lane: the running max and the weighted sum, rescaled when the max grows (two exps an element: split
    # stages are short rows, not the vocabulary loops the one-exp update is for)
    top = _accumulator(k, 'float("-inf")', tdt)
    total = _accumulator(k, "0.0", tdt)
    new_top = k.define(f"tl.maximum({top}, {masked}, propagate_nan=tl.PropagateNan.ALL)")
    kept = k.define(f"tl.where({top} == float(\"-inf\"), 0.0, {total} * tl.exp({top} - {new_top}))")
    added = k.define(f"tl.where({masked} == float(\"-inf\"), 0.0, {w} * tl.exp({masked} - {new_top}))")
    k.emit(f"{total} = {kept} + {added}")
    k.emit(f"{top} = {new_top}")
    row_top = f"tl.max({top}, 1)[:, None]"
    row_total = f"tl.sum(tl.where({top} == float(\"-inf\"), 0.0, {total} * tl.exp({top} - {row_top})), 1)[:, None]"
    return (_final(k, row_top),
            _final(k, f"tl.where({row_top} == float(\"-inf\"), float(\"nan\"), {row_total})"))


def _online_update(k, masked, top, total):
    """One loop step of each lane's running max and sum. Default: in selects, NaN and an all -inf start
    picked out one by one. ``config.online_softmax_lean``: in min/max, fewer instructions an element --
    the new max propagates NaN (max.NaN); the smaller of the old max and x is a non-NaN min; the exponent
    (smaller - new max) is NaN only where both are -inf (no element yet, or masked lanes) or x is NaN,
    and a non-NaN max with -inf turns that into exp(-inf) = 0: nothing added.  A NaN x leaves the lane's
    max NaN, and a +inf one leaves it +inf, so the lane combine after the loop (exp(inf - inf), exp(NaN))
    gives the row NaN, as eager's sum of exp(x - max) does."""
    grows = k.define(f"{masked} > {top}")
    if config.online_softmax_lean:
        new_top = k.define(f"tl.maximum({top}, {masked}, propagate_nan=tl.PropagateNan.ALL)")
        low = k.define(f"tl.minimum({top}, {masked})")
        rel = k.define(f"tl.exp(tl.maximum({low} - {new_top}, float(\"-inf\")))")
    else:
        new_top = k.define(f"tl.where({grows} | ({masked} != {masked}), {masked}, {top})")
        low = k.define(f"tl.where({grows}, {top}, {masked})")
        rel = k.define(f"tl.where({new_top} == float(\"-inf\"), 0.0, tl.exp({low} - {new_top}))")
    k.emit(f"{total} = tl.where({grows}, {total} * {rel} + 1.0, {total} + {rel})")
    k.emit(f"{top} = {new_top}")
