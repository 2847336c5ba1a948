"""The instructions of `dot_ptx_sim.Machine` (see its docstring for the tensor-core fragment tables)."""

from __future__ import annotations

import re

import numpy as np
import torch

from dot_ptx_sim import PtxError
from tf32_reference import tf32

NO_OPS = ("bar.sync", "barrier.sync", "fence.proxy.async.shared::cta", "wgmma.fence.sync.aligned",
          "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned")
U64 = np.uint64


def _bits(opcode: str) -> int:
    widths = [int(w) for w in re.findall(r"\.[bsuf](\d+)", opcode)]
    return widths[-1] if widths else 32


def _signed(x: np.ndarray, bits: int) -> np.ndarray:
    x = x.astype(np.uint64) & U64(2**bits - 1)
    return np.where(x >> U64(bits - 1), x.astype(np.int64) - (1 << bits), x.astype(np.int64)) if bits < 64 \
        else x.view(np.int64)


def _f32(bits: np.ndarray) -> np.ndarray:
    return bits.astype(np.uint32).view(np.float32)


def _from_f32(values: np.ndarray) -> np.ndarray:
    return values.astype(np.float32).view(np.uint32).astype(np.uint64)


def _tf32_operand(bits: np.ndarray) -> np.ndarray:
    """What a tensor core multiplies: the top 19 bits of the register, as float64."""
    return _f32(bits.astype(np.uint64) & U64(0xFFFFE000)).astype(np.float64)


def _registers(text: str) -> list[str]:
    return [r.strip() for r in text.strip().strip("{}").split(",")]


def execute(m, opcode: str, ops: list[str]) -> None:
    if opcode in NO_OPS or opcode.startswith("wgmma.wait_group"):
        return
    if opcode in ("cp.async.commit_group", "cp.async.wait_group"):
        return  # copies complete when issued (lockstep): ordering against the slots' readers is not checked
    if opcode in ("cp.async.ca.shared.global", "cp.async.cg.shared.global"):
        return _cp_async(m, ops)
    parts = opcode.split(".")
    name, bits = parts[0], _bits(opcode)
    if name == "createpolicy":  # an L2 cache policy for loads' `.L2::cache_hint` operand: no effect on values
        return m.set(ops[0], np.zeros(m.threads, dtype=np.uint64), 64)
    if name in ("ld", "st"):
        return _memory(m, name, parts, ops)  # a cache-policy operand after the address is ignored
    if name == "mov":
        return _mov(m, ops, bits)
    if name == "cvt":
        return _cvt(m, opcode, ops)
    if name == "ldmatrix":
        return _ldmatrix(m, opcode, ops)
    if name == "mma":
        return _mma_k8(m, opcode, ops)
    if name == "wgmma":
        return _wgmma(m, opcode, ops)
    if opcode == "shfl.sync.idx.b32":
        return _shuffle_idx(m, ops)
    if opcode == "prmt.b32":
        return _prmt(m, ops)
    if name == "setp":
        return _setp(m, parts, ops)
    if name == "selp":
        p = m.value(ops[3]).astype(bool)
        return m.set(ops[0], np.where(p, m.value(ops[1]), m.value(ops[2])), bits)
    a = m.value(ops[1])
    b = m.value(ops[2]) if len(ops) > 2 else None
    if parts[-1] == "f32" and name in ("add", "sub", "mul", "fma") and parts[1] in ("rn", "f32"):
        x, y = _f32(a).astype(np.float64), _f32(b).astype(np.float64)
        if name == "fma":
            return m.set(ops[0], _from_f32(x * y + _f32(m.value(ops[3])).astype(np.float64)), 32)
        return m.set(ops[0], _from_f32({"add": x + y, "sub": x - y, "mul": x * y}[name]), 32)
    mask = 2**bits - 1
    if name in ("and", "or", "xor"):
        return m.set(ops[0], {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[name](a, b), bits)
    if name == "not":
        return m.set(ops[0], ~a, bits)
    if name == "shl":
        return m.set(ops[0], np.where(b < bits, a << np.minimum(b, U64(63)), U64(0)), bits)
    if name == "shr":
        if parts[1] == "s32" or parts[1] == "s64":
            return m.set(ops[0], (_signed(a, bits) >> np.minimum(b, U64(bits - 1)).astype(np.int64)).astype(np.uint64),
                         bits)
        return m.set(ops[0], np.where(b < bits, (a & U64(mask)) >> np.minimum(b, U64(63)), U64(0)), bits)
    if name == "bfe" and parts[1] in ("u32", "s32", "u64"):
        length = m.value(ops[3])
        if (length >= U64(bits)).any():
            raise PtxError(f"{opcode}: a field of the whole register")
        field = (a >> b) & ((U64(1) << length) - U64(1))
        if parts[1] == "s32":  # the field's top bit extended
            field = np.where((field >> (length - U64(1))) & U64(1), field | ~((U64(1) << length) - U64(1)), field)
        return m.set(ops[0], field, bits)
    if name in ("add", "sub") and parts[1][0] in "su":
        return m.set(ops[0], a + b if name == "add" else a - b, bits)
    if name == "neg" and parts[1][0] == "s":
        return m.set(ops[0], U64(0) - a, bits)
    if name == "mul" and parts[1] == "wide":
        wide = 2 * bits
        if parts[2].startswith("s"):
            return m.set(ops[0], (_signed(a, bits) * _signed(b, bits)).astype(np.uint64), wide)
        return m.set(ops[0], (a & U64(mask)) * (b & U64(mask)), wide)
    if name == "mul" and parts[1] == "lo":
        return m.set(ops[0], a * b, bits)
    if name == "mad" and parts[1] == "lo":
        return m.set(ops[0], a * b + m.value(ops[3]), bits)
    if name in ("div", "rem") and parts[1][0] in "su":  # C's: the quotient truncated toward zero
        x, y = (_signed(a, bits), _signed(b, bits)) if parts[1][0] == "s" else (a & U64(mask), b & U64(mask))
        if (y == 0).any():
            raise PtxError(f"{opcode} by zero")
        quotient = np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y)) if parts[1][0] == "s" else x // y
        return m.set(ops[0], (quotient if name == "div" else x - quotient * y).astype(np.uint64), bits)
    if name in ("min", "max") and parts[1][0] in "su":
        x, y = (_signed(a, bits), _signed(b, bits)) if parts[1][0] == "s" else (a & U64(mask), b & U64(mask))
        return m.set(ops[0], (np.minimum if name == "min" else np.maximum)(x, y).astype(np.uint64), bits)
    raise PtxError(f"unknown instruction {opcode}")


def _mov(m, ops: list[str], bits: int) -> None:
    """mov, and its vector forms: `mov.b32 d, {lo, hi}` packs two 16-bit registers (the first in the low
    bits), `mov.b32 {lo, hi}, a` unpacks (`_`: a half not wanted). LLVM packs and unpacks undefined values
    (of pairs whose other half alone is used, or a loop's first iteration): they read as all ones, a NaN in
    every float format, so that a real use of one shows in the result."""
    def defined(register: str) -> np.ndarray:
        return m.regs[register] if register in m.regs else np.full(m.threads, 2**64 - 1, dtype=np.uint64)

    if ops[1].startswith("{"):
        parts = _registers(ops[1])
        width = bits // len(parts)
        packed = sum((defined(r) & U64(2**width - 1)) << U64(width * i) for i, r in enumerate(parts))
        return m.set(ops[0], packed, bits)
    if ops[0].startswith("{"):
        parts = _registers(ops[0])
        width = bits // len(parts)
        for i, register in enumerate(parts):
            if register != "_":
                m.set(register, defined(ops[1]) >> U64(width * i), width)
        return None
    return m.set(ops[0], m.value(ops[1]), bits)


def _memory(m, name: str, parts: list[str], ops: list[str]) -> None:
    space = next((p for p in parts if p in ("global", "shared", "param")), None)
    vector = next((int(p[1:]) for p in parts if p in ("v2", "v4")), 1)
    size = _bits(".".join(parts)) // 8
    if space == "param":
        return m.set(ops[0], m.value(ops[1].strip("[] ")), 64)
    if space is None or size not in (1, 2, 4, 8):
        raise PtxError(f"only 8- to 64-bit elements of global or shared memory: {'.'.join(parts)}")
    address_op, registers = (ops[1], ops[0]) if name == "ld" else (ops[0], ops[1])
    address, registers = m.address(address_op), _registers(registers)
    accessed = address if m.active is None else address[m.active]
    if len(registers) != vector or (accessed % (size * vector)).any():
        raise PtxError("vector access: count or alignment")
    for i, register in enumerate(registers):
        where = address + U64(size * i)
        if name == "ld" and parts[-1] in ("s8", "s16"):  # sign-extended into the (32-bit) register
            m.set(register, _signed(m.load(space, where, size), 8 * size).astype(np.uint64), 32)
        elif name == "ld":
            m.set(register, m.load(space, where, size), 8 * size)
        else:
            m.store(space, where, m.value(register), size)


def _prmt(m, ops: list[str]) -> None:
    """prmt.b32 d, a, b, c (default mode): byte i of d is byte c[4i+2:4i] of {b, a}, or that byte's sign
    replicated when c bit 4i+3 is set."""
    pool = (m.value(ops[1]) & U64(0xFFFFFFFF)) | ((m.value(ops[2]) & U64(0xFFFFFFFF)) << U64(32))
    selector, out = m.value(ops[3]), np.zeros(m.threads, dtype=np.uint64)
    for i in range(4):
        nibble = (selector >> U64(4 * i)) & U64(15)
        byte = (pool >> (U64(8) * (nibble & U64(7)))) & U64(0xFF)
        byte = np.where(nibble & U64(8), np.where(byte & U64(0x80), U64(0xFF), U64(0)), byte)
        out |= byte << U64(8 * i)
    m.set(ops[0], out, 32)


def _cvt(m, opcode: str, ops: list[str]) -> None:
    a = m.value(ops[1])
    if opcode == "cvt.rna.tf32.f32":
        rounded = tf32(torch.from_numpy(_f32(a).copy())).float().numpy()
        return m.set(ops[0], _from_f32(rounded), 32)
    if opcode in ("cvt.rn.f16x2.f32", "cvt.rn.bf16x2.f32"):  # a to the upper half, b to the lower, to nearest even
        halves = []
        for value in (a, m.value(ops[2])):
            wide = torch.from_numpy(_f32(value).copy())
            half = wide.to(torch.float16 if "f16x2" in opcode and "bf16" not in opcode else torch.bfloat16)
            halves.append(half.view(torch.int16).numpy().astype(np.uint16).astype(np.uint64))
        return m.set(ops[0], (halves[0] << U64(16)) | halves[1], 32)
    kinds = opcode.split(".")[1:]
    if len(kinds) == 2 and all(k[0] in "su" for k in kinds):
        to, source = kinds
        value = _signed(a, int(source[1:])).astype(np.uint64) if source[0] == "s" else a & U64(2**int(source[1:]) - 1)
        return m.set(ops[0], value, int(to[1:]))
    raise PtxError(f"unknown conversion {opcode}")


def _setp(m, parts: list[str], ops: list[str]) -> None:
    compare, kind = parts[1], parts[2]
    bits = int(kind[1:])
    a, b = m.value(ops[1]), m.value(ops[2])
    x, y = (_signed(a, bits), _signed(b, bits)) if kind[0] == "s" else (a & U64(2**bits - 1), b & U64(2**bits - 1))
    result = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[compare]
    m.set(ops[0], result.astype(np.uint64), 1)


def _shuffle_idx(m, ops: list[str]) -> None:
    """shfl.sync.idx.b32 d, a, b, c, membermask (all lanes): lane j = (lane & segmask) | (b & ~segmask) if
    that is at most (lane & segmask) | (c & ~segmask), else the lane itself; segmask = c[12:8]."""
    if "|" in ops[0] or _uniform(m.value(ops[4]) & U64(0xFFFFFFFF)) != 0xFFFFFFFF:
        raise PtxError("shfl.sync: only full warps, no predicate output")
    lane = np.arange(m.threads) % 32
    b, c = m.value(ops[2]).astype(np.int64) & 31, m.value(ops[3]).astype(np.int64)
    segmask, clamp = (c >> 8) & 31, c & 31
    low = lane & segmask
    j = low | (b & ~segmask & 31)
    j = np.where(j <= (low | (clamp & ~segmask & 31)), j, lane)
    source = np.arange(m.threads) - lane + j
    m.set(ops[0], m.value(ops[1])[source], 32)


def _warps(m, values: np.ndarray) -> np.ndarray:
    return values.reshape(m.threads // 32, 32)


def _ldmatrix(m, opcode: str, ops: list[str]) -> None:
    count = int(re.search(r"\.x(\d)", opcode).group(1))
    transposed = ".trans" in opcode
    if not opcode.endswith(".shared.b16") or ".m8n8" not in opcode:
        raise PtxError(f"unknown ldmatrix {opcode}")
    registers = _registers(ops[0])
    rows = _warps(m, m.address(ops[1]).astype(np.int64))  # [warp, lane]: the row address lane gives
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    for i, register in enumerate(registers[:count]):
        if not transposed:
            where = rows[:, 8 * i + g] + 4 * t
            value = m.load("shared", where.reshape(-1).astype(np.uint64), 4)
        else:  # two b16 of column g: rows 2t and 2t + 1
            low, high = (_load16(m, rows[:, 8 * i + 2 * t + j] + 2 * g) for j in (0, 1))
            value = (low | (high << U64(16))).reshape(-1)
        m.set(register, value, 32)


def _load16(m, addresses: np.ndarray) -> np.ndarray:
    return m.load("shared", addresses.reshape(-1).astype(np.uint64), 2).reshape(addresses.shape)


def _halves(bits: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """The low and high 16-bit elements of each register, as float64."""
    def one(h):
        if kind == "f16":
            return h.astype(np.uint16).view(np.float16).astype(np.float64)
        return (h.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)  # bf16
    return one(bits & U64(0xFFFF)), one((bits >> U64(16)) & U64(0xFFFF))


def _mma_k16(m, kind: str, ops: list[str]) -> None:
    """m16n8k16 f16/bf16 -> f32: a0..a3 = A(g, 2t..2t+1), A(g+8, 2t..), A(g, 2t+8..), A(g+8, 2t+8..);
    b0, b1 = B(2t..2t+1, g), B(2t+8.., g) (low half the lower k); c as m16n8k8."""
    d, a, b, c = (_registers(o) for o in ops)
    warps = m.threads // 32
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    A, B, C = np.zeros((warps, 16, 16)), np.zeros((warps, 16, 8)), np.zeros((warps, 16, 8))
    for register, (row, col) in zip(a, [(g, 2 * t), (g + 8, 2 * t), (g, 2 * t + 8), (g + 8, 2 * t + 8)]):
        for j, half in enumerate(_halves(m.value(register), kind)):
            A[:, row, col + j] = _warps(m, half)
    for register, row in zip(b, [2 * t, 2 * t + 8]):
        for j, half in enumerate(_halves(m.value(register), kind)):
            B[:, row + j, g] = _warps(m, half)
    c_at = [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]
    for register, (row, col) in zip(c, c_at):
        C[:, row, col] = _warps(m, _f32(m.value(register)).astype(np.float64))
    D = A @ B + C
    for register, (row, col) in zip(d, c_at):
        m.set(register, _from_f32(D[:, row, col].reshape(-1)), 32)


def _mma_k8(m, opcode: str, ops: list[str]) -> None:
    k16 = re.fullmatch(r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.(f16|bf16)\.\1\.f32", opcode)
    if k16:
        return _mma_k16(m, k16.group(1), ops)
    if opcode != "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32":
        raise PtxError(f"unknown mma {opcode}")
    d, a, b, c = (_registers(o) for o in ops)
    A_regs = [_warps(m, _tf32_operand(m.value(r))) for r in a]
    B_regs = [_warps(m, _tf32_operand(m.value(r))) for r in b]
    C_regs = [_warps(m, _f32(m.value(r)).astype(np.float64)) for r in c]
    warps = m.threads // 32
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    A, B, C = np.zeros((warps, 16, 8)), np.zeros((warps, 8, 8)), np.zeros((warps, 16, 8))
    for reg, (row, col) in zip(A_regs, [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]):
        A[:, row, col] = reg
    for reg, row in zip(B_regs, [t, t + 4]):
        B[:, row, g] = reg
    c_at = [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]
    for reg, (row, col) in zip(C_regs, c_at):
        C[:, row, col] = reg
    D = A @ B + C
    for register, (row, col) in zip(d, c_at):
        m.set(register, _from_f32(D[:, row, col].reshape(-1)), 32)


def _descriptor_read(m, desc: int, mn_size: int) -> np.ndarray:
    """The [mn_size, 8] K-major tf32 operand a wgmma descriptor points at."""
    if desc >> 62:
        raise PtxError("swizzled tf32 descriptor")
    start, lbo, sbo = (desc & 0x3FFF) << 4, ((desc >> 16) & 0x3FFF) << 4, ((desc >> 32) & 0x3FFF) << 4
    mn, k = np.meshgrid(np.arange(mn_size), np.arange(8), indexing="ij")
    where = start + (mn // 8) * sbo + (k // 4) * lbo + (mn % 8) * 16 + (k % 4) * 4
    return _tf32_operand(m.load("shared", where.reshape(-1).astype(np.uint64), 4)).reshape(mn_size, 8)


def _uniform(values: np.ndarray) -> int:
    if (values != values[0]).any():
        raise PtxError("descriptor differs within a warpgroup")
    return int(values[0])


def _wgmma(m, opcode: str, ops: list[str]) -> None:
    half = re.fullmatch(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.(f16|bf16)\.\2", opcode)
    if half is not None and m.threads % 128 == 0:
        from dot_ptx_sim_wgmma import wgmma_k16

        return wgmma_k16(m, half.group(2), int(half.group(1)), ops, _registers, _uniform, _f32, _from_f32)
    from dot_ptx_sim_wgmma import accumulator_inputs

    shape = re.fullmatch(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k8\.f32\.tf32\.tf32", opcode)
    if shape is None or m.threads % 128:
        raise PtxError(f"unknown wgmma {opcode}")
    n = int(shape.group(1))
    d = _registers(ops[0])
    if len(d) != n // 2 or ops[4:] != ["1", "1"]:
        raise PtxError("wgmma operands")
    accumulate = m.value(ops[3]).astype(bool)
    lane = np.arange(128)
    w, g, t = lane // 32, lane % 32 // 4, lane % 4
    outputs = accumulator_inputs(m, d, accumulate)
    for group in range(m.threads // 128):
        threads = slice(128 * group, 128 * group + 128)
        if ops[1].startswith("{"):
            A = np.full((64, 8), np.nan)
            a_at = [(16 * w + g, t), (16 * w + g + 8, t), (16 * w + g, t + 4), (16 * w + g + 8, t + 4)]
            for register, (row, col) in zip(_registers(ops[1]), a_at):
                A[row, col] = _tf32_operand(m.value(register)[threads])
        else:
            A = _descriptor_read(m, _uniform(m.value(ops[1])[threads]), 64)
        B = _descriptor_read(m, _uniform(m.value(ops[2])[threads]), n).T
        D = A @ B
        if _uniform(accumulate[threads].astype(np.uint64)):
            for i, register in enumerate(d):
                D[16 * w + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)] += \
                    _f32(m.value(register)[threads]).astype(np.float64)
        for i, register in enumerate(d):
            outputs[register][threads] = _from_f32(D[16 * w + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)])
    for register, value in outputs.items():
        m.set(register, value, 32)


def _cp_async(m, ops: list[str]) -> None:
    """cp.async.{ca,cg}.shared.global [dst], [src], size, src-size: src-size bytes from global memory, the rest
    of the size bytes zeros (4-byte pieces: every copy the compiler emits is a multiple of 4)."""
    destination, source = m.address(ops[0]), m.address(ops[1])
    size, source_size = int(ops[2]), m.value(ops[3])
    if size not in (4, 8, 16) or (destination % U64(size)).any():
        raise PtxError(f"cp.async of {size} bytes: size or alignment")
    for offset in range(0, size, 4):
        reads = source_size > U64(offset)
        data = np.zeros(m.threads, dtype=np.uint64)
        if reads.any():
            data[reads] = m.load("global", (source + U64(offset))[reads], 4)
        m.store("shared", destination + U64(offset), data, 4)
