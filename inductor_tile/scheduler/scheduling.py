"""``TileScheduling``: Inductor's per-device scheduling hook, emitting tile kernels.

Inductor's scheduler owns the graph of scheduler nodes, dependency analysis, fusion
search, buffer allocation and freeing; it asks this class (registered for a device
with ``register_backend_for_device``) whether two nodes may fuse and to generate code
for each fused group.  For each group we build tile-language source
(``codegen.kernel``), define it in the wrapper module and write the launch line.
Block sizes and warps come from ``codegen.heuristics`` for the nodes' device type; under
dynamic shapes the launch line passes the size symbols and computes the grid from the
symbolic numel, both printed as Python by Inductor's wrapper printer.

What we cannot generate goes to the device's original Inductor scheduling (C++/OpenMP
on the CPU), node by node, with the reason logged and counted in ``metrics``.
"""

from __future__ import annotations

import logging
import math

from torch._inductor.scheduler import BaseScheduling
from torch._inductor.utils import sympy_product
from torch._inductor.virtualized import V

from .. import config, metrics
from ..codegen import heuristics, runtime, scans
from ..codegen.common import NeedsBuffer, Unsupported
from ..codegen.kernel import TileKernelSource
from ..codegen.plan import GroupPlan, bound, hint, plan_group
from ..profile import registry as profile_registry
from . import fallback, fusion, inplace

log = logging.getLogger(__name__)


class TileScheduling(BaseScheduling):
    # device type -> the scheduling constructor Inductor had before we registered;
    # filled by inductor_tile.backend while our registration is active
    fallback_for: dict = {}

    def __init__(self, scheduler):
        super().__init__(scheduler)
        self._fallback = None

    # -- what Inductor asks while lowering and fusing -----------------------------
    def get_backend_features(self, device):
        from torch._inductor.codegen.common import BackendFeature
        from torch.utils._ordered_set import OrderedSet

        # scans and sorts become Scan/Sort nodes (codegen/scans.py; scheduler/scan_gate.py says which)
        features = OrderedSet([BackendFeature.SCAN, BackendFeature.SORT, BackendFeature.TUPLE_REDUCTION])
        if getattr(device, "type", device) in inplace.devices():  # outputs into dying inputs (inplace.py)
            features.add(BackendFeature.INPLACE_BUFFERS)
        return features

    def group_fn(self, sizes):
        return tuple(V.graph.sizevars.simplify(sympy_product(s)) for s in sizes)

    def can_fuse_vertical(self, node1, node2) -> bool:
        return fusion.can_fuse(node1, node2, vertical=True)

    def can_fuse_horizontal(self, node1, node2) -> bool:
        return fusion.can_fuse(node1, node2, vertical=False)

    # -- code generation ----------------------------------------------------------
    def codegen_node(self, node) -> None:
        self._codegen_nodes(node)
        # free what this group used last, once, after its kernels (as Inductor's own
        # kernels do; its memory planner indexes frees by the scheduler node being
        # generated, so a free must not fall between two kernels of one node)
        self.free_buffers_in_scheduler()

    def _codegen_nodes(self, node) -> None:
        # a mix-order reduction computed a split sum's second stage already (scheduler/mix_order.py)
        nodes = [n for n in node.get_nodes() if n.get_name() not in self.scheduler.removed_ops]
        if nodes:
            self._codegen_list(nodes)

    def _codegen_list(self, nodes) -> None:
        """One kernel for ``nodes``; failing that, kernels for the runs between the nodes
        that cannot be generated at all (those fall back), or else for the longest runs
        that generate together (``_longest_runs``)."""
        try:
            self._codegen_group(nodes)
            return
        except Unsupported as e:
            reason = str(e)
        if len(nodes) == 1:
            self._codegen_fallback(nodes[0], reason)
            return
        log.info("tile: splitting fused group of %s: %s", ", ".join(n.get_name() for n in nodes), reason)
        bad = [not _generates_alone(n) for n in nodes]
        if not any(bad):  # each node alone generates: the longest runs that generate together
            runs = _longest_runs(nodes)
            if len(runs) == 1:  # the run generates but the group failed later (its front-end check)
                runs = [[n] for n in nodes]
        elif all(bad):  # nothing to split around: every node on its own
            runs = [[n] for n in nodes]
        else:  # contiguous runs keep the group's (topological) order
            runs, start = [], 0
            for i, is_bad in enumerate(bad + [True]):
                if is_bad:
                    runs += [nodes[start:i]] if i > start else []
                    runs += [[nodes[i]]] if i < len(nodes) else []
                    start = i + 1
        for run in runs:
            self._codegen_list(run)

    def _codegen_group(self, nodes) -> None:
        plan = plan_group(nodes)
        local = self._kernel_local_buffers(nodes)
        wrapper = V.graph.wrapper_code
        name = _kernel_name(nodes, plan.kind)
        device_type = _heuristics_device(nodes)
        launch = _choose_launch(plan, device_type, gather=False)
        gather_checked = tiled_checked = random_checked = False
        while True:
            kernel = TileKernelSource(plan, name, launch, elide=local)
            try:
                source = _generate(kernel)
            except NeedsBuffer as e:  # a removed buffer turned out to be read from memory
                local.discard(str(e))
                continue
            if not tiled_checked:
                tiled_checked = True
                split = kernel.transposed_split() if heuristics.use_tiled_pointwise(device_type) else 0
                if split:  # again, over 2-D tiles that coalesce the transposed access too
                    launch = heuristics.pointwise_tiled(device_type, hint(math.prod(plan.xsizes[:split])),
                                                        hint(math.prod(plan.xsizes[split:])), split)
                    continue
            if not launch.ysplit and _wants_gather_shape(kernel, device_type) and not gather_checked:
                gather_checked = True
                gather_launch = _choose_launch(plan, device_type, gather=True, columns=kernel.column_gathers_only)
                if gather_launch != launch:  # again, with the shape the device wants for gathers
                    launch = gather_launch
                    continue
            if kernel.draws_random and not random_checked:
                random_checked = True
                random_launch = heuristics.for_random_numbers(device_type, launch)
                if random_launch != launch:  # again, with warps enough for its Philox chains
                    launch = random_launch
                    continue
            break
        tune = _autotune_configs(device_type, kernel)
        key, name, source, fn, reused = checked_kernel(wrapper, name, kernel, source, repr(tune))
        defined = _defined_kernels(wrapper)
        # only now, with the kernel known to be generated, change Inductor's state
        for size in kernel.int32_guards:  # a larger input recompiles instead of overflowing
            _guard_leq(size, 2**31 - 1)
        for buf in sorted(kernel.elided):
            V.graph.removed_buffers.add(buf)
        renames = inplace.mark_run(nodes)  # allocates the outputs, or reuses inputs they overwrite
        if not reused:
            loader = "__import__('inductor_tile.codegen.runtime', fromlist=['load_kernel']).load_kernel"
            extra = f", autotune={tune!r}" if tune else ""
            if tune and kernel.atomic_args:  # each timed run adds again: restored after each config
                extra += f", restore_value={kernel.atomic_args!r}"
            wrapper.define_kernel(name, f"{loader}({name!r}, {source!r}{extra})", gpu=False)
            defined[key] = (name, source)
            if config.precompile:  # a tuned kernel: every candidate, in parallel
                for launch in tune or [None]:
                    _precompile(fn, kernel, device_type, source, launch)
            metrics.kernel_sources[name] = source
            log.debug("tile kernel %s:\n%s", name, source)
        wrapper.writeline(site_launch(wrapper, name, kernel, tuned=bool(tune), renames=renames))
        metrics.launch_lines.setdefault(name, launch_line(name, kernel, tuned=bool(tune), renames=renames))
        metrics.generated_kernels += 1
        metrics.reused_kernels += reused
        profile_registry.record_kernel(name, source, nodes)

    def _kernel_local_buffers(self, nodes) -> set[str]:
        """Outputs of the group read only inside it: they need no memory."""
        if len(nodes) < 2 or not config.elide_local_buffers:
            return set()
        names = {n.get_name() for n in nodes}
        graph_outputs = set(V.graph.get_output_names())
        local = set()
        for snode in nodes:
            for buf in snode.get_outputs():
                bname = buf.get_name()
                if bname in graph_outputs or buf.get_aliases() or buf.get_mutations():
                    continue
                users = buf.users
                if users and all(
                    not getattr(u, "is_weak", False) and hasattr(u.node, "get_name") and u.node.get_name() in names
                    for u in users
                ):
                    local.add(bname)
        return local

    def _codegen_fallback(self, snode, reason: str) -> None:
        device = snode.get_device()
        ctor = self.fallback_for.get(device.type)
        if ctor is None:
            raise RuntimeError(f"inductor_tile: cannot generate {snode.get_name()} ({reason}) and no fallback for {device}")
        if self._fallback is None:
            self._fallback = ctor(self.scheduler)
        log.info("tile: node %s falls back to Inductor's %s: %s", snode.get_name(), type(self._fallback).__name__, reason)
        metrics.fallback_kernels += 1
        metrics.fallback_reasons.append(f"{snode.get_name()}: {reason}")
        profile_registry.record_fallback(snode, reason)
        for _, why in fallback.adjustments_for(snode, device.type):
            log.info("tile: node %s in the fallback as Inductor's safe code: %s", snode.get_name(), why)

        def on_retry(error):
            log.warning("tile: Inductor's %s failed on node %s (%s: %s); retrying with its safe code",
                        type(self._fallback).__name__, snode.get_name(), type(error).__name__, error)
            metrics.fallback_retries.append(f"{snode.get_name()}: {type(error).__name__}: {error}")

        # the fallback reads node.group in its own format (we group by numel like SIMD)
        saved_group = snode.group
        if hasattr(snode, "_sizes"):
            snode.group = (device, self._fallback.group_fn(snode._sizes))
        # Inductor's kernels free the buffers last used by the node being generated right
        # after their kernel; inside a split group that would free buffers the group's later
        # kernels still read, so frees wait for the end of our codegen_node
        self.scheduler.free_buffers = lambda: None  # shadows the method on this instance
        try:
            fallback.run_fallback(self._fallback, snode, device.type, on_retry)
        finally:
            snode.group = saved_group
            del self.scheduler.free_buffers

    def codegen_template(self, template_node, epilogue_nodes, prologue_nodes=(), *args, **kwargs):
        """Our matmul templates (``matmul_templates.py``), with their fused pointwise epilogue."""
        from . import matmul_templates

        if not matmul_templates.is_tile_template(template_node):
            raise NotImplementedError(f"inductor_tile: template {type(template_node.node).__name__} is not ours")
        for node in prologue_nodes:  # none is fused (the template allows no prologue): on its own
            self._codegen_list(list(node.get_nodes()))
        matmul_templates.codegen(self, template_node, list(epilogue_nodes))
        self.free_buffers_in_scheduler()

    def codegen_mix_order_reduction(self, node) -> None:
        """Inductor paired a row reduction with column sums of one input (``config.mix_order``,
        ``mix_order.py``): one kernel; where that kernel cannot be generated, each its own."""
        from . import mix_order

        if not (mix_order.enabled() and mix_order.codegen(self, node)):
            self._codegen_nodes(node.node1)  # buffers the pair reads last are freed after both
            self._codegen_nodes(node.node2)
        self.free_buffers_in_scheduler()

    def codegen_nested_reduction(self, node) -> None:
        """Inductor paired two nested reductions itself (off in our compiles, see
        backend._triton_only_fusions_off): each gets its own kernel."""
        self.codegen_node(node.node1)
        self.codegen_node(node.node2)

    def codegen_sync(self) -> None:
        pass

    def ready_to_flush(self) -> bool:
        return False

    def flush(self) -> None:
        profile_registry.record_externs(self.scheduler)  # matmuls etc. and their source lines, for the profiler
        if self._fallback is not None:
            self._fallback.flush()

    def benchmark_fused_nodes(self, nodes):
        raise NotImplementedError("inductor_tile: benchmark_fusion is not supported")


def _generate(kernel: TileKernelSource) -> str:
    """The kernel's source; a bug in the generator becomes ``Unsupported`` (a fallback), not a crash."""
    try:
        return kernel.generate()
    except (Unsupported, NeedsBuffer):
        raise
    except Exception as e:
        log.warning("tile: generating %s failed (%s: %s); falling back", kernel.name, type(e).__name__, e, exc_info=True)
        raise Unsupported(f"codegen error {type(e).__name__}: {e}") from e


def _generates_alone(*snodes) -> bool:
    """Whether the nodes' loop bodies become one tile kernel by themselves (source only, no side effects)."""
    try:
        plan = plan_group(list(snodes))
        _generate(TileKernelSource(plan, "probe", _choose_launch(plan, _heuristics_device(list(snodes)), gather=False)))
        return True
    except Unsupported:
        return False


_MAX_RUN_PROBES = 48  # sources generated (no compile) to cut one failed group into runs


def _longest_runs(nodes) -> list:
    """``nodes`` (a fused group that failed as one kernel) cut, in order, into the longest runs
    that generate together: a producer whose buffer the rest cannot read back keeps its consumers
    as one kernel (a softmax's max, sum and normalization stay one) instead of a kernel each."""
    runs, start, probes = [], 0, 0
    while start < len(nodes):
        end = start + 1
        for longer in range(len(nodes), start + 1, -1):
            if probes >= _MAX_RUN_PROBES:  # a large group that keeps failing: the rest node by node
                break
            probes += 1
            if _generates_alone(*nodes[start:longer]):
                end = longer
                break
        runs.append(nodes[start:end])
        start = end
    return runs


def checked_kernel(wrapper, name: str, kernel, source: str, variant: str):
    """(key, name, source, fn, reused) of a generated kernel: groups with the same code (a model's
    repeated layers) share one kernel, compiled once; a new one gets its wrapper-unique name and
    goes through our front end, so a generator bug raises Unsupported (a fallback), not a failed run.
    `fn` is None for a reused kernel; the caller defines a new one with `define_kernel` once it has
    committed to it."""
    lines = source.replace(kernel.name, "KERNEL").splitlines()
    code = "\n".join(ln for ln in lines if not ln.lstrip().startswith("#"))  # comments name the nodes
    key = (code, repr(kernel.signature()), variant)
    defined = _defined_kernels(wrapper)
    if key in defined:
        return (key, *defined[key], None, True)
    name = f"{name}_{wrapper.next_kernel_suffix()}"
    source = source.replace(kernel.name, name)
    try:
        fn = runtime.load_kernel(name, source)
        runtime.check_frontend(fn, *kernel.signature())
    except Exception as e:  # a generator bug: fall back rather than fail at run time
        log.warning("tile: generated kernel %s does not compile (%s); falling back", name, e)
        raise Unsupported(f"generated kernel does not compile: {type(e).__name__}: {e}") from e
    return key, name, source, fn, False


def _defined_kernels(wrapper) -> dict:
    """(code without its name and comments, signature, autotune configs) -> (name, source) of the
    kernels this graph's wrapper defines."""
    if not hasattr(wrapper, "_tile_kernels_by_source"):
        wrapper._tile_kernels_by_source = {}
    return wrapper._tile_kernels_by_source


def _wants_gather_shape(kernel: TileKernelSource, device_type: str) -> bool:
    """Whether the kernel's accesses call for the device's gather tile shape (see heuristics)."""
    return kernel.strided_reduction if heuristics.is_gpu(device_type) else kernel.gather


def _heuristics_device(nodes) -> str:
    """The device type whose block-size heuristics the group's kernel gets."""
    return nodes[0].get_device().type


def _choose_launch(plan: GroupPlan, device_type: str, gather: bool, columns: bool = False) -> heuristics.LaunchConfig:
    xnumel = hint(plan.xnumel)
    if plan.kind == "pointwise":
        return heuristics.pointwise(device_type, xnumel, gather)
    if any(scans.is_sort(node.snode) for node in plan.nodes) and bound(plan.rnumel) is not None:
        return scans.sort_launch(device_type, xnumel, bound(plan.rnumel))  # a sort sees its whole row
    return heuristics.reduction(device_type, xnumel, hint(plan.rnumel), bound(plan.rnumel), gather, columns)


def _autotune_configs(device_type: str, kernel: TileKernelSource) -> list[dict]:
    """Launch configs to autotune among (``config.autotune``: on, or "reductions" for reduction
    kernels only), or []."""
    setting = getattr(config, "autotune", False)
    reduction = kernel.plan.kind == "reduction"
    if not setting or (setting == "reductions" and not reduction):
        return []
    configs = heuristics.candidates(device_type, kernel.launch, reduction)
    return [c.launch_kwargs(reduction) for c in configs] if len(configs) > 1 else []


def launch_parts(kernel: TileKernelSource, tuned: bool = False,
                 renames: dict[str, str] | None = None) -> tuple[str, list[str], dict[str, int]]:
    """(grid, positional arguments, constexpr/num_warps keyword arguments) of a kernel's launch.

    Sizes are printed by Inductor's wrapper printer, so symbolic ones read the size
    symbols the wrapper's ``call`` has in scope; a symbolic grid is computed at run time.
    ``tuned``: the autotuner picks the blocks and warps (no keywords), the grid is a
    function of them; otherwise the grid is a tuple of 3 expressions. ``renames``: buffers passed
    by another name (an input whose memory an output took over, ``inplace.py``).
    """
    plan, launch = kernel.plan, kernel.launch
    numels = kernel.numels()
    seeds = [str(offset) for offset in kernel.seed_offsets]
    buffers = [(renames or {}).get(name, name) for name in kernel.call_args()]
    args = buffers + kernel.size_arg_names() + seeds + [_size_source(n) for n in numels.values()]
    kwargs = {} if tuned else launch.launch_kwargs(plan.kind == "reduction")
    if launch.ysplit:  # static sizes; one program per tile, x fastest
        if tuned:
            tiles = [f"((meta['{n}'] + meta['{b}'] - 1) // meta['{b}'])" for n, b in (("ynumel", "YBLOCK"),
                                                                                  ("xnumel", "XBLOCK"))]
            return f"lambda meta: ({' * '.join(tiles)},)", args, kwargs
        grid = heuristics.cdiv(numels["ynumel"], launch.yblock) * heuristics.cdiv(numels["xnumel"], launch.xblock)
        return f"({grid}, 1, 1)", args, kwargs
    xnumel = _size_source(plan.xnumel)
    if tuned:
        return "lambda meta: ((meta['xnumel'] + meta['XBLOCK'] - 1) // meta['XBLOCK'],)", args, kwargs
    if isinstance(plan.xnumel, int):
        grid = f"({heuristics.cdiv(plan.xnumel, launch.xblock)}, 1, 1)"
    elif launch.xblock == 1:
        grid = f"({xnumel}, 1, 1)"
    else:
        grid = f"((({xnumel}) + {launch.xblock - 1}) // {launch.xblock}, 1, 1)"
    return grid, args, kwargs


def launch_line(name: str, kernel: TileKernelSource, tuned: bool = False, renames: dict[str, str] | None = None) -> str:
    """The launch as a Triton user would write it: ``name[grid](args..., XBLOCK=.., num_warps=..)``."""
    grid, args, kwargs = launch_parts(kernel, tuned, renames)
    return f"{name}[{grid}]({', '.join(args + [f'{k}={v}' for k, v in kwargs.items()])})"


def site_launch(wrapper, name: str, kernel: TileKernelSource, tuned: bool = False,
                renames: dict[str, str] | None = None) -> str:
    """The wrapper's launch: ``name_launchN.run(grid, args...)`` through a `LaunchSite` defined once
    per kernel and launch config in the wrapper's header (the cheapest launch on the host);
    ``tuned``: a `TunedLaunchSite` of the autotuned kernel, which holds Triton's ``grid(meta)`` (a
    function of the sizes and the chosen blocks) and is launched with ``None`` for the grid."""
    grid, args, kwargs = launch_parts(kernel, tuned, renames)
    sites = wrapper.__dict__.setdefault("_tile_launch_sites", {})
    key = (name, tuple(kwargs.items()), grid if tuned else None)
    site = sites.get(key)
    if site is None:
        site = sites[key] = f"{name}_launch{len([k for k in sites if k[0] == name])}"
        made = f"launcher(grid={grid})" if tuned else f"launcher({', '.join(f'{k}={v}' for k, v in kwargs.items())})"
        wrapper.define_kernel(site, f"{name}.{made}", gpu=False)
    return f"{site}.run({', '.join(['None' if tuned else grid] + args)})"


def _precompile(fn, kernel: TileKernelSource, device_type: str, source: str, launch: dict | None = None) -> None:
    """Start compiling the kernel for the launch the wrapper will make, in a compile worker
    process (``config.compile_workers``) or else a background thread. ``launch``: an autotune
    candidate's blocks and ``num_warps`` instead of the kernel's own.

    The specialization is predicted as the launch will compute it: tensors 16-byte aligned
    (Inductor's buffers are), sizes at their hint values.  A wrong guess costs only the wasted
    background compile (the launch then compiles its own specialization); a right one lets
    the graph's kernels compile in parallel with each other and with the rest of codegen.
    """
    from ..codegen import progress
    from ..codegen.compile_workers import arg_specs, compile_source

    signature, constexprs = kernel.signature()
    launch = dict(launch or {})
    num_warps = launch.pop("num_warps", None) or kernel.launch.num_warps or 4
    constexprs = {**constexprs, **{k: v for k, v in launch.items() if k in constexprs}}
    values = {name: hint(size) for name, size in kernel.numels().items()}
    values.update({s.name: hint(s) for s in kernel.size_args})
    values.update({name: offset for offset, name in kernel.seed_offsets.items()})
    described = []  # (name, signature type, constexpr value, divisible by 16, equal to 1)
    for name in fn.arg_names:
        if name in constexprs:
            described.append((name, "constexpr", constexprs[name], False, False))
        elif signature[name].startswith("*"):
            described.append((name, signature[name], None, True, False))
        else:
            value = values[name]
            if not -(2**31) <= value < 2**31:
                return  # the launch would pass an i64: nothing to predict
            specialized = name not in fn.do_not_specialize
            described.append((name, signature[name], None, specialized and value % 16 == 0,
                              specialized and value == 1))
    specs = arg_specs(described)
    from ..kernel_compiler.to_llvm.targets import gpu_target

    target = gpu_target() if device_type == "cuda" else "cpu"
    try:
        future = fn.precompile(specs, target, num_warps, elsewhere=lambda: compile_source(
            fn.__name__, source, described, target, num_warps, config.compile_workers))
        if future is not None:
            progress.track(future)  # the "compiling kernels: done/total" line on a terminal
    except Exception:  # only an optimization: the launch compiles what it needs
        log.debug("tile: could not start compiling %s early", fn.__name__, exc_info=True)


def _size_source(size) -> str:
    """A loop size as Python source in the wrapper (symbols are the names ``call`` defines)."""
    from torch._inductor.codegen.wrapper import pexpr

    return str(size) if isinstance(size, int) else pexpr(size)


def _guard_leq(expr, limit: int) -> None:
    sizevars = V.graph.sizevars
    check = getattr(sizevars, "check_leq", None) or sizevars.guard_leq  # the name differs across torch versions
    check(expr, limit)


def _kernel_name(nodes, kind: str) -> str:
    """``tile_<kind>_<aten ops it fuses>``: e.g. tile_poi_add_mul_relu_sigmoid."""
    ops = []
    for snode in nodes:
        for origin in sorted(getattr(snode.node, "origins", ()) or (), key=lambda n: n.name):
            aten = origin.meta.get("original_aten") if origin.op == "call_function" else None
            op = getattr(getattr(aten, "_overloadpacket", None), "__name__", None)
            if op and op not in ops:
                ops.append(op)
    label = "_".join(ops[:6]) or "kernel"
    return f"tile_{'red' if kind == 'reduction' else 'poi'}_{label}"

