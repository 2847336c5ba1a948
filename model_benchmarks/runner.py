"""One model under every backend: build, eager reference, compile, accuracy, interleaved timing.

Every (model, backend) gives one row; a failure gives a row with status "error" or
"mismatch" and the reason, never nothing.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import gc
import time
from typing import Any, Callable

import torch

from . import accuracy, backends, models, timing

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


@dataclasses.dataclass
class RunSettings:
    mode: str  # "inference" | "training"
    precision: str  # "fp32" | "fp16" | "bf16"
    amp: bool  # fp16/bf16 through autocast (weights stay fp32) instead of casting the model
    device: torch.device
    small: bool
    repeats: int
    warmup: int
    cudagraphs: bool
    accuracy: str  # "fp64" | "cosine"
    seed: int = 0

    @property
    def half(self) -> bool:
        return self.precision != "fp32"

    @property
    def precision_label(self) -> str:
        return f"amp-{self.precision}" if self.amp and self.half else self.precision


def _reason(stage: str, exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip().replace("\n", " ")
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{stage}: {text}"


class ModelRun:
    """The state of one model for one (mode, precision): the module, inputs, eager results."""

    def __init__(self, spec: models.ModelSpec, settings: RunSettings):
        self.spec, self.s = spec, settings
        self.amp = settings.half and (settings.amp or getattr(spec, "half_autocast", False))
        dtype = torch.float32 if self.amp else DTYPES[settings.precision]
        self.model = models.build_model(spec, settings.small, settings.device, dtype, seed=settings.seed)
        self.model.train(settings.mode == "training")
        self.inputs = models.model_inputs(spec, self.model, settings.small, settings.device,
                                          seed=settings.seed + 1)
        self.training = settings.mode == "training"
        self.initial = None
        if self.training:  # the optimizer changes the weights; every backend starts from these
            self.initial = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        self._ref64 = None
        self.ref = self.outputs(self.model)

    def autocast(self):
        if self.amp:
            return torch.autocast(self.s.device.type, dtype=DTYPES[self.s.precision])
        return contextlib.nullcontext()

    def outputs(self, fn: Callable, module: torch.nn.Module | None = None,
                inputs: dict[str, torch.Tensor] | None = None) -> dict[str, torch.Tensor]:
        """Inference: every output tensor; training: the loss and every gradient, after one step."""
        module = self.model if module is None else module
        inputs = self.inputs if inputs is None else inputs
        if not self.training:
            with torch.no_grad(), self.autocast():
                out = fn(**inputs)
            return {name: t.detach().clone() for name, t in accuracy.flatten(out)}
        module.zero_grad(set_to_none=True)
        with self.autocast():
            out = fn(**inputs)
        out.loss.backward()
        result = {"loss": out.loss.detach().clone()}
        for name, p in module.named_parameters():
            if p.grad is not None:
                result[f"grad {name}"] = p.grad.detach().clone()
        module.zero_grad(set_to_none=True)
        return result

    def ref64(self) -> dict[str, torch.Tensor]:
        """The same model and inputs in float64, without autocast (computed once, on demand)."""
        if self._ref64 is None:
            model64 = copy.deepcopy(self.model).double()
            if self.initial is not None:
                model64.load_state_dict(self.initial)
            saved, self.s = self.s, dataclasses.replace(self.s, amp=False)
            try:
                inputs64 = {k: v.double() if v.is_floating_point() else v for k, v in self.inputs.items()}
                self._ref64 = self.outputs(model64, model64, inputs64)
            finally:
                self.s = saved
                del model64
                gc.collect()
        return self._ref64

    def reset_weights(self) -> None:
        if self.initial is not None:
            with torch.no_grad():
                self.model.load_state_dict(self.initial)

    def step_fn(self, fn: Callable) -> Callable[[], Any]:
        """One timed iteration: a forward (inference) or forward, backward and Adam step."""
        if not self.training:
            def infer():
                with torch.no_grad(), self.autocast():
                    return fn(**self.inputs)
            return infer
        opt = torch.optim.Adam(self.model.parameters(), lr=1e-6)

        def train():
            opt.zero_grad(set_to_none=True)
            with self.autocast():
                loss = fn(**self.inputs).loss
            loss.backward()
            opt.step()
        return train


def _base_row(spec: models.ModelSpec, s: RunSettings, backend: backends.Backend) -> dict[str, Any]:
    batch, seq = models.shape(spec, s.small)
    return dict(model=spec.name, mode=s.mode, precision=s.precision_label, backend=backend.name,
                status="", batch_size=batch, seq_len=seq, median_ms=None, eager_ms=None, speedup=None,
                compile_s=None, graphs=None, kernels=None, tile_kernels=None, inductor_kernels=None,
                fallback_nodes=None, fallbacks="", accuracy="", reason="")


def run_model(spec: models.ModelSpec, s: RunSettings, backend_list: list[backends.Backend],
              on_step: Callable[[str], None] = lambda _: None,
              on_done: Callable[[], None] = lambda: None) -> list[dict[str, Any]]:
    """Rows for `spec` under each backend in `backend_list` (eager first).

    `on_step(text)` is called when a phase starts, `on_done()` when a backend's row is complete
    (eager's first: its reference run).
    """
    rows = {b.name: _base_row(spec, s, b) for b in backend_list}
    eager_samples: list[float] = []
    try:
        on_step(f"{spec.name}: build + eager")
        run = ModelRun(spec, s)
    except Exception as exc:  # the model itself does not build or run eagerly: every row says so
        for row in rows.values():
            row.update(status="error", reason=_reason("eager", exc))
        return list(rows.values())
    on_done()

    steps: dict[str, Callable[[], Any]] = {}  # each backend's compiled step, timed together below
    for backend in backend_list[1:]:
        on_step(f"{spec.name}: {backend.name}")
        row = rows[backend.name]
        stage = "compile"
        try:
            with backends.session(backend, keep_compiled=True):
                run.reset_weights()
                compiled = backends.compile_model(backend, run.model, s.cudagraphs)
                timing.synchronize(s.device)
                t0 = time.perf_counter()
                res = run.outputs(compiled)  # the first call compiles (training: the backward too)
                timing.synchronize(s.device)
                row["compile_s"] = time.perf_counter() - t0
                row.update(backends.counts(backend))
                stage = "accuracy"
                verdict = accuracy.compare(run.ref, res, accuracy.tolerance(s.mode, s.device), s.accuracy,
                                           s.half, run.ref64)
                row["status"] = "ok" if verdict.ok else "mismatch"
                row["accuracy"] = "pass" if verdict.ok else "fail"
                row["reason"] = verdict.detail
                del res
                steps[backend.name] = run.step_fn(compiled)
        except Exception as exc:
            row["status"] = "error"
            row["reason"] = _reason(stage, exc)
        finally:
            compiled = None
            on_done()
    on_step(f"{spec.name}: timing")
    eager_samples = _time_together(run, steps, rows, s)
    torch._dynamo.reset()
    gc.collect()

    eager = rows["eager"]
    if not eager_samples:
        eager.update(status="error", reason=eager.get("reason") or "timing: eager failed")
    if eager_samples:
        eager.update(status="ok", accuracy="reference", median_ms=timing.median(eager_samples),
                     eager_ms=timing.median(eager_samples), speedup=1.0)
    del run
    gc.collect()
    if s.device.type == "cuda":
        torch.cuda.empty_cache()
    return list(rows.values())


def _time_together(run: ModelRun, steps: dict[str, Callable[[], Any]], rows: dict[str, dict[str, Any]],
                   s: RunSettings) -> list[float]:
    """Eager and every compiled backend taking turns in one loop (E A B E A B ...), so a drift of the
    machine (clocks, other tenants) hits all alike and Inductor's and tile's times compare directly;
    each backend's row gets its median and its speedup over eager's median of the same loop.  A
    backend whose step fails is timed no further (its row says why) and the loop runs again without it.
    Eager's samples are returned."""
    steps = dict(steps)
    while True:
        run.reset_weights()
        fns = {"eager": run.step_fn(run.model), **steps}
        try:
            samples = timing.interleaved(fns, s.device, s.repeats, s.warmup)
        except Exception as exc:
            failed = _failing_step(fns, s.device)
            if failed is None or failed == "eager":
                rows["eager"]["reason"] = _reason("timing", exc)
                for name in steps:
                    rows[name].update(status="error", reason=_reason("timing", exc))
                return []
            rows[failed].update(status="error", reason=_reason("timing", exc))
            del steps[failed]
            continue
        eager_ms = timing.median(samples["eager"])
        for name in steps:
            row = rows[name]
            row["median_ms"] = timing.median(samples[name])
            row["eager_ms"] = eager_ms
            row["speedup"] = eager_ms / row["median_ms"]
        return samples["eager"]


def _failing_step(fns: dict[str, Callable[[], Any]], device: torch.device) -> str | None:
    """The first of `fns` that raises when called alone (None if none does)."""
    for name, fn in fns.items():
        try:
            fn()
            timing.synchronize(device)
        except Exception:
            return name
    return None
