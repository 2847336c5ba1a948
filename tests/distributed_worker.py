"""The per-rank body of tests/test_distributed.py: two gloo processes on the CPU run every
scenario once (one process start and one torch import per rank keep CI time down) and write
what they saw to ``<out_dir>/rank<R>.json``; the tests assert on those files.

Each scenario compares ``backend="tile"`` (float32) with eager on the same model in float64
(same seeds, same random inputs) after three optimizer steps, and records the tile kernels the
rank generated (``inductor_tile.metrics``)."""

from __future__ import annotations

import copy
import datetime
import json
import os
import re
import time
import traceback

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

STEPS = 3
COLLECTIVE_TIMEOUT_S = 120
WIDTH = 16


class Block(nn.Module):
    """Linear + LayerNorm + GELU + residual."""

    def __init__(self, width=WIDTH):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return x + F.gelu(self.norm(self.linear(x)))


class Model(nn.Module):
    def __init__(self, width=WIDTH, graph_break=False):
        super().__init__()
        self.first = Block(width)
        self.second = Block(width)
        self.head = nn.Linear(width, 4)
        self.graph_break = graph_break

    def forward(self, x):
        x = self.first(x)
        if self.graph_break:
            torch._dynamo.graph_break()
        return self.head(self.second(x))


def _inputs(rank, step):
    g = torch.Generator().manual_seed(1000 * step + rank)  # each rank its own batch: gradients differ before the all-reduce
    return torch.randn(8, WIDTH, generator=g, dtype=torch.float64), torch.randn(8, 4, generator=g, dtype=torch.float64)


def _train(model, optimizer, rank, dtype, compiled_step=None):
    step = compiled_step or (lambda x, y: F.mse_loss(model(x), y))
    losses = []
    for i in range(STEPS):
        x, y = _inputs(rank, i)
        optimizer.zero_grad()
        loss = step(x.to(dtype), y.to(dtype))
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses


def _params(model):
    from torch.distributed.tensor import DTensor

    out = {}
    for name, p in model.named_parameters():
        p = p.detach()
        if isinstance(p, DTensor):
            p = p.full_tensor()
        out[name.replace("module.", "").replace("_orig_mod.", "")] = p.double()
    return out


def _max_error(tile, ref):
    """max |tile - ref| / (atol + rtol |ref|) over all parameters: <= 1 passes."""
    rtol, atol = 2e-5, 2e-5
    worst = 0.0
    for name, r in ref.items():
        t = tile[name]
        worst = max(worst, float(((t - r).abs() / (atol + rtol * r.abs())).max()))
    return worst


def _wrap(kind, model):
    if kind == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model)
    from torch.distributed.fsdp import fully_shard

    for block in (model.first, model.second):
        fully_shard(block)
    return fully_shard(model)


def _optimizer(name, model):
    if name == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return torch.optim.Adam(model.parameters(), lr=1e-2)


def training(kind, optimizer_name, graph_break=False):
    from inductor_tile import metrics
    from inductor_tile.backend import tile_backend

    torch.manual_seed(0)
    base = Model(graph_break=graph_break)
    ref_model = _wrap(kind, copy.deepcopy(base).double())
    ref_losses = _train(ref_model, _optimizer(optimizer_name, ref_model), dist.get_rank(), torch.float64)

    torch._dynamo.reset()
    metrics.reset()
    tile_model = _wrap(kind, copy.deepcopy(base))
    compiled = torch.compile(tile_model, backend=tile_backend)
    tile_losses = _train(compiled, _optimizer(optimizer_name, tile_model), dist.get_rank(), torch.float32)
    return {
        "max_error": _max_error(_params(tile_model), _params(ref_model)),
        "loss_error": max(abs(a - b) for a, b in zip(tile_losses, ref_losses)),
        "generated_kernels": metrics.generated_kernels,
        "fallback_kernels": metrics.fallback_kernels,
        "fallback_reasons": list(metrics.fallback_reasons),
        "compiled_graphs": metrics.compiled_graphs,
    }


def functional_collectives():
    """all_reduce and all_gather_tensor inside one compiled graph, pointwise ops around them."""
    import torch.distributed._functional_collectives as fc

    from torch._inductor.utils import run_and_get_code

    from inductor_tile import metrics
    from inductor_tile.backend import tile_backend

    group = dist.group.WORLD

    def fn(x, w):
        y = torch.sin(x) * w + 1.0
        reduced = fc.all_reduce(y, "sum", group)
        gathered = fc.all_gather_tensor(torch.relu(reduced) * 2.0, 0, group)
        return gathered.tanh() + 3.0

    rank = dist.get_rank()
    g = torch.Generator().manual_seed(7 + rank)
    x, w = torch.randn(6, 5, generator=g), torch.randn(5, generator=g)
    expected = fn(x.double(), w.double())
    torch._dynamo.reset()
    metrics.reset()
    out, wrappers = run_and_get_code(torch.compile(fn, backend=tile_backend, fullgraph=True), x, w)
    wrapper = "\n".join(wrappers)
    kernel_lines = [line for source in metrics.kernel_sources.values() for line in _code_lines(source)]
    return {
        "max_error": float(((out.double() - expected).abs() / (1e-5 + 1e-5 * expected.abs())).max()),
        "shape": list(out.shape),
        "generated_kernels": metrics.generated_kernels,
        "fallback_kernels": metrics.fallback_kernels,
        "fallback_reasons": list(metrics.fallback_reasons),
        "collective_in_kernel": [line for line in kernel_lines if any(word in line for word in COLLECTIVE_WORDS)],
        "collectives_in_wrapper": sorted({word for word in COLLECTIVE_WORDS if word in wrapper}),
        "tile_launches_in_wrapper": wrapper.count("tile_poi_"),
        "wrapper_order": _wrapper_order(wrapper),
        "kernel_ops": sorted({op for op in ("sin", "tanh", "where") if any(f"tl.{op}(" in l or f".{op}(" in l for l in kernel_lines)}),
    }


COLLECTIVE_WORDS = ("all_reduce", "all_gather", "c10d", "wait_tensor")


def _wrapper_order(wrapper):
    """What the wrapper's ``call`` does, in order: our kernel launches and Inductor's collective calls."""
    events = []
    for line in wrapper[wrapper.index("def call("):].splitlines():
        line = line.strip()
        if line.startswith("#"):
            continue
        if "_launch0.run(" in line and line.startswith("tile_"):
            events.append("tile_kernel")
        call = re.match(r"(\w+ = )?torch\.ops\._c10d_functional\.(\w+)\.", line)
        if call:
            events.append(call.group(2))
    return events


def _code_lines(source):
    """A kernel's statements: no comments (Inductor names ops of a node's origins there) and no def line
    (the kernel's name lists the same origins, as Inductor's triton_poi_fused_* names do)."""
    lines = [line.strip() for line in source.splitlines()]
    return [line for line in lines if line and not line.startswith(("#", "def ", "@", "import "))]


def whole_step():
    """forward, backward and the optimizer step in one torch.compile (compiled autograd, DDP's
    python reducer) against eager float64."""
    from torch._dynamo.utils import counters
    from torch._inductor.utils import run_and_get_code
    from torch.nn.parallel import DistributedDataParallel

    from inductor_tile import metrics
    from inductor_tile.backend import tile_backend

    torch.manual_seed(0)
    base = nn.Sequential(Block(), nn.Linear(WIDTH, 4))  # one block: every optimizer update is a kernel to compile
    ref_model = DistributedDataParallel(copy.deepcopy(base).double())
    ref_losses = _train(ref_model, torch.optim.SGD(ref_model.parameters(), lr=0.1), dist.get_rank(), torch.float64)

    torch._dynamo.reset()
    metrics.reset()
    counters.clear()
    tile_losses = []
    # DDP reads optimize_ddp when it is built, torch.compile reads compiled_autograd when it is called
    with torch._dynamo.config.patch(compiled_autograd=True, optimize_ddp="python_reducer"):
        tile_model = DistributedDataParallel(copy.deepcopy(base))
        optimizer = torch.optim.SGD(tile_model.parameters(), lr=0.1)

        def step(x, y):
            optimizer.zero_grad()
            loss = F.mse_loss(tile_model(x), y)
            loss.backward()
            optimizer.step()
            return loss

        compiled = torch.compile(step, backend=tile_backend)
        for i in range(STEPS):
            x, y = _inputs(dist.get_rank(), i)
            if i == 0:  # run_and_get_code resets Dynamo: the first step only, which compiles every graph
                loss, wrappers = run_and_get_code(compiled, x.float(), y.float())
            else:
                loss = compiled(x.float(), y.float())
            tile_losses.append(float(loss.detach()))
    kernel_lines = [line for source in metrics.kernel_sources.values() for line in _code_lines(source)]
    return {
        "max_error": _max_error(_params(tile_model), _params(ref_model)),
        "loss_error": max(abs(a - b) for a, b in zip(tile_losses, ref_losses)),
        "generated_kernels": metrics.generated_kernels,
        "fallback_kernels": metrics.fallback_kernels,
        "fallback_reasons": list(metrics.fallback_reasons),
        "compiled_graphs": metrics.compiled_graphs,
        "compiled_autograd_captures": counters["compiled_autograd"]["captures"],
        "collective_in_kernel": [line for line in kernel_lines if any(word in line for word in COLLECTIVE_WORDS)],
        # DDP's python reducer puts its gradient all-reduces into the compiled backward graph
        "collectives_in_wrappers": sorted({e for w in wrappers if "def call(" in w for e in _wrapper_order(w)} - {"tile_kernel"}),
    }


SCENARIOS = {
    "ddp_sgd": lambda: training("ddp", "sgd"),
    "fsdp2_adam": lambda: training("fsdp2", "adam"),
    "ddp_graph_break": lambda: training("ddp", "sgd", graph_break=True),
    "functional_collectives": functional_collectives,
    "ddp_whole_step": whole_step,
}


def run(rank, world_size, port, out_dir, names):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    from torch._inductor import config as inductor_config

    inductor_config.compile_threads = 1  # two ranks on a small CI machine: no compile worker pools
    # a rank whose peer died fails its collectives after this long instead of gloo's 30 minutes
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=COLLECTIVE_TIMEOUT_S))
    results = {}
    try:
        for name in names:
            start = time.perf_counter()
            try:
                results[name] = SCENARIOS[name]()
            except Exception:
                results[name] = {"error": traceback.format_exc()}
            results[name]["seconds"] = round(time.perf_counter() - start, 1)
            with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
                json.dump(results, f, indent=1)
    finally:
        dist.destroy_process_group()
