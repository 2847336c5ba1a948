"""coalesce: give each global load and store the layout that makes its accesses wide.

For a tt.load / tt.store / atomic of a tensor of pointers, the axis info of the pointers decides:
- order: dimensions by decreasing contiguity (ties: the first dimension first, as Triton), so that
  consecutive lanes touch consecutive addresses;
- elements per thread along order[0]: as many as one 128-bit access holds, but no more
  than the pointers are contiguous, than their byte alignment allows, than the mask is
  constant over (one mask bit per vector), and than the tile has per thread; atomics
  access one element at a time, so they take one (consecutive lanes, consecutive elements);
- lanes, then warps, spread along `order` (`layouts.blocked_for`);
- a load takes the widest of that and the widths of the function's other accesses with the same
  shape and order (Triton's rule), so a gather next to vector loads (a rotary kernel's cos/sin
  table beside its fp16 rows) shares their layout instead of costing a shared-memory round trip
  per operand; stores keep their own width (a store wider than its alignment would be split);
- loads and stores of the shape of a packed inline asm (pack p > 1) hold at least p consecutive
  elements per thread run along the row-major dimensions where their order runs along them
  (`packed_asm_layouts`): the asm needs that layout, and takes theirs with no conversion (int8
  with pack=4 at 8 warps, 512 elements: 4 per thread, warps 4-7 holding copies, not 2 and padding);
  then each packed asm moves to the layout of such a store (or load) around it, if not in it already.

The op's operands are converted to that layout and its result (a load's values, an
atomic's old values) is converted back to the layout its users had;
remove-layout-conversions then removes what it can.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ..analysis.axis_info import AxisInfo, compute_axis_info, pow2_divisor
from ..analysis.axis_info_rules import element_bytes
from ..ir.layouts import Blocked, Layout, blocked_for, same_mapping
from ..ir.tt_memory import MEMORY_OPS, AtomicCASOp, AtomicRMWOp, LoadOp, StoreOp
from ..ir.tt_types import PointerType, element_of, numel, shape_of
from ..ir.ttg import convert_to, launch_shape, with_layout
from .layout_constraints import functions, is_tensor, value_layout
from .packed_asm_layouts import asm_pack, neighbour_layout, widened_size_per_thread

MAX_ACCESS_BITS = 128
MAX_MAPPING_CHECK = 1 << 16  # (threads x elements) up to which layouts are compared element by element


def access_order(contiguity: tuple[int, ...]) -> tuple[int, ...]:
    """Dimensions by decreasing contiguity; among equals, the first dimension first (Triton's rule).

    Where no dimension is contiguous, Inductor's 2-D tiles put the dimension that the read steps
    through slowly last: grouped-query attention's repeated heads (`ptr + 8*s + 4096*d + h // 2`,
    a [heads, s*d] tile) read 16-byte runs along the heads, and lanes along them took 14.6 us
    under Triton against 43.5 us with lanes along s*d (H100, 8 x 16 x 512 x 128 fp16).
    """
    return tuple(sorted(range(len(contiguity)), key=lambda d: -contiguity[d]))


def _floor_pow2(value: int) -> int:
    return 1 << (max(1, value).bit_length() - 1)


def elements_per_thread(
    ptr: SSAValue, ptr_info: AxisInfo, mask_info: AxisInfo | None, dim: int, num_threads: int
) -> int:
    """How many consecutive elements along `dim` one thread accesses at once."""
    pointee = element_of(ptr.type)
    assert isinstance(pointee, PointerType)
    size = element_bytes(pointee.pointee)
    shape = shape_of(ptr.type)
    width = min(
        MAX_ACCESS_BITS // (8 * size),
        ptr_info.contiguity[dim],
        pow2_divisor(ptr_info.divisibility[dim]) // size,
        shape[dim],
    )
    if mask_info is not None:
        width = min(width, mask_info.constancy[dim])
    width = min(width, max(numel(shape) // num_threads, 1))
    return _floor_pow2(width)


MemoryOp = LoadOp | StoreOp | AtomicRMWOp | AtomicCASOp


@dataclass(frozen=True)
class Access:
    """What one memory op asks for on its own: its tile shape, order and vector width."""

    shape: tuple[int, ...]
    order: tuple[int, ...]
    width: int


def own_access(op: MemoryOp, infos: dict[SSAValue, AxisInfo], num_warps: int, lanes: int) -> Access:
    ptr = op.ptr
    shape = shape_of(ptr.type)
    info = infos.get(ptr) or AxisInfo.unknown(len(shape))
    mask = getattr(op, "mask", None)
    mask_info = infos.get(mask) if mask is not None else None
    if mask is not None and mask_info is None:
        mask_info = AxisInfo.unknown(len(shape))
    order = access_order(info.contiguity)
    width = 1
    if isinstance(op, LoadOp | StoreOp):
        width = elements_per_thread(ptr, info, mask_info, order[0], num_warps * lanes)
    return Access(tuple(shape), order, width)


def coalesced_layout(op: MemoryOp, accesses: dict[MemoryOp, Access], num_warps: int, lanes: int,
                     packs: dict[tuple[int, ...], int] | None = None) -> Blocked:
    """The blocked layout for the memory op `op` (see the module docstring); `accesses` holds
    every memory op of the function, `packs` the largest pack of the function's packed inline asm
    (`asm_packs`) per shape."""
    own = accesses[op]
    width = own.width
    if isinstance(op, LoadOp):
        width = max([width] + [other.width for other in accesses.values()
                               if other.shape == own.shape and other.order == own.order])
    per_thread: tuple[int, ...] = tuple(width if d == own.order[0] else 1 for d in range(len(own.shape)))
    pack = (packs or {}).get(own.shape, 1)
    if pack > 1 and isinstance(op, LoadOp | StoreOp):
        per_thread = widened_size_per_thread(per_thread, own.order, own.shape, pack) or per_thread
    return blocked_for(own.shape, per_thread, own.order, num_warps, lanes)


def asm_packs(func_op: Operation) -> dict[tuple[int, ...], int]:
    """Per tile shape, the largest pack of the packed inline asm ops of that shape in `func_op`."""
    packs: dict[tuple[int, ...], int] = {}
    for op in func_op.walk():
        if (pack := asm_pack(op)) > 1:
            shape = tuple(shape_of(op.results[0].type))
            packs[shape] = max(packs.get(shape, 1), pack)
    return packs


@dataclass(frozen=True)
class CoalescePass(ModulePass):
    """Re-lay out global loads and stores for wide, coalesced memory accesses."""

    name = "coalesce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        num_warps, lanes = launch_shape(op)
        for func_op in functions(op):
            infos = compute_axis_info(func_op)
            accesses = {inner: own_access(inner, infos, num_warps, lanes) for inner in func_op.walk()
                        if isinstance(inner, MEMORY_OPS) and is_tensor(inner.ptr)}
            packs = asm_packs(func_op)
            for inner in accesses:
                layout = coalesced_layout(inner, accesses, num_warps, lanes, packs)
                if not _equivalent(value_layout(inner.ptr), layout, shape_of(inner.ptr.type), num_warps, lanes):
                    _relayout(inner, layout)
            for inner in list(func_op.walk()):
                if (layout := neighbour_layout(inner)) is not None:
                    _relayout(inner, layout)


def _equivalent(current: Layout | None, new: Layout, shape: tuple[int, ...], num_warps: int, lanes: int) -> bool:
    """The current layout is as good: the same, or (checked for small launches and tiles) one
    that places every element in the same thread and slot, as on a single-thread target."""
    if current == new:
        return True
    if current is None or num_warps * lanes * numel(shape) > MAX_MAPPING_CHECK:
        return False
    return same_mapping(current, new, shape, lanes, num_warps)


def _relayout(op: Operation, layout: Layout) -> None:
    """Put `op` (a memory op, or a packed inline asm) in `layout`: its tensor operands are converted to
    it, its tensor results are retyped in place and converted back to the layout their users had."""
    block = op.parent_block()
    assert block is not None
    for index, operand in enumerate(op.operands):
        if is_tensor(operand) and value_layout(operand) != layout:
            convert = convert_to(operand, layout)
            block.insert_op_before(convert, op)
            op.operands[index] = convert.result
    after = op
    for old in list(op.results):
        if not isinstance(old.type, TensorType):
            continue
        old_layout = value_layout(old)
        users = [(use.operation, use.index) for use in old.uses]
        new = Rewriter.replace_value_with_new_type(old, with_layout(old.type, layout))
        back = convert_to(new, old_layout)  # type: ignore[arg-type]
        block.insert_op_after(back, after)
        after = back
        back.result.name_hint = new.name_hint
        for user, index in users:
            user.operands[index] = back.result

