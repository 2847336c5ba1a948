"""A model of the suite, compiled with backend="tile" and run, for ``python -m inductor_tile.profile``:

    python -m inductor_tile.profile --out docs/profile_example model_benchmarks/profile_model.py \\
        DistillGPT2 --precision fp16

Builds the model with random weights (nothing is downloaded), compiles it and runs ``--warmup``
forward passes (the first compiles) and ``--steps`` more under ``torch.no_grad``; the profiler
around it sees every kernel those passes launch, by the model's source lines.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the repository root

from model_benchmarks import models  # noqa: E402
from model_benchmarks.backends import resolve_compiler  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="model_benchmarks/profile_model.py", description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a model of the suite (python -m model_benchmarks --list)")
    parser.add_argument("--precision", default="fp16", choices=("fp16", "bf16", "fp32"))
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda if available)")
    parser.add_argument("--small", action="store_true", help="the suite's small configs and shapes")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args(argv)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[args.precision]
    spec = models.resolve([args.model], args.small)[0]
    model = models.build_model(spec, args.small, device=device, dtype=dtype).eval()
    inputs = models.model_inputs(spec, model, args.small, device=device)
    compiled = torch.compile(model, backend=resolve_compiler("tile"))  # a checkout without the entry point too
    with torch.no_grad():
        for _ in range(args.warmup + args.steps):
            compiled(**inputs)
    if device == "cuda":
        torch.cuda.synchronize()
    print(f"{args.model} ({args.precision}, {device}): {args.warmup + args.steps} forward passes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
