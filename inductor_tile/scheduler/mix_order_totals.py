"""The second kernel of a mix-order reduction (``mix_order.py``): the workspace's totals.

It sums the first kernel's per-program partials for every column sum (``WorkspaceSumSource``), stores
each total in its buffer's dtype, and runs the sums' pointwise epilogue on the totals in registers:
node2's pointwise nodes, and the pointwise users of the sums' buffers in groups not yet generated (the
casts of a split sum's total to float16), which leave their groups (``removed_ops``). A sum's buffer that
only this epilogue reads is never written. Also the wrapper lines both kernels share.
"""

from __future__ import annotations

import logging
import math

import sympy
from torch._inductor.virtualized import V
from torch.utils._sympy.functions import FloorDiv

from .. import config, metrics
from ..codegen import heuristics
from ..codegen.common import NeedsBuffer, Unsupported
from ..codegen.mix_order import ColumnSum, MixOrderKernelSource, WorkspaceSumSource
from ..codegen.plan import hint

log = logging.getLogger(__name__)


def epilogue_nodes(sums: list[ColumnSum], epilogue: list, node, columns) -> list:
    """The pointwise nodes the totals' kernel may run after the totals, in a valid order: node2's
    epilogue and the users of the sums' buffers in groups not yet generated, each over the columns
    and reading only the totals, each other's outputs and buffers already computed."""
    from torch._inductor.scheduler import FusedSchedulerNode, SchedulerNode

    scheduler = V.graph.scheduler
    candidates = list(epilogue)
    for column in sums:
        for user in scheduler.name_to_buf[column.target].users:
            snode = user.node
            group = scheduler.name_to_fused_node.get(snode.get_name()) if hasattr(snode, "get_name") else None
            if (type(snode) is SchedulerNode and type(group) in (SchedulerNode, FusedSchedulerNode)
                    and not group.is_template() and snode not in candidates and group is not node
                    and snode.get_name() not in scheduler.completed_operations | scheduler.removed_ops):
                candidates.append(snode)
    ready = {column.target for column in sums} | set(scheduler.available_buffer_names)
    device = node.get_device()
    chosen: list = []
    progress = True
    while progress:
        progress = False
        for snode in candidates:
            if snode in chosen or not _pointwise_over(snode, device, columns):
                continue
            if all(dep.name in ready for dep in snode.read_writes.reads):
                chosen.append(snode)
                ready |= set(snode.get_buffer_names())
                progress = True
    return chosen


def _pointwise_over(snode, device, columns) -> bool:
    """Whether `snode` is a pointwise loop over `columns` elements, writing fresh buffers."""
    if not hasattr(snode, "_body") or snode.is_reduction() or snode.get_device() != device:
        return False
    if any(buf.get_aliases() or buf.get_mutations() for buf in snode.get_outputs()):
        return False
    sizes, rsizes = snode.get_ranges()
    return not rsizes and sympy.expand(sympy.sympify(math.prod(sizes)) - columns) == 0


def generate(kernel: MixOrderKernelSource, sums: list[ColumnSum], nodes: list):
    """The totals' kernel with the epilogue `nodes`, else without any: (kernel, checked, nodes)."""
    from .scheduling import _generate as source_of
    from .scheduling import _heuristics_device, checked_kernel

    device_type = _heuristics_device([s.snode for s in sums])
    columns, programs = kernel.plan.rsizes, kernel.programs()
    launch = heuristics.reduction(device_type, hint(kernel.plan.rnumel), hint(programs), None, True, True)
    name = "tile_mixsum_" + "_".join(column.target for column in sums)
    targets = [column.target for column in sums]
    for epilogue in ([nodes, []] if nodes else [[]]):
        local = _read_only_by({*targets, *(b for n in epilogue for b in n.get_buffer_names())}, epilogue)
        try:
            while True:
                total = WorkspaceSumSource(columns, programs, targets, epilogue, name, launch, elide=local)
                try:
                    source = source_of(total)
                    break
                except NeedsBuffer as e:
                    local.discard(str(e))
            return total, checked_kernel(V.graph.wrapper_code, name, total, source, "mix-order-sum"), epilogue
        except Unsupported as e:
            if not epilogue:
                raise
            log.info("tile: mix-order totals without their epilogue: %s", e)
    raise AssertionError("unreachable")


def _read_only_by(buffers: set[str], nodes: list) -> set[str]:
    """Those of `buffers` that only `nodes` read (not graph outputs): they need no memory."""
    if not config.elide_local_buffers:
        return set()
    scheduler = V.graph.scheduler
    names = {n.get_name() for n in nodes}
    outputs = set(V.graph.get_output_names())
    local = set()
    for name in buffers:
        buf = scheduler.name_to_buf[name]
        if name in outputs or buf.get_aliases() or buf.get_mutations() or not buf.users:
            continue
        if all(not getattr(u, "is_weak", False) and getattr(u.node, "get_name", lambda: None)() in names
               for u in buf.users):
            local.add(name)
    return local


def emit(total: WorkspaceSumSource, checked, workspace: str, sums: list[ColumnSum], nodes: list,
         epilogue: list) -> None:
    """The totals' kernel: the sums' buffers and the epilogue's outputs allocated, its launch, the
    workspace freed. Epilogue nodes of later groups are taken out of them (``removed_ops``)."""
    from .scheduling import _heuristics_device, _size_source

    wrapper = V.graph.wrapper_code
    scheduler = V.graph.scheduler
    key, name, source, fn, reused = checked
    claim_sizes_and_buffers(total)
    for column in sums:
        if column.target == column.snode.node.get_name():
            column.snode.mark_run()  # allocates the sum's buffer
        else:  # split: the second reduction is not run; its buffer is allocated here
            V.graph.removed_buffers.add(column.snode.node.get_name())
            second = scheduler.name_to_buf[column.target].defining_op_name()
            scheduler.removed_ops.add(second)
            wrapper.codegen_allocation(V.graph.get_buffer(column.target))
    for snode in nodes:
        snode.mark_run()
        if snode not in epilogue:
            scheduler.removed_ops.add(snode.get_name())
    define_kernel(wrapper, key, name, source, fn, reused, total, _heuristics_device([s.snode for s in sums]))
    pointers = total.in_args + [workspace] + total.out_args
    args = pointers + total.size_arg_names() + [_size_source(n) for n in total.numels().values()]
    grid = f"({_size_source(_cdiv(total.plan.xnumel, total.xblock))}, 1, 1)"
    write_launch(wrapper, name, grid, args, {**total.blocks(), **warps(total)})
    wrapper.writeline(f"del {workspace}")


def claim_sizes_and_buffers(kernel) -> None:
    """Before a kernel's launch: its sizes guarded to int32 and the buffers it does without removed."""
    from .scheduling import _guard_leq

    for size in kernel.int32_guards:
        _guard_leq(size, 2**31 - 1)
    for buf in sorted(kernel.elided):
        V.graph.removed_buffers.add(buf)


def _cdiv(numel, block: int):
    return heuristics.cdiv(numel, block) if isinstance(numel, int) else FloorDiv(numel + block - 1, block)


def define_kernel(wrapper, key, name: str, source: str, fn, reused: bool, kernel, device_type: str) -> None:
    from .scheduling import _precompile

    if not reused:
        loader = "__import__('inductor_tile.codegen.runtime', fromlist=['load_kernel']).load_kernel"
        wrapper.define_kernel(name, f"{loader}({name!r}, {source!r})", gpu=False)
        wrapper._tile_kernels_by_source[key] = (name, source)
        metrics.kernel_sources[name] = source
        if config.precompile:
            _precompile(fn, kernel, device_type, source)
    metrics.generated_kernels += 1
    metrics.reused_kernels += reused


def warps(kernel) -> dict[str, int]:
    return {} if kernel.launch.num_warps is None else {"num_warps": kernel.launch.num_warps}


def write_launch(wrapper, name: str, grid: str, args: list[str], keywords: dict[str, int]) -> None:
    launch = f"{name}[{grid}]({', '.join(args + [f'{k}={v}' for k, v in keywords.items()])})"
    wrapper.writeline(launch)
    metrics.launch_lines.setdefault(name, launch)
