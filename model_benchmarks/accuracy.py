"""Accuracy of a compiled run against eager, in the manner of PyTorch's benchmark harness.

Each output tensor (inference: every tensor the model returns; training: the loss and every
parameter's gradient after one step) passes when

1. it is close to eager's: ``allclose(res, ref, rtol=tol, atol=tol)``; or, failing that,
2. ``method="fp64"``: its error against a float64 run of the same model and inputs is not much
   larger than eager's own: ``rmse(res, ref64) <= m * rmse(ref, ref64) + tol / 10`` with
   m = 2 (fp32) or 3 (fp16/bf16/AMP);
   ``method="cosine"``: the cosine similarity of res and ref is at least 0.99.

NaN or inf where eager has a finite value never passes.  Tolerances: inference 1e-3 (5e-3 on
the CPU), training 1e-2.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch


def tolerance(mode: str, device: torch.device) -> float:
    if mode == "training":
        return 1e-2
    return 5e-3 if device.type == "cpu" else 1e-3


def flatten(value: Any, prefix: str = "out") -> list[tuple[str, torch.Tensor]]:
    """(name, tensor) for every tensor in a nested output (ModelOutput, dict, tuple, list)."""
    if isinstance(value, torch.Tensor):
        return [(prefix, value)]
    if isinstance(value, dict) or hasattr(value, "items"):
        items = list(value.items())
    elif isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple: its field names
        items = list(zip(value._fields, value))
    elif isinstance(value, (tuple, list)):
        items = list(enumerate(value))
    else:
        return []
    out = []
    for key, item in items:
        out.extend(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


@dataclasses.dataclass
class Verdict:
    ok: bool
    detail: str  # empty when every tensor was allclose


def _rmse(a: torch.Tensor, b: torch.Tensor) -> float:
    return torch.sqrt(torch.mean((a.double() - b.double()) ** 2)).item()


def _cosine(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.double().flatten(), b.double().flatten()
    denom = a.norm() * b.norm()
    if denom == 0:
        return 1.0 if torch.equal(a, b) else 0.0
    return (a @ b / denom).item()


def compare(ref: dict[str, torch.Tensor], res: dict[str, torch.Tensor], tol: float, method: str,
            half: bool, ref64_fn=None) -> Verdict:
    """Compare `res` with `ref` (same keys); `ref64_fn()` gives the float64 outputs on demand."""
    if set(ref) != set(res):
        missing = sorted(set(ref) ^ set(res))
        return Verdict(False, f"outputs differ in names: {', '.join(missing[:4])}")
    notes = []
    ref64 = None
    no_ref64 = "none given"
    for name, r in ref.items():
        x = res[name]
        if r.shape != x.shape:
            return Verdict(False, f"{name}: shape {tuple(x.shape)} vs eager {tuple(r.shape)}")
        if not r.is_floating_point():
            if not torch.equal(r, x):
                return Verdict(False, f"{name}: integer values differ")
            continue
        rd, xd = r.detach().double(), x.detach().double()
        bad = ~torch.isfinite(xd) & torch.isfinite(rd)
        if bad.any():
            return Verdict(False, f"{name}: {int(bad.sum())} non-finite values where eager is finite")
        if torch.allclose(xd, rd, rtol=tol, atol=tol, equal_nan=True):
            continue
        max_diff = (xd - rd).abs().nan_to_num(0).max().item()
        if method == "cosine":
            cos = _cosine(xd, rd)
            if cos < 0.99:
                return Verdict(False, f"{name}: cosine {cos:.4f} < 0.99 (max |diff| {max_diff:.3g})")
            notes.append(f"{name}: cosine {cos:.4f}")
            continue
        if ref64 is None:
            try:
                ref64 = ref64_fn() if ref64_fn is not None else {}
            except Exception as exc:  # noqa: BLE001 - e.g. a model whose masks overflow in float64
                ref64, no_ref64 = {}, f"the float64 model fails: {type(exc).__name__}"
        if name not in ref64:  # the cosine rule, as PyTorch's harness falls back to
            cos = _cosine(xd, rd)
            if cos < 0.99:
                return Verdict(False, f"{name}: cosine {cos:.4f} < 0.99 (max |diff| {max_diff:.3g}; no fp64 "
                                      f"reference: {no_ref64})")
            notes.append(f"{name}: cosine {cos:.4f} (no fp64 reference: {no_ref64})")
            continue
        mult = 3.0 if half else 2.0
        err, base = _rmse(xd, ref64[name]), _rmse(rd, ref64[name])
        if err > mult * base + tol / 10:
            return Verdict(False, f"{name}: rmse vs fp64 {err:.3g} > {mult:g} x eager's {base:.3g} + {tol / 10:g}"
                                  f" (max |diff| {max_diff:.3g})")
        notes.append(f"{name}: rmse {err:.2g} vs eager {base:.2g}")
    detail = ""
    if notes:
        detail = f"{len(notes)} tensor(s) passed on the {method} rule, e.g. {notes[0]}"
    return Verdict(True, detail)
