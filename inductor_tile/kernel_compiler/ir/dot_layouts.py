"""Layouts of `tt.dot` in TTGIR: the tensor-core accumulator layout and the operand layouts.

    #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [4, 1]}>
    #ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<...>}>
    #ttg.dot_op<{opIdx = 1, parent = #ttg.blocked<...>}>

Both are named views of blocked layouts (`to_blocked`), so every pass and target reads
them through the one slot mapping of `layouts.LayoutMap`:

- `NvidiaMma` is the accumulator of `mma.sync.m16n8k16` (sm_80+). Within a warp, lane
  l = 4 * g + t holds columns 2t, 2t+1 of row g of each 8 x 8 piece: blocked
  sizePerThread [1, 2], threadsPerWarp [8, 4], order [1, 0]. One instruction's 16 x 8
  tile is two row repetitions of that piece (rows g and g + 8 * warpsPerCTA[0] of the
  tensor play the instruction's rows g and g + 8). Warps lie along one dimension only
  (warpsPerCTA [w, 1] or [1, w]), so that an operand can be shared by all the warps that
  need it as a blocked layout whose warp count along K is 1 (the warp index wraps).
- `DotOperand(op_idx, parent)` is the layout of operand a (op_idx 0, [M, K]) or b
  (op_idx 1, [K, N]) of a dot whose result has layout `parent`:
  * parent NvidiaMma: the registers of the instruction's a / b fragments. a: sizePerThread
    [1, 2] (two consecutive k per register pair), threadsPerWarp [8, 4], the parent's warps
    along M; b: sizePerThread [2, 1], threadsPerWarp [4, 8], order [0, 1] (lane 4 * g + t
    holds k = 2t, 2t+1 of column g), the parent's warps along N.
  * parent blocked (the FMA path, any target): the parent's layout with sizePerThread
    along K equal to K, so the thread that holds result element (m, n) holds all of row m of
    a and column n of b (threads along the other dimension hold copies).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Attribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from .layouts import (ONE_WARP, Blocked, LayoutData, LayoutEncodingAttr, MatrixCoreLayout,
                      WarpLayouts, default_blocked, layout_of_encoding, list_text, parse_fields, parse_list)

MMA_PIECE = (16, 8)  # rows x columns one mma.sync.m16n8k16 produces
MMA_K = 16
#: the registers of mma.sync.m16n8k16 (and of wgmma's accumulator): lane 4 * g + t holds columns 2t, 2t+1 of
#: row g of the result's 8 x 8 pieces and k 2t, 2t+1 of row g of a / of column g of b
MMA_WARP_LAYOUTS = WarpLayouts(result=Blocked((1, 2), (8, 4), ONE_WARP, (1, 0)),
                               a=Blocked((1, 2), (8, 4), ONE_WARP, (1, 0)),
                               b=Blocked((2, 1), (4, 8), ONE_WARP, (0, 1)))


@dataclass(frozen=True)
class NvidiaMma(MatrixCoreLayout):
    """The accumulator layout of mma.sync.m16n8k16 (version 2), warps along one dimension.
    Version 3 (Hopper's wgmma, `to_llvm/dot_wgmma.py`) is the same register layout: warp w of
    [4, 1] holds rows 8w + g + 32r, and rows 2i, 2i+1 of its repetitions are one m64 instruction's
    rows g and g + 8 of the warp's 16; the version only tells the lowering which instruction to use."""

    warps_per_cta: tuple[int, int]
    version: int = 2

    def warp_layouts(self) -> WarpLayouts:
        return MMA_WARP_LAYOUTS


@dataclass(frozen=True)
class DotOperand:
    """Operand `op_idx` (0: a, 1: b) of a dot whose result has layout `parent`."""

    op_idx: int
    parent: "Blocked | MatrixCoreLayout"

    @property
    def rank(self) -> int:
        return self.parent.rank

    @property
    def order(self) -> tuple[int, ...]:
        return self.to_blocked().order

    def k_dim(self) -> int:
        return self.rank - 1 if self.op_idx == 0 else self.rank - 2

    def to_blocked(self, shape: tuple[int, ...] | None = None) -> Blocked:
        parent = self.parent
        if isinstance(parent, MatrixCoreLayout):  # NvidiaMma, AmdMfma, AmdWmma: their instructions' registers
            return parent.operand_blocked(self.op_idx)
        k = self.k_dim()
        spt = list(parent.size_per_thread)
        spt[k] = max(1, shape[k]) if shape is not None else 1
        return Blocked(tuple(spt), parent.threads_per_warp, parent.warps_per_cta, parent.order)


# ===------------------------------------------------------------------------===
# IR attributes
# ===------------------------------------------------------------------------===
@irdl_attr_definition
class NvidiaMmaEncodingAttr(LayoutEncodingAttr):
    """`#ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [4, 1]}>`"""

    name = "ttg.nvidia_mma"
    LAYOUT = NvidiaMma

    layout: LayoutData

    def print_parameters(self, printer: Printer) -> None:
        mma = self.value
        printer.print_string(f"<{{versionMajor = {mma.version}, warpsPerCTA = {list_text(mma.warps_per_cta)}}}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute]:
        version, warps = parse_fields(parser, ("versionMajor", parser.parse_integer),
                                      ("warpsPerCTA", lambda: parse_list(parser)))
        if version not in (2, 3):
            parser.raise_error("#ttg.nvidia_mma: versionMajor must be 2 (mma.sync) or 3 (wgmma)")
        if len(warps) != 2 or min(warps) != 1:
            parser.raise_error("#ttg.nvidia_mma: warpsPerCTA must be [w, 1] or [1, w]")
        return (LayoutData(NvidiaMma(warps, version)),)  # type: ignore[arg-type]


@irdl_attr_definition
class DotOperandEncodingAttr(LayoutEncodingAttr):
    """`#ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<...>}>`"""

    name = "ttg.dot_op"
    LAYOUT = DotOperand

    layout: LayoutData

    def print_parameters(self, printer: Printer) -> None:
        from .layouts import encoding_of

        printer.print_string(f"<{{opIdx = {self.value.op_idx}, parent = ")
        printer.print_attribute(encoding_of(self.value.parent))
        printer.print_string("}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute]:
        op_idx, parent = parse_fields(parser, ("opIdx", parser.parse_integer), ("parent", parser.parse_attribute))
        parent = layout_of_encoding(parent)
        if op_idx not in (0, 1) or not isinstance(parent, Blocked | MatrixCoreLayout):
            parser.raise_error("#ttg.dot_op: opIdx must be 0 or 1 and the parent a blocked, nvidia_mma, amd_mfma or "
                               "amd_wmma layout")
        return (LayoutData(DotOperand(op_idx, parent)),)


DOT_ENCODINGS = (NvidiaMmaEncodingAttr, DotOperandEncodingAttr)


def fma_result_layout(shape: tuple[int, ...], num_warps: int, warp_size: int) -> Blocked:
    """The result layout of a dot computed with FMAs: each thread holds a small square of the
    result (up to 4 x 4 per repetition) and lanes form a near-square grid, so that the rows of a
    and columns of b a thread needs (its operand layouts) stay few."""
    rank = len(shape)
    if num_warps * warp_size == 1:  # one thread (the CPU): row-major, like every other tile there
        return default_blocked(shape, 1, 1)
    m, n = shape[-2], shape[-1]
    spt_m, spt_n = min(4, m), min(4, n)
    lanes_n = max(1, min(8, n // spt_n, warp_size))
    lanes_m = max(1, warp_size // lanes_n)
    warps_m = max(1, min(num_warps, m // (spt_m * lanes_m)))
    warps_n = max(1, num_warps // warps_m)
    batch = (1,) * (rank - 2)
    return Blocked(batch + (spt_m, spt_n), batch + (lanes_m, lanes_n), batch + (warps_m, warps_n),
                   tuple(reversed(range(rank))))
