"""The backends compared: eager, Inductor, tile, and tile's fusion/inlining ablations."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import re
from typing import Any

import torch


@dataclasses.dataclass(frozen=True)
class Backend:
    name: str
    compiler: Any  # torch.compile backend (a name or a callable); None = eager
    tile_config: tuple[tuple[str, Any], ...] = ()  # inductor_tile.config settings while compiling
    label: str = ""  # for tables and plots
    max_autotune: bool = False  # compiled with mode="max-autotune" (matmul templates timed against aten)


BACKENDS: dict[str, Backend] = {b.name: b for b in [
    Backend("eager", None, label="eager"),
    Backend("inductor", "inductor", label="inductor"),
    Backend("tile", "tile", (("fusion", True), ("inlining", True)), label="tile"),
    Backend("tile-no-fusion", "tile", (("fusion", False), ("inlining", True)), label="tile, no fusion"),
    Backend("tile-no-inlining", "tile", (("fusion", True), ("inlining", False)), label="tile, no inlining"),
    Backend("tile-neither", "tile", (("fusion", False), ("inlining", False)), label="tile, neither"),
    Backend("inductor-max-autotune", "inductor", label="inductor max-autotune", max_autotune=True),
    Backend("tile-max-autotune", "tile", (("matmul_templates", "auto"),), label="tile max-autotune", max_autotune=True),
]}
#: what `--backends` runs by default (max-autotune compiles take minutes per model: asked for by name)
DEFAULT = [name for name, b in BACKENDS.items() if not b.max_autotune]

#: the tile ablation: backend name for each column of the published ablation
ABLATION = {"all": "tile", "no fusion": "tile-no-fusion", "no inlining": "tile-no-inlining",
            "neither": "tile-neither"}


def resolve(names: list[str] | None) -> list[Backend]:
    """Backends by name (None: ``DEFAULT``); eager is always first, as the reference."""
    names = list(DEFAULT) if not names else names
    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        raise SystemExit(f"unknown backend(s) {', '.join(unknown)}; known: {', '.join(BACKENDS)}")
    return [BACKENDS["eager"]] + [BACKENDS[n] for n in names if n != "eager"]


@contextlib.contextmanager
def session(backend: Backend, keep_compiled: bool = False):
    """Everything a backend's compile and runs need: its tile settings, fresh counters.

    The settings stay on for the whole session, because the backward graph is compiled
    lazily, at the first backward call, and reads them then.  `keep_compiled`: Dynamo's
    compiled code is not dropped at either end, so several backends' compiled models of one
    module live side by side (Dynamo picks each call's entry by its backend) and can be timed
    taking turns; the caller resets Dynamo when done.
    """
    import torch._dynamo.utils
    import torch._inductor.metrics as inductor_metrics

    from inductor_tile import config, metrics

    if not keep_compiled:
        torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    inductor_metrics.reset()
    metrics.reset()
    with config.patch(**dict(backend.tile_config)):
        yield
    if not keep_compiled:
        torch._dynamo.reset()


def compile_model(backend: Backend, model: torch.nn.Module, cudagraphs: bool):
    """`model` compiled by `backend` (`cudagraphs`: mode="reduce-overhead", the same for each; a
    max-autotune backend: "max-autotune", or "max-autotune-no-cudagraphs" without `cudagraphs`)."""
    if backend.compiler is None:
        return model
    mode = "reduce-overhead" if cudagraphs else None
    if backend.max_autotune:
        mode = "max-autotune" if cudagraphs else "max-autotune-no-cudagraphs"
    compiler = resolve_compiler(backend.compiler)
    if callable(compiler):  # one object per backend: Dynamo tells compiled entries apart by the backend's identity
        compiler = functools.partial(compiler)
    return torch.compile(model, backend=compiler, mode=mode)


def resolve_compiler(compiler: Any) -> Any:
    """"tile" as the function itself: the name is registered through the package's entry point,
    which a source checkout that is not pip-installed (PYTHONPATH only) does not have."""
    if compiler == "tile":
        from inductor_tile.backend import tile_backend

        return tile_backend
    return compiler


def counts(backend: Backend) -> dict[str, Any]:
    """What the compile produced, read after the first (compiling) call of a session."""
    import torch._dynamo.utils
    import torch._inductor.metrics as inductor_metrics

    from inductor_tile import metrics

    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    inductor_kernels = inductor_metrics.generated_kernel_count
    if backend.compiler == "tile":
        reasons = collections.Counter(re.sub(r"^op\d+: ", "", r) for r in metrics.fallback_reasons)
        # a graph that ran eagerly passes the accuracy check without a kernel of ours: always named, first
        eager = collections.Counter(f"graph ran eagerly: {r}" for r in metrics.eager_graphs)
        return dict(graphs=graphs, kernels=metrics.generated_kernels + inductor_kernels,
                    tile_kernels=metrics.generated_kernels, inductor_kernels=inductor_kernels,
                    fallback_nodes=metrics.fallback_kernels,
                    fallbacks="; ".join(f"{r} x{n}" for r, n in [*eager.items(), *reasons.most_common(5)]))
    return dict(graphs=graphs, kernels=inductor_kernels, inductor_kernels=inductor_kernels)
