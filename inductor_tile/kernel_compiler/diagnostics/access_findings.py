"""Findings about global loads and stores: not vectorized to the widest access, or not
coalesced across the lanes of a warp, and which fact the compiler was missing.

The width an access gets is the one the LLVM lowering computes (`to_llvm/rules_memory.run_length`):
the run of consecutive slots of a thread, bounded by the pointers' contiguity and, on targets
without per-element masks (GPUs), by their alignment and by how long the mask stays constant.
The widest width is what one access of the target holds (16 bytes on GPUs; on the CPU, where
LLVM splits wide vectors, one 32-byte vector register), bounded by the tile's elements per thread.
When an access is narrower, each missing fact is explained from
the backward slice of its pointer and mask: the runtime stride argument the offsets are
multiplied by, the pointer argument not known 16-byte aligned, the size argument the mask
compares against. A broadcast (a run of equal addresses) and a tile too small for wider
accesses are not reported: nothing is missing there.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import func, scf
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from ..analysis.axis_info import AxisInfo, axis_info_of, pow2_divisor
from ..analysis.axis_info_rules import element_bytes
from ..ir.layouts import LayoutMap
from ..ir.tt_memory import LoadOp, StoreOp
from ..ir.tt_types import PointerType, element_of, numel, shape_of
from ..passes.layout_constraints import functions, is_tensor, value_layout
from ..to_llvm.rules_memory import access_run
from .perf_warnings import PerfFinding, finding_at, op_location, value_location

ALIGNED_BYTES = 16  # what the JIT's specialization proves of a pointer or int argument
#: on a single-thread (CPU) target a run this long already fills a vector register (AVX2), so only
#: shorter runs are reported, although the target's accesses may be as wide as the tile
CPU_VECTOR_BYTES = 32
_FOLLOW_BASE = ("tt.addptr", "tt.splat", "tt.broadcast", "tt.expand_dims", "ttg.convert_layout", "tt.reshape")


def access_findings(module: Operation, arg_names: list[str], target, num_warps: int,
                    axis_infos: dict | None = None) -> tuple[list[PerfFinding], set]:
    """The findings, and the layouts of the accesses they concern (`axis_infos`: axis_info.axis_info_of)."""
    findings, layouts = [], set()
    for func_op in functions(module):
        infos = axis_info_of(func_op, axis_infos)
        names = dict(zip(func_op.body.block.args, arg_names))
        for op in func_op.walk():
            if isinstance(op, LoadOp | StoreOp) and is_tensor(op.ptr):
                finding = _access_finding(op, infos, names, target, num_warps)
                if finding is not None:
                    findings.append(finding)
                    layouts.add(value_layout(op.ptr))
    return findings, layouts


def _floor_pow2(value: int) -> int:
    return 1 << (max(1, value).bit_length() - 1)


def _access_finding(op: LoadOp | StoreOp, infos: dict[SSAValue, AxisInfo], names: dict[SSAValue, str], target,
                    num_warps: int) -> PerfFinding | None:
    ptr, mask = op.ptr, op.mask
    pointee = element_of(ptr.type)
    assert isinstance(pointee, PointerType)
    size = element_bytes(pointee.pointee)
    shape = shape_of(ptr.type)
    lmap = LayoutMap(value_layout(ptr), shape)
    root = lmap.root
    fastest = root.order[0]
    if fastest not in lmap.kept:
        return None
    dim = lmap.kept.index(fastest)
    info = infos.get(ptr) or AxisInfo.unknown(len(shape))
    mask_info = (infos.get(mask) or AxisInfo.unknown(len(shape))) if mask is not None else None
    single_thread = target.warp_size == 1 and num_warps == 1
    widest_by_target = max(1, target.max_vector_bytes // size)
    if info.constancy[dim] > 1:
        return None  # a broadcast: runs of equal addresses, nothing to vectorize
    threads = 1 if single_thread else target.warp_size * num_warps
    worth = max(1, CPU_VECTOR_BYTES // size) if single_thread else widest_by_target
    widest = _floor_pow2(min(worth, shape[dim], max(1, numel(shape) // threads)))
    alignment = pow2_divisor(info.divisibility[dim])
    limits = {"contiguity": info.contiguity[dim]}
    if not target.per_element_masks:
        limits["alignment"] = max(1, alignment // size)
        if mask_info is not None:
            limits["mask"] = mask_info.constancy[dim]
    width, _ = access_run(lmap, infos.get(ptr), mask is not None, infos.get(mask) if mask is not None else None,
                          target, single_thread, size)
    what = f"{'load from' if isinstance(op, LoadOp) else 'store to'} {_base_name(ptr, names)}"
    lanes_along = 1 if single_thread else root.threads_per_warp[fastest]
    if lanes_along > 1 and info.contiguity[dim] == 1:
        return finding_at("uncoalesced", op_location(op) or value_location(ptr), (
            f"{what} is not coalesced: neighbouring lanes of a warp access elements not known to be adjacent in "
            f"memory, one {size}-byte element each: {_contiguity_cause(ptr, info, dim, names)}"))
    if width >= widest:
        return None
    causes = []
    if limits["contiguity"] < widest:
        causes.append(_contiguity_cause(ptr, info, dim, names))
    bound = min(widest, limits["contiguity"])
    if limits["contiguity"] > 1 and limits.get("alignment", bound) < bound:
        causes.append(_alignment_cause(ptr, alignment, bound * size, names, infos))
    if limits["contiguity"] > 1 and limits.get("mask", bound) < bound:
        causes.append(_mask_cause(mask, mask_info.constancy[dim], bound, names, infos))
    if not causes:
        return None  # the layout or the tile limits the width, not a missing fact
    return finding_at("not_vectorized", op_location(op) or value_location(ptr), (
        f"{what} is not vectorized to the widest access: {width} element(s) ({width * size} bytes) per access "
        f"where {widest} ({widest * size} bytes) would fit: " + "; ".join(causes)))


# --- explaining a missing fact -------------------------------------------------------------


def _sources(value: SSAValue) -> list[SSAValue]:
    """The values `value` is computed from (a loop's block arguments: their initial and yielded values)."""
    owner = value.owner
    if isinstance(owner, Operation):
        return list(owner.operands)
    if isinstance(value, BlockArgument) and isinstance(owner, Block):
        loop = owner.parent_op()
        if isinstance(loop, scf.ForOp) and value.index > 0:
            sources = [loop.iter_args[value.index - 1]]
            if isinstance(owner.last_op, scf.YieldOp):
                sources.append(owner.last_op.operands[value.index - 1])
            return sources
        if isinstance(loop, scf.ForOp):
            return [loop.lb, loop.step]
    return []


def _backward(value: SSAValue, limit: int = 400) -> Iterator[SSAValue]:
    """`value` and every value it is computed from (bounded)."""
    seen: set[SSAValue] = set()
    stack = [value]
    while stack and len(seen) < limit:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        yield current
        stack.extend(_sources(current))


def _is_function_arg(value: SSAValue) -> bool:
    return isinstance(value, BlockArgument) and isinstance(value.owner.parent_op(), func.FuncOp)


def _int_args(value: SSAValue, names: dict[SSAValue, str]) -> list[SSAValue]:
    """The integer kernel arguments `value` depends on, in argument order."""
    found = {v for v in _backward(value) if v in names and _is_function_arg(v) and not isinstance(v.type, PointerType)}
    return [arg for arg in names if arg in found]


def _has_op(value: SSAValue, name: str) -> bool:
    return any(isinstance(v.owner, Operation) and v.owner.name == name for v in _backward(value))


def _base_name(ptr: SSAValue, names: dict[SSAValue, str]) -> str:
    """`name` of the pointer argument `ptr` is derived from (or "memory" if none is found)."""
    value = ptr
    for _ in range(100):
        if value in names:
            return f"`{names[value]}`"
        owner = value.owner
        if isinstance(owner, Operation) and owner.name in _FOLLOW_BASE:
            value = owner.operands[0]
        elif isinstance(value, BlockArgument) and _sources(value):
            value = _sources(value)[0]
        else:
            break
    return "memory"


def _offsets(ptr: SSAValue) -> list[SSAValue]:
    """The offsets added to the pointer along its addptr chain."""
    out, value = [], ptr
    for _ in range(100):
        owner = value.owner
        if isinstance(owner, Operation) and owner.name == "tt.addptr":
            out.append(owner.operands[1])
        if isinstance(owner, Operation) and owner.name in _FOLLOW_BASE:
            value = owner.operands[0]
        elif isinstance(value, BlockArgument) and isinstance(owner, Block) and _sources(value):
            out.extend(_sources(value)[1:])  # a loop-carried pointer's increments
            value = _sources(value)[0]
        else:
            break
    return out


def _contiguity_cause(ptr: SSAValue, info: AxisInfo, dim: int, names: dict[SSAValue, str]) -> str:
    strides: list[str] = []
    constant_steps: list[int] = []
    for offset in _offsets(ptr):
        for value in _backward(offset):
            owner = value.owner
            if not (isinstance(owner, Operation) and owner.name == "arith.muli"):
                continue
            a, b = owner.operands
            for index_side, stride_side in ((a, b), (b, a)):
                if not _has_op(index_side, "tt.make_range") or _has_op(stride_side, "tt.make_range"):
                    continue
                strides += [names[arg] for arg in _int_args(stride_side, names) if names[arg] not in strides]
                step = _constant(stride_side)
                if step is not None and step != 1:
                    constant_steps.append(step)
    if strides:
        listed = ", ".join(f"`{s}`" for s in strides)
        return f"its offsets are multiplied by the runtime stride {listed} (the JIT specializes only a stride of 1)"
    if any(_has_op(offset, "tt.load") for offset in _offsets(ptr)):
        return "its offsets are loaded from memory (indirect indexing)"
    if constant_steps:
        return f"its offsets step by {constant_steps[0]} elements along the tile's fastest dimension"
    if info.contiguity[dim] > 1:
        return f"its offsets are known contiguous only in runs of {info.contiguity[dim]} elements"
    return "its offsets are not provably contiguous"


def _constant(value: SSAValue) -> int | None:
    """The value of an integer constant (splat or broadcast of one), else None."""
    for _ in range(10):
        owner = value.owner
        if not isinstance(owner, Operation):
            return None
        if owner.name == "arith.constant":
            attr = owner.properties.get("value")
            data = getattr(getattr(attr, "value", None), "data", None)
            return data if isinstance(data, int) else None
        if owner.name not in ("tt.splat", "tt.broadcast", "tt.expand_dims", "ttg.convert_layout"):
            return None
        value = owner.operands[0]
    return None


def _unaligned_int_args(value: SSAValue, names: dict[SSAValue, str], infos: dict[SSAValue, AxisInfo],
                        needed: int) -> list[str]:
    return [names[arg] for arg in _int_args(value, names)
            if pow2_divisor((infos.get(arg) or AxisInfo.unknown(1)).divisibility[0]) < needed]


def _alignment_cause(ptr: SSAValue, alignment: int, wanted_bytes: int, names: dict[SSAValue, str],
                     infos: dict[SSAValue, AxisInfo]) -> str:
    base = ptr
    for _ in range(100):
        owner = base.owner
        if isinstance(owner, Operation) and owner.name in _FOLLOW_BASE:
            base = owner.operands[0]
        elif isinstance(base, BlockArgument) and not _is_function_arg(base) and _sources(base):
            base = _sources(base)[0]
        else:
            break
    if base in names and pow2_divisor((infos.get(base) or AxisInfo.unknown(1)).divisibility[0]) < ALIGNED_BYTES:
        return (f"the pointer argument `{names[base]}` is not known to be {ALIGNED_BYTES}-byte aligned (the JIT "
                f"specializes a pointer as aligned when its address is a multiple of {ALIGNED_BYTES})")
    suspects = []
    for offset in _offsets(ptr):
        suspects += [n for n in _unaligned_int_args(offset, names, infos, ALIGNED_BYTES) if n not in suspects]
    if suspects:
        listed = ", ".join(f"`{s}`" for s in suspects)
        return (f"its addresses are only known to be {alignment}-byte aligned: its offsets use {listed}, not known "
                f"to be a multiple of {ALIGNED_BYTES}")
    return (f"its addresses are only known to be {alignment}-byte aligned ({wanted_bytes} needed): check constant "
            f"offsets")


def _mask_cause(mask: SSAValue, constancy: int, width: int, names: dict[SSAValue, str],
                infos: dict[SSAValue, AxisInfo]) -> str:
    suspects = _unaligned_int_args(mask, names, infos, width)
    if suspects:
        listed = ", ".join(f"`{s}`" for s in suspects)
        return (f"its mask may change inside a vector of {width} elements: it depends on {listed}, not known to be a "
                f"multiple of {width} (the JIT specializes sizes that are multiples of {ALIGNED_BYTES})")
    return f"its mask is only known to be constant over runs of {constancy} element(s), not {width}"
