"""The PTX interpreter of `dot_ptx_sim.py`, grown for reductions and scans: divergent forward branches
(`if lane == 0: store`) reconverge at their target label, any instruction may be predicated off in some
threads, and the instructions a reduction's combine and its trip across lanes use (`shfl.sync.bfly`,
`shfl.sync.up`, f32/f16 arithmetic, min/max with NaN, float comparisons, f16 <-> f32 conversions).

Floating-point arithmetic is done in numpy at the instruction's precision (f32 or f16), so a result
compared with float64 differs only by the rounding of the order of the combines.
"""

from __future__ import annotations

import numpy as np

from dot_ptx_sim import Machine, PtxError
from dot_ptx_sim_ops import _f32, _from_f32, _signed, execute as base_execute

U64 = np.uint64


def _float(bits: np.ndarray, kind: str) -> np.ndarray:
    if kind == "f16":
        return (bits & U64(0xFFFF)).astype(np.uint16).view(np.float16)
    return _f32(bits & U64(0xFFFFFFFF))


def _bits_of(values: np.ndarray, kind: str) -> np.ndarray:
    if kind == "f16":
        return values.astype(np.float16).view(np.uint16).astype(np.uint64)
    return _from_f32(values)


class ReduceMachine(Machine):
    lockstep = False  # divergent forward branches, instructions predicated off in some threads
    default_max_steps = 2_000_000

    def execute(self, opcode: str, ops: list[str]) -> None:
        if not _reduce_execute(self, opcode, ops):
            base_execute(self, opcode, ops)


def _reduce_execute(m, opcode: str, ops: list[str]) -> bool:
    parts = opcode.split(".")
    name, kind = parts[0], parts[-1]
    if opcode.startswith("shfl.sync.") and opcode.endswith(".b32") and parts[2] in ("bfly", "up", "down"):
        source = m.value(ops[1])
        step = m.value(ops[2]).astype(np.int64)
        thread = np.arange(m.threads)
        lane, warp_start = thread % 32, thread - thread % 32
        if parts[2] == "bfly":
            partner = lane ^ step
        elif parts[2] == "up":
            partner = np.where(lane - step >= 0, lane - step, lane)
        else:
            partner = np.where(lane + step < 32, lane + step, lane)
        if "|" in ops[0] or (m.value(ops[4]) & U64(0xFFFFFFFF) != 0xFFFFFFFF).any():
            raise PtxError("shfl.sync: only full warps, no predicate output")
        m.set(ops[0], source[warp_start + partner], 32)
        return True
    if kind == "f16x2" and name in ("add", "sub", "mul", "fma", "max", "min", "neg", "abs"):
        halves = []  # each 16-bit half as an f16 instruction of its own
        for shift in (U64(0), U64(16)):
            for i, o in enumerate(ops[1:]):
                m.regs[f"%__half{i}"] = (m.value(o) >> shift) & U64(0xFFFF)
            _reduce_execute(m, opcode.replace("f16x2", "f16"),
                            ["%__out"] + [f"%__half{i}" for i in range(len(ops) - 1)])
            halves.append(m.regs["%__out"] & U64(0xFFFF))
        m.set(ops[0], halves[0] | (halves[1] << U64(16)), 32)
        return True
    if kind in ("f32", "f16") and name in ("add", "sub", "mul", "fma", "max", "min", "neg", "abs", "div"):
        args = [_float(m.value(o), kind) for o in ops[1:]]
        dtype = np.float16 if kind == "f16" else np.float32
        with np.errstate(all="ignore"):
            if name == "fma":
                result = (args[0].astype(np.float64) * args[1] + args[2]).astype(dtype)
            elif name in ("max", "min"):
                pick = np.maximum if name == "max" else np.minimum  # NaN wins in numpy, as in `.NaN`
                if "NaN" not in parts:
                    pick = np.fmax if name == "max" else np.fmin
                result = pick(args[0], args[1])
            elif name == "neg":
                result = -args[0]
            elif name == "abs":
                result = np.abs(args[0])
            else:
                result = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[name](
                    args[0], args[1]).astype(dtype)
        m.set(ops[0], _bits_of(result, kind), 16 if kind == "f16" else 32)
        return True
    if opcode == "ex2.approx.ftz.f32":  # 2^x (the hardware's error is far below the tests' tolerance)
        with np.errstate(all="ignore"):
            m.set(ops[0], _from_f32(np.exp2(_f32(m.value(ops[1])).astype(np.float64))), 32)
        return True
    if name == "setp" and parts[2] in ("f32", "f16"):
        x, y = (_float(m.value(o), parts[2]) for o in ops[1:3])
        unordered = np.isnan(x) | np.isnan(y)
        compare = parts[1]
        table = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}
        if compare in table:
            result = table[compare]
        elif compare == "nan":
            result = unordered
        elif compare == "num":
            result = ~unordered
        elif compare.endswith("u") and compare[:-1] in table:
            result = table[compare[:-1]] | unordered
        else:
            raise PtxError(f"unknown comparison {opcode}")
        m.set(ops[0], result.astype(np.uint64), 1)
        return True
    if name == "cvt" and len(parts) >= 3 and {parts[-1], parts[-2]} <= {"f32", "f16", "s32", "u32"}:
        to, source = parts[-2], parts[-1]
        if to in ("f32", "f16") and source in ("f32", "f16"):
            m.set(ops[0], _bits_of(_float(m.value(ops[1]), source), to), 16 if to == "f16" else 32)
            return True
        if to in ("f32", "f16") and source in ("s32", "u32"):
            value = _signed(m.value(ops[1]), 32) if source == "s32" else m.value(ops[1]) & U64(0xFFFFFFFF)
            m.set(ops[0], _bits_of(value.astype(np.float64), to), 16 if to == "f16" else 32)
            return True
    if name in ("and", "or", "xor", "not") and kind == "pred":
        a = m.value(ops[1]).astype(bool)
        if name == "not":
            result = ~a
        else:
            b = m.value(ops[2]).astype(bool)
            result = {"and": a & b, "or": a | b, "xor": a ^ b}[name]
        m.set(ops[0], result.astype(np.uint64), 1)
        return True
    return False
