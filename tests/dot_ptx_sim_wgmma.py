"""wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16} for `dot_ptx_sim.Machine`, from the PTX ISA (one
warpgroup of 128 threads per instruction; lane = 4 g + t within warp w of the group):

- descriptors (a and b): start address, LBO (bits 16-29) and SBO (bits 32-45) in 16-byte units, swizzle in
  bits 62-63. Core matrices are 8 rows of 16 bytes; SBO steps from one group of 8 MN indices to the next, LBO
  from one group of 8 k to the next. K-major (transpose immediate 0): a row per mn, of 8 consecutive k: (mn, k)
  at start + (mn / 8) SBO + (k / 8) LBO + (mn % 8) 16 + (k % 8) 2 bytes; MN-major (1): a row per k, of 8
  consecutive mn: ... + (k % 8) 16 + (mn % 8) 2. Swizzled (modes 1-3: rows of S = 128, 64 or 32 bytes):
  K-major rows of S bytes hold k, one per mn, 8-row groups SBO apart: start + (mn / 8) SBO + (mn % 8) S + 2 k;
  MN-major rows hold mn, one per k, 8-row groups SBO apart, each S bytes' worth of mn LBO further:
  start + (mn / (S/2)) LBO + (k / 8) SBO + (k % 8) S + 2 (mn % (S/2)); the address's 16-byte chunk index
  (bits 4..) is then XORed with its bits 7.. (3 bits for 128, 2 for 64, 1 for 32).
- a from registers (four b32, two halves each, the lower k in the low half), warp w holding rows 16 w..:
  a0 = A(g, 2t..2t+1), a1 = A(g+8, 2t..), a2 = A(g, 2t+8..), a3 = A(g+8, 2t+8..).
- d (f32): d_i = D(16 w + g + 8 ((i >> 1) & 1), 8 (i >> 2) + 2 t + (i & 1)); the predicate operand says
  whether d is added (scale-d; an immediate 0: d is not read), the two immediates after it scale a and b
  (only 1 here).
"""

from __future__ import annotations

import numpy as np

from dot_ptx_sim import PtxError

U64 = np.uint64


def _halves(bits: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The low and high 16-bit elements of 32-bit registers, as float64."""
    def one(h: np.ndarray) -> np.ndarray:
        if kind == "f16":
            return h.astype(np.uint16).view(np.float16).astype(np.float64)
        return (h.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return one(bits & U64(0xFFFF)), one((bits >> U64(16)) & U64(0xFFFF))


def _element(bits: np.ndarray, kind: str) -> np.ndarray:
    return _halves(bits, kind)[0]


SWIZZLES = {0: 0, 1: 128, 2: 64, 3: 32}  # the descriptor's mode (bits 62-63) -> bytes per swizzled row


def descriptor_read(m, desc: int, mn_size: int, mn_major: bool, kind: str) -> np.ndarray:
    """The [mn_size, 16] operand of 16-bit elements a descriptor points at."""
    start, lbo, sbo = (desc & 0x3FFF) << 4, ((desc >> 16) & 0x3FFF) << 4, ((desc >> 32) & 0x3FFF) << 4
    swizzle = SWIZZLES[desc >> 62]
    mn, k = np.meshgrid(np.arange(mn_size), np.arange(16), indexing="ij")
    if swizzle:
        row = swizzle // 2  # elements of a row
        if mn_major:
            where = start + (mn // row) * lbo + (k // 8) * sbo + (k % 8) * swizzle + (mn % row) * 2
        else:
            where = start + (mn // 8) * sbo + (mn % 8) * swizzle + k * 2
        where = where ^ (((where >> 7) & (swizzle // 16 - 1)) << 4)
    else:
        inner = (k % 8) * 16 + (mn % 8) * 2 if mn_major else (mn % 8) * 16 + (k % 8) * 2
        where = start + (mn // 8) * sbo + (k // 8) * lbo + inner
    return _element(m.load("shared", where.reshape(-1).astype(np.uint64), 2), kind).reshape(mn_size, 16)


def _register_a(m, registers: list[str], threads: slice, kind: str) -> np.ndarray:
    lane = np.arange(128)
    w, g, t = lane // 32, lane % 32 // 4, lane % 4
    A = np.full((64, 16), np.nan)
    for register, (row, col) in zip(registers, [(g, 2 * t), (g + 8, 2 * t), (g, 2 * t + 8), (g + 8, 2 * t + 8)]):
        for j, half in enumerate(_halves(m.value(register)[threads], kind)):
            A[16 * w + row, col + j] = half
    return A


def accumulator_inputs(m, d: list[str], accumulate: np.ndarray) -> dict[str, np.ndarray]:
    """The d registers' values, read only where scale-d is on anywhere: with it off (the immediate 0 of a dot's
    first k step on a zero accumulator) the instruction does not read them, and they may be unset."""
    if not accumulate.any():
        return {r: np.zeros(m.threads, dtype=np.uint64) for r in d}
    return {r: m.value(r).copy() for r in d}


def wgmma_k16(m, kind: str, n: int, ops: list[str], registers, uniform, f32, from_f32) -> None:
    """One m64nNk16 instruction per warpgroup; `registers`, `uniform`, `f32` and `from_f32` are
    dot_ptx_sim_ops' helpers (register lists, warpgroup-uniform values, f32 bit casts)."""
    d = registers(ops[0])
    a_in_registers = ops[1].startswith("{")
    immediates = ops[4:]
    if len(d) != n // 2 or len(immediates) != (3 if a_in_registers else 4) or immediates[:2] != ["1", "1"]:
        raise PtxError("wgmma operands")
    trans_a = False if a_in_registers else immediates[2] == "1"
    trans_b = immediates[-1] == "1"
    accumulate = m.value(ops[3]).astype(bool)
    lane = np.arange(128)
    w, g, t = lane // 32, lane % 32 // 4, lane % 4
    outputs = accumulator_inputs(m, d, accumulate)
    for group in range(m.threads // 128):
        threads = slice(128 * group, 128 * group + 128)
        if a_in_registers:
            A = _register_a(m, registers(ops[1]), threads, kind)
        else:
            A = descriptor_read(m, uniform(m.value(ops[1])[threads]), 64, trans_a, kind)
        B = descriptor_read(m, uniform(m.value(ops[2])[threads]), n, trans_b, kind).T
        D = A @ B
        add = uniform(accumulate[threads].astype(np.uint64))
        for i, register in enumerate(d):
            row, col = 16 * w + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)
            value = D[row, col] + (f32(m.value(register)[threads]).astype(np.float64) if add else 0.0)
            outputs[register][threads] = from_f32(value)
    for register, value in outputs.items():
        m.set(register, value, 32)
