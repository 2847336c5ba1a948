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

Where the first kernel cannot be generated, the pair's two groups get their own kernels
(``TileScheduling.codegen_mix_order_reduction``).
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
from . import mix_order_totals as totals

log = logging.getLogger(__name__)

# GPUs: few programs, each over many rows (the workspace holds a row per program per column sum): a
# loop step of XBLOCK rows has at least ``config.mix_order_step`` elements, GPU_ELEMS_PER_THREAD per
# thread of each input (the warps follow), and an SM runs GPU_THREADS_PER_SM threads of such programs:
# at sm_90 the layer norm backward's kernel takes 64 registers a thread at 768, 4096 and 8192 columns
# (16, 16 and 32 warps), so 1024 threads fill the register file (2 programs per SM, 1 at 8192 columns)
GPU_ELEMS_PER_THREAD = 8
GPU_THREADS_PER_SM = 1024
GPU_MAX_ROW = 8192  # longer rows spill registers (16384: 608 bytes on 32 warps): two kernels
GPU_ACC_PER_THREAD = 32  # [XBLOCK, RBLOCK] column accumulators up to this many floats per thread each
# GPUs, rows cut into chunks of one 16-byte access per lane (``MixOrderKernelSource.rchunk``): a warp
# holds up to GPU_ROW_ELEMS_PER_LANE columns of a row per lane (768 and 1024 columns: one warp per row,
# 24 or 32 a lane; 4096: four warps per row), GPU_ROW_WARPS warps a program at least, and at sm_90 the
# norm backwards' kernels then take 190-255 registers a thread: GPU_ROW_THREADS_PER_SM threads of
# programs per SM. Off (config.mix_order_warp_rows, TILE_MIX_ORDER_WARP_ROWS=0): [XBLOCK, RBLOCK] tiles, rows
# across warps.
GPU_ROW_ELEMS_PER_LANE = 32
GPU_ROW_WARPS = 4
GPU_ROW_THREADS_PER_SM = 256
GPU_ACCESS_BYTES = 16
# ... and, where a lane holds at most GPU_PREFETCH_BYTES_PER_LANE of a row (768 fp16 columns over one warp:
# three 16-byte accesses), the next step's rows load during this one (``MixOrderKernelSource.prefetch``):
# sm_90 registers of the layer norm backward's kernel 191 -> 236 at 768 fp16; with four accesses (1024
# fp16 columns, 768 fp32, 2048 over two warps) 247-255 (off: config.mix_order_prefetch).
GPU_PREFETCH_BYTES_PER_LANE = 48
CPU_PROGRAMS = 16  # the CPU target: about this many programs
CPU_MAX_SPLIT = 256
# GPUs: pair only where the input is larger than L2 and rows outnumber columns (Inductor's rule)
GPU_MIN_ELEMENTS = 5 * 2**20
GPU_MIN_ROWS = 4096
# config.mix_order "gpu" (the default): GPUs only, rows of at least this many columns. H200, fp16, kernel
# time of the pair vs the two kernels (micro, session 21): layer norm 16384x1024 1.14x, 8192x4096 1.31x,
# RMSNorm 16384x1024 1.12x, 16384x2048 1.24x, 8192x4096 1.28x; but 16384x768 0.96x (both norms)
GPU_DEFAULT_MIN_ROW = 1024


def enabled() -> bool:
    """Whether ``config.mix_order`` pairs anything (``"gpu"``, ``"on"``, or True from a patch)."""
    return config.mix_order not in ("off", False, None)


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
        gpu = heuristics.is_gpu(device.type)
        if config.mix_order == "gpu" and not (gpu and hint(_size(ncol)) >= GPU_DEFAULT_MIN_ROW):
            return False
        if gpu and not config_non_strict():
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
    if not enabled():
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
        nodes = totals.epilogue_nodes(sums, epilogue, node, kernel.plan.rnumel)
        total, total_checked, nodes = totals.generate(kernel, sums, nodes)
    except (Unsupported, NeedsBuffer) as e:
        log.info("tile: mix-order reduction of %s and %s as two kernels: %s", node.node1.get_name(),
                 columns.get_name(), e)
        return False
    workspace = _emit(kernel, checked, rows, sums)
    totals.emit(total, total_checked, workspace, sums, nodes, epilogue)
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


def _sm_count(index: int | None = None) -> int:
    """SMs of CUDA device `index` (None: the current one)."""
    if torch.cuda.is_available():
        return torch.cuda.get_device_properties(torch.cuda.current_device() if index is None else index) \
            .multi_processor_count
    return 132  # CUDA shapes on a machine without one (tests, compile-time studies): an H100's


def _launch(device_type: str, plan) -> heuristics.LaunchConfig:
    """The row group's shape: persistent (whole rows in one block); on GPUs ``XBLOCK`` rows per step
    (``config.mix_order_step`` elements), ``GPU_ELEMS_PER_THREAD`` elements per thread."""
    launch = heuristics.reduction(device_type, hint(plan.xnumel), hint(plan.rnumel), bound(plan.rnumel))
    if not launch.persistent:
        raise Unsupported("the row group does not run persistent")
    if not heuristics.is_gpu(device_type):
        return launch
    xblock = max(1, min(heuristics.next_pow2(hint(plan.xnumel)), config.mix_order_step // launch.rblock))
    warps = max(4, min(32, xblock * launch.rblock // (32 * GPU_ELEMS_PER_THREAD)))
    return heuristics.LaunchConfig(xblock, launch.rblock, True, warps)


def _chunked_launch(device_type: str, plan, itemsize: int) -> tuple[heuristics.LaunchConfig, int] | None:
    """GPUs: the launch of rows cut into chunks of ``RCHUNK`` columns (one 16-byte access of each lane of
    a warp for `itemsize`-byte elements) and ``RCHUNK``: ``XBLOCK`` rows per step, each in
    ``RBLOCK / (32 * GPU_ROW_ELEMS_PER_LANE)`` warps (at least one); None where rows are shorter than a
    chunk (an [XBLOCK, RBLOCK] tile already keeps them in one warp) or chunks are off."""
    if not (config.mix_order_warp_rows and heuristics.is_gpu(device_type)):
        return None
    launch = heuristics.reduction(device_type, hint(plan.xnumel), hint(plan.rnumel), bound(plan.rnumel))
    rchunk = 32 * max(1, GPU_ACCESS_BYTES // itemsize)
    if not launch.persistent or launch.rblock < rchunk:
        return None
    row_warps = max(1, launch.rblock // (32 * GPU_ROW_ELEMS_PER_LANE))
    warps = max(GPU_ROW_WARPS, row_warps)
    xblock = max(1, min(warps // row_warps, heuristics.next_pow2(hint(plan.xnumel))))
    return heuristics.LaunchConfig(xblock, launch.rblock, True, warps), rchunk


def _split(device_type: str, xnumel: int, launch: heuristics.LaunchConfig, index: int | None = None,
           threads_per_sm: int = GPU_THREADS_PER_SM) -> int:
    """Rows per program: a multiple of ``XBLOCK``; on GPUs about `threads_per_sm` threads of
    programs per SM of device `index`."""
    xblock = launch.xblock
    if heuristics.is_gpu(device_type):
        per_sm = max(1, threads_per_sm // (32 * launch.num_warps))
        split = heuristics.cdiv(xnumel, _sm_count(index) * per_sm)
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
    index = rows[0].get_device().index
    name = "tile_mix_" + "_".join(n.get_name() for n in rows[:1] + [s.snode for s in sums])
    chunked = _chunked_launch(device_type, plan, _smallest_read(rows))
    if chunked is not None:
        launch, rchunk = chunked
        split = _split(device_type, hint(plan.xnumel), launch, index, GPU_ROW_THREADS_PER_SM)
        try:
            return _source(scheduling, plan, rows, sums, name, launch, split, True, rchunk,
                           _prefetch(plan, launch, rchunk))
        except Unsupported as e:  # a row reduction the chunked rows do not take: [XBLOCK, RBLOCK] tiles
            log.info("tile: mix-order %s without chunked rows: %s", name, e)
    launch = _launch(device_type, plan)
    split = _split(device_type, hint(plan.xnumel), launch, index)
    return _source(scheduling, plan, rows, sums, name, launch, split, _row_accumulators(device_type, launch))


def _smallest_read(rows: list) -> int:
    """The smallest element size in bytes of the buffers the row group reads."""
    sizes = [V.graph.get_dtype(dep.name).itemsize for n in rows for dep in n.read_writes.reads
             if dep.name in V.graph.name_to_buffer or dep.name in V.graph.graph_inputs]
    return min(sizes, default=4)


def _prefetch(plan, launch: heuristics.LaunchConfig, rchunk: int) -> bool:
    """Whether chunked rows load the next step while computing this one: where the columns a lane holds
    of a row (the first warp of a row: chunks wholly past the row's end hold none) take at most
    GPU_PREFETCH_BYTES_PER_LANE bytes of `RCHUNK / 32`-element 16-byte accesses."""
    row_warps = max(1, launch.num_warps // launch.xblock)
    chunks = min(launch.rblock // rchunk // row_warps, -(-hint(plan.rnumel) // rchunk))
    return config.mix_order_prefetch and chunks * GPU_ACCESS_BYTES <= GPU_PREFETCH_BYTES_PER_LANE


def _source(scheduling, plan, rows: list, sums: list[ColumnSum], name: str, launch, split: int,
            accumulators: bool, rchunk: int = 0, prefetch: bool = False):
    from .scheduling import _generate as source_of

    local = scheduling._kernel_local_buffers(rows + [column.snode for column in sums])  # rstd, read by a sum
    while True:
        kernel = MixOrderKernelSource(plan, sums, name, launch, split, elide=local, row_accumulators=accumulators,
                                      rchunk=rchunk, prefetch=prefetch)
        try:
            return kernel, source_of(kernel)  # a generator error is Unsupported: the pair's groups instead
        except NeedsBuffer as e:
            local.discard(str(e))


def _emit(kernel: MixOrderKernelSource, checked, rows: list, sums: list[ColumnSum]) -> str:
    """The first kernel's launch (and its workspace's allocation); returns the workspace's name."""
    from .scheduling import _heuristics_device, _size_source

    wrapper = V.graph.wrapper_code
    key, name, source, fn, reused = checked
    totals.claim_sizes_and_buffers(kernel)
    for snode in rows:
        snode.mark_run()
    totals.define_kernel(wrapper, key, name, source, fn, reused, kernel, _heuristics_device(rows))
    device = rows[0].get_device()
    programs = _size_source(kernel.programs())
    rnumel = _size_source(kernel.plan.rnumel)
    workspace = f"{name}_ws{wrapper.next_kernel_suffix()}"
    wrapper.writeline(f"{workspace} = torch.empty(({len(sums)}, {programs}, {rnumel}), dtype=torch.float32, "
                      f"device='{device}')")
    args = kernel.call_args() + [workspace] + kernel.size_arg_names()
    args += [_size_source(n) for n in kernel.numels().values()]
    totals.write_launch(wrapper, name, f"({programs}, 1, 1)", args, {**kernel.blocks(), **totals.warps(kernel)})
    metrics.mix_order_kernels += 1
    return workspace


def _check_contiguous(target: str) -> None:
    """The totals are stored as a row-major view of the buffer's shape."""
    layout = V.graph.get_buffer(target).get_layout()
    if not (layout.is_contiguous() and sympy.sympify(layout.offset) == 0):
        raise Unsupported(f"column sum buffer {target} is not contiguous")
