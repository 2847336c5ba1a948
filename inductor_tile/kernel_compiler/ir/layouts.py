"""Layouts of TTGIR: which thread holds which element of a tile.

Two layouts, written as tensor encodings the way Triton writes them:

    #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
    #ttg.slice<{dim = 1, parent = #ttg.blocked<{...}>}>

A blocked layout tiles the tensor with a CTA tile of `sizePerThread * threadsPerWarp *
warpsPerCTA` elements per dimension; each thread holds `sizePerThread` contiguous
elements per dimension in every repetition of that tile; lanes and warps are numbered
along `order` (fastest dimension first). A dimension smaller than the CTA tile wraps
around, so several threads hold copies of the same element. A slice layout is the
layout of a reduction's result: the parent's layout with dimension `dim` removed.

Each thread keeps its elements in one vector, its "slots". Slot order: repetitions
outer, `sizePerThread` inner, and dimensions from slowest to fastest following `order`,
so a thread's contiguous elements along order[0] are consecutive slots. The functions
here are the single definition of that mapping for every pass and every target.
"""

from __future__ import annotations

import abc
import functools
import itertools
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Callable, ClassVar, NamedTuple, Self, TypeVar

from xdsl.dialects.builtin import IntAttr
from xdsl.ir import Attribute, Data, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException


# ===------------------------------------------------------------------------===
# Plain-Python layouts and their index math
# ===------------------------------------------------------------------------===
@dataclass(frozen=True)
class Blocked:
    size_per_thread: tuple[int, ...]
    threads_per_warp: tuple[int, ...]
    warps_per_cta: tuple[int, ...]
    order: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.order)

    def cta_tile(self, d: int) -> int:
        return self.size_per_thread[d] * self.threads_per_warp[d] * self.warps_per_cta[d]

    def slots_per_dim(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """Slots a thread holds along each dimension: sizePerThread * repetitions."""
        return tuple(self.size_per_thread[d] * max(1, -(-shape[d] // self.cta_tile(d))) for d in range(self.rank))

    def thread_coords(self, lane: int, warp: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(lane coordinate, warp coordinate) per dimension, delinearized along `order`."""
        lane_c, warp_c = [0] * self.rank, [0] * self.rank
        for d in self.order:
            lane_c[d] = lane % self.threads_per_warp[d]
            lane //= self.threads_per_warp[d]
            warp_c[d] = warp % self.warps_per_cta[d]
            warp //= self.warps_per_cta[d]
        return tuple(lane_c), tuple(warp_c)


@dataclass(frozen=True)
class Slice:
    dim: int
    parent: "Layout"

    @property
    def rank(self) -> int:
        return self.parent.rank - 1


Layout = Blocked | Slice  # and the dot layouts of dot_layouts.py (NvidiaMma, DotOperand), views of Blocked


def _slot_dims_order(layout: Blocked) -> list[int]:
    """Dimensions from slowest- to fastest-varying slot index (reverse of `order`)."""
    return list(reversed(layout.order))


def _root_and_removed(layout: Layout) -> tuple[Blocked, list[int]]:
    """The blocked root of a (nested) slice, and the root dimensions sliced away."""
    removed: list[int] = []
    while isinstance(layout, Slice):
        # map the slice's dim back to the parent's numbering
        removed.append(layout.dim)
        layout = layout.parent
    # removed dims were recorded outermost-last; convert to root numbering
    root_dims: list[int] = []
    for dim in reversed(removed):
        remaining = [d for d in range(layout.rank) if d not in root_dims]
        root_dims.append(remaining[dim])
    return layout, root_dims


def _root_shape(layout: Layout, shape: tuple[int, ...]) -> tuple[Blocked, tuple[int, ...], list[int]]:
    """Shape of the root blocked tensor (sliced dims get size 1) and the kept root dims."""
    root, removed = _root_and_removed(layout)
    kept = [d for d in range(root.rank) if d not in removed]
    root_shape = [1] * root.rank
    for d, size in zip(kept, shape):
        root_shape[d] = size
    if not isinstance(root, Blocked):  # a dot layout (dot_layouts.py): a named view of a blocked one
        root = root.to_blocked(tuple(root_shape))
    return root, tuple(root_shape), kept


class LayoutMap:
    """Where each of one thread's slots lives in the tensor, for a layout and a shape."""

    def __init__(self, layout: Layout, shape: tuple[int, ...]):
        self.layout = layout
        self.shape = tuple(shape)
        self.root, root_shape, self.kept = _root_shape(layout, self.shape)
        self.root_shape = root_shape
        root_slots = self.root.slots_per_dim(root_shape)
        # sliced dims contribute one slot: the thread's own coordinate there
        self.slots_per_dim = tuple(root_slots[d] if d in self.kept else 1 for d in range(self.root.rank))
        self.slot_dims = _slot_dims_order(self.root)

    @cached_property
    def num_slots(self) -> int:
        n = 1
        for s in self.slots_per_dim:
            n *= s
        return n

    def slot_coords(self, slot: int) -> tuple[int, ...]:
        """Per-root-dimension slot coordinate of linear slot `slot`."""
        coords = [0] * self.root.rank
        for d in reversed(self.slot_dims):  # fastest first
            coords[d] = slot % self.slots_per_dim[d]
            slot //= self.slots_per_dim[d]
        return tuple(coords)

    def slot_of_coords(self, coords: tuple[int, ...]) -> int:
        slot = 0
        for d in self.slot_dims:
            slot = slot * self.slots_per_dim[d] + coords[d]
        return slot

    def slot_offset(self, slot: int) -> tuple[int, ...]:
        """The thread-independent part of the slot's index, per kept dimension (before wrapping)."""
        coords = self.slot_coords(slot)
        out = []
        for d in self.kept:
            spt = self.root.size_per_thread[d]
            rep, within = divmod(coords[d], spt)
            out.append(rep * self.root.cta_tile(d) + within)
        return tuple(out)

    def thread_offset(self, lane: int, warp: int) -> tuple[int, ...]:
        """The thread-dependent part of every slot's index, per kept dimension."""
        lane_c, warp_c = self.root.thread_coords(lane, warp)
        out = []
        for d in self.kept:
            spt, tpw = self.root.size_per_thread[d], self.root.threads_per_warp[d]
            out.append(lane_c[d] * spt + warp_c[d] * spt * tpw)
        return tuple(out)

    def index(self, slot: int, lane: int = 0, warp: int = 0) -> tuple[int, ...]:
        """Tensor index held in `slot` by the thread (lane, warp); wraps for small dims."""
        if lane == 0 and warp == 0:  # one-thread targets ask for every slot's index, often several times
            return self._thread_zero_indices[slot]
        return tuple((a + b) % s for a, b, s in zip(self.slot_offset(slot), self.thread_offset(lane, warp), self.shape))

    @cached_property
    def _thread_zero_indices(self) -> list[tuple[int, ...]]:
        base = self.thread_offset(0, 0)
        return [tuple((a + b) % s for a, b, s in zip(self.slot_offset(slot), base, self.shape))
                for slot in range(self.num_slots)]

    def owners(self, num_lanes: int, num_warps: int) -> dict[tuple[int, ...], list[tuple[int, int, int]]]:
        """Every (lane, warp, slot) holding each index: a test and debugging aid."""
        held: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
        for lane, warp in itertools.product(range(num_lanes), range(num_warps)):
            for slot in range(self.num_slots):
                held.setdefault(self.index(slot, lane, warp), []).append((lane, warp, slot))
        return held


def default_blocked(shape: tuple[int, ...], num_warps: int, warp_size: int) -> Blocked:
    """The layout every tensor gets before coalescing: one element per thread per repetition,
    lanes then warps spread over the fastest dimension first (row-major order).

    Lanes and warps left over (a dimension smaller than the threads) replicate along the
    fastest dimension: a [XBLOCK, 1] or [1, 1] value is usually broadcast along it later, and
    shares its layout with the broadcast result, which then spreads its threads over the long
    dimension.  Replicating along the slowest one made a [1, 1024] row reduction hold the whole
    row in every thread (measured 6.7 ms instead of microseconds on the H100, 2026-11-21)."""
    rank = len(shape)
    return blocked_for(shape, (1,) * rank, tuple(reversed(range(rank))), num_warps, warp_size)


def blocked_for(
    shape: tuple[int, ...],
    size_per_thread: tuple[int, ...],
    order: tuple[int, ...],
    num_warps: int,
    warp_size: int,
) -> Blocked:
    """A blocked layout in which each thread holds `size_per_thread` elements: lanes, then
    warps, are spread along `order` (fastest dimension first), each dimension taking as
    many as fit in `shape[d] / size_per_thread[d]`; lanes and warps left over replicate
    along the fastest dimension (see `default_blocked`). With one element per thread and row-major order this
    is `default_blocked`. Coalescing uses it with a vector's worth along order[0]."""
    rank = len(shape)
    threads = [1] * rank
    warps = [1] * rank
    lanes_left, warps_left = warp_size, num_warps
    for d in order:
        t = min(lanes_left, max(1, shape[d] // size_per_thread[d]))
        threads[d] = t
        lanes_left //= t
    threads[order[0]] *= lanes_left  # leftover lanes replicate along the fastest dim
    for d in order:
        w = min(warps_left, max(1, shape[d] // (size_per_thread[d] * threads[d])))
        warps[d] = w
        warps_left //= w
    warps[order[0]] *= warps_left
    return Blocked(tuple(size_per_thread), tuple(threads), tuple(warps), tuple(order))


@functools.lru_cache(maxsize=4096)
def same_mapping(a: Layout, b: Layout, shape: tuple[int, ...], num_lanes: int, num_warps: int) -> bool:
    """True when `a` and `b` put every element of a `shape` tile in the same thread and slot
    (e.g. any two 1-D blocked layouts on a single thread): converting between them is free.
    (Cached: the layout passes ask it of the same pairs again and again.)"""
    map_a, map_b = LayoutMap(a, tuple(shape)), LayoutMap(b, tuple(shape))
    if map_a.num_slots != map_b.num_slots:
        return False
    for lane, warp in itertools.product(range(num_lanes), range(num_warps)):
        for slot in range(map_a.num_slots):
            if map_a.index(slot, lane, warp) != map_b.index(slot, lane, warp):
                return False
    return True


# ===------------------------------------------------------------------------===
# IR attributes
# ===------------------------------------------------------------------------===
def list_text(values: tuple[int, ...]) -> str:
    """`[1, 4]`: a list of integers as the encodings write it."""
    return "[" + ", ".join(str(v) for v in values) + "]"


def parse_list(parser: AttrParser) -> tuple[int, ...]:
    return tuple(parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer))


_Value = TypeVar("_Value")


def parse_field(parser: AttrParser, key: str, parse_value: Callable[[], _Value]) -> _Value:
    """`key = value` inside an encoding's braces."""
    parser.parse_keyword(key)
    parser.parse_punctuation("=")
    return parse_value()


def parse_fields(parser: AttrParser, *fields: tuple[str, Callable[[], Any]]) -> list[Any]:
    """`<{key = value, ...}>`: an encoding's parameters, the `fields` (key, how to parse its value) in order."""
    values = []
    with parser.in_angle_brackets(), parser.in_braces():
        for i, (key, parse_value) in enumerate(fields):
            if i:
                parser.parse_punctuation(",")
            values.append(parse_field(parser, key, parse_value))
    return values


@irdl_attr_definition
class LayoutData(Data[Any]):
    """Holder of a plain layout (Blocked, NvidiaMma, DotOperand, AmdMfma, AmdWmma) inside its encoding
    attribute (never printed on its own)."""

    name = "ttg.layout_data"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Any:  # pragma: no cover - printed via the encoding
        raise NotImplementedError("ttg.layout_data is printed through its encoding (#ttg.blocked, ...)")

    def print_parameter(self, printer: Printer) -> None:  # pragma: no cover
        printer.print_string(str(self.data))


class LayoutEncodingAttr(ParametrizedAttribute):
    """An encoding attribute that holds one plain layout of class `LAYOUT` (`#ttg.blocked`, `#ttg.nvidia_mma`,
    `#ttg.dot_op`, `#ttg.amd_mfma`, `#ttg.amd_wmma`); a subclass adds its name, its textual form and the
    field `layout: LayoutData` again (xDSL makes only the decorated class a dataclass, and its fields are
    what equality and hashing compare)."""

    LAYOUT: ClassVar[type]

    layout: LayoutData

    @classmethod
    def get(cls, layout: Any) -> Self:
        return cls(LayoutData(layout))

    @property
    def value(self) -> Any:
        return self.layout.data

    def verify(self) -> None:
        if not isinstance(self.value, self.LAYOUT):
            raise VerifyException(f"#{self.name} must hold a {self.LAYOUT.__name__} layout, not {self.value!r}")


@irdl_attr_definition
class BlockedEncodingAttr(LayoutEncodingAttr):
    """`#ttg.blocked<{sizePerThread = [..], threadsPerWarp = [..], warpsPerCTA = [..], order = [..]}>`"""

    name = "ttg.blocked"
    LAYOUT = Blocked

    layout: LayoutData

    def print_parameters(self, printer: Printer) -> None:
        b = self.value
        printer.print_string(f"<{{sizePerThread = {list_text(b.size_per_thread)}, threadsPerWarp = "
                             f"{list_text(b.threads_per_warp)}, warpsPerCTA = {list_text(b.warps_per_cta)}, "
                             f"order = {list_text(b.order)}}}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute]:
        fields: dict[str, tuple[int, ...]] = {}
        with parser.in_angle_brackets():
            with parser.in_braces():
                while True:
                    key = parser.parse_identifier()
                    parser.parse_punctuation("=")
                    fields[key] = parse_list(parser)
                    if parser.parse_optional_punctuation(",") is None:
                        break
        expected = ("sizePerThread", "threadsPerWarp", "warpsPerCTA", "order")
        if sorted(fields) != sorted(expected):
            parser.raise_error(f"#ttg.blocked needs exactly the fields {', '.join(expected)}")
        return (LayoutData(Blocked(*(fields[k] for k in expected))),)


@irdl_attr_definition
class SliceEncodingAttr(ParametrizedAttribute):
    """`#ttg.slice<{dim = 1, parent = #ttg.blocked<...>}>`: a reduction result's layout."""

    name = "ttg.slice"

    dim: IntAttr
    parent: Attribute

    @staticmethod
    def get(dim: int, parent: Attribute) -> "SliceEncodingAttr":
        return SliceEncodingAttr(IntAttr(dim), parent)

    @property
    def value(self) -> Slice:
        return Slice(self.dim.data, layout_of_encoding(self.parent))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{{dim = {self.dim.data}, parent = ")
        printer.print_attribute(self.parent)
        printer.print_string("}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute, Attribute]:
        dim, parent = parse_fields(parser, ("dim", parser.parse_integer), ("parent", parser.parse_attribute))
        return (IntAttr(dim), parent)


_ENCODINGS: dict[Any, Attribute] = {}  # layout -> its attribute: made and verified once (passes ask thousands of times)
MAX_ENCODINGS = 4096  # the table starts over beyond this many layouts


def encoding_of(layout: Layout) -> Attribute:
    """The IR attribute of a plain layout."""
    try:
        encoding = _ENCODINGS.get(layout)
    except TypeError:  # a layout built with lists: unhashable, made each time
        return _make_encoding(layout)
    if encoding is None:
        if len(_ENCODINGS) >= MAX_ENCODINGS:
            _ENCODINGS.clear()
        encoding = _ENCODINGS[layout] = _make_encoding(layout)
    return encoding


def _make_encoding(layout: Layout) -> Attribute:
    if isinstance(layout, Slice):
        return SliceEncodingAttr.get(layout.dim, encoding_of(layout.parent))
    from .dot_layouts import DOT_ENCODINGS

    for encoding in (BlockedEncodingAttr, AmdMfmaEncodingAttr, AmdWmmaEncodingAttr, *DOT_ENCODINGS):
        if isinstance(layout, encoding.LAYOUT):
            return encoding.get(layout)
    raise TypeError(f"no TTGIR encoding for the layout {layout!r}")


def layout_of_encoding(attr: Attribute) -> Layout:
    """The plain layout of an encoding attribute."""
    if isinstance(attr, LayoutEncodingAttr | SliceEncodingAttr):
        return attr.value
    raise TypeError(f"not a TTGIR layout: {attr}")


# ===------------------------------------------------------------------------===
# Matrix-core layouts (NVIDIA mma in dot_layouts.py, AMD MFMA and WMMA here), views of blocked layouts
# ===------------------------------------------------------------------------===
ONE_WARP = (1, 1)


class WarpLayouts(NamedTuple):
    """The registers of one matrix-core instruction family within one warp, as blocked layouts (warpsPerCTA
    [1, 1]): the result's, operand a's ([M, K]) and operand b's ([K, N])."""

    result: Blocked
    a: Blocked
    b: Blocked


class MatrixCoreLayout(abc.ABC):
    """The result layout of dots computed with one matrix-core instruction family, on warps lying along one
    dimension (`warps_per_cta` [w, 1] or [1, w]). The families differ only in their `warp_layouts()` (data);
    the warps are placed here: the result's are `warps_per_cta`, operand a's the ones along M and operand b's
    the ones along N (the warps along the other dimension hold copies: their count there is 1)."""

    warps_per_cta: tuple[int, int]

    rank = 2

    @property
    def order(self) -> tuple[int, ...]:
        return (1, 0)

    @abc.abstractmethod
    def warp_layouts(self) -> WarpLayouts:
        """This family's registers within one warp."""

    def to_blocked(self, shape: tuple[int, ...] | None = None) -> Blocked:
        return replace(self.warp_layouts().result, warps_per_cta=self.warps_per_cta)

    def operand_blocked(self, op_idx: int) -> Blocked:
        """The layout of operand a (0) or b (1)."""
        warps_m, warps_n = self.warps_per_cta
        if op_idx == 0:
            return replace(self.warp_layouts().a, warps_per_cta=(warps_m, 1))
        return replace(self.warp_layouts().b, warps_per_cta=(1, warps_n))


class AmdMatrixCoreLayout(MatrixCoreLayout):
    """The AMD families (AmdMfma, AmdWmma): their operands reach the instructions through LDS
    (to_llvm/dot_amd_operands.py) and large accumulators leave in chunks (to_llvm/dot_mfma_epilogue.py);
    NvidiaMma has lowerings of its own."""


#: the MFMA instructions a dot may use, by the side of their square result: (M = N, K per instruction)
MFMA_SHAPES = {32: (32, 8), 16: (16, 16)}
#: their registers (AmdMfma's docstring), by the side of the result
MFMA_WARP_LAYOUTS = {size: WarpLayouts(result=Blocked((4, 1), (64 // size, size), ONE_WARP, (1, 0)),
                                       a=Blocked((1, 4), (size, 64 // size), ONE_WARP, (0, 1)),
                                       b=Blocked((4, 1), (64 // size, size), ONE_WARP, (1, 0)))
                     for size in MFMA_SHAPES}
#: the registers of v_wmma_f32_16x16x16 (AmdWmma's docstring)
WMMA_WARP_LAYOUTS = WarpLayouts(result=Blocked((1, 1), (2, 16), ONE_WARP, (1, 0)),
                                a=Blocked((1, 8), (16, 2), ONE_WARP, (0, 1)),
                                b=Blocked((8, 1), (2, 16), ONE_WARP, (1, 0)))


@dataclass(frozen=True)
class AmdMfma(AmdMatrixCoreLayout):
    """The result layout of dots computed with `v_mfma_f32_{32x32x8,16x16x16}` (fp16 / bf16 "_1k", fp32
    accumulate) on a wave of 64 lanes, one instruction per `size` x `size` piece of each wave.

    From the CDNA3 ISA's description of the instructions' registers (lane l of the wave, register v):
      32x32x8:   d[v] = D[8 * (v // 4) + 4 * (l // 32) + v % 4][l % 32]   (16 registers)
      16x16x16:  d[v] = D[4 * (l // 16) + v][l % 16]                     (4 registers)
    i.e. blocked sizePerThread [4, 1], threadsPerWarp [64 / size, size], order [1, 0]:
    a lane holds 4 consecutive rows of one column per repetition, and the instruction's 32 rows are
    4 row repetitions (32x32x8) or one (16x16x16). The operands (`operand_blocked`):
      a [M, K]:  a[j] = A[l % size][k_per_lane * (l // size) + j]  (4 halves, k contiguous)
      b [K, N]:  b[j] = B[k_per_lane * (l // size) + j][l % size]
    with k_per_lane = 4: sizePerThread [1, 4] / [4, 1], lanes along M (N) fastest.

    Waves lie along one dimension (`warps_per_cta` [w, 1] or [1, w]); the rows a wave holds in a and
    in the result must be the same instruction rows, which holds for 16x16x16 either way (a wave's
    16 rows are one block of both) but for 32x32x8 only along N (the result's rows of one wave are 4
    blocks of 8 rows, a's one block of 32), so 32x32x8 takes warps [1, w]."""

    size: int
    warps_per_cta: tuple[int, int]

    @property
    def k_width(self) -> int:
        """K of one instruction."""
        return MFMA_SHAPES[self.size][1]

    def warp_layouts(self) -> WarpLayouts:
        return MFMA_WARP_LAYOUTS[self.size]


@irdl_attr_definition
class AmdMfmaEncodingAttr(LayoutEncodingAttr):
    """`#ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [1, 4]}>`"""

    name = "ttg.amd_mfma"
    LAYOUT = AmdMfma

    layout: LayoutData

    def print_parameters(self, printer: Printer) -> None:
        mfma = self.value
        printer.print_string(f"<{{instrShape = {list_text((mfma.size, mfma.size, mfma.k_width))}, "
                             f"warpsPerCTA = {list_text(mfma.warps_per_cta)}}}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute]:
        shape, warps = parse_fields(parser, ("instrShape", lambda: parse_list(parser)),
                                    ("warpsPerCTA", lambda: parse_list(parser)))
        if len(shape) != 3 or shape[0] != shape[1] or MFMA_SHAPES.get(shape[0], (0, 0))[1] != shape[2]:
            parser.raise_error("#ttg.amd_mfma: instrShape must be [32, 32, 8] or [16, 16, 16]")
        if len(warps) != 2 or min(warps) != 1 or (shape[0] == 32 and warps[0] != 1):
            parser.raise_error("#ttg.amd_mfma: warpsPerCTA must be [1, w] ([w, 1] too for 16x16x16)")
        return (LayoutData(AmdMfma(shape[0], warps)),)  # type: ignore[arg-type]


@dataclass(frozen=True)
class AmdWmma(AmdMatrixCoreLayout):
    """The result layout of dots computed with `v_wmma_f32_16x16x16_{f16,bf16}` on RDNA3 (gfx11, wave32), one
    instruction per 16 x 16 piece of each wave.

    From the RDNA3 ISA's description (lane l of 32, register v of 8): d[v] = D[2 * v + l // 16][l % 16], i.e.
    blocked sizePerThread [1, 1], threadsPerWarp [2, 16], order [1, 0], the instruction's 16 rows being 8 row
    repetitions. Each lane's a (b) registers are the 16 k of row (column) l % 16, lanes 16-31 holding the
    same as lanes 0-15; as a layout (`operand_blocked`) lanes 0-15 hold k 0-7 and lanes 16-31 k 8-15 of each
    16, and the lowering (to_llvm/dot_wmma.py) completes each lane's 16 from its partner lane l ^ 16.
    A wave's rows in the result are interleaved with the other waves' rows along M (2 rows each), its rows in
    a are not, so waves lie along N only ([1, w])."""

    warps_per_cta: tuple[int, int]

    size = 16
    k_width = 16

    def warp_layouts(self) -> WarpLayouts:
        return WMMA_WARP_LAYOUTS


@irdl_attr_definition
class AmdWmmaEncodingAttr(LayoutEncodingAttr):
    """`#ttg.amd_wmma<{version = 1, warpsPerCTA = [1, 4]}>` (version 1: RDNA3)"""

    name = "ttg.amd_wmma"
    LAYOUT = AmdWmma

    layout: LayoutData

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{{version = 1, warpsPerCTA = {list_text(self.value.warps_per_cta)}}}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute]:
        version, warps = parse_fields(parser, ("version", parser.parse_integer),
                                      ("warpsPerCTA", lambda: parse_list(parser)))
        if version != 1:
            parser.raise_error("#ttg.amd_wmma: version must be 1 (RDNA3)")
        if len(warps) != 2 or warps[0] != 1:
            parser.raise_error("#ttg.amd_wmma: warpsPerCTA must be [1, w]")
        return (LayoutData(AmdWmma(warps)),)  # type: ignore[arg-type]
