"""Layouts of a `tt.elementwise_inline_asm` with `packed_element` p > 1 (tl.inline_asm_elementwise's pack).

One execution of the assembly takes p slots of a thread at a time (`rules_inline_asm.py`), and the language
promises that they are p consecutive elements of the tensor in row-major order, the first at a multiple of
p: four int8 reversed by one `prmt` are four neighbours along the last dimension (or, where the last
dimension has fewer than p elements, whole rows of it and the neighbouring rows). A layout gives that when,
taking the tensor's dimensions from the last one (size-1 dimensions aside), each thread's consecutive slots
run along them: along the dimension d where the p elements end, the thread's run along d (`sizePerThread`,
or the whole dimension when one thread position covers it, as on the CPU) is a multiple of what is left of
p; every dimension before it is held whole by the thread, in slot order. Any other layout (a slice, a dot
layout, a blocked layout of 2 bytes per thread at 8 warps for int8 with pack=4) would pad the executions.

The layout passes keep it so: convert-to-ttgir gives such an op `packed_layout`; coalesce widens the memory
accesses of the op's shape (`widened_size_per_thread`) so that the loads and stores around it take a layout
that packs too, then moves the op to the layout of such a neighbour (`neighbour_layout`), so that no
conversion is needed; forward propagation and rematerialization move the op only to layouts that
`layout_accepted` says pack.
"""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue

from ..ir.layouts import Blocked, Layout, blocked_for
from ..ir.tt_inline_asm import ElementwiseInlineAsmOp
from ..ir.tt_types import shape_of
from ..ir.ttg import ConvertLayoutOp, layout_of
from .layout_constraints import is_tensor


def asm_pack(op: Operation) -> int:
    """The pack of a `tt.elementwise_inline_asm` on tensors; 1 for any other op (and for scalars)."""
    if isinstance(op, ElementwiseInlineAsmOp) and is_tensor(op.results[0]):
        return op.pack
    return 1


def _logical_dims(shape: tuple[int, ...]) -> list[int]:
    """The dimensions of more than one element, last (fastest in row-major order) first."""
    return [d for d in reversed(range(len(shape))) if shape[d] > 1]


def packs_consecutively(layout: Layout | None, shape: tuple[int, ...], pack: int) -> bool:
    """True when every run of `pack` consecutive slots of every thread holds `pack` consecutive
    elements of the `shape` tensor in row-major order, starting at a multiple of `pack`."""
    if pack == 1:
        return True
    if not isinstance(layout, Blocked):
        return False
    logical = iter(_logical_dims(shape))
    slots = layout.slots_per_dim(shape)
    need = pack
    for d in layout.order:  # the dimensions in slot order, fastest first
        if slots[d] == 1:
            continue  # one slot along d: a thread's slots do not step along it
        if shape[d] == 1:
            return False  # copies of each element between a thread's consecutive slots
        if d != next(logical):
            return False  # its slots step along another dimension first
        run = layout.size_per_thread[d]  # (one wrapping around a smaller dimension starts it again)
        if layout.threads_per_warp[d] * layout.warps_per_cta[d] == 1 and run <= shape[d]:
            run = shape[d]  # one thread position: the repetitions continue the run
        if shape[d] >= need:
            return shape[d] % need == 0 and run % need == 0
        if run != shape[d] or need % shape[d]:
            return False  # the next dimension's elements must follow this one's, all of them
        need //= shape[d]
        if need == 1:
            return True
    return need == 1


def widened_size_per_thread(size_per_thread: tuple[int, ...], order: tuple[int, ...], shape: tuple[int, ...],
                            pack: int) -> tuple[int, ...] | None:
    """`size_per_thread` widened just enough that a blocked layout of `order` packs `pack` elements
    per thread run (`packs_consecutively`); None when `order` does not run along the row-major
    dimensions first or the shape has no room for `pack` consecutive elements."""
    spt = list(size_per_thread)
    need = pack
    dims = [d for d in order if shape[d] > 1]
    for d, wanted in zip(dims, _logical_dims(shape)):
        if need == 1:
            break
        if d != wanted:
            return None
        if shape[d] >= need:
            spt[d] = math.lcm(spt[d], need)
            if shape[d] % spt[d]:
                return None
            need = 1
        elif need % shape[d] == 0:
            spt[d] = shape[d]
            need //= shape[d]
        else:
            return None
    for d in range(len(shape)):
        if shape[d] == 1:
            spt[d] = 1
    return tuple(spt) if need == 1 else None


def packed_layout(shape: tuple[int, ...], pack: int, num_warps: int, lanes: int) -> Blocked:
    """The row-major blocked layout whose threads each hold `pack` consecutive elements per run (the
    language made sure that `pack` divides the tensor's elements)."""
    order = tuple(reversed(range(len(shape))))
    spt = widened_size_per_thread((1,) * len(shape), order, shape, pack)
    if spt is None:
        raise ValueError(f"packed_element={pack} does not divide a tensor of shape {list(shape)} into runs "
                         "of consecutive elements (tl.inline_asm_elementwise checks this)")
    layout = blocked_for(shape, spt, order, num_warps, lanes)
    assert packs_consecutively(layout, shape, pack), (layout, shape, pack)
    return layout


def _through_conversions(value: SSAValue) -> SSAValue:
    while isinstance(value.owner, ConvertLayoutOp):
        value = value.owner.src
    return value


def _converted_to(value: SSAValue) -> list[Layout]:
    """The layouts that chains of conversions from `value` end in."""
    found: list[Layout] = []
    for use in value.uses:
        if isinstance(use.operation, ConvertLayoutOp):
            found += _converted_to(use.operation.result) or [layout_of(use.operation.result.type)]
    return [layout for layout in found if layout is not None]


def neighbour_layout(op: Operation) -> Layout | None:
    """For a packed inline asm: the first layout that packs among those its results are converted to
    (the stores' after coalescing) and those its operands are converted from (the loads'), if that is
    not its own; None otherwise. Coalescing moves it there, so that the conversions fold away."""
    pack = asm_pack(op)
    if pack == 1:
        return None
    shape, own = tuple(shape_of(op.results[0].type)), layout_of(op.results[0].type)
    candidates = [layout for result in op.results for layout in _converted_to(result)]
    candidates += [layout_of(_through_conversions(v).type) for v in op.operands if is_tensor(v)]
    for layout in candidates:
        if layout is not None and packs_consecutively(layout, shape, pack):
            return None if layout == own else layout
    return None


def layout_accepted(op: Operation, layout: Layout) -> bool:
    """Whether `op` may take `layout` (an elementwise op moved by the layout passes): any layout,
    except for a packed inline asm, which needs one that `packs_consecutively`."""
    pack = asm_pack(op)
    return pack == 1 or packs_consecutively(layout, tuple(shape_of(op.results[0].type)), pack)
