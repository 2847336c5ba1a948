"""Findings from `ptxas -v` (NVIDIA): register spills, low occupancy from the registers
(and shared memory) one block needs, and wgmma groups that ptxas serializes (its "Potential
Performance Loss: wgmma.mma_async instructions are serialized due to ..." note: each tensor-core
dot then waits for itself, which halved tl.dot's speed before fp16 results were rounded in pairs).

ptxas prints, per entry function, lines like
    ptxas info    : Function properties for k
        8 bytes stack frame, 12 bytes spill stores, 12 bytes spill loads
    ptxas info    : Used 255 registers, used 1 barriers, 2048 bytes smem, 380 bytes cmem[0]
Occupancy is the share of an SM's warp slots that the kernel's blocks can fill at once,
computed from the SM's limits below (CUDA's occupancy rules: registers are allocated per
warp in units of 256).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .perf_warnings import PerfFinding

LOW_OCCUPANCY = 0.25  # below this share of the SM's warp slots, latency is hard to hide


@dataclass(frozen=True)
class SMLimits:
    registers: int = 65536
    max_warps: int = 64
    max_blocks: int = 32
    shared_bytes: int = 228 * 1024
    register_unit: int = 256  # registers are allocated per warp in multiples of this


#: per compute capability (major*10+minor); others use the closest lower entry
SM_LIMITS = {
    70: SMLimits(max_warps=64, max_blocks=32, shared_bytes=96 * 1024),
    75: SMLimits(max_warps=32, max_blocks=16, shared_bytes=64 * 1024),
    80: SMLimits(max_warps=64, max_blocks=32, shared_bytes=164 * 1024),
    86: SMLimits(max_warps=48, max_blocks=16, shared_bytes=100 * 1024),
    89: SMLimits(max_warps=48, max_blocks=24, shared_bytes=100 * 1024),
    90: SMLimits(max_warps=64, max_blocks=32, shared_bytes=228 * 1024),
}


@dataclass(frozen=True)
class PtxasReport:
    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    static_shared: int = 0


def parse_ptxas_log(log: str) -> PtxasReport:
    def number(pattern: str) -> int:
        match = re.search(pattern, log)
        return int(match.group(1)) if match else 0

    return PtxasReport(number(r"Used (\d+) registers"), number(r"(\d+) bytes spill stores"),
                       number(r"(\d+) bytes spill loads"), number(r"(\d+) bytes smem"))


def limits_for(capability: int) -> SMLimits:
    known = [c for c in SM_LIMITS if c <= capability]
    return SM_LIMITS[max(known)] if known else SM_LIMITS[min(SM_LIMITS)]


def occupancy(registers: int, num_warps: int, shared_bytes: int, sm: SMLimits) -> tuple[float, str]:
    """(resident warps / the SM's warp slots, what limits it)."""
    per_warp = -(-max(registers, 1) * 32 // sm.register_unit) * sm.register_unit
    blocks = {"registers": sm.registers // (per_warp * num_warps), "warp slots": sm.max_warps // num_warps,
              "blocks per SM": sm.max_blocks}
    if shared_bytes:
        blocks["shared memory"] = sm.shared_bytes // shared_bytes
    limit = min(blocks, key=lambda k: blocks[k])
    return blocks[limit] * num_warps / sm.max_warps, limit


_SERIALIZED_WGMMA = re.compile(r"wgmma\.mma_async instructions are serialized due to (.*?)(?: in the function|$)",
                               re.MULTILINE)


def ptxas_findings(log: str, num_warps: int, capability: int, shared_bytes: int) -> list[PerfFinding]:
    report = parse_ptxas_log(log)
    findings = []
    serialized = _SERIALIZED_WGMMA.search(log)
    if serialized:
        findings.append(PerfFinding("serialized_wgmma", 0, (
            f"ptxas serialized the kernel's wgmma tensor-core instructions ({serialized.group(1).strip()}): each "
            f"dot waits for itself instead of overlapping the next; keep other instructions off the accumulator "
            f"registers inside the loop, and fewer values live (registers) around it")))
    if report.spill_stores or report.spill_loads:
        findings.append(PerfFinding("register_spill", 0, (
            f"ptxas spilled registers to local memory: {report.spill_stores} bytes stored and {report.spill_loads} "
            f"bytes loaded per thread ({report.registers} registers used): each thread holds more data than fits "
            f"in registers; use smaller blocks or more warps (num_warps={num_warps})")))
    if report.registers:
        share, limit = occupancy(report.registers, num_warps, shared_bytes + report.static_shared,
                                 limits_for(capability))
        if 0 < share < LOW_OCCUPANCY:
            findings.append(PerfFinding("low_occupancy", 0, (
                f"low occupancy: {report.registers} registers per thread and num_warps={num_warps} let only "
                f"{share:.0%} of an SM's warp slots be filled (limited by {limit}), so memory latency is poorly "
                f"hidden; smaller blocks or fewer values live at once lower the register count")))
    return findings
