"""Slots of a thread that hold one known constant in every thread and program.

A 768-column layer norm in a 1024-wide tile on one warp: each thread's last 8 slots are columns
768..1023 in every thread, so `tl.where(cols < 768, x, 0.0)` is 0.0 there whatever the data. LLVM
folds the select to 0.0 but must keep `acc + 0.0` (it is not `acc` for acc = -0.0), one add per slot;
`rules_reduce` leaves such slots out of a thread's sum (keeping one +0.0): `neutral_groups`.

`static_slot_values` evaluates the value's definition at every element a slot holds (`LayoutMap.index`
over all lanes and warps) through index arithmetic alone: ranges, splats of constants, shape ops,
integer arithmetic and compares, i1 and/or, selects, and float arithmetic whose result is exact.
Anything else (loads, program ids, arguments) is unknown, and so is a slot unless every element agrees.
"""

from __future__ import annotations

import math
import struct

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, IntegerType
from xdsl.ir import SSAValue

from ..ir.layouts import LayoutMap
from ..ir.tt_types import element_of, shape_of

UNKNOWN = None
#: slots times threads evaluated at most per value (a bound on compile time)
MAX_EVALUATIONS = 1 << 12

_INT_COMPARE = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "slt": lambda a, b: a < b,
                "sle": lambda a, b: a <= b, "sgt": lambda a, b: a > b, "sge": lambda a, b: a >= b}
_ELEMENTWISE = {"arith.select", "arith.andi", "arith.ori", "arith.addi", "arith.subi", "arith.muli", "arith.extsi",
                "arith.extui", "arith.cmpi", "arith.addf", "arith.subf", "arith.mulf", "arith.extf", "arith.truncf",
                "arith.sitofp"}
_UNSIGNED = {"ult": "slt", "ule": "sle", "ugt": "sgt", "uge": "sge"}


def static_slot_values(lmap: LayoutMap, ssa: SSAValue) -> list:
    """Per slot of a thread holding `ssa` (layout map `lmap`): the constant every element it holds in every
    thread has (int, float or bool), or UNKNOWN."""
    root = lmap.root
    lanes, warps = math.prod(root.threads_per_warp), math.prod(root.warps_per_cta)
    if lmap.num_slots * lanes * warps > MAX_EVALUATIONS:
        return [UNKNOWN] * lmap.num_slots
    evaluator = _Evaluator()
    threads = [lmap.thread_offset(lane, warp) for lane in range(lanes) for warp in range(warps)]
    values = []
    for slot in range(lmap.num_slots):
        own = lmap.slot_offset(slot)
        first = UNKNOWN
        for offset in threads:
            value = evaluator.at(ssa, tuple((a + b) % size for a, b, size in zip(own, offset, lmap.shape)))
            if value is UNKNOWN or (first is not UNKNOWN and _key(value) != _key(first)):
                first = UNKNOWN
                break
            first = value
        values.append(first)
    return values


def _key(value):
    """Equal keys for equal constants; +0.0 and -0.0 differ, UNKNOWN differs from every constant."""
    if isinstance(value, float):
        return ("f", struct.pack("<d", value))
    return value


class _Evaluator:
    def __init__(self) -> None:
        self.memo: dict[tuple[SSAValue, tuple[int, ...]], object] = {}

    def at(self, ssa: SSAValue, index: tuple[int, ...]):
        if not shape_of(ssa.type):
            index = ()  # a scalar (a select's condition, a splat's source)
        key = (ssa, index)
        if key not in self.memo:
            self.memo[key] = self._evaluate(ssa, index)
        return self.memo[key]

    def _evaluate(self, ssa: SSAValue, index: tuple[int, ...]):
        op = getattr(ssa, "op", None)
        if op is None:  # a block argument: a kernel argument or a loop-carried value
            return UNKNOWN
        name = op.name
        if name == "arith.constant":
            return _constant(op.value, ssa)
        if name == "tt.make_range":
            return op.start.value.data + index[0]
        if name == "tt.splat":
            return self.at(op.operands[0], ())
        if name == "tt.expand_dims":
            axis = op.axis.value.data
            return self.at(op.operands[0], index[:axis] + index[axis + 1:])
        if name == "tt.broadcast":
            source = shape_of(op.operands[0].type)
            return self.at(op.operands[0], tuple(0 if size == 1 else i for i, size in zip(index, source)))
        if name == "ttg.convert_layout":
            return self.at(op.operands[0], index)
        if name not in _ELEMENTWISE:
            return UNKNOWN
        if name == "arith.select":
            cond = self.at(op.operands[0], index)
            if cond is not UNKNOWN:
                return self.at(op.operands[1 if cond else 2], index)
            a = self.at(op.operands[1], index)
            return a if a is not UNKNOWN and _key(a) == _key(self.at(op.operands[2], index)) else UNKNOWN
        operands = [self.at(v, index) for v in op.operands]
        if name in ("arith.andi", "arith.ori") and _is_i1(ssa):
            stop = name == "arith.ori"  # the value that decides alone: false for and, true for or
            if any(v is not UNKNOWN and v == stop for v in operands):
                return stop
            return UNKNOWN if UNKNOWN in operands else (not stop)
        if UNKNOWN in operands:
            return UNKNOWN
        return _arithmetic(name, op, operands, ssa)


def _is_i1(ssa: SSAValue) -> bool:
    elem = element_of(ssa.type)
    return isinstance(elem, IntegerType) and elem.width.data == 1


def _width(ssa: SSAValue) -> int | None:
    elem = element_of(ssa.type)
    return elem.width.data if isinstance(elem, IntegerType) else None


def _wrap(value: int, width: int) -> int:
    """`value` as a signed integer of `width` bits."""
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def _constant(attr, ssa: SSAValue):
    if isinstance(attr, DenseIntOrFPElementsAttr):
        if not attr.is_splat():
            return UNKNOWN
        value = attr.get_values()[0]
    elif isinstance(attr, (IntegerAttr, FloatAttr)):
        value = attr.value.data
    else:
        return UNKNOWN
    if _is_i1(ssa):
        return bool(value)
    width = _width(ssa)
    return _wrap(int(value), width) if width else float(value)


def _exact_float(value: float):
    """`value` where every float type holds it exactly (signed zeros, infinities, small integers), else UNKNOWN."""
    if math.isnan(value):
        return UNKNOWN
    if math.isinf(value) or (value == int(value) and abs(value) <= 2048):
        return value
    return UNKNOWN


def _arithmetic(name: str, op, operands: list, ssa: SSAValue):
    width = _width(ssa)
    if name in ("arith.addi", "arith.subi", "arith.muli") and width and width > 1:
        a, b = operands
        return _wrap(a + b if name == "arith.addi" else a - b if name == "arith.subi" else a * b, width)
    if name in ("arith.extsi", "arith.extui") and _width(op.operands[0]) not in (None, 1):
        value = operands[0]
        return value if name == "arith.extsi" or value >= 0 else UNKNOWN
    if name == "arith.cmpi":
        a, b = operands
        predicate = op.predicate_name
        if predicate in _UNSIGNED:
            bits = _width(op.operands[0]) or 64
            a, b, predicate = a % (1 << bits), b % (1 << bits), _UNSIGNED[predicate]
        return _INT_COMPARE[predicate](a, b)
    if name in ("arith.addf", "arith.subf", "arith.mulf") and width is None:
        a, b = operands
        if name == "arith.subf":
            b = -b
        if name == "arith.mulf":
            return _exact_float(a * b) if not (math.isinf(a) or math.isinf(b)) else UNKNOWN
        return _exact_float(a + b) if not (math.isinf(a) or math.isinf(b)) else UNKNOWN
    if name in ("arith.extf", "arith.truncf", "arith.sitofp"):
        return _exact_float(float(operands[0]))
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
