"""Matmul templates in the backend: ``mm``/``addmm``/``bmm`` as tile kernels with their epilogue fused.

How it fits Inductor (its max-autotune does the same with Triton templates, ``select_algorithm``):

1. **Lowering** (``lowered()``, entered around each of our graph compiles): the lowerings of
   ``aten.mm``/``aten.addmm``/``aten.bmm`` are wrapped. Where the template fits (operands of one
   float dtype on a device we generate for, static sizes and strides), the template is timed
   against the aten kernel on random inputs of the same layout (``choose``); if it wins (or
   ``config.matmul_templates == "force"``) the op becomes a ``TileMatmulBuffer``, a subclass of
   Inductor's ``ir.TemplateBuffer`` that carries the chosen block config. Otherwise, or on any
   error, the original lowering runs (the aten kernel).
2. **Fusion**: Inductor's scheduler already knows templates: it proposes the pointwise consumers of
   a template as epilogues (same index as written, no mutation, no reduction) and asks our
   scheduling's ``can_fuse_vertical``, which answers with ``can_fuse_epilogue``: pointwise nodes
   over the matmul's output elements.
3. **Codegen**: the scheduler hands the template with its epilogue to ``codegen_template``, which
   calls ``codegen`` here: one kernel (``codegen.matmul_template``); if the epilogue cannot be
   generated, the template alone and the epilogue as its own kernel; if even the template fails,
   an aten call into the template's buffer.

Inductor's own templates (Triton, C++) are turned off in our compiles (``max_autotune_*_backends``
= ATEN): our scheduling does not generate their code.

Mode (``config.matmul_templates``): ``auto`` follows Inductor's ``max_autotune``/``max_autotune_gemm``
(``mode="max-autotune"``), ``on`` always times, ``force`` takes the template untimed, ``off`` never.
Every choice is logged and listed in ``metrics.template_choices``.
"""

from __future__ import annotations

import contextlib
import logging
import threading

import sympy
import torch

from .. import config, metrics
from ..thread_switch import ThreadSwitch
from ..codegen.common import NeedsBuffer, Unsupported
from ..codegen.heuristics import is_gpu, next_pow2
from ..codegen.matmul_template import (DTYPES, MatmulSpec, MatmulTemplateKernel, Operand, TemplateConfig,
                                       benchmark_source, grid)

log = logging.getLogger(__name__)

_mode = ThreadSwitch(None)  # this thread's template mode while our compile lowers
_lock = threading.RLock()
# (op, spec without buffer names, device, mode) -> chosen TemplateConfig, or None for aten
_choices: dict[tuple, TemplateConfig | None] = {}

# block configs tried on GPUs (BLOCK_M, BLOCK_N, BLOCK_K, num_warps), clamped to the problem; fp16/bf16
# run on tensor cores (the best of model_benchmarks.dot_bench's configs first), float32 on FMAs
GPU_CONFIGS = [(128, 128, 32, 4), (128, 64, 32, 4), (64, 128, 32, 4), (64, 64, 32, 4)]
GPU_FP32_CONFIGS = [(64, 64, 16, 4), (32, 64, 16, 4), (32, 32, 16, 4)]
# the CPU target: one program holds a tile in vectors; small tiles keep compile time low
CPU_CONFIGS = [(32, 32, 16, 1)]


def template_mode() -> str:
    """``off``, ``autotune`` (time against aten) or ``force``, from ``config.matmul_templates``."""
    setting = config.matmul_templates
    if setting == "auto":
        import torch._inductor.config as inductor_config

        tuned = inductor_config.max_autotune or getattr(inductor_config, "max_autotune_gemm", False)
        return "autotune" if tuned else "off"
    return {"on": "autotune", "force": "force"}.get(setting, "off")


def _aten_only_backends():
    """Inductor's own GEMM/conv templates off: our scheduling generates only ours."""
    import torch._inductor.config as inductor_config

    names = ("max_autotune_gemm_backends", "max_autotune_conv_backends")
    return inductor_config.patch({n: "ATEN" for n in names if hasattr(inductor_config, n)})


@contextlib.contextmanager
def lowered():
    """While one of our graphs is compiled: Inductor's templates off, and ours on if the mode says so."""
    mode = template_mode()
    with _aten_only_backends():
        if mode == "off":
            yield
            return
        from torch._inductor.lowering import lowerings

        ops = _ops()
        with _lock:
            installed = {op: lowerings.get(op) for op in ops}
            ours = all(hasattr(fn, "_tile_template") for fn in installed.values())
            if not ours:
                for op, fn in installed.items():
                    if fn is not None and not hasattr(fn, "_tile_template"):
                        lowerings[op] = _template_lowering(ops[op], fn)
        try:
            with _mode.set(mode):
                yield
        finally:
            if not ours:
                with _lock:
                    for op, fn in installed.items():
                        if fn is not None:
                            lowerings[op] = fn


def _ops() -> dict:
    aten = torch.ops.aten
    return {aten.mm.default: "mm", aten.addmm.default: "addmm", aten.bmm.default: "bmm"}


def _template_lowering(op: str, original):
    def lowering(*args, **kwargs):
        mode = _mode.get()
        if mode:
            try:
                result = _lower(op, mode, args, kwargs)
            except Unsupported as e:
                log.debug("tile: %s keeps the aten kernel: %s", op, e)
                result = None
            except Exception as e:  # noqa: BLE001 - a template problem is never the user's error
                log.warning("tile: matmul template for %s failed (%s: %s); using the aten kernel", op,
                            type(e).__name__, e, exc_info=log.isEnabledFor(logging.DEBUG))
                result = None
            if result is not None:
                return result
        return original(*args, **kwargs)

    lowering._tile_template = original
    lowering.__wrapped__ = original
    return lowering


# -- lowering ------------------------------------------------------------------------------------
def _static(value) -> int:
    expr = sympy.sympify(value)
    if not expr.is_Integer:
        raise Unsupported(f"symbolic size or stride {value}")
    return int(expr)


def _realized(x):
    """The input as a buffer or a view of one with a fixed layout."""
    from torch._inductor import ir

    x = ir.ExternKernel.realize_input(x)
    if isinstance(x, ir.StorageBox):
        x = x.data
    if isinstance(getattr(x, "layout", None), ir.FlexibleLayout):
        x.freeze_layout()
    if not isinstance(x, (ir.Buffer, ir.ReinterpretView)) or not isinstance(x.get_layout(), ir.Layout):
        raise Unsupported(f"operand {type(x).__name__}")
    return x


def _operand(node, batched: bool) -> Operand:
    layout = node.get_layout()
    strides = [_static(s) for s in node.get_stride()]
    for size in node.get_size():
        _static(size)
    return Operand(node.get_name(), _static(layout.offset), tuple(strides if batched else [0, *strides]))


def spec_of(op: str, inputs: list, alpha=1, beta=1) -> MatmulSpec:
    """The template's problem for realized ``inputs`` ([bias,] a, b; bias already expanded)."""
    bias, (a, b) = (inputs[0], inputs[1:]) if op == "addmm" else (None, inputs)
    batched = op == "bmm"
    a_size, b_size = [_static(s) for s in a.get_size()], [_static(s) for s in b.get_size()]
    dims = 3 if batched else 2
    if len(a_size) != dims or len(b_size) != dims or a_size[-1] != b_size[-2]:
        raise Unsupported(f"{op} of {a_size} and {b_size}")
    if batched and a_size[0] != b_size[0]:
        raise Unsupported(f"bmm of {a_size} and {b_size}")
    dtype = a.get_dtype()
    if dtype not in DTYPES or b.get_dtype() != dtype or (bias is not None and bias.get_dtype() != dtype):
        raise Unsupported(f"{op} on {dtype} and {b.get_dtype()}")
    batch, m, k, n = (a_size[0] if batched else 1), a_size[-2], a_size[-1], b_size[-1]
    if min(batch, m, n, k) < 1:
        raise Unsupported(f"{op} with an empty dimension")
    if batch > 65535:  # the batch is the grid's second dimension (CUDA's limit)
        raise Unsupported(f"bmm over {batch} matrices")
    # torch's CUDA tf32 switch, as aten's mm follows it; a CPU mm is always exact float32
    on_cuda = a.get_device() is not None and a.get_device().type == "cuda"
    precision = "tf32" if dtype == torch.float32 and on_cuda and torch.backends.cuda.matmul.allow_tf32 else "ieee"
    return MatmulSpec(batched, batch, m, n, k, _operand(a, batched), _operand(b, batched), dtype,
                      bias=_operand(bias, False) if bias is not None else None, alpha=alpha, beta=beta,
                      precision=precision)


def _lower(op: str, mode: str, args: tuple, kwargs: dict):
    from torch._inductor import ir
    from torch._inductor.lowering import lowerings

    kwargs = dict(kwargs)
    alpha, beta = (kwargs.pop("alpha", 1), kwargs.pop("beta", 1)) if op == "addmm" else (1, 1)
    if kwargs or len(args) != (3 if op == "addmm" else 2):
        raise Unsupported(f"{op} with arguments {sorted(kwargs)}")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (alpha, beta)):
        raise Unsupported(f"{op} with alpha={alpha!r}, beta={beta!r}")
    devices = {x.get_device() for x in args}
    device = next(iter(devices))
    if len(devices) != 1 or device is None or device.type not in config.devices:
        raise Unsupported(f"{op} on {devices}")
    mats = [_realized(x) for x in args[-2:]]
    inputs = mats
    if op == "addmm":
        m, n = mats[0].get_size()[0], mats[1].get_size()[1]
        inputs = [_realized(lowerings[torch.ops.aten.expand.default](args[0], [m, n]))] + mats
    spec = spec_of(op, inputs, alpha, beta)
    cfg = choose(op, spec, device, mode, epilogue=_feeds_pointwise())
    if cfg is None:
        return None
    layout = ir.FixedLayout(device, spec.dtype, list(spec.sizes), ir.FlexibleLayout.contiguous_strides(spec.sizes))
    buffer = _buffer_class()(layout, inputs, op, cfg, alpha, beta)
    return ir.TensorBox.create(buffer)


def _feeds_pointwise() -> bool:
    """Whether every user of the FX node being lowered is pointwise (through views): an epilogue
    the template would fuse, and that the aten kernel needs a kernel of its own for."""
    from torch._inductor import utils
    from torch._inductor.virtualized import V

    node = getattr(V.graph, "current_node", None)
    is_pointwise_use = getattr(utils, "is_pointwise_use", None)
    if node is None or is_pointwise_use is None or not node.users:
        return False
    try:
        return all(is_pointwise_use(user) for user in node.users)
    except Exception:  # noqa: BLE001 - its signature has changed before; no credit then
        return False


_buffer_cls = None


def _buffer_class():
    """``TileMatmulBuffer(ir.TemplateBuffer)``, made on first use (importing this module must not
    import Inductor's IR before a compile needs it)."""
    global _buffer_cls
    if _buffer_cls is None:
        from torch._inductor import ir
        from torch.utils._ordered_set import OrderedSet

        class TileMatmulBuffer(ir.TemplateBuffer):
            """A matmul computed by our template: ``inputs`` are [bias,] a, b; ``tile_config`` the blocks."""

            def __init__(self, layout, inputs, op: str, cfg: TemplateConfig, alpha, beta):
                super().__init__(layout, inputs, None)
                self.tile_op, self.tile_config, self.tile_alpha, self.tile_beta = op, cfg, alpha, beta
                self.allowed_prologue_inps = OrderedSet()  # no prologue fusion: operands are read as they are

            def get_allowed_prologue_inps(self):
                return OrderedSet()

            def tile_spec(self) -> MatmulSpec:
                return spec_of(self.tile_op, list(self.inputs), self.tile_alpha, self.tile_beta)

        _buffer_cls = TileMatmulBuffer
    return _buffer_cls


def is_tile_template(snode) -> bool:
    template = snode.get_template_node() if snode.is_template() else None
    return _buffer_cls is not None and isinstance(template, _buffer_cls)


# -- choice --------------------------------------------------------------------------------------
def candidates(spec: MatmulSpec, device_type: str) -> list[TemplateConfig]:
    """Block configs for the problem: the device's list, each block clamped to its dimension."""
    out = []
    table = CPU_CONFIGS
    if is_gpu(device_type):
        table = GPU_FP32_CONFIGS if spec.dtype == torch.float32 else GPU_CONFIGS
    for bm, bn, bk, warps in table:
        cfg = TemplateConfig(max(16, min(bm, next_pow2(spec.m))), max(16, min(bn, next_pow2(spec.n))),
                             max(16, min(bk, next_pow2(spec.k))), num_warps=warps)
        if cfg not in out:
            out.append(cfg)
    return out


def choose(op: str, spec: MatmulSpec, device: torch.device, mode: str, epilogue: bool = False
           ) -> TemplateConfig | None:
    """The block config of the template to use, or None for the aten kernel.

    ``epilogue``: the result feeds pointwise ops, which the template fuses; the aten kernel is then
    timed together with one elementwise pass over its output (the epilogue kernel it needs)."""
    configs = candidates(spec, device.type)
    label = f"{op} {'x'.join(map(str, spec.sizes))}x{spec.k} {str(spec.dtype).replace('torch.', '')}"
    if mode == "force":
        metrics.template_choices.append(f"{label}: template {configs[0]} (forced)")
        return configs[0]
    anonymous = (op, _anonymous(spec), str(device), mode, epilogue)
    if anonymous in _choices:
        return _choices[anonymous]
    from torch._subclasses.fake_tensor import unset_fake_temporarily

    with unset_fake_temporarily(), torch.no_grad():  # real tensors, whatever mode the lowering runs in
        timings = _time_choices(op, spec, device, configs, epilogue=epilogue)
    aten_ms = timings.pop("aten")
    best = min(timings, key=timings.get) if timings else None
    chosen = best if best is not None and timings[best] < aten_ms else None
    report = ", ".join(f"{c} {ms:.4f} ms" for c, ms in timings.items())
    aten_label = "aten + epilogue pass" if epilogue else "aten"
    note = (f"{label}: {'template ' + str(chosen) if chosen else 'aten'} "
            f"({aten_label} {aten_ms:.4f} ms; {report or 'no template ran'})")
    log.info("tile: %s", note)
    metrics.template_choices.append(note)
    _choices[anonymous] = chosen
    return chosen


def _anonymous(spec: MatmulSpec) -> tuple:
    def strip(o: Operand | None):
        return None if o is None else (o.offset, o.strides)

    return (spec.batched, spec.batch, spec.m, spec.n, spec.k, strip(spec.a), strip(spec.b), strip(spec.bias),
            spec.dtype, spec.alpha, spec.beta, spec.precision)


def _example(operand: Operand, sizes: list[int], dtype, device, gen) -> tuple[torch.Tensor, torch.Tensor]:
    """(storage, view): random values at the operand's offset and strides."""
    strides = operand.strides[3 - len(sizes):]
    extent = operand.offset + sum((s - 1) * st for s, st in zip(sizes, strides)) + 1
    storage = torch.randn(extent, generator=gen, dtype=torch.float32).to(device=device, dtype=dtype)
    return storage, torch.as_strided(storage, sizes, strides, operand.offset)


# tolerance of the template's result against aten's on the timing inputs (relative to the largest value)
_TOLERANCE = {torch.float16: 1e-2, torch.bfloat16: 5e-2, torch.float32: 1e-2}


def _time_choices(op: str, spec: MatmulSpec, device: torch.device, configs: list[TemplateConfig],
                  epilogue: bool = False) -> dict:
    """Milliseconds of aten (``"aten"``; ``epilogue``: followed by a copy of its output) and of each
    config whose result agrees with aten's."""
    from ..codegen import runtime
    from ..testing import do_bench

    gen = torch.Generator().manual_seed(0)
    lead = [spec.batch] if spec.batched else []
    a_store, a = _example(spec.a, lead + [spec.m, spec.k], spec.dtype, device, gen)
    b_store, b = _example(spec.b, lead + [spec.k, spec.n], spec.dtype, device, gen)
    out = torch.empty(spec.sizes, dtype=spec.dtype, device=device)
    if spec.bias is not None:
        bias_store, bias = _example(spec.bias, [spec.m, spec.n], spec.dtype, device, gen)
        aten = lambda: torch.addmm(bias, a, b, beta=spec.beta, alpha=spec.alpha, out=out)  # noqa: E731
        pointers = (a_store, b_store, bias_store, out)
    else:
        fn = torch.bmm if spec.batched else torch.mm
        aten = lambda: fn(a, b, out=out)  # noqa: E731
        pointers = (a_store, b_store, out)
    bench = {"device": device.type, "return_mode": "median"}
    if not is_gpu(device.type):
        bench.update(warmup=5, rep=20)
    aten()
    reference = out.clone()
    scale = reference.abs().max().item() or 1.0
    if epilogue:
        spare = torch.empty_like(out)
        timings = {"aten": do_bench(lambda: (aten(), spare.copy_(out)), **bench)}
    else:
        timings = {"aten": do_bench(aten, **bench)}
    for cfg in configs:
        name = f"tile_{op}_bench"
        try:
            kernel = runtime.load_kernel(name, benchmark_source(spec, cfg, name))
            launch = {**cfg.constexprs(), **({"num_warps": cfg.num_warps} if is_gpu(device.type) else {})}
            shape = grid(spec, cfg)

            def run(kernel=kernel, launch=launch, shape=shape):
                kernel[shape](*pointers, **launch)

            out.fill_(float("nan"))
            run()
            error = (out.float() - reference.float()).abs().max().item() / scale
            if not error <= _TOLERANCE[spec.dtype]:  # NaN too
                log.warning("tile: matmul template %s %s differs from aten by %.3g; not used", op, cfg, error)
                continue
            timings[cfg] = do_bench(run, **bench)
        except Exception as e:  # noqa: BLE001 - a config that fails to compile or run is skipped
            log.warning("tile: matmul template %s %s failed: %s: %s", op, cfg, type(e).__name__, e)
    return timings


# -- fusion --------------------------------------------------------------------------------------
def can_fuse_epilogue(node1, node2) -> bool:
    """Whether ``node2`` (pointwise, over the matmul's output elements) joins the template ``node1``."""
    from ..codegen.plan import _size, plan_group
    from .fusion import MAX_FUSED_NODES

    if node2.is_template() or not node1.is_template():
        return False
    template = next(n for n in node1.get_nodes() if n.is_template())
    if not is_tile_template(template):
        return False
    epilogue = [n for n in node1.get_nodes() if n is not template] + list(node2.get_nodes())
    if len(epilogue) + 1 > MAX_FUSED_NODES:
        return False
    numel = sympy.Integer(1)
    for size in template.node.get_size():
        numel *= size
    for snode in node2.get_nodes():
        if not hasattr(snode, "_body") or snode.is_reduction() or snode.is_extern():
            return False
        sizes, rsizes = snode.get_ranges()
        try:
            if rsizes or sympy.expand(sympy.Mul(*[_size(s) for s in sizes]) - numel) != 0:
                return False
        except Unsupported:
            return False
    try:
        plan_group(epilogue)
    except Unsupported as e:
        log.debug("not fusing %s into the template %s: %s", node2.get_name(), template.get_name(), e)
        return False
    return True


# -- codegen -------------------------------------------------------------------------------------
def codegen(scheduling, template_snode, epilogue: list) -> None:
    """The template's kernel with ``epilogue`` fused; failing that, without it; failing that, aten."""
    try:
        _emit(scheduling, template_snode, epilogue)
        return
    except Unsupported as e:
        reason = str(e)
    if epilogue:
        log.info("tile: template %s without its epilogue: %s", template_snode.get_name(), reason)
        try:
            _emit(scheduling, template_snode, [])
        except Unsupported as e:
            _emit_aten(template_snode, str(e))
        scheduling._codegen_list(list(epilogue))
    else:
        _emit_aten(template_snode, reason)


def _emit(scheduling, template_snode, epilogue: list) -> None:
    from torch._inductor.virtualized import V

    from .scheduling import _defined_kernels, _kernel_name, checked_kernel

    buf = template_snode.node
    spec, cfg = buf.tile_spec(), buf.tile_config
    nodes = [template_snode, *epilogue]
    gpu = is_gpu(buf.get_device().type)
    local = scheduling._kernel_local_buffers(nodes) if epilogue else set()
    name = f"tile_{buf.tile_op}" + (_kernel_name(epilogue, "pointwise")[len("tile_poi"):] if epilogue else "")
    while True:
        kernel = MatmulTemplateKernel(spec, cfg, buf.get_name(), epilogue, name, cfg.num_warps if gpu else None,
                                      elide=local)
        try:
            source = kernel.generate()
        except NeedsBuffer as e:
            local.discard(str(e))
            continue
        except Unsupported:
            raise
        except Exception as e:  # a generator bug: the caller splits or falls back
            raise Unsupported(f"template codegen error {type(e).__name__}: {e}") from e
        break
    wrapper = V.graph.wrapper_code
    key, name, source, _, reused = checked_kernel(wrapper, name, kernel, source, "template")
    defined = _defined_kernels(wrapper)
    for elided in sorted(kernel.elided):
        V.graph.removed_buffers.add(elided)
    for snode in nodes:
        snode.mark_run()
    if not reused:
        loader = "__import__('inductor_tile.codegen.runtime', fromlist=['load_kernel']).load_kernel"
        wrapper.define_kernel(name, f"{loader}({name!r}, {source!r})", gpu=False)
        defined[key] = (name, source)
        metrics.kernel_sources[name] = source
    args = kernel.call_args() + kernel.size_arg_names() + [str(offset) for offset in kernel.seed_offsets]
    kwargs = [f"{k}={v}" for k, v in cfg.constexprs().items()] + ([f"num_warps={cfg.num_warps}"] if gpu else [])
    line = f"{name}[{grid(spec, cfg)}]({', '.join(args + kwargs)})"
    wrapper.writeline(line)
    metrics.launch_lines.setdefault(name, line)
    metrics.generated_kernels += 1
    metrics.reused_kernels += reused
    metrics.template_kernels.append(f"{name}: {buf.tile_op} {cfg} + {len(epilogue)} epilogue nodes")


def _emit_aten(template_snode, reason: str) -> None:
    """The aten kernel writing the template's buffer (the template could not be generated)."""
    from torch._inductor.virtualized import V

    buf = template_snode.node
    log.warning("tile: template %s falls back to aten.%s: %s", buf.get_name(), buf.tile_op, reason)
    metrics.fallback_reasons.append(f"{buf.get_name()}: template: {reason}")
    template_snode.mark_run()
    refs = [x.codegen_reference() for x in buf.inputs]
    out = buf.get_name()
    if buf.tile_op == "addmm":
        scale = f"beta={buf.tile_beta!r}, alpha={buf.tile_alpha!r}"
        call = f"torch.addmm({refs[0]}, {refs[1]}, {refs[2]}, {scale}, out={out})"
    else:
        call = f"torch.{buf.tile_op}({refs[0]}, {refs[1]}, out={out})"
    V.graph.wrapper_code.writeline(call)
