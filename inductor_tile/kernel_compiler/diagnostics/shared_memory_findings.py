"""Findings about data exchanged between threads through shared memory (GPU targets only;
one CPU thread holds the whole tile and exchanges nothing).

- A reduction whose axis spans several warps combines the warps' partial results through
  shared memory (a store, a barrier, a load): `to_llvm/rules_reduce._across_threads`.
- A `ttg.convert_layout` left after remove-layout-conversions goes through shared memory
  unless one static in-register shuffle serves every thread (`rules_tensor.uniform_permutation`);
  the conversions feeding tensor cores (dot operands) are their own lowering and not reported.
"""

from __future__ import annotations

from types import SimpleNamespace

from xdsl.ir import Operation

from ..ir.layouts import Blocked, LayoutMap, Slice
from ..ir.tt_types import shape_of
from ..passes.layout_constraints import functions, value_layout
from .perf_warnings import PerfFinding, finding_at, op_location, value_location

MAX_CONVERSION_CHECK = 1 << 16  # threads x slots up to which a conversion is checked for a register shuffle


def shared_memory_findings(module: Operation, target, num_warps: int, skip_layouts=frozenset()) -> list[PerfFinding]:
    """`skip_layouts`: conversions from or to these layouts are not reported."""
    if target.warp_size == 1 and num_warps == 1:
        return []
    findings = []
    for func_op in functions(module):
        for op in func_op.walk():
            if op.name == "tt.reduce":
                finding = _reduction_finding(op, num_warps)
            elif op.name == "ttg.convert_layout":
                if {value_layout(op.operands[0]), value_layout(op.results[0])} & set(skip_layouts):
                    continue
                finding = _conversion_finding(op, target, num_warps)
            else:
                continue
            if finding is not None:
                findings.append(finding)
    return findings


def _reduction_finding(op: Operation, num_warps: int) -> PerfFinding | None:
    source = op.operands[0]
    lmap = LayoutMap(value_layout(source), shape_of(source.type))
    root = lmap.root
    axis = op.axis.value.data
    root_axis = lmap.kept[axis]
    size = lmap.root_shape[root_axis]
    spt, tpw, wpc = root.size_per_thread[root_axis], root.threads_per_warp[root_axis], root.warps_per_cta[root_axis]
    warps = min(wpc, max(1, size // (spt * tpw)))
    if warps <= 1:
        return None
    return finding_at("shared_memory_reduction", op_location(op) or value_location(op.results[0]), (
        f"the reduction over axis {axis} ({size} elements) spans {warps} warps, so their partial results go through "
        f"shared memory (a store, a barrier and a load); with fewer warps along the axis ({num_warps} warps in all: "
        f"num_warps, or more rows per program) it would stay in registers and warp shuffles"))


def _conversion_finding(op: Operation, target, num_warps: int) -> PerfFinding | None:
    from ..to_llvm.rules_tensor import uniform_permutation

    src_type, dst_type = op.operands[0].type, op.results[0].type
    src, dst = value_layout(op.operands[0]), value_layout(op.results[0])
    if not (_is_blocked(src) and _is_blocked(dst)):
        return None  # dot operands and accumulators: the tensor-core lowering's own business
    src_map, dst_map = LayoutMap(src, shape_of(src_type)), LayoutMap(dst, shape_of(dst_type))
    if target.warp_size * num_warps * max(src_map.num_slots, dst_map.num_slots) > MAX_CONVERSION_CHECK:
        return None
    shim = SimpleNamespace(target=target, num_warps=num_warps)
    if uniform_permutation(shim, src_map, dst_map, lambda index: index) is not None:
        return None  # an in-register shuffle
    return finding_at("shared_memory_conversion", value_location(op.operands[0]) or value_location(op.results[0]), (
        f"a {'x'.join(map(str, shape_of(src_type)))} tile changes layout between threads through shared memory "
        f"(a store, a barrier and a load), from {_describe(src)} to {_describe(dst)}: the ops producing and using "
        f"it want different layouts (typically a load or store with another access order than its neighbours, or "
        f"a reduction result broadcast back)"))


def _is_blocked(layout) -> bool:
    """A blocked layout or a slice of one (not a tensor-core layout)."""
    while isinstance(layout, Slice):
        layout = layout.parent
    return isinstance(layout, Blocked)


def _describe(layout) -> str:
    root = getattr(layout, "parent", layout)
    if isinstance(root, Blocked):
        text = (f"sizePerThread={list(root.size_per_thread)} threadsPerWarp={list(root.threads_per_warp)} "
                f"warpsPerCTA={list(root.warps_per_cta)} order={list(root.order)}")
        return text if root is layout else f"a slice of ({text})"
    return str(layout)
