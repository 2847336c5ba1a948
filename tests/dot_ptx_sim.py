"""A small PTX interpreter for the dot kernels (tf32, fp16, bf16), written from the PTX ISA: one CTA, every thread in
lockstep (straight-line code and uniform branches; `Machine.lockstep = False` lets forward branches diverge, as
reduce_ptx_sim.py's machine does), registers as numpy vectors over the threads.

It runs the PTX the compiler emits, so it checks what the fragment-level simulations cannot: which
registers each instruction really gets, and that nothing overwrites a tile in shared memory before the
dot reads it. The tensor-core instructions follow the ISA's fragment tables (lane = 4 g + t):

- mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (per warp): a0..a3 = A(g, t), A(g+8, t), A(g, t+4),
  A(g+8, t+4); b0, b1 = B(t, g), B(t+4, g); c0..c3 / d0..d3 = C(g, 2t), C(g, 2t+1), C(g+8, 2t), C(g+8, 2t+1).
- ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: lanes 8i..8i+7 give the 8 row addresses of
  matrix i (16 bytes a row); without .trans lane l gets, per matrix, the 32 bits at bytes 4 (l % 4) of
  row l / 4; with .trans the two b16 at column l / 4 of rows 2 (l % 4) and 2 (l % 4) + 1.
- wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32 (per warpgroup): A from a descriptor or from
  registers (warp w of the group holds rows 16 w.. as the m16n8k8 fragment), B from a descriptor; the
  descriptor holds start address, LBO (bits 16-29) and SBO (bits 32-45) in 16-byte units, swizzle in bits
  62-63 (only 0 here). tf32 operands are K-major: element (mn, k) at start + (mn / 8) SBO + (k / 4) LBO +
  (mn % 8) 16 + (k % 4) 4 bytes (core matrices of 8 rows x 16 bytes; LBO steps along K, SBO along M/N).
  d_i: row 16 w + g + 8 ((i >> 1) & 1), column 8 (i >> 2) + 2 t + (i & 1).
- tf32 operands: the tensor core reads the top 19 bits of each 32-bit register.
- wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}: `dot_ptx_sim_wgmma.py`.

Anything it does not know raises, so an unfamiliar instruction fails a test instead of passing it.
"""

from __future__ import annotations

import re

import numpy as np

GLOBAL_BASE = 1 << 32  # global addresses: far from shared ones, so a mix-up faults
SHARED_BYTES = 232448


class PtxError(Exception):
    pass


def _statements(ptx: str) -> list[str]:
    body = ptx[ptx.index("{", ptx.index(".entry")) + 1:ptx.rindex("}")]
    body = re.sub(r"//[^\n]*", "", body)
    out = []
    for piece in re.split(r";|\n", body):
        piece = piece.strip().lstrip("{").strip()  # inline asm's blocks: { .reg ...; ...; }
        if piece and piece != "}" and not piece.startswith((".reg", ".shared", ".local")):
            out.append(piece)
    return out


def _params(ptx: str) -> list[str]:
    head = ptx[ptx.index(".entry"):ptx.index("{", ptx.index(".entry"))]
    return re.findall(r"\.param\s+\.\w+\s+(\w+)", head)


class Machine:
    def __init__(self, ptx: str, threads: int, buffers: list[np.ndarray], scalars: dict[str, int] | None = None):
        """`buffers` are the pointer parameters in order; `scalars` the integer parameters after them, by
        their position in the parameter list."""
        self.ptx, self.threads = ptx, threads
        self.active: np.ndarray | None = None  # the threads a predicated instruction runs in (None: all)
        self.regs: dict[str, np.ndarray] = {}
        self.shared = np.full(SHARED_BYTES, 0xFF, dtype=np.uint8)  # NaN-like garbage until written
        sizes = [b.nbytes for b in buffers]
        self.bases = [GLOBAL_BASE + sum(-(-s // 256) * 256 for s in sizes[:i]) for i in range(len(sizes))]
        self.memory = np.zeros(sum(-(-s // 256) * 256 for s in sizes), dtype=np.uint8)
        for base, buffer in zip(self.bases, buffers):
            self.memory[base - GLOBAL_BASE:base - GLOBAL_BASE + buffer.nbytes] = buffer.reshape(-1).view(np.uint8)
        self.params = dict(zip(_params(ptx), self.bases))
        for position, value in (scalars or {}).items():
            self.params[_params(ptx)[int(position)]] = value

    def buffer(self, i: int, like: np.ndarray) -> np.ndarray:
        start = self.bases[i] - GLOBAL_BASE
        return self.memory[start:start + like.nbytes].view(like.dtype).reshape(like.shape).copy()

    # --- operands --------------------------------------------------------------------------------
    def value(self, token: str) -> np.ndarray:
        token = token.strip()
        if token.startswith("%"):
            if token == "%tid.x":
                return np.arange(self.threads, dtype=np.uint64)
            if token in ("%tid.y", "%tid.z", "%ctaid.x", "%ctaid.y", "%ctaid.z"):
                return np.zeros(self.threads, dtype=np.uint64)
            if token not in self.regs:
                raise PtxError(f"read of unset register {token}")
            return self.regs[token]
        if token in self.params:
            return np.full(self.threads, self.params[token], dtype=np.uint64)
        if token == "global_smem":
            return np.zeros(self.threads, dtype=np.uint64)
        if token.startswith("0f"):
            return np.full(self.threads, int(token[2:], 16), dtype=np.uint64)
        if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)U?", token):  # U: an unsigned constant
            return np.full(self.threads, int(token.rstrip("U"), 0) & (2**64 - 1), dtype=np.uint64)
        if token in self.regs:  # inline asm's local predicate
            return self.regs[token]
        raise PtxError(f"unknown operand {token}")

    def address(self, token: str) -> np.ndarray:
        m = re.fullmatch(r"\[\s*([%\w.]+)\s*(?:\+\s*(-?\d+))?\s*\]", token.strip())
        if not m:
            raise PtxError(f"unknown address {token}")
        return (self.value(m.group(1)) + np.uint64(int(m.group(2) or 0) & (2**64 - 1))).astype(np.uint64)

    def set(self, name: str, value: np.ndarray, bits: int) -> None:
        mask = np.uint64(2**bits - 1) if bits < 64 else np.uint64(2**64 - 1)
        value = value.astype(np.uint64) & mask
        if self.active is not None:  # threads that skip a predicated load keep the register's value
            # (a register first written in a branch some threads skip holds nothing in those: 0 here)
            kept = self.value(name) if name.strip() in self.regs else np.zeros(self.threads, dtype=np.uint64)
            value = np.where(self.active, value, kept)
        self.regs[name.strip()] = value

    # --- memory ----------------------------------------------------------------------------------
    def _space(self, space: str, addresses: np.ndarray, size: int):
        if space == "shared":
            if addresses.max() + size > SHARED_BYTES:
                raise PtxError("shared access out of range")
            return self.shared, addresses.astype(np.int64)
        offsets = addresses.astype(np.int64) - GLOBAL_BASE
        if offsets.min() < 0 or offsets.max() + size > self.memory.size:
            raise PtxError("global access out of range")
        return self.memory, offsets

    def load(self, space: str, addresses: np.ndarray, size: int) -> np.ndarray:
        """`size` (1, 2, 4 or 8) bytes at each address, little-endian (0 in threads a predicate turned off)."""
        if self.active is not None:
            out = np.zeros(addresses.shape, dtype=np.uint64)
            active, self.active = self.active, None
            if active.any():
                out[active] = self.load(space, addresses[active], size)
            self.active = active
            return out
        if (addresses % size).any():
            raise PtxError(f"misaligned {8 * size}-bit load")
        memory, offsets = self._space(space, addresses, size)
        data = memory[offsets[:, None] + np.arange(size)].astype(np.uint64)
        return sum(data[:, i] << np.uint64(8 * i) for i in range(size))

    def store(self, space: str, addresses: np.ndarray, values: np.ndarray, size: int) -> None:
        if self.active is not None:
            addresses, values = addresses[self.active], values[self.active]
            if not addresses.size:
                return
        if (addresses % size).any():
            raise PtxError(f"misaligned {8 * size}-bit store")
        memory, offsets = self._space(space, addresses, size)
        where = (offsets[:, None] + np.arange(size)).reshape(-1)
        shifts = np.uint64(8) * np.arange(size, dtype=np.uint64)
        data = ((values.astype(np.uint64)[:, None] >> shifts) & np.uint64(0xFF)).astype(np.uint8).reshape(-1)
        _, last = np.unique(where[::-1], return_index=True)  # of threads storing to one byte, the last wins
        memory[where[::-1][last]] = data[::-1][last]

    # --- execution -------------------------------------------------------------------------------
    #: True: every thread runs every instruction (straight-line code, uniform branches; only global loads
    #: and stores may be predicated off in some threads). False (reduce_ptx_sim.py): forward branches may
    #: diverge and reconverge at their target label, and any instruction may be predicated off.
    lockstep = True
    default_max_steps = 200_000

    def run(self, max_steps: int | None = None) -> None:
        statements = _statements(self.ptx)
        labels = {s[:-1]: i for i, s in enumerate(statements) if s.endswith(":")}
        running = np.ones(self.threads, dtype=bool)
        waiting: dict[int, np.ndarray] = {}  # label position -> threads that jumped there and wait for the rest
        limit = max_steps or self.default_max_steps
        pc, steps = 0, 0
        while pc < len(statements):
            steps += 1
            if steps > limit:
                raise PtxError("too many steps")
            text = statements[pc]
            if pc in waiting:
                running = running | waiting.pop(pc)
            pc += 1
            if text.endswith(":") or text.startswith(".pragma") or not running.any():
                continue
            predicate = running.copy()
            m = re.match(r"@(!?)(%?\w+)\s+(.*)", text)
            if m:
                value = self.value(m.group(2)).astype(bool)
                predicate &= ~value if m.group(1) else value
                text = m.group(3)
            opcode, _, rest = text.partition(" ")
            operands = _split_operands(rest)
            if not predicate.any():
                continue  # predicated off in every running thread
            if opcode.startswith("bra"):
                target = labels[operands[0]]
                if (predicate == running).all():
                    pc = target
                    continue
                if self.lockstep or target < pc:
                    raise PtxError("divergent branch" if self.lockstep else "divergent backward branch")
                waiting[target] = waiting.get(target, np.zeros(self.threads, dtype=bool)) | predicate
                running = running & ~predicate
                continue
            if opcode == "ret":
                if not (predicate == running).all() or waiting:
                    raise PtxError("ret in divergent code")
                return
            if opcode.startswith(("bar.sync", "barrier.sync")) and not running.all():
                raise PtxError("barrier in divergent code")
            partial = not predicate.all()
            if partial and self.lockstep and not opcode.startswith(("ld.global", "st.global")):
                raise PtxError(f"predicated {opcode} off in some threads")
            self.active = predicate if partial else None  # (None: all threads)
            try:
                self.execute(opcode, operands)
            except (IndexError, KeyError) as error:
                raise PtxError(f"cannot run `{text}`: {type(error).__name__} {error}") from error
            finally:
                self.active = None

    def execute(self, opcode: str, ops: list[str]) -> None:
        from dot_ptx_sim_ops import execute

        execute(self, opcode, ops)


def _split_operands(rest: str) -> list[str]:
    out, depth, current = [], 0, ""
    for ch in rest:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return out
