"""Slots of a thread that hold one known constant in every thread and program.

A 768-column layer norm in a 1024-wide tile on one warp: each thread's last 8 slots are columns
768..1023 in every thread, so `tl.where(cols < 768, x, 0.0)` is 0.0 there whatever the data. LLVM
folds the select to 0.0 but must keep `acc + 0.0` (it is not `acc` for acc = -0.0), one add per slot;
`rules_reduce` leaves such slots out of a thread's sum (keeping one +0.0): `neutral_groups`.

`static_slot_values` evaluates the value's definition over the whole tile at once (numpy arrays of values
and of where they are known), then reads every thread's elements of each slot (`LayoutMap.slot_offset`
plus `thread_offset` over all lanes and warps), through index arithmetic alone: ranges, splats of
constants, shape ops, integer arithmetic and compares, i1 and/or, selects, and float arithmetic whose
result is exact. Anything else (loads, program ids, arguments) is unknown, and so is a slot unless every
element agrees.
"""

from __future__ import annotations

import functools
import math
import struct

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import SSAValue

from ..ir.layouts import LayoutMap
from ..ir.tt_types import element_of, shape_of

UNKNOWN = None
#: tile elements, and slots times threads, evaluated at most per value (a bound on compile time and memory)
MAX_ELEMENTS = 1 << 16

_INT_COMPARE = {"eq": np.equal, "ne": np.not_equal, "slt": np.less, "sle": np.less_equal, "sgt": np.greater,
                "sge": np.greater_equal}
_UNSIGNED = {"ult": "slt", "ule": "sle", "ugt": "sgt", "uge": "sge"}
_ELEMENTWISE = {"arith.select", "arith.andi", "arith.ori", "arith.addi", "arith.subi", "arith.muli", "arith.extsi",
                "arith.extui", "arith.cmpi", "arith.addf", "arith.subf", "arith.mulf", "arith.extf", "arith.truncf",
                "arith.sitofp"}
_INT_ARITHMETIC = {"arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply}
_FLOAT_ARITHMETIC = {"arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply}


def static_slot_values(lmap: LayoutMap, ssa: SSAValue, evaluator: "TileEvaluator | None" = None) -> list:
    """Per slot of a thread holding `ssa` (layout map `lmap`): the constant every element it holds in every
    thread has (int, float or bool), or UNKNOWN. `evaluator`: one shared by several calls (its memo)."""
    root = lmap.root
    lanes, warps = math.prod(root.threads_per_warp), math.prod(root.warps_per_cta)
    if lmap.num_slots * lanes * warps > MAX_ELEMENTS or math.prod(lmap.shape) > MAX_ELEMENTS:
        return [UNKNOWN] * lmap.num_slots
    values, known = (evaluator or TileEvaluator()).at(ssa)
    if not known.any():
        return [UNKNOWN] * lmap.num_slots
    index = _element_indices(lmap)
    held, held_known = values[index], known[index]  # [slot, thread]
    first = held[:, :1]
    same = held == first
    if values.dtype == np.float64:
        same &= np.signbit(held) == np.signbit(first)
    agreed = (held_known & same).all(axis=1)
    return [_python(held[slot, 0]) if agreed[slot] else UNKNOWN for slot in range(lmap.num_slots)]


@functools.lru_cache(maxsize=16)
def _element_indices(lmap: LayoutMap) -> tuple[np.ndarray, ...]:
    """Per dimension, the index of the element each [slot, thread] holds (at most MAX_ELEMENTS of int32)."""
    root = lmap.root
    lanes, warps = math.prod(root.threads_per_warp), math.prod(root.warps_per_cta)
    threads = np.array([lmap.thread_offset(lane, warp) for lane in range(lanes) for warp in range(warps)],
                       dtype=np.int64).reshape(lanes * warps, len(lmap.shape))
    slots = np.array([lmap.slot_offset(slot) for slot in range(lmap.num_slots)],
                     dtype=np.int64).reshape(lmap.num_slots, len(lmap.shape))
    return tuple(((slots[:, None, d] + threads[None, :, d]) % size).astype(np.int32)
                 for d, size in enumerate(lmap.shape))


def _python(value):
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    return float(value)


def _key(value):
    """Equal keys for equal constants; +0.0 and -0.0 differ, UNKNOWN differs from every constant."""
    if isinstance(value, float):
        return ("f", struct.pack("<d", value))
    return value


class TileEvaluator:
    """Values of SSA values over their whole tile, as (values, known) numpy arrays of the tensor's shape
    (0-d for scalars): bool for i1, int64 (wrapped to the type's width) for integers, float64 for floats."""

    def __init__(self) -> None:
        self.memo: dict[SSAValue, tuple[np.ndarray, np.ndarray]] = {}

    def at(self, ssa: SSAValue) -> tuple[np.ndarray, np.ndarray]:
        if ssa not in self.memo:
            shape = shape_of(ssa.type)
            if math.prod(shape) > MAX_ELEMENTS:
                self.memo[ssa] = _unknown(ssa, shape)
            else:
                values, known = self._evaluate(ssa, shape)
                self.memo[ssa] = (np.broadcast_to(values, shape), np.broadcast_to(known, shape))
        return self.memo[ssa]

    def _evaluate(self, ssa: SSAValue, shape: tuple[int, ...]):
        op = getattr(ssa, "op", None)
        if op is None:  # a block argument: a kernel argument or a loop-carried value
            return _unknown(ssa, shape)
        name = op.name
        if name == "arith.constant":
            return _constant(op.value, ssa, shape)
        if name == "tt.make_range":
            return op.start.value.data + np.arange(shape[0], dtype=np.int64), np.ones(shape, dtype=bool)
        if name == "tt.splat":
            return self.at(op.operands[0])
        if name == "tt.expand_dims":
            values, known = self.at(op.operands[0])
            axis = op.axis.value.data
            return np.expand_dims(values, axis), np.expand_dims(known, axis)
        if name in ("tt.broadcast", "ttg.convert_layout"):
            return self.at(op.operands[0])
        if name not in _ELEMENTWISE:  # loads, dots, reshapes, ...: their operands need not even share a shape
            return _unknown(ssa, shape)
        if name == "arith.select":
            (cv, ck), (av, ak), (bv, bk) = (self.at(v) for v in op.operands)
            equal = ak & bk & _same(av, bv)
            return np.where(cv, av, bv), (ck & np.where(cv, ak, bk)) | (~ck & equal)
        operands = [self.at(v) for v in op.operands]
        if name in ("arith.andi", "arith.ori") and _is_i1(ssa):
            stop = name == "arith.ori"  # the value that decides alone: false for and, true for or
            (av, ak), (bv, bk) = operands
            decided = (ak & (av == stop)) | (bk & (bv == stop))
            values = (av | bv) if stop else (av & bv)
            return np.where(decided, stop, values), decided | (ak & bk)
        known = functools.reduce(np.logical_and, [k for _, k in operands], np.ones((), dtype=bool))
        result = _arithmetic(name, op, [v for v, _ in operands], ssa)
        if result is UNKNOWN:
            return _unknown(ssa, shape)
        values, exact = result
        return values, known & exact


def _unknown(ssa: SSAValue, shape: tuple[int, ...]):
    return np.zeros(shape, dtype=_dtype(ssa)), np.zeros(shape, dtype=bool)


def _dtype(ssa: SSAValue):
    elem = element_of(ssa.type)
    if isinstance(elem, IntegerType):
        return bool if elem.width.data == 1 else np.int64
    return np.float64


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Equal constants; +0.0 and -0.0 differ."""
    if a.dtype == np.float64:
        return (a == b) & (np.signbit(a) == np.signbit(b))
    return a == b


def _is_i1(ssa: SSAValue) -> bool:
    elem = element_of(ssa.type)
    return isinstance(elem, IntegerType) and elem.width.data == 1


def _width(ssa: SSAValue) -> int | None:
    elem = element_of(ssa.type)
    return elem.width.data if isinstance(elem, IntegerType) else None


def _wrap(values: np.ndarray, width: int) -> np.ndarray:
    """`values` as signed integers of `width` bits (int64 arithmetic wraps at 64 by itself)."""
    if width >= 64:
        return values
    half = np.int64(1) << np.int64(width - 1)
    return ((values + half) & ((half << np.int64(1)) - 1)) - half


def _unsigned(values: np.ndarray, width: int) -> np.ndarray:
    return values.astype(np.int64).view(np.uint64) if width >= 64 else values & ((np.int64(1) << np.int64(width)) - 1)


def _constant(attr, ssa: SSAValue, shape: tuple[int, ...]):
    if isinstance(attr, DenseIntOrFPElementsAttr):
        if not attr.is_splat():
            return _unknown(ssa, shape)
        value = attr.get_values()[0]
    elif isinstance(attr, (IntegerAttr, FloatAttr)):
        value = attr.value.data
    else:
        return _unknown(ssa, shape)
    width = _width(ssa)
    if width == 1:
        value = bool(value)
    elif width:
        value = (int(value) + (1 << 63)) % (1 << 64) - (1 << 63)  # two's complement in 64 bits
        value = int(_wrap(np.array(value, dtype=np.int64), width))
    else:
        value = float(value)
    return np.full(shape, value, dtype=_dtype(ssa)), np.ones(shape, dtype=bool)


def _exact_floats(values: np.ndarray) -> np.ndarray:
    """Where every float type holds `values` exactly (signed zeros, infinities, small integers)."""
    with np.errstate(invalid="ignore"):
        return np.isinf(values) | ((values == np.round(values)) & (np.abs(values) <= 2048))


def _arithmetic(name: str, op, operands: list, ssa: SSAValue):
    """(values, where they are exact) of an element-wise op, or UNKNOWN for an op not evaluated here."""
    width = _width(ssa)
    everywhere = np.ones((), dtype=bool)
    if name in _INT_ARITHMETIC and width and width > 1:
        with np.errstate(over="ignore"):
            return _wrap(_INT_ARITHMETIC[name](*operands), width), everywhere
    if name in ("arith.extsi", "arith.extui") and _width(op.operands[0]) not in (None, 1):
        (value,) = operands
        return value, everywhere if name == "arith.extsi" else value >= 0
    if name == "arith.cmpi":
        a, b = operands
        predicate = op.predicate_name
        if _is_i1(op.operands[0]) and predicate not in ("eq", "ne"):
            return UNKNOWN
        if predicate in _UNSIGNED:
            bits = _width(op.operands[0]) or 64
            a, b, predicate = _unsigned(a, bits), _unsigned(b, bits), _UNSIGNED[predicate]
        return _INT_COMPARE[predicate](a, b), everywhere
    if name in _FLOAT_ARITHMETIC and width is None:
        a, b = operands
        with np.errstate(invalid="ignore", over="ignore"):
            values = _FLOAT_ARITHMETIC[name](a, b)
        return values, ~np.isinf(a) & ~np.isinf(b) & _exact_floats(values)
    if name in ("arith.extf", "arith.truncf", "arith.sitofp"):
        values = operands[0].astype(np.float64)
        return values, _exact_floats(values)
    return UNKNOWN


def neutral_groups(values: list, groups: list[list[int]], kind: str, element) -> frozenset[int]:
    """The groups of slots (a reduction's coordinates along its axis) that hold, in every slot, a constant
    leaving the reduction `kind` of `element`s as it is: -0.0 in float sums (+0.0 too, all but one group of
    them: `x + 0.0` is not `x` for -0.0, twice is once), 0 in int sums, -inf / +inf in float max / min, the
    int extremes, 1 in products. At least one group stays. `values`: static_slot_values per slot."""
    is_float = not isinstance(element, IntegerType)
    if is_float:
        neutral = {"sum": -0.0, "max": -math.inf, "min": math.inf, "prod": 1.0}.get(kind)
    else:
        width = element.width.data
        neutral = {"sum": 0, "xor_sum": 0, "prod": 1, "umax": 0, "umin": -1, "max": -(1 << (width - 1)),
                   "min": (1 << (width - 1)) - 1}.get(kind)
    if neutral is None or all(v is UNKNOWN for v in values):
        return frozenset()
    skip, plus_zero = set(), []
    for k, group in enumerate(groups):
        held = {_key(values[slot]) for slot in group}
        if held == {_key(neutral)}:
            skip.add(k)
        elif kind == "sum" and is_float and held == {_key(0.0)}:
            plus_zero.append(k)
    skip |= set(plus_zero[1:])  # one +0.0 stays
    if len(skip) == len(groups):
        skip.discard(min(skip))
    return frozenset(skip)
