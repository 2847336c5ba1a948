"""Checks shared by the mix-order tests (test_mix_order*.py, gpu/test_mix_order_gpu.py): every buffer a
compiled graph allocates starts as NaN, and the backward of a norm is the mix-order kernel and the
kernel of the workspace's totals, nothing else."""

from __future__ import annotations

import contextlib

import torch
from suite import poison

from inductor_tile import metrics


@contextlib.contextmanager
def poisoned_allocations(monkeypatch):
    """Buffers the compiled graph allocates (``empty_strided_cpu``/``_cuda``: outputs; ``torch.empty``:
    the workspace) are NaN-filled; yields the list of what was poisoned (a test checks it is not empty)."""
    guards = torch._C._dynamo.guards
    made = []

    def poisoned(allocate):
        def allocation(*args, **kwargs):
            tensor = allocate(*args, **kwargs)
            if tensor.is_floating_point() and not tensor.requires_grad:
                made.append(poison(tensor))
            return tensor
        return allocation

    with monkeypatch.context() as patch:
        for name in ("_empty_strided_cpu", "_empty_strided_cuda"):
            patch.setattr(guards, name, poisoned(getattr(guards, name)))
        patch.setattr(torch, "empty", poisoned(torch.empty))
        yield made


def two_launches() -> tuple[str, str]:
    """The graph's launch lines: the mix-order kernel, then the workspace's totals."""
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert metrics.mix_order_kernels == 1 and metrics.generated_kernels == 2, list(metrics.launch_lines)
    mix, total = metrics.launch_lines.values()
    assert mix.startswith("tile_mix_") and total.startswith("tile_mixsum_"), (mix, total)
    return mix, total
