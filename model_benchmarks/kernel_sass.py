"""Reading a compiled NVIDIA kernel's machine code (SASS, from ``cuobjdump -sass``) or, where no cuobjdump
is found, its PTX, as a list of instructions with what a bandwidth study needs: which are global loads and
stores and how wide, which registers they write and read, and where the loops are.

Used by ``model_benchmarks.kernel_limits``: instructions per byte of a loop body, global access widths, and
the bytes a warp has in flight before it first uses a loaded value.
"""

from __future__ import annotations

import dataclasses
import re

# SASS: `        /*01d0*/              @!P3 LDG.E.U16 R21, desc[UR6][R8.64] ;   /* 0x... */`
_SASS_LINE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", re.MULTILINE)
_SASS_REGISTER = re.compile(r"\bR(\d+)(?:\.64)?\b")
# PTX: `	@%p1 ld.global.b16 %rs1, [%rd5];`, labels `$L__BB0_1:`
_PTX_REGISTER = re.compile(r"%[a-z]+\d+")


@dataclasses.dataclass(frozen=True)
class Instruction:
    opcode: str  # the full opcode with its modifiers: LDG.E.128, ld.global.v4.b32
    operands: str  # the operand text, the predicate guard left out
    target: int | None = None  # a branch's target (an index into the program), else None

    @property
    def is_load(self) -> bool:
        op = self.opcode
        return op.startswith(("LDG", "LDGSTS")) or op.startswith(("ld.global", "cp.async.ca.shared.global",
                                                                   "cp.async.cg.shared.global"))

    @property
    def is_store(self) -> bool:
        return self.opcode.startswith(("STG", "st.global", "RED.", "ATOMG", "red.global", "atom.global"))

    @property
    def is_special_function(self) -> bool:
        """A multi-function unit op (exp2, log2, rcp, rsqrt, sin...): 16 lanes a clock an SM on sm_90."""
        return self.opcode.startswith(("MUFU", "ex2.approx", "lg2.approx", "rcp.approx", "rsqrt.approx",
                                       "sin.approx", "cos.approx", "tanh.approx"))

    @property
    def access_bytes(self) -> int:
        """Bytes one thread moves with a global load/store: 16, 8, 4, 2 or 1 (0 for other instructions)."""
        if not (self.is_load or self.is_store):
            return 0
        parts = self.opcode.split(".")
        if "LDGSTS" in parts[0] or "cp" == parts[0]:  # cp.async.*.shared.global [dst], [src], 16
            size = re.search(r",\s*(\d+)\s*(?:,|$)", self.operands)
            return int(size.group(1)) if size else 4
        vector = next((int(p[1:]) for p in parts if re.fullmatch(r"v\d", p)), 1)
        for part in reversed(parts):
            if part in ("128",):
                return 16
            if part == "64":
                return 8
            if part in ("U16", "S16", "16"):
                return 2
            if part in ("U8", "S8", "8"):
                return 1
            bits = re.fullmatch(r"[bfsu](\d+)", part)
            if bits:
                return vector * int(bits.group(1)) // 8
        return 4

    def registers(self) -> tuple[set[str], set[str]]:
        """(registers written, registers read). SASS: a 64-bit address R8.64 reads R8 and R9, a 128-bit
        load into R4 writes R4..R7. PTX: virtual registers by name."""
        if self.opcode[:1].isupper():
            first, *rest = self.operands.split(",", 1)
            writes: set[str] = set()
            if not self.is_store and _SASS_REGISTER.search(first):
                base = int(_SASS_REGISTER.search(first).group(1))
                count = max(1, self.access_bytes // 4) if self.is_load else 1
                writes = {f"R{base + i}" for i in range(count)}
                source_text = rest[0] if rest else ""
            else:
                source_text = self.operands
            reads = set()
            for match in _SASS_REGISTER.finditer(source_text):
                base = int(match.group(1))
                reads |= {f"R{base}", f"R{base + 1}"} if match.group(0).endswith(".64") else {f"R{base}"}
            return writes, reads
        first, _, rest = self.operands.partition(",")
        if self.is_store:
            return set(), set(_PTX_REGISTER.findall(self.operands))
        return set(_PTX_REGISTER.findall(first)), set(_PTX_REGISTER.findall(rest))


@dataclasses.dataclass
class Program:
    """One kernel's instructions in order (NOPs left out) and where they came from ("SASS" or "PTX")."""

    instructions: list[Instruction]
    source: str

    def loops(self) -> list[tuple[int, int]]:
        """(first, last) instruction index of each loop: the span of every backward branch, innermost
        spans kept where loops nest (ptxas' unrolled copies of one loop are separate spans)."""
        spans = [(ins.target, i) for i, ins in enumerate(self.instructions)
                 if ins.target is not None and ins.target < i]  # not `BRA` to itself after EXIT
        return [s for s in spans if not any(o != s and s[0] <= o[0] and o[1] <= s[1] for o in spans)]

    def loop_indices(self) -> set[int]:
        return {i for first, last in self.loops() for i in range(first, last + 1)}

    def accesses(self, indices=None) -> list[Instruction]:
        chosen = range(len(self.instructions)) if indices is None else sorted(indices)
        return [self.instructions[i] for i in chosen if self.instructions[i].access_bytes]

    def load_rounds(self, indices) -> int:
        """Global-load latencies a thread waits through, one after another, in the instructions at
        `indices` (in order): a round starts at a load and ends where a register it loads is first read."""
        pending: set[str] = set()
        rounds = 0
        for i in sorted(indices):
            writes, reads = self.instructions[i].registers()
            if reads & pending:
                rounds += 1
                pending = set()
            if self.instructions[i].is_load:
                pending |= writes
        return rounds + (1 if pending else 0)

    def critical_path(self, indices) -> int:
        """Clocks of the longest chain of dependent instructions at `indices` (in order), global loads
        counted as ready at once (their latency is `load_rounds`'): what one warp cannot go below even
        with the scheduler to itself (a reduction's adds and shuffles, one after another)."""
        ready: dict[str, int] = {}
        longest = 0
        for i in sorted(indices):
            ins = self.instructions[i]
            writes, reads = ins.registers()
            start = max((ready.get(r, 0) for r in reads), default=0)
            done = start + (0 if ins.is_load else _latency(ins.opcode))
            for r in writes:
                ready[r] = done
            longest = max(longest, done)
        return longest

    def bytes_in_flight(self, start: int, stop: int) -> int:
        """Bytes one thread has requested from global memory when it first needs one of them: the loads
        from `start` (index) on, until an instruction reads a register one of them writes, or a branch."""
        pending: set[str] = set()
        total = 0
        for ins in self.instructions[start:stop]:
            writes, reads = ins.registers()
            if reads & pending or ins.target is not None:
                break
            if ins.is_load:
                pending |= writes
                total += ins.access_bytes
        return total


#: clocks until a result can be used, by SASS opcode (sm_90, approximate: fixed-latency ALU ops about 4-6,
#: shuffles and shared memory about 25, the multi-function unit about 18); others 6
_LATENCY = {"SHFL": 24, "LDS": 24, "STS": 4, "MUFU": 18, "BAR": 20, "S2R": 20, "S2UR": 20, "F2F": 6, "I2F": 6,
            "F2I": 6, "DADD": 8, "DMUL": 8, "DFMA": 8, "LDC": 10, "ULDC": 4, "ATOMS": 30, "REDUX": 24}


def _latency(opcode: str) -> int:
    if not opcode[:1].isupper():  # PTX: no machine latencies; one clock an instruction
        return 1
    base = opcode.split(".")[0]
    if base in _LATENCY:
        return _LATENCY[base]
    return 4 if base[:1] in "FIHL" or base in ("MOV", "SEL", "PRMT", "SHF", "LEA", "ISETP", "FSETP", "IMNMX") else 6


def parse_sass(listing: str) -> Program:
    """The instructions of a `cuobjdump -sass` listing of one kernel."""
    rows = []
    for address, text in _SASS_LINE.findall(listing):
        words = text.split(None, 1)
        if words and words[0].startswith("@"):
            text = text.split(None, 1)[1] if len(words) > 1 else ""
        opcode, _, operands = text.partition(" ")
        if opcode and opcode != "NOP":
            rows.append((int(address, 16), opcode, operands.strip()))
    index_of = {address: i for i, (address, _, _) in enumerate(rows)}
    instructions = []
    for address, opcode, operands in rows:
        target = None
        if opcode.startswith("BRA"):
            jump = re.search(r"0x([0-9a-f]+)", operands)
            if jump and int(jump.group(1), 16) in index_of:
                target = index_of[int(jump.group(1), 16)]
        instructions.append(Instruction(opcode, operands, target))
    return Program(instructions, "SASS")


def parse_ptx(ptx: str) -> Program:
    """The instructions of a PTX module's kernels (branches resolved to their labels)."""
    rows: list[tuple[str, str, str | None]] = []
    labels: dict[str, int] = {}
    for line in ptx.splitlines():
        text = line.strip()
        if not text or text.startswith(("//", ".", "{", "}", ")", "(")):
            continue
        if re.fullmatch(r"\$?[\w$]+:", text):
            labels[text[:-1]] = len(rows)
            continue
        if text.startswith("@"):
            text = text.split(None, 1)[1] if " " in text else ""
        opcode, _, operands = text.rstrip(";").partition(" ")
        if not opcode or not opcode[0].isalpha():
            continue
        label = operands.strip() if opcode.startswith("bra") else None
        rows.append((opcode, operands.strip(), label))
    return Program([Instruction(op, operands, labels.get(label) if label else None)
                    for op, operands, label in rows], "PTX")
