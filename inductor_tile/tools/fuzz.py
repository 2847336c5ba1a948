"""A seeded fuzzer of ``torch.compile(backend="tile")`` against eager PyTorch.

    python -m inductor_tile.tools.fuzz --seed N            # replay one graph (prints its source)
    python -m inductor_tile.tools.fuzz --count 2000 [--start S] [--device cuda] [--time-budget SEC]
        [--summary-every N] [--handover P] [-v]

Each seed makes one small random graph (``generate``): pointwise math, broadcasts against
inputs or keepdim reductions, views (permute, transpose, flatten, unsqueeze, strided and
offset slices), reductions along random axes (sum, mean, amax, amin, var, logsumexp, softmax,
cumsum), indexing (index_select, gather) and dtype casts (through float16/bfloat16, to int and
bool, integer // and %), over random sizes (1 to 64 per dim) and input layouts (contiguous,
transposed, every other element).  The graph is written as Python source, so a
failure prints exactly what ran.  ``run_case`` compiles it with the tile backend in one of
three shape modes (static, ``dynamic=True``, ``mark_dynamic`` on one dim), calls it on two
or three sets of sizes, and compares outputs and input gradients (backward through
``sum(out * weight)``) with eager on the same inputs.  5% of the cases (10% on a GPU) hand
every node to Inductor's own scheduling (``handover``): a fallback must be sound for any node.

A compile error, a run-time error or a mismatch is a failure; a fallback is not (it is
counted).  Every failure found is kept as a regression test in tests/test_fuzz.py.  A long run
prints a summary line every ``--summary-every`` graphs and, at the end, a table of graphs,
failures, fallbacks and kernels per shape mode and direction, per dtype and for handovers, then
each fallback reason with its count and seeds (``-v`` prints them per graph).  The summary line's
"with fallbacks" leaves out the graphs handed over on purpose (counted beside it).

Low-precision round trips (``x.to(float16).to(float32)``) are compared at the graph's own
tolerance, on the GPU too: our kernels round them as eager does, and so do fallback kernels
(``scheduler/fallback.py``: Inductor's C++ under ``emulate_precision_casts``, its Triton code
with every such cast rounded), so a handed-over graph computes eager's values, not a rounding
Inductor's lowering chose to skip.  (No looser tolerance, and no ``emulate_precision_casts``
for the whole compile: that would also change how our own kernels round fp16 arithmetic.)
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
import time
import traceback
from dataclasses import dataclass, field

SIZES = (1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 31, 33, 64)
MAX_NUMEL = 4096
MODES = ("static", "dynamic", "mark_dynamic")

# pointwise ops: name -> source template over {a}
UNARY = {
    "relu": "torch.relu({a})", "sigmoid": "torch.sigmoid({a})", "tanh": "torch.tanh({a})",
    "sin": "torch.sin({a})", "cos": "torch.cos({a})", "abs": "torch.abs({a})", "neg": "-{a}",
    "square": "{a} * {a} * 0.5", "gelu": "torch.nn.functional.gelu({a})", "silu": "torch.nn.functional.silu({a})",
    "sqrt": "torch.sqrt({a}.abs() + 1.0)", "log1p": "torch.log1p({a}.abs())", "clamp": "torch.clamp({a}, -0.5, 0.75)",
    "leaky": "torch.where({a} > 0, {a}, {a} * 0.1)", "erf": "torch.erf({a})", "affine": "{a} * 1.5 + 0.25",
    "recip": "torch.reciprocal({a}.abs() + 1.0)", "exp": "torch.exp(-{a}.abs())",
}
BINARY = {
    "add": "{a} + {b}", "sub": "{a} - {b}", "mul": "{a} * {b}", "maximum": "torch.maximum({a}, {b})",
    "minimum": "torch.minimum({a}, {b})", "div": "{a} / ({b}.abs() + 1.0)", "where": "torch.where({a} > {b}, {a}, {b})",
    "atan2": "torch.atan2({a}, {b}.abs() + 0.5)",
}
# reductions over one axis: name -> template over {a}, {dim}, {keep}
REDUCE = {
    "sum": "{a}.sum({dim}, keepdim={keep})", "mean": "{a}.mean({dim}, keepdim={keep})",
    "amax": "{a}.amax({dim}, keepdim={keep})", "amin": "{a}.amin({dim}, keepdim={keep})",
    "var": "{a}.var({dim}, keepdim={keep})", "logsumexp": "torch.logsumexp({a}, {dim}, keepdim={keep})",
}
# along one axis, shape kept
SCAN = {
    "softmax": "torch.softmax({a}, {dim})", "log_softmax": "torch.log_softmax({a}, {dim})",
    "cumsum": "torch.cumsum({a}, {dim})",
}
CASTS = {
    "half": "{a}.to(torch.float16).to({dtype})", "bfloat16": "{a}.to(torch.bfloat16).to({dtype})",
    # a float -> int cast of NaN, inf or a value out of range is undefined (eager on x86 gives
    # INT_MIN, the tile language saturates with NaN -> 0): only finite, bounded values are cast
    "int": "(torch.nan_to_num({a}).clamp(-1e4, 1e4) * 4.0).to(torch.int32).to({dtype})",
    "bool": "({a} > 0.25).to({dtype})",
    # integer floor division and remainder of negative values (rounding toward minus infinity)
    "intdiv": "((torch.nan_to_num({a}).clamp(-1e4, 1e4) * 8.0).to(torch.int64) // 3 * 2"
              " + (torch.nan_to_num({a}).clamp(-1e4, 1e4) * 8.0).to(torch.int64) % 5).to({dtype})",
}

# dim tokens: ("base", name) | ("one",) | ("half", t) [x[::2]] | ("tail", t) [x[1:]] | ("flat", t, u)
ONE = ("one",)


def dim_size(token, sizes: dict) -> int:
    kind = token[0]
    if kind == "base":
        return sizes[token[1]]
    if kind == "one":
        return 1
    if kind == "half":
        return (dim_size(token[1], sizes) + 1) // 2
    if kind == "tail":
        return max(dim_size(token[1], sizes) - 1, 0)
    return dim_size(token[1], sizes) * dim_size(token[2], sizes)


@dataclass
class Input:
    name: str
    sig: tuple  # dim tokens
    index_of: tuple | None = None  # for index inputs: the dim token its values index
    layout: str = "contiguous"  # or "transposed" (dims stored in reverse order), "strided" (every other element)


@dataclass
class Case:
    seed: int
    source: str
    inputs: list[Input]
    sizes: list[dict]  # base dim name -> size, one dict per call
    dtype: str
    mode: str
    marked: str | None  # the base dim marked dynamic (mode mark_dynamic)
    backward: bool
    handover: bool  # every node goes to Inductor's scheduling
    ops: list[str] = field(default_factory=list)

    def describe(self) -> str:
        head = (f"# seed {self.seed}: dtype {self.dtype}, mode {self.mode}"
                f"{f' (dim {self.marked})' if self.marked else ''}, backward {self.backward}, "
                f"handover {self.handover}\n# sizes per call: {self.sizes}\n")
        return head + self.source


class _Builder:
    """Grows a random graph; each value has a signature of dim tokens."""

    def __init__(self, rng: random.Random, dtype: str):
        self.rng, self.dtype = rng, dtype
        self.lines: list[str] = []
        self.values: list[tuple[str, tuple]] = []  # (name, sig) of float values
        self.inputs: list[Input] = []
        self.ops: list[str] = []
        self.base: list[str] = []
        self.uses_int_cast = False

    def new_input(self, sig) -> str:
        name = f"x{len(self.inputs)}"
        layout = self.rng.choice(["contiguous"] * 4 + ["transposed", "strided"]) if sig else "contiguous"
        self.inputs.append(Input(name, tuple(sig), layout=layout))
        self.values.append((name, tuple(sig)))
        return name

    def new_index(self, of, sig) -> str:
        name = f"i{len(self.inputs)}"
        self.inputs.append(Input(name, tuple(sig), of))
        return name

    def emit(self, op: str, expr: str, sig) -> str:
        name = f"v{len(self.lines)}"
        self.lines.append(f"    {name} = {expr}")
        self.values.append((name, tuple(sig)))
        self.ops.append(op)
        return name

    def pick(self):
        # recent values are likelier, so graphs grow deep as well as wide
        k = len(self.values)
        return self.values[min(k - 1, int(k * self.rng.random() ** 0.5))]


def _broadcast_partner(b: _Builder, sig) -> str:
    """A value broadcastable with `sig`: an existing one or a new input with some dims of size 1."""
    rng = b.rng
    same = [name for name, s in b.values if len(s) == len(sig) and all(x == y or ONE in (x, y) for x, y in zip(s, sig))]
    if same and rng.random() < 0.6:
        return rng.choice(same)
    new_sig = [ONE if (t[0] == "base" and rng.random() < 0.4) else t for t in sig]
    if any(t[0] != "base" and t != ONE for t in new_sig):  # inputs have base dims only
        new_sig = [t if t[0] == "base" or t == ONE else ONE for t in new_sig]
    if rng.random() < 0.2 and len(new_sig) > 1:  # a lower-rank input broadcasts from the left
        return b.new_input(new_sig[1:])
    return b.new_input(new_sig)


def _broadcast(s1: tuple, s2: tuple) -> tuple:
    """The signature of a broadcast of `s1` with `s2` (aligned at the right, as torch does)."""
    rank = max(len(s1), len(s2))
    s1, s2 = (ONE,) * (rank - len(s1)) + s1, (ONE,) * (rank - len(s2)) + s2
    return tuple(y if x == ONE else x for x, y in zip(s1, s2))


def _step(b: _Builder) -> None:
    rng = b.rng
    name, sig = b.pick()
    rank = len(sig)
    kinds = ["unary"] * 4 + ["binary"] * 4 + ["reduce"] * 2 + ["scan", "view", "view", "slice", "cast"]
    if rank and any(t[0] == "base" for t in sig):
        kinds += ["index"]
    kind = rng.choice(kinds)
    if kind in ("reduce", "scan", "slice", "view") and rank == 0:
        kind = "unary"
    if kind == "unary":
        op = rng.choice(sorted(UNARY))
        b.emit(op, UNARY[op].format(a=name), sig)
    elif kind == "binary":
        op = rng.choice(sorted(BINARY))
        other = _broadcast_partner(b, sig)
        a, c = (name, other) if rng.random() < 0.5 else (other, name)
        b.emit(op, BINARY[op].format(a=a, b=c), _broadcast(sig, dict(b.values)[other]))
    elif kind == "reduce":
        op = rng.choice(sorted(REDUCE))
        dim = rng.randrange(rank)
        keep = rng.random() < 0.5
        out = sig[:dim] + ((ONE,) if keep else ()) + sig[dim + 1:]
        b.emit(op, REDUCE[op].format(a=name, dim=dim - rank if rng.random() < 0.3 else dim, keep=keep), out)
    elif kind == "scan":
        op = rng.choice(sorted(SCAN))
        b.emit(op, SCAN[op].format(a=name, dim=rng.randrange(rank)), sig)
    elif kind == "view":
        choices = ["permute", "unsqueeze", "contiguous"]
        if rank >= 2:
            choices += ["transpose", "flatten"]
        op = rng.choice(choices)
        if op == "permute":
            perm = list(range(rank))
            rng.shuffle(perm)
            b.emit(op, f"{name}.permute({', '.join(map(str, perm))})", tuple(sig[p] for p in perm))
        elif op == "transpose":
            i, j = rng.sample(range(rank), 2)
            out = list(sig)
            out[i], out[j] = out[j], out[i]
            b.emit(op, f"{name}.transpose({i}, {j})", out)
        elif op == "flatten":
            i = rng.randrange(rank - 1)
            b.emit(op, f"{name}.flatten({i}, {i + 1})", sig[:i] + (("flat", sig[i], sig[i + 1]),) + sig[i + 2:])
        elif op == "unsqueeze":
            i = rng.randrange(rank + 1)
            b.emit(op, f"{name}.unsqueeze({i})", sig[:i] + (ONE,) + sig[i:])
        else:
            b.emit(op, f"{name}.contiguous()", sig)
    elif kind == "slice":
        dim = rng.randrange(rank)
        op = "step2" if rng.random() < 0.6 or dim_min(sig[dim]) < 2 else "tail"
        index = ", ".join([":"] * dim + ["::2" if op == "step2" else "1:"])
        out = sig[:dim] + (("half" if op == "step2" else "tail", sig[dim]),) + sig[dim + 1:]
        b.emit(op, f"{name}[{index}]", out)
    elif kind == "cast":
        op = rng.choice(sorted(CASTS))
        b.uses_int_cast |= op in ("int", "intdiv")
        b.emit(op, CASTS[op].format(a=name, dtype=f"torch.{b.dtype}"), sig)
    else:  # index along a base dim
        dims = [d for d, t in enumerate(sig) if t[0] == "base"]
        dim = rng.choice(dims)
        if rng.random() < 0.5:
            k = ("base", f"k{len(b.inputs)}")
            b.base.append(k[1])
            idx = b.new_index(sig[dim], (k,))
            b.emit("index_select", f"torch.index_select({name}, {dim}, {idx})", sig[:dim] + (k,) + sig[dim + 1:])
        else:
            idx = b.new_index(sig[dim], sig)
            b.emit("gather", f"torch.gather({name}, {dim}, {idx})", sig)


def dim_min(token) -> int:
    """The smallest size a dim token can have (bases may be 1)."""
    return {"base": 1, "one": 1, "half": 1, "tail": 0, "flat": 1}[token[0]]


def generate(seed: int, device: str = "cpu", handover: float | None = None) -> Case:
    """The graph of ``seed`` (deterministic); ``handover``: the share of graphs whose every node goes
    to Inductor's scheduling (default 5% on the CPU, 10% on a GPU)."""
    rng = random.Random(seed)
    dtype = rng.choice(["float64", "float64", "float32"])
    b = _Builder(rng, dtype)
    rank = rng.randrange(1, 5)
    b.base = [f"d{i}" for i in range(rank)]
    b.new_input([("base", d) for d in b.base])
    for _ in range(rng.randrange(2, 8)):
        _step(b)
    float_values = [v for v in b.values if v[0].startswith("v")] or b.values[:1]
    outputs = [float_values[-1][0]] + [v[0] for v in rng.sample(float_values, min(len(float_values), rng.randrange(0, 3)))]
    outputs = list(dict.fromkeys(outputs))
    args = ", ".join(i.name for i in b.inputs)
    source = "\n".join([f"def graph({args}):", *b.lines, f"    return ({', '.join(outputs)},)", ""])
    mode = rng.choice(MODES)
    calls = 3 if mode != "static" else 2
    sizes = [_sizes(rng, b.base) for _ in range(calls)]
    marked = None
    if mode == "mark_dynamic":  # only the marked dim changes between calls
        marked = rng.choice(b.base[:rank])
        for s in sizes:
            s[marked] = max(s[marked], 2)  # Dynamo specializes sizes 0 and 1 whatever was marked
            for d in s:
                if d != marked:
                    s[d] = sizes[0][d]
    backward = rng.random() < 0.6 and not b.uses_int_cast
    share = handover if handover is not None else (0.1 if device != "cpu" else 0.05)  # the C++ compiler is slow
    handed = rng.random() < share
    return Case(seed, source, b.inputs, sizes, dtype, mode, marked, backward, handed, b.ops)


def _sizes(rng: random.Random, names: list[str]) -> dict:
    while True:
        sizes = {d: rng.choice(SIZES) for d in names}
        if math.prod(sizes.values()) <= MAX_NUMEL:
            return sizes


def make_inputs(case: Case, sizes: dict, device: str, call: int, requires_grad: bool = False):
    """The inputs of one call (the same values every time); float inputs with ``requires_grad``
    are views (transposed, strided) of leaf tensors that require grad."""
    import torch

    g = torch.Generator().manual_seed(case.seed * 1000 + call)
    dtype = getattr(torch, case.dtype)
    out = []
    for inp in case.inputs:
        shape = [dim_size(t, sizes) for t in inp.sig]
        if inp.index_of is not None:
            high = max(dim_size(inp.index_of, sizes), 1)
            out.append(torch.randint(0, high, shape, generator=g, dtype=torch.int64).to(device))
            continue
        stored = shape[::-1] if inp.layout == "transposed" else shape
        if inp.layout == "strided":
            stored = shape[:-1] + [2 * shape[-1]]
        t = torch.randn(stored, generator=g, dtype=torch.float64).to(dtype).to(device).requires_grad_(requires_grad)
        if inp.layout == "transposed":
            t = t.permute(*range(len(shape) - 1, -1, -1))
        elif inp.layout == "strided":
            t = t[..., ::2]
        out.append(t)
    return out


def _tolerance(case: Case) -> dict:
    if case.dtype == "float64":
        return {"rtol": 1e-7, "atol": 1e-7}
    return {"rtol": 2e-4, "atol": 2e-4}


@dataclass
class Result:
    seed: int
    ok: bool
    error: str = ""
    fallbacks: int = 0
    generated: int = 0
    graphs: int = 0
    seconds: float = 0.0
    inductor_agrees: int = 0  # outputs that differ from eager exactly as backend="inductor"'s do
    float64_agrees: int = 0  # calls whose elements off eager are on the float64 evaluation (float32 graphs)
    upstream: bool = False  # a call raised, and raises the same under backend="inductor" (not our codegen's)
    # what the graph was (from its Case, for the tables): shape mode, gradients too, every node handed over
    mode: str = ""
    backward: bool = False
    handover: bool = False
    dtype: str = ""
    reasons: list = field(default_factory=list)  # metrics.fallback_reasons, node names stripped


def _function(case: Case):
    import torch

    namespace = {"torch": torch}
    exec(compile(case.source, f"<fuzz seed {case.seed}>", "exec"), namespace)  # noqa: S102 - our own generated source
    return namespace["graph"]


def _forced_handover():
    """Every scheduler node goes to Inductor's own scheduling while this is active, except scans
    and sorts on the CPU: Inductor's C++ code has none (it lowers them to aten calls, and only
    our scan gate makes them Scan/Sort nodes there), so they stay ours.

    The graph cache is off meanwhile: its key knows our source and config, not this patch, so a
    handed-over graph would be served our own kernels from an earlier run (a test of nothing),
    and its kernels would be served to later runs of the same graph without the handover."""
    import contextlib

    from torch._inductor import ir

    from .. import config
    from ..codegen.common import Unsupported
    from ..scheduler.scheduling import TileScheduling

    def only_ours(nodes) -> bool:
        return any(isinstance(getattr(getattr(n, "node", None), "data", None), (ir.Scan, ir.Sort))
                   and n.get_device().type == "cpu" for n in nodes)

    @contextlib.contextmanager
    def patch():
        original, cache = TileScheduling._codegen_group, config.graph_cache

        def refuse(self, nodes):
            if only_ours(nodes):
                return original(self, nodes)
            raise Unsupported("fuzz: every node handed over")

        TileScheduling._codegen_group, config.graph_cache = refuse, False
        try:
            yield
        finally:
            TileScheduling._codegen_group, config.graph_cache = original, cache

    return patch()


def run_case(case: Case, device: str = "cpu") -> Result:
    import contextlib

    import torch
    from torch._dynamo.utils import counters

    from .. import metrics
    from ..backend import tile_backend

    start = time.perf_counter()
    torch._dynamo.reset()
    counters.clear()
    metrics.reset()
    fn = _function(case)
    kwargs = {"dynamic": True} if case.mode == "dynamic" else {}
    compiled = torch.compile(fn, backend=tile_backend, **kwargs)
    stage = "compile"
    inductor_agrees = float64_agrees = 0
    upstream = False
    try:
        with _forced_handover() if case.handover else contextlib.nullcontext():
            for call, sizes in enumerate(case.sizes):
                stage = f"call {call} sizes {sizes}: eager"
                try:
                    ref = _results(fn, case, sizes, device, call)
                except Exception:  # noqa: BLE001 - eager refuses these sizes (an empty reduction): not a test
                    continue
                stage = f"call {call} sizes {sizes}: compiled"
                try:
                    ours = _results(compiled, case, sizes, device, call, mark=True)
                except Exception as e:  # noqa: BLE001 - see _dynamo_refuses
                    if _dynamo_refuses(e, fn, lambda: _inputs(case, sizes, device, call, False, True)):
                        continue
                    if _inductor_fails_too(case, fn, device, call, e):
                        upstream = True
                        break  # Dynamo was reset for Inductor
                    raise
                try:
                    _compare_results(ours, ref, case)
                except AssertionError:
                    if _float64_agrees(case, sizes, device, call, ours, ref):
                        float64_agrees += 1
                        continue
                    if not _inductor_agrees(fn, case, sizes, device, call, ours, ref):
                        raise
                    inductor_agrees += 1
                    break  # Dynamo was reset for Inductor: later calls would compile anew
    except Exception as e:  # noqa: BLE001 - every failure is reported with its seed
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        return Result(case.seed, False, f"{stage}: {detail[-2000:]}", metrics.fallback_kernels,
                      metrics.generated_kernels, counters["stats"]["unique_graphs"], time.perf_counter() - start,
                      reasons=_reasons())
    return Result(case.seed, True, "", metrics.fallback_kernels, metrics.generated_kernels,
                  counters["stats"]["unique_graphs"], time.perf_counter() - start, inductor_agrees, float64_agrees,
                  upstream, reasons=_reasons())


def _reasons() -> list[str]:
    """This case's fallback reasons without the node names (``buf3: why`` -> ``why``), so that equal
    causes count together."""
    from .. import metrics

    return [re.sub(r"^[A-Za-z_]+\d+: ", "", r) for r in metrics.fallback_reasons]


def _inputs(case: Case, sizes, device: str, call: int, requires_grad: bool, mark: bool):
    """The call's inputs; ``mark``: with the dim of ``mark_dynamic`` cases marked dynamic."""
    import torch

    inputs = make_inputs(case, sizes, device, call, requires_grad)
    if mark and case.mode == "mark_dynamic":
        for t, inp in zip(inputs, case.inputs):
            for d, token in enumerate(inp.sig):
                if token == ("base", case.marked):
                    torch._dynamo.mark_dynamic(t, d)
    return inputs


def _results(fn, case: Case, sizes, device: str, call: int, mark: bool = False, upcast: bool = False):
    """(outputs, input gradients or None) of one call of `fn` on the call's inputs; gradients
    through ``sum(out * weight)`` with the call's seeded weights when the case has backward.
    ``mark``: the dim of ``mark_dynamic`` cases is marked on the inputs.  ``upcast``: the same
    input values and weights in float64 (for the float64 evaluation, ``_float64_agrees``)."""
    import torch

    inputs = _inputs(case, sizes, device, call, case.backward and not upcast, mark)
    if upcast:
        inputs = [t.to(torch.float64).requires_grad_(case.backward) if t.is_floating_point() else t for t in inputs]
    out = fn(*inputs)
    differentiable = [i for i, r in enumerate(out) if r.requires_grad]  # not a cast to bool, say
    if not (case.backward and differentiable):
        return out, None
    g = torch.Generator().manual_seed(case.seed + 7 * call)
    dtype = getattr(torch, case.dtype)
    weights = {i: torch.randn(out[i].shape, generator=g, dtype=torch.float64).to(dtype).to(out[i].dtype).to(device)
               for i in differentiable}
    loss = sum((out[i] * w).sum() for i, w in weights.items())
    leaves = [a for a in inputs if a.requires_grad]
    return out, torch.autograd.grad(loss, leaves, allow_unused=True)


def _compare_results(ours, ref, case: Case, against: str = "", ref64=None) -> None:
    """``ref64``: the float64 evaluation; an element close to it need not be close to ``ref``."""
    _compare(ours[0], ref[0], case, f"output{against}", ref64[0] if ref64 else None)
    if (ours[1] is None) != (ref[1] is None):
        raise AssertionError(f"gradients{against}: {'none' if ours[1] is None else 'some'} where the reference has "
                             f"{'none' if ref[1] is None else 'some'}")
    if ref[1] is not None:
        _compare(ours[1], ref[1], case, f"gradient{against}", ref64[1] if ref64 else None)


def _float64_agrees(case: Case, sizes, device: str, call: int, ours, ref) -> bool:
    """Whether each element of a float32 graph's results that is off eager's is on the float64
    evaluation of the graph (the same input values, weights and low-precision round trips).

    Eager float32 and our kernels are two float32 approximations of one function; where the
    function jumps (a cast to int or bool, a rounding to float16) a last-bit difference upstream
    moves the result across the jump.  Eager's float32 ``cos`` is not correctly rounded (seed
    40772: ``cos(2.67e-4)`` is 1.0, the nearest float32 is 1 - 2**-24; ours, and float64, cast
    ``8 * cos`` to 7, eager to 8).  An element that float64 computes as we do is no error of ours."""
    if case.dtype != "float32":
        return False
    import dataclasses

    case64 = dataclasses.replace(case, source=case.source.replace("torch.float32", "torch.float64"))
    ref64 = _results(_function(case64), case, sizes, device, call, upcast=True)
    try:
        _compare_results(ours, ref, case, ref64=ref64)
    except AssertionError:
        return False
    return True


def _dynamo_refuses(error: Exception, fn, make_marked_inputs) -> bool:
    """Whether torch refuses the call whatever the codegen: a dim marked dynamic that the graph
    (or Inductor's lowering, which ours shares) specializes (``x[::2]`` of a size-2 dim has
    size 1) raises ConstraintViolationError by design; the same call through
    ``backend="eager"`` or ``backend="inductor"`` must raise it too."""
    import torch
    from torch.fx.experimental.symbolic_shapes import ConstraintViolationError

    if not isinstance(error, ConstraintViolationError):
        return False
    for backend in ("eager", "inductor"):
        torch._dynamo.reset()
        try:
            torch.compile(fn, backend=backend)(*make_marked_inputs())
        except ConstraintViolationError:
            return True
        finally:
            torch._dynamo.reset()
    return False


def _inductor_fails_too(case: Case, fn, device: str, call: int, error: Exception) -> bool:
    """Whether the same calls through ``backend="inductor"`` raise the same error at the same call: a bug
    of the lowering ours shares (seed 301178: a strided slice's backward under dynamic shapes fails
    Inductor's stride assertion on torch 2.11 and 2.13; ``backend="aot_eager"`` runs it)."""
    import torch

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend="inductor", **({"dynamic": True} if case.mode == "dynamic" else {}))
    try:
        for c, sizes in enumerate(case.sizes[:call + 1]):
            try:
                _results(compiled, case, sizes, device, c, mark=True)
            except Exception as e:  # noqa: BLE001 - compared with ours below
                return c == call and type(e) is type(error) and str(e).split("\n")[0] == str(error).split("\n")[0]
        return False
    finally:
        torch._dynamo.reset()


def _inductor_agrees(fn, case: Case, sizes, device: str, call: int, ours, ref) -> bool:
    """Whether `backend="inductor"` computes what we computed where both differ from eager.

    Our backend runs Inductor's decompositions and lowering, so where Inductor itself departs
    from eager (torch 2.11 drops an fp16 round trip inside a float64 graph, for one) we
    inherit it: that is Inductor's behaviour, counted in `Result.inductor_agrees`, not our bug."""
    import torch

    torch._dynamo.reset()
    try:
        theirs = _results(torch.compile(fn, backend="inductor", **({"dynamic": True} if case.mode == "dynamic" else {})),
                          case, sizes, device, call, mark=True)
        try:
            _compare_results(theirs, ref, case)
        except AssertionError:
            _compare_results(ours, theirs, case, " vs inductor")
            return True
        return False
    except Exception:  # noqa: BLE001 - ours differs from Inductor's, or Inductor fails otherwise
        return False
    finally:
        torch._dynamo.reset()


def _compare(out, ref, case: Case, what: str, ref64=None) -> None:
    """``ref64``: the float64 evaluation; an element close to it need not be close to ``ref``."""
    import torch

    if len(out) != len(ref):
        raise AssertionError(f"{what}: {len(out)} results, eager has {len(ref)}")
    for i, (o, r) in enumerate(zip(out, ref)):
        if r is None or o is None:
            if (r is None) != (o is None) and not _is_zero(o if r is None else r):
                raise AssertionError(f"{what} {i}: None vs tensor")
            continue
        if o.shape != r.shape or o.dtype != r.dtype:
            raise AssertionError(f"{what} {i}: {tuple(o.shape)} {o.dtype}, eager {tuple(r.shape)} {r.dtype}")
        o, r = o.detach().cpu(), r.detach().cpu()
        r64 = ref64[i] if ref64 is not None and i < len(ref64) else None
        if r64 is not None:
            near = torch.isclose(o, r, equal_nan=True, **_tolerance(case))
            near |= torch.isclose(o.double(), r64.detach().cpu(), equal_nan=True, **_tolerance(case))
            if bool(near.all()):
                continue
        torch.testing.assert_close(o, r, equal_nan=True, msg=lambda m: f"{what} {i}: {m}", **_tolerance(case))


def _is_zero(t) -> bool:
    return t is not None and not bool(t.abs().max() > 0) if t.numel() else True


def fuzz(seeds, device: str = "cpu", time_budget: float | None = None, verbose: bool = False, out=sys.stdout,
         summary_every: int = 0, handover: float | None = None):
    """Run the seeds' graphs; print one line per failure (with its replay command), a summary line
    every `summary_every` graphs (0: none), and at the end a summary line and a table.  ``handover``:
    see ``generate``."""
    _check_device(device)
    results = []
    start = time.perf_counter()
    for seed in seeds:
        if time_budget is not None and time.perf_counter() - start > time_budget:
            break
        case = generate(seed, device, handover)
        result = run_case(case, device)
        result.mode, result.backward, result.handover = case.mode, case.backward, case.handover
        result.dtype = case.dtype
        results.append(result)
        if verbose or not result.ok:
            status = "ok" if result.ok else "FAILED"
            print(f"seed {seed}: {status} ({result.seconds:.1f} s, {result.generated} kernels, "
                  f"{result.fallbacks} fallbacks, {result.graphs} graphs) {' '.join(case.ops)}", file=out, flush=True)
        if verbose and result.reasons:
            for reason in dict.fromkeys(result.reasons):
                print(f"  fallback: {reason[:300]}", file=out, flush=True)
        if not result.ok:
            print(case.describe(), file=out)
            print(f"  {result.error}", file=out)
            print(f"  replay: python -m inductor_tile.tools.fuzz --seed {seed}"
                  f"{' --device ' + device if device != 'cpu' else ''}"
                  f"{f' --handover {handover}' if handover is not None else ''}", file=out, flush=True)
        if summary_every and len(results) % summary_every == 0:
            print(summary_line(results, device, time.perf_counter() - start), file=out, flush=True)
    if not (summary_every and results and len(results) % summary_every == 0):  # else just printed
        print(summary_line(results, device, time.perf_counter() - start), file=out, flush=True)
    if summary_every:
        print(table(results), file=out, flush=True)
        reasons = reason_table(results)
        if reasons:
            print(reasons, file=out, flush=True)
    return results


def _check_device(device: str) -> None:
    import torch

    if device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit(f"fuzz: --device {device}, but torch sees no CUDA device")


def summary_line(results: list[Result], device: str, seconds: float) -> str:
    failed = [r.seed for r in results if not r.ok]
    return (f"fuzz: {len(results)} graphs in {seconds:.0f} s on {device}, "
            f"{len(failed)} failed{' (seeds ' + ' '.join(map(str, failed)) + ')' if failed else ''}, "
            f"{sum(r.fallbacks > 0 and not r.handover for r in results)} with fallbacks, "
            f"{sum(r.handover for r in results)} handed over on purpose, "
            f"{sum(r.inductor_agrees > 0 for r in results)} differing from eager as Inductor does, "
            f"{sum(r.float64_agrees > 0 for r in results)} off eager where float64 agrees, "
            f"{sum(r.upstream for r in results)} failing under backend='inductor' too")


TABLE_COLUMNS = ("graphs", "failed", "fallbacks", "as Inductor", "float64", "Inductor too", "kernels", "seconds")


def table(results: list[Result]) -> str:
    """Counts per shape mode and direction, per graph dtype, for the handed-over graphs, and in all
    ("fallbacks": graphs with fallbacks of their own, the ones handed over on purpose left out)."""
    groups: dict[str, list[Result]] = {}
    for r in results:
        groups.setdefault(f"{r.mode} {'forward+backward' if r.backward else 'forward'}", []).append(r)
    rows = sorted(groups.items())
    for dtype in sorted({r.dtype for r in results}):
        rows.append((f"dtype {dtype}", [r for r in results if r.dtype == dtype]))
    rows.append(("every node handed over", [r for r in results if r.handover]))
    rows.append(("total", results))
    width = max([len(name) for name, _ in rows] + [5])
    lines = [f"{'':<{width}}  " + "  ".join(f"{c:>11}" for c in TABLE_COLUMNS)]
    for name, rs in rows:
        cells = (len(rs), sum(not r.ok for r in rs), sum(r.fallbacks > 0 and not r.handover for r in rs),
                 sum(r.inductor_agrees > 0 for r in rs), sum(r.float64_agrees > 0 for r in rs),
                 sum(r.upstream for r in rs), sum(r.generated for r in rs), f"{sum(r.seconds for r in rs):.0f}")
        lines.append(f"{name:<{width}}  " + "  ".join(f"{c:>11}" for c in cells))
    return "\n".join(lines)


def reason_table(results: list[Result]) -> str:
    """Each fallback reason (graphs with every node handed over left out: theirs are forced), with
    the number of fallbacks it caused and the seeds of up to three graphs that show it."""
    counts: dict[str, list] = {}
    for r in results:
        if r.handover:
            continue
        for reason in r.reasons:
            entry = counts.setdefault(reason[:200], [0, []])
            entry[0] += 1
            if r.seed not in entry[1]:
                entry[1].append(r.seed)
    if not counts:
        return ""
    lines = ["fallback reasons (fallbacks, seeds):"]
    for reason, (n, seeds) in sorted(counts.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"  {n:4d}  {reason}  [seeds {' '.join(map(str, seeds[:3]))}{' ...' if len(seeds) > 3 else ''}]")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, help="replay one seed (prints its graph)")
    parser.add_argument("--count", type=int, default=100, help="number of seeds to run (default 100)")
    parser.add_argument("--start", type=int, default=0, help="first seed (default 0)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--time-budget", type=float, help="stop starting new graphs after this many seconds")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per graph")
    parser.add_argument("--summary-every", type=int, default=50, metavar="N",
                        help="a summary line every N graphs (default 50; 0: none), and a table at the end")
    parser.add_argument("--handover", type=float, default=None, metavar="P",
                        help="share of graphs whose every node goes to Inductor's scheduling "
                             "(default 0.05 on the CPU, 0.1 on a GPU; give it to --seed too to replay)")
    args = parser.parse_args(argv)
    if args.seed is not None:
        case = generate(args.seed, args.device, args.handover)
        print(case.describe())
        results = fuzz([args.seed], args.device, verbose=True, handover=args.handover)
    else:
        results = fuzz(range(args.start, args.start + args.count), args.device, args.time_budget, args.verbose,
                       summary_every=args.summary_every, handover=args.handover)
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
