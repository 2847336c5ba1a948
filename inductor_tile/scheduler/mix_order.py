"""Mix-order reductions: a row reduction and column sums of one input in one kernel.

With ``config.mix_order`` on, Inductor's scheduler pairs the two (its ``MixOrderReduction``
builds a ``FusedMixOrderReductions`` node and hands it to ``codegen_mix_order_reduction``).
Its own pairing check wants a GPU with Triton and large sizes; ``pairing()`` replaces it in the
thread of our compiles with ``can_pair``, built from its helpers, which also admits the CPU target (the
kernel source is ours either way: ``codegen/mix_order.py``). ``codegen`` then generates:

- one kernel over the row group (node1) that also accumulates the column sums (node2's
  reductions) into a float32 workspace ``[column sums, programs, row length]``;
- per column sum, one torch sum of the workspace over programs into the sum's buffer. A split
  column sum (Inductor split it into partial sums and a second reduction over them) is computed
  unsplit from its original loop body; its second reduction is dropped (``removed_ops``), and
  the workspace sum lands in the second reduction's buffer;
- node2's pointwise epilogue, if any, as kernels of their own.

What the kernel cannot express falls back to two kernels (``TileScheduling.codegen_node``).
"""

from __future__ import annotations

import contextlib
import logging
import threading

import sympy
import torch
from torch._inductor.virtualized import V

from .. import config, metrics
from ..codegen import heuristics
from ..codegen.common import NeedsBuffer, Unsupported
from ..codegen.mix_order import ColumnSum, MixOrderKernelSource
from ..codegen.plan import _size, bound, hint, plan_group
from ..thread_switch import ThreadSwitch

log = logging.getLogger(__name__)

GPU_SPLIT_PER_SM = 8  # programs per SM (as Inductor's split heuristic)
GPU_MIN_SPLIT, GPU_MAX_SPLIT = 16, 128  # rows per program on GPUs
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
    return heuristics.GPU_PERSISTENT_RBLOCK if heuristics.is_gpu(device_type) else config.max_rblock


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
    """Generate a ``FusedMixOrderReductions`` node as one kernel; False (nothing changed) when
    the kernel cannot be generated."""
    rows, columns = node.node1, node.node2
    reductions = [n for n in columns.get_nodes() if n.is_reduction()]
    epilogue = [n for n in columns.get_nodes() if not n.is_reduction()]
    try:
        sums = [_column_sum(n) for n in reductions]
        kernel, source = _generate(scheduling, list(rows.get_nodes()), sums)
    except (Unsupported, NeedsBuffer) as e:
        log.info("tile: mix-order reduction of %s and %s as two kernels: %s", rows.get_name(), columns.get_name(), e)
        return False
    _emit(scheduling, kernel, source, list(rows.get_nodes()), sums)
    if epilogue:
        scheduling._codegen_list(epilogue)
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


def _split(device_type: str, xnumel: int, xblock: int) -> int:
    if heuristics.is_gpu(device_type):
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count \
            if torch.cuda.is_available() else 132
        split = _last_pow2(max(1, xnumel // (sms * GPU_SPLIT_PER_SM)))
        split = min(max(split, GPU_MIN_SPLIT), GPU_MAX_SPLIT)
    else:
        split = min(max(1, _last_pow2(max(1, xnumel // CPU_PROGRAMS))), CPU_MAX_SPLIT)
    return max(split, xblock)


def _last_pow2(n: int) -> int:
    return 1 << (int(n).bit_length() - 1)


def _generate(scheduling, rows: list, sums: list[ColumnSum]):
    from .scheduling import _heuristics_device

    plan = plan_group(rows)
    device_type = _heuristics_device(rows)
    launch = heuristics.reduction(device_type, hint(plan.xnumel), hint(plan.rnumel), bound(plan.rnumel))
    if not launch.persistent:
        raise Unsupported("the row group does not run persistent")
    split = _split(device_type, hint(plan.xnumel), launch.xblock)
    local = scheduling._kernel_local_buffers(rows + [column.snode for column in sums])  # rstd, read by a sum
    name = "tile_mix_" + "_".join(n.get_name() for n in rows[:1] + [s.snode for s in sums])
    while True:
        kernel = MixOrderKernelSource(plan, sums, name, launch, split, elide=local)
        try:
            return kernel, kernel.generate()
        except NeedsBuffer as e:
            local.discard(str(e))


def _emit(scheduling, kernel: MixOrderKernelSource, source: str, rows: list, sums: list[ColumnSum]) -> None:
    from .scheduling import _guard_leq, _heuristics_device, _precompile, _size_source, checked_kernel

    wrapper = V.graph.wrapper_code
    key, name, source, fn, reused = checked_kernel(wrapper, kernel.name, kernel, source, "mix-order")
    for size in kernel.int32_guards:
        _guard_leq(size, 2**31 - 1)
    for buf in sorted(kernel.elided):
        V.graph.removed_buffers.add(buf)
    for snode in rows:
        snode.mark_run()
    for column in sums:
        if column.target == column.snode.node.get_name():
            column.snode.mark_run()  # allocates the sum's buffer
        else:  # split: the second reduction is not run; its buffer is allocated here
            V.graph.removed_buffers.add(column.snode.node.get_name())
            second = V.graph.scheduler.name_to_buf[column.target].defining_op_name()
            V.graph.scheduler.removed_ops.add(second)
    if not reused:
        loader = "__import__('inductor_tile.codegen.runtime', fromlist=['load_kernel']).load_kernel"
        wrapper.define_kernel(name, f"{loader}({name!r}, {source!r})", gpu=False)
        wrapper._tile_kernels_by_source[key] = (name, source)
        metrics.kernel_sources[name] = source
        if config.precompile:
            _precompile(fn, kernel, _heuristics_device(rows), source)
    device = rows[0].get_device()
    programs = _size_source(kernel.programs())
    rnumel = _size_source(kernel.plan.rnumel)
    workspace = f"{name}_ws{wrapper.next_kernel_suffix()}"
    wrapper.writeline(f"{workspace} = torch.empty(({len(sums)}, {programs}, {rnumel}), dtype=torch.float32, "
                      f"device='{device}')")
    args = kernel.call_args() + [workspace] + kernel.size_arg_names()
    args += [_size_source(n) for n in kernel.numels().values()]
    blocks = {"XBLOCK": kernel.xblock, "RBLOCK": kernel.rblock, "SPLIT": kernel.split}
    if kernel.launch.num_warps is not None:
        blocks["num_warps"] = kernel.launch.num_warps
    launch = f"{name}[({programs}, 1, 1)]({', '.join(args + [f'{k}={v}' for k, v in blocks.items()])})"
    wrapper.writeline(launch)
    metrics.launch_lines.setdefault(name, launch)
    metrics.generated_kernels += 1
    metrics.reused_kernels += reused
    metrics.mix_order_kernels += 1
    for i, target in enumerate(kernel.targets):  # one torch sum over the programs per column sum
        buffer = V.graph.get_buffer(target)
        if target not in wrapper.allocated:
            wrapper.codegen_allocation(buffer)
        if buffer.get_dtype() == torch.float32:  # straight into the (contiguous) buffer
            wrapper.writeline(f"torch.sum({workspace}[{i}], dim=0, out={target}.view(-1))")
        else:
            wrapper.writeline(f"{target}.copy_({workspace}[{i}].sum(dim=0).view({target}.shape))")
    wrapper.writeline(f"del {workspace}")


def _check_contiguous(target: str) -> None:
    """The workspace's sum is copied into the buffer as a row-major view of its shape."""
    layout = V.graph.get_buffer(target).get_layout()
    if not (layout.is_contiguous() and sympy.sympify(layout.offset) == 0):
        raise Unsupported(f"column sum buffer {target} is not contiguous")
