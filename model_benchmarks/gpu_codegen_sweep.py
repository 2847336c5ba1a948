"""`python -m model_benchmarks.gpu_codegen_sweep`: does every suite model stay in our kernels on a GPU?
Checked on a machine without one.

    python -m model_benchmarks.gpu_codegen_sweep [--models BertForMaskedLM,T5Small] [--modes inference,training]

Each model (the ``--small`` configs) is compiled with ``backend="tile"`` the way the GPU suite runs it (fp16
inference with a cast model, fp16-AMP training: forward and backward), with everything that shapes a kernel
set as on an H200 (``kernel_limits.cuda_shapes``).  Launches are recorded, not run (CPU compiles of GPU-wide
tiles take minutes a model), so values are garbage and a model whose control flow reads them (Longformer's
data-dependent shapes) may fail after its first graphs: such a row says so and is not a finding.
Printed per model and mode: the launches recorded, the nodes handed to Inductor's codegen (Triton's kernels
on a GPU) with their reasons, and the graphs that ran eagerly.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys


def sweep_one(name: str, mode: str) -> dict:
    """Compile and call one model in `mode` under GPU kernel shapes; what left our kernels."""
    import torch

    from inductor_tile import metrics

    from . import models
    from .backends import resolve_compiler
    from .kernel_limits import _FallbackNotes, _recording, cuda_shapes

    spec = models.find(name)
    torch._dynamo.reset()
    metrics.reset()
    notes = _FallbackNotes()
    logger = logging.getLogger("inductor_tile")
    logger.addHandler(notes)
    launches: list = []
    error = ""
    try:
        training = mode == "training"
        model = models.build_model(spec, True, "cpu", torch.float32 if training else torch.float16, seed=0)
        model.train(training)
        inputs = models.model_inputs(spec, model, True, "cpu", seed=1)
        compiled = torch.compile(model, backend=resolve_compiler("tile"))
        with cuda_shapes(), _recording(launches, name, mode):
            if training:
                with torch.autocast("cpu", dtype=torch.float16):
                    loss = compiled(**inputs).loss
                loss.backward()
            else:
                with torch.no_grad():
                    compiled(**inputs)
    except Exception as exc:  # noqa: BLE001  (a row, not a stop: the next model still runs)
        error = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:200]}"
    finally:
        logger.removeHandler(notes)
        gc.collect()
    return dict(model=name, mode=mode, launches=len(launches), fallback_nodes=metrics.fallback_kernels,
                fallbacks=sorted(set(metrics.fallback_reasons)), eager_graphs=list(metrics.eager_graphs),
                notes=notes.notes, error=error)


def main(argv: list[str] | None = None) -> int:
    from . import models

    parser = argparse.ArgumentParser(prog="python -m model_benchmarks.gpu_codegen_sweep",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="all", help="comma-separated names or selectors, as the runner's "
                        "--models ('all': every HF model)")
    parser.add_argument("--modes", default="inference,training")
    args = parser.parse_args(argv)
    names = [spec.name for spec in models.resolve(args.models.split(","), small=True)]
    found = 0
    for name in names:
        for mode in args.modes.split(","):
            row = sweep_one(name, mode)
            left = row["fallback_nodes"] + len(row["eager_graphs"])
            found += bool(left)
            print(f"{name:40s} {mode:9s} launches {row['launches']:4d}  fallback nodes {row['fallback_nodes']}  "
                  f"eager graphs {len(row['eager_graphs'])}{'  ERROR ' + row['error'] if row['error'] else ''}",
                  flush=True)
            for line in [*row["fallbacks"], *row["eager_graphs"]][:5]:
                print(f"    {line[:200]}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
