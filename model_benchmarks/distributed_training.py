"""Distributed training of suite models under DDP and FSDP2 (issue 24, item 3): eager, Inductor and tile.

    python -m model_benchmarks.distributed_training --gpus 2 [--models BertForMaskedLM,Llama-3.2-1B]
        [--wraps ddp,fsdp2] [--steps 20] [--amp bf16]
    python -m model_benchmarks.distributed_training --device cpu --small --gpus 2   # a dry run with gloo

One process per rank (NCCL on GPUs, gloo on the CPU). For every model and wrapper, each backend trains
the same model from the same weights for `--steps` Adam steps under autocast, each rank on its own batch;
rank 0 prints a line per (model, wrapper, backend): the loss curve's largest relative difference from
eager's, the median step time of the second half of the steps, and that time against Inductor's. The
ranks are one host's GPUs; NVLink multicast stays off (NCCL_NVLS_ENABLE=0, as the device machines ask).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist

BACKENDS = ("eager", "inductor", "tile")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wrap(model: torch.nn.Module, wrap: str, device: torch.device) -> torch.nn.Module:
    if wrap == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    from torch.distributed.fsdp import fully_shard

    for module in model.modules():  # each transformer layer its own unit, then the root
        if type(module).__name__.endswith("Layer") or type(module).__name__.endswith("Block"):
            fully_shard(module)
    fully_shard(model)
    return model


def _train(spec, wrap: str, backend: str, args, device: torch.device, rank: int) -> dict:
    from . import models
    from .backends import resolve_compiler

    model = models.build_model(spec, args.small, device, torch.float32, seed=0).train()
    inputs = models.model_inputs(spec, model, args.small, device, seed=1 + rank)  # each rank its own batch
    model = _wrap(model, wrap, device)
    fn = model if backend == "eager" else torch.compile(model, backend=resolve_compiler(backend))
    opt = torch.optim.Adam(model.parameters(), lr=1e-5)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[args.amp]
    scaler = torch.amp.GradScaler(device.type, enabled=args.amp == "fp16")
    losses, times = [], []
    for _ in range(args.steps):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=dtype):
            loss = fn(**inputs).loss
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        times.append(time.perf_counter() - start)
        losses.append(loss.item())
    torch._dynamo.reset()
    return {"losses": losses, "step_ms": 1000 * statistics.median(times[len(times) // 2:])}


def _rank_main(rank: int, world: int, port: int, args, out: str) -> None:
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    os.environ.setdefault("TILE_GRAPH_CACHE", "0")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from model_benchmarks import models

    cuda = args.device == "cuda"
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if cuda else "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=600))
    results = []
    try:
        for name in args.models.split(","):
            spec = models.find(name)
            for wrap in args.wraps.split(","):
                for backend in BACKENDS:
                    row = {"model": name, "wrap": wrap, "backend": backend}
                    try:
                        row.update(_train(spec, wrap, backend, args, device, rank))
                    except Exception as exc:  # noqa: BLE001 - a row with the reason, the next run goes on
                        row["error"] = f"{type(exc).__name__}: {exc}"[:300]
                        torch._dynamo.reset()
                    results.append(row)
                    dist.barrier()
    finally:
        with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
            json.dump(results, f)
        dist.destroy_process_group()


def report(rows: list[dict]) -> list[str]:
    """One line per (model, wrapper, backend): loss difference from eager, step time, time vs Inductor."""
    by = {(r["model"], r["wrap"], r["backend"]): r for r in rows}
    lines = [f"{'model':24s} {'wrap':5s} {'backend':8s} {'max rel loss diff':>17s} {'step ms':>8s} "
             f"{'Inductor/this':>13s}"]
    for (model, wrap, backend), r in by.items():
        if "error" in r:
            lines.append(f"{model[:24]:24s} {wrap:5s} {backend:8s} error: {r['error'][:90]}")
            continue
        eager = by.get((model, wrap, "eager"), {}).get("losses")
        diff = max((abs(a - b) / max(abs(b), 1e-6) for a, b in zip(r["losses"], eager)), default=float("nan")) \
            if eager else float("nan")
        ind = by.get((model, wrap, "inductor"), {}).get("step_ms")
        ratio = ind / r["step_ms"] if ind else float("nan")
        lines.append(f"{model[:24]:24s} {wrap:5s} {backend:8s} {diff:17.2e} {r['step_ms']:8.1f} {ratio:13.2f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m model_benchmarks.distributed_training",
                                description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, default=2, help="ranks (one GPU each on cuda)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--models", default="BertForMaskedLM,Llama-3.2-1B")
    p.add_argument("--wraps", default="ddp,fsdp2")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--amp", default="bf16", choices=("bf16", "fp16"))
    p.add_argument("--small", action="store_true", help="the suite's tiny configs (a CPU dry run)")
    p.add_argument("--out", default=None, help="directory for each rank's json (default: a temporary one)")
    args = p.parse_args(argv)
    import tempfile

    import torch.multiprocessing as mp

    out = args.out or tempfile.mkdtemp(prefix="distributed_training_")
    os.makedirs(out, exist_ok=True)
    mp.start_processes(_rank_main, args=(args.gpus, _free_port(), args, out), nprocs=args.gpus, start_method="spawn")
    with open(os.path.join(out, "rank0.json")) as f:
        rows = json.load(f)
    env = f"{torch.cuda.get_device_name() if args.device == 'cuda' else 'cpu'} x{args.gpus}, torch {torch.__version__}"
    print(f"{env}, {args.amp} autocast, {args.steps} Adam steps, each rank its own batch")
    print("\n".join(report(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
