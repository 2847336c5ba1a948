"""Mix-order reductions: a row reduction and column sums of one input in one kernel.

With ``config.mix_order`` on, Inductor's scheduler pairs the two (its ``MixOrderReduction``
builds a ``FusedMixOrderReductions`` node and hands it to ``codegen_mix_order_reduction``).
Its own pairing check wants a GPU with Triton and large sizes; ``pairing()`` replaces it in the
thread of our compiles with ``can_pair``, built from its helpers, which also admits the CPU target (the
kernel source is ours either way: ``codegen/mix_order.py``). ``codegen`` then generates:

- one kernel over the row group (node1) that also accumulates the column sums (node2's
  reductions) into a float32 workspace ``[column sums, programs, row length]``;
- one kernel that sums the workspace over programs for every column sum into the sum's buffer
  and runs the sums' pointwise epilogue: node2's pointwise nodes, and the pointwise users of the
  sums in later groups whose inputs are ready (the casts of a split sum's total), taken out of
  their groups (``removed_ops``). A split column sum (Inductor split it into partial sums and a
  second reduction over them) is computed unsplit from its original loop body; its second
  reduction is dropped (``removed_ops``), and the total lands in the second reduction's buffer.
  A sum's buffer read only by that epilogue is not written at all. Epilogue nodes the second
  kernel cannot take are generated after it as usual.

What the kernel cannot express falls back to two kernels (``TileScheduling.codegen_node``).
"""

from __future__ import annotations

import contextlib
import logging
import threading

import sympy
import torch
from torch._inductor.virtualized import V
from torch.utils._sympy.functions import FloorDiv

from .. import config, metrics
from ..codegen import heuristics
from ..codegen.common import NeedsBuffer, Unsupported
from ..codegen.mix_order import ColumnSum, MixOrderKernelSource, WorkspaceSumSource
from ..codegen.plan import _size, bound, hint, plan_group
from ..thread_switch import ThreadSwitch

log = logging.getLogger(__name__)

# GPUs: few programs, each over many rows (the workspace holds a row per program per column sum): a
# loop step of XBLOCK rows has at least GPU_STEP_ELEMS elements, GPU_ELEMS_PER_THREAD per thread of each
# input (the warps follow), and an SM runs GPU_THREADS_PER_SM threads of such programs: at sm_90 the
# layer norm backward's kernel takes 64 registers a thread at 768, 4096 and 8192 columns (16, 16 and 32
# warps), so 1024 threads fill the register file (2 programs per SM, 1 at 8192 columns)
GPU_STEP_ELEMS = 4096
GPU_ELEMS_PER_THREAD = 8
GPU_THREADS_PER_SM = 1024
GPU_MAX_ROW = 8192  # longer rows spill registers (16384: 608 bytes on 32 warps): two kernels
GPU_ACC_PER_THREAD = 32  # [XBLOCK, RBLOCK] column accumulators up to this many floats per thread each
CPU_PROGRAMS = 16  # the CPU target: about this many programs
CPU_MAX_SPLIT = 256
# GPUs: pair only where the input is larger than L2 and rows outnumber columns (Inductor's rule)
GPU_MIN_ELEMENTS = 5 * 2**20
GPU_MIN_ROWS = 4096


def can_pair(node1, node2) -> bool:
    """Whether Inductor may pair ``node1`` and ``node2`` as a mix-order reduction for our codegen."""
    from torch._inductor.scheduler import MixOrderReduction

    try:
        if V.graph.cpp_wrapper or not (node1.is_reduction() and node2.is_reduction()):
            return False
        device = node1.get_device()
        if device is None or device != node2.get_device() or device.type not in config.devices:
            return False
        if not all(hasattr(n, "_body") for n in [*node1.get_nodes(), *node2.get_nodes()]):
            return False
        if not MixOrderReduction.has_mix_reduction_orders(node1, node2):
            return False
        if not MixOrderReduction.get_common_read(node1, node2):
            return False
        if MixOrderReduction.is_contiguous_node(node1):
            rows, columns = node1, node2
        elif MixOrderReduction.is_contiguous_node(node2):
            rows, columns = node2, node1
        else:
            return False
        if rows.ancestors & columns.get_operation_names():
            return False  # the column sums may read the row group's outputs (rstd), not the reverse
        if any(n.is_reduction() and n.node.get_reduction_type() != "sum" for n in columns.get_nodes()):
            return False
        nrow, ncol = MixOrderReduction.get_numel_rnumel(rows)
        if bound(_size(ncol)) is None or heuristics.next_pow2(bound(_size(ncol))) > _max_row(device.type):
            return False  # the row must fit one block
        if heuristics.is_gpu(device.type) and not config_non_strict():
            nrow, ncol = hint(_size(nrow)), hint(_size(ncol))
            if nrow * ncol < GPU_MIN_ELEMENTS or nrow < max(GPU_MIN_ROWS, 2 * ncol):
                return False
    except Unsupported:
        return False
    return True


def config_non_strict() -> bool:
    import torch._inductor.config as inductor_config

    return bool(getattr(inductor_config.triton, "mix_order_reduction_non_strict_mode", False))


def _max_row(device_type: str) -> int:
    return GPU_MAX_ROW if heuristics.is_gpu(device_type) else config.max_rblock


_active = ThreadSwitch()
_lock = threading.Lock()


def _install() -> None:
    """Wrap Inductor's three pairing checks once; the wrappers answer with ours only in a thread
    inside `pairing()` (a `backend="inductor"` compile in another thread keeps Inductor's)."""
    from torch._inductor.scheduler import FusedMixOrderReductions, MixOrderReduction, Scheduler

    with _lock:
        if getattr(Scheduler.can_fuse_vertical, "_tile_pairing", False):
            return
        inductor_can_fuse = MixOrderReduction.__dict__["can_fuse"].__func__
        inductor_vertical = Scheduler.can_fuse_vertical
        inductor_sub_node = FusedMixOrderReductions.sub_node_can_fuse

        def can_fuse(cls, node1, node2):
            return can_pair(node1, node2) if _active.get() else inductor_can_fuse(cls, node1, node2)

        def can_fuse_vertical(self, node1, node2, *args, **kwargs):
            return ((_active.get() and can_pair(node1, node2))
                    or inductor_vertical(self, node1, node2, *args, **kwargs))

        def sub_node_can_fuse(self, node1, node2, other_nodes):
            method = _sub_node_can_fuse if _active.get() else inductor_sub_node
            return method(self, node1, node2, other_nodes)

        can_fuse_vertical._tile_pairing = True
        MixOrderReduction.can_fuse = classmethod(can_fuse)
        Scheduler.can_fuse_vertical = can_fuse_vertical
        FusedMixOrderReductions.sub_node_can_fuse = sub_node_can_fuse


@contextlib.contextmanager
def pairing():
    """While this thread compiles for us with ``config.mix_order`` on: Inductor pairs with ``can_pair``.

    Column sums that read the row group's outputs (RMSNorm backward recomputing ``rstd``, a row
    reduction) pair too: the kernel computes the row values before it adds the columns' values.
    Inductor's producer/consumer check (``Scheduler.can_fuse_vertical``) wants every read of the
    producer's buffers at the index it is written, which a column sum's loop order never matches,
    so for such pairs it is answered here; the kernel checks each read again (``TileKernelSource.load``
    refuses a read at another index, and the pair becomes two kernels)."""
    if not config.mix_order:
        yield
        return
    _install()
    with _active.set():
        yield


def _sub_node_can_fuse(self, node1, node2, other_nodes) -> bool:
    """``FusedMixOrderReductions.sub_node_can_fuse`` for our pairs: may ``node2`` join ``node1``, one
    side of the pair (``other_nodes``: the other side)? Inductor's version refuses any dependency
    between the sides; ours lets the column side read the row side (the kernel runs the row group
    first), so it refuses only a row-side node that reads the column side, and a column-side node
    that the row side reads."""
    from torch._inductor.scheduler import MixOrderReduction

    if not self.scheduler.can_fuse(node1, node2, allow_mix_order_reduction=False):
        return False
    if MixOrderReduction.is_contiguous_node(node1) and not MixOrderReduction.is_contiguous_node(node2):
        return False
    other_ops = set().union(*(n.get_operation_names() for n in other_nodes)) if other_nodes else set()
    other_ancestors = set().union(*(n.ancestors for n in other_nodes)) if other_nodes else set()
    if node1.get_operation_names() <= self.node1.get_operation_names():  # node2 joins the row side
        if node2.ancestors & other_ops:
            return False
    elif other_ancestors & node2.get_operation_names():  # node2 joins the column side
        return False
    return not node2.is_reduction() or self.scheduler.score_fusion_memory(node1, node2, count_bytes=False) >= self.numel


# -- code generation ------------------------------------------------------------------
def codegen(scheduling, node) -> bool:
    """Generate a ``FusedMixOrderReductions`` node as two kernels (the rows with the column sums'
    partials, then the workspace's totals with the sums' epilogue); False (nothing changed) when
    the first cannot be generated."""
    from .scheduling import checked_kernel

    rows, columns = list(node.node1.get_nodes()), node.node2
    reductions = [n for n in columns.get_nodes() if n.is_reduction()]
    epilogue = [n for n in columns.get_nodes() if not n.is_reduction()]
    wrapper = V.graph.wrapper_code
    try:
        sums = [_column_sum(n) for n in reductions]
        kernel, source = _generate(scheduling, rows, sums)
        checked = checked_kernel(wrapper, kernel.name, kernel, source, "mix-order")
        nodes = _epilogue(sums, epilogue, node)
        total, total_checked, nodes = _generate_totals(scheduling, kernel, sums, nodes)
    except (Unsupported, NeedsBuffer) as e:
        log.info("tile: mix-order reduction of %s and %s as two kernels: %s", node.node1.get_name(),
                 columns.get_name(), e)
        return False
    workspace = _emit(kernel, checked, rows, sums)
    _emit_totals(total, total_checked, workspace, sums, nodes, epilogue)
    rest = [n for n in epilogue if n not in nodes]
    if rest:
        scheduling._codegen_list(rest)
    return True


def _column_sum(snode) -> ColumnSum:
    """The column sum's loop body over (columns) x (all rows), and where its total goes."""
    from torch._inductor.scheduler import MixOrderReduction, SchedulerNode

    if not MixOrderReduction.is_split_reduction(snode):
        xsizes, rsizes = snode.get_ranges()
        _check_contiguous(snode.node.get_name())
        return ColumnSum(snode, snode._body, [_size(s) for s in xsizes], [_size(s) for s in rsizes],
                         snode.node.get_name())
    users = snode.get_outputs()[0].users
    second = users[0].node if len(users) == 1 else None
    if not isinstance(second, SchedulerNode) or not second.is_reduction() or second.node.get_reduction_type() != "sum":
        raise Unsupported(f"split column sum {snode.get_name()}: its partials are not summed by one reduction")
    if MixOrderReduction.is_split_reduction(second) or len(second.read_writes.reads) != 1:
        raise Unsupported(f"split column sum {snode.get_name()}: its second stage is not a plain sum")
    _check_contiguous(second.node.get_name())
    with snode.node.with_original_inner_fn():  # the unsplit loop body; the node itself is unchanged
        (xsizes, rsizes), body = snode.node.simplify_and_reorder()
    return ColumnSum(snode, body, [_size(s) for s in xsizes], [_size(s) for s in rsizes], second.node.get_name())


def _sm_count() -> int:
    if torch.cuda.is_available():
        return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    return 132  # CUDA shapes on a machine without one (tests, compile-time studies): an H100's


def _launch(device_type: str, plan) -> heuristics.LaunchConfig:
    """The row group's shape: persistent (whole rows in one block); on GPUs ``XBLOCK`` rows per step
    (``GPU_STEP_ELEMS``), ``GPU_ELEMS_PER_THREAD`` elements per thread."""
    launch = heuristics.reduction(device_type, hint(plan.xnumel), hint(plan.rnumel), bound(plan.rnumel))
    if not launch.persistent:
        raise Unsupported("the row group does not run persistent")
    if not heuristics.is_gpu(device_type):
        return launch
    xblock = max(1, min(heuristics.next_pow2(hint(plan.xnumel)), GPU_STEP_ELEMS // launch.rblock))
    warps = max(4, min(32, xblock * launch.rblock // (32 * GPU_ELEMS_PER_THREAD)))
    return heuristics.LaunchConfig(xblock, launch.rblock, True, warps)


def _split(device_type: str, xnumel: int, launch: heuristics.LaunchConfig) -> int:
    """Rows per program: a multiple of ``XBLOCK``; on GPUs about ``GPU_THREADS_PER_SM`` threads of
    programs per SM."""
    xblock = launch.xblock
    if heuristics.is_gpu(device_type):
        per_sm = max(1, GPU_THREADS_PER_SM // (32 * launch.num_warps))
        split = heuristics.cdiv(xnumel, _sm_count() * per_sm)
        return heuristics.cdiv(split, xblock) * xblock
    split = min(max(1, _last_pow2(max(1, xnumel // CPU_PROGRAMS))), CPU_MAX_SPLIT)
    return max(split, xblock)


def _row_accumulators(device_type: str, launch: heuristics.LaunchConfig) -> bool:
    """Whether the column sums accumulate [XBLOCK, RBLOCK] (reduced over rows once, after the loop)
    rather than [1, RBLOCK] (each step's rows summed across warps): on GPUs, where registers allow."""
    if not heuristics.is_gpu(device_type):
        return False  # one thread: summing a step's rows is a few vector adds
    return launch.xblock * launch.rblock <= GPU_ACC_PER_THREAD * 32 * launch.num_warps


def _last_pow2(n: int) -> int:
    return 1 << (int(n).bit_length() - 1)


def _generate(scheduling, rows: list, sums: list[ColumnSum]):
    from .scheduling import _heuristics_device

    plan = plan_group(rows)
    device_type = _heuristics_device(rows)
    launch = _launch(device_type, plan)
    split = _split(device_type, hint(plan.xnumel), launch)
    accumulators = _row_accumulators(device_type, launch)
    local = scheduling._kernel_local_buffers(rows + [column.snode for column in sums])  # rstd, read by a sum
    name = "tile_mix_" + "_".join(n.get_name() for n in rows[:1] + [s.snode for s in sums])
    while True:
        kernel = MixOrderKernelSource(plan, sums, name, launch, split, elide=local, row_accumulators=accumulators)
        try:
            return kernel, kernel.generate()
        except NeedsBuffer as e:
            local.discard(str(e))


def _epilogue(sums: list[ColumnSum], epilogue: list, node) -> list:
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
            if snode in chosen or not _pointwise_over_columns(snode, device):
                continue
            if all(dep.name in ready for dep in snode.read_writes.reads):
                chosen.append(snode)
                ready |= set(snode.get_buffer_names())
                progress = True
    return chosen


def _pointwise_over_columns(snode, device) -> bool:
    if not hasattr(snode, "_body") or snode.is_reduction() or snode.get_device() != device:
        return False
    return not any(buf.get_aliases() or buf.get_mutations() for buf in snode.get_outputs())


def _generate_totals(scheduling, kernel: MixOrderKernelSource, sums: list[ColumnSum], nodes: list):
    """The totals' kernel with the epilogue `nodes`, else without any: (kernel, checked, nodes)."""
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
                    source = total.generate()
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


def _emit(kernel: MixOrderKernelSource, checked, rows: list, sums: list[ColumnSum]) -> str:
    """The first kernel's launch (and its workspace's allocation); returns the workspace's name."""
    from .scheduling import _guard_leq, _heuristics_device, _size_source

    wrapper = V.graph.wrapper_code
    key, name, source, fn, reused = checked
    for size in kernel.int32_guards:
        _guard_leq(size, 2**31 - 1)
    for buf in sorted(kernel.elided):
        V.graph.removed_buffers.add(buf)
    for snode in rows:
        snode.mark_run()
    _define(wrapper, key, name, source, fn, reused, kernel, _heuristics_device(rows))
    device = rows[0].get_device()
    programs = _size_source(kernel.programs())
    rnumel = _size_source(kernel.plan.rnumel)
    workspace = f"{name}_ws{wrapper.next_kernel_suffix()}"
    wrapper.writeline(f"{workspace} = torch.empty(({len(sums)}, {programs}, {rnumel}), dtype=torch.float32, "
                      f"device='{device}')")
    args = kernel.call_args() + [workspace] + kernel.size_arg_names()
    args += [_size_source(n) for n in kernel.numels().values()]
    _launch_line(wrapper, name, f"({programs}, 1, 1)", args, {**kernel.blocks(), **_warps(kernel)})
    metrics.mix_order_kernels += 1
    return workspace


def _emit_totals(total: WorkspaceSumSource, checked, workspace: str, sums: list[ColumnSum], nodes: list,
                 epilogue: list) -> None:
    """The totals' kernel: the sums' buffers and the epilogue's outputs allocated, its launch, the
    workspace freed. Epilogue nodes of later groups are taken out of them (``removed_ops``)."""
    from .scheduling import _guard_leq, _heuristics_device, _size_source

    wrapper = V.graph.wrapper_code
    scheduler = V.graph.scheduler
    key, name, source, fn, reused = checked
    for size in total.int32_guards:
        _guard_leq(size, 2**31 - 1)
    for buf in sorted(total.elided):
        V.graph.removed_buffers.add(buf)
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
    _define(wrapper, key, name, source, fn, reused, total, _heuristics_device([s.snode for s in sums]))
    pointers = total.in_args + [workspace] + total.out_args
    args = pointers + total.size_arg_names() + [_size_source(n) for n in total.numels().values()]
    grid = f"({_size_source(_cdiv(total.plan.xnumel, total.xblock))}, 1, 1)"
    _launch_line(wrapper, name, grid, args, {**total.blocks(), **_warps(total)})
    wrapper.writeline(f"del {workspace}")


def _cdiv(numel, block: int):
    return heuristics.cdiv(numel, block) if isinstance(numel, int) else FloorDiv(numel + block - 1, block)


def _define(wrapper, key, name: str, source: str, fn, reused: bool, kernel, device_type: str) -> None:
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


def _warps(kernel) -> dict[str, int]:
    return {} if kernel.launch.num_warps is None else {"num_warps": kernel.launch.num_warps}


def _launch_line(wrapper, name: str, grid: str, args: list[str], keywords: dict[str, int]) -> None:
    launch = f"{name}[{grid}]({', '.join(args + [f'{k}={v}' for k, v in keywords.items()])})"
    wrapper.writeline(launch)
    metrics.launch_lines.setdefault(name, launch)


def _check_contiguous(target: str) -> None:
    """The totals are stored as a row-major view of the buffer's shape."""
    layout = V.graph.get_buffer(target).get_layout()
    if not (layout.is_contiguous() and sympy.sympify(layout.offset) == 0):
        raise Unsupported(f"column sum buffer {target} is not contiguous")
