"""The looped online softmax (a softmax row longer than a persistent block: cross-entropy over a vocabulary)
with ``config.online_softmax_lean`` on and off: values of rows with -inf, +inf and NaN against float64 eager
(outputs NaN-poisoned), and the lean update's sm_90 loop, which picks NaN and the -inf start with max/min,
not selects (issue 17: the fp16 loop is bound by instructions an element, not by memory)."""

from __future__ import annotations

import re

import pytest
import torch
from mix_order_checks import poisoned_allocations

import inductor_tile
from inductor_tile import config, metrics

pytestmark = pytest.mark.usefixtures("fresh_backend")
import torch._inductor.inductor_prims  # noqa: E402,F401  (registers prims.prepare_softmax_online)

prepare_softmax_online = torch.ops.prims.prepare_softmax_online


def _rows(cols: int, dtype: torch.dtype) -> torch.Tensor:
    g = torch.Generator().manual_seed(cols)
    x = torch.randn(9, cols, generator=g, dtype=torch.float64) * 4
    x[1, :] = float("-inf")
    x[2, : cols // 2] = float("-inf")  # lanes start at -inf, then grow
    x[3, 7] = float("inf")
    x[4, cols // 3] = float("nan")
    x[5, 0] = float("nan")  # the first element
    x[6, [5, cols - 3]] = float("inf")  # two +inf: inf - inf in a lane or across lanes
    x[7] = torch.linspace(-5, 5, cols)  # the running max grows at every element
    x[8, -1] = float("-inf")  # the last lane of a masked tail
    return x.to(dtype)


@pytest.mark.parametrize("lean", [False, True], ids=["selects", "lean"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_looped_online_softmax_values(lean, dtype, monkeypatch):
    x = _rows(3001, dtype)  # looped on the CPU target (above max_rblock), a masked tail
    fn = lambda t: prepare_softmax_online(t.float(), -1)  # noqa: E731
    with config.patch(online_softmax_lean=lean), poisoned_allocations(monkeypatch) as allocated:
        top, total = torch.compile(fn, backend="tile")(x)
    assert allocated and metrics.fallback_kernels == 0, metrics.fallback_reasons
    source = "".join(metrics.kernel_sources.values())
    assert "for roffset" in source and ("PropagateNan.ALL" in source) == lean, source
    ref_top, ref_total = prepare_softmax_online(x.double(), -1)
    torch.testing.assert_close(top, ref_top.float(), equal_nan=True)
    torch.testing.assert_close(total, ref_total.float(), rtol=1e-5, atol=0, equal_nan=True)
    assert torch.isnan(total[[1, 3, 4, 5, 6]]).all() and torch.isfinite(total[[0, 2, 7, 8]]).all()


def _loop_ops(ptx: str) -> dict[str, int]:
    """Opcode counts in the kernel's reduction loop (the first backward branch's block)."""
    label = re.search(r"@%p\d+ bra\s+(\$L__BB\d+_\d+);", ptx).group(1)
    body = ptx[ptx.index(f"{label}:"):ptx.index(f"bra \t{label};") if f"bra \t{label};" in ptx else None]
    ops = re.findall(r"^\s*(?:@!?%p\d+\s+)?([a-z][\w.]*)", body, re.M)
    return {op: ops.count(op) for op in set(ops)}


@pytest.mark.parametrize("lean", [False, True], ids=["selects", "lean"])
def test_lean_loop_for_cuda(cuda_heuristics, lean):
    x = torch.randn(64, 32000, generator=torch.Generator().manual_seed(0)).half()  # CUDA: looped, RBLOCK 2048
    with config.patch(online_softmax_lean=lean):
        top, total = torch.compile(lambda t: prepare_softmax_online(t.float(), -1), backend="tile")(x)
    ref_top, ref_total = prepare_softmax_online(x.double(), -1)
    torch.testing.assert_close(total, ref_total.float(), rtol=1e-5, atol=0)
    (fn, signature, constexprs), = cuda_heuristics
    launch = metrics.launch_lines[fn.__name__]
    assert "RBLOCK=2048" in launch and "num_warps=16" in launch, launch
    pointers = [name for name, ty in signature.items() if ty[0] in "*i"]
    ptx = inductor_tile.compile(fn, signature, constexprs=constexprs, target="cuda:90", num_warps=16,
                                divisible_by_16=pointers).asm["ptx"]
    ops = _loop_ops(ptx)
    per_thread = 2048 // (16 * 32)  # elements a thread a step
    assert ops.get("ex2.approx.ftz.f32") == per_thread, ops
    if lean:  # the row mask and the sum's choice; NaN by max.NaN, the -inf start by a max
        assert ops.get("selp.f32") == 2 * per_thread and ops.get("max.NaN.f32") == per_thread, ops
        assert "setp.nan.f32" not in ops and "setp.eq.f32" not in ops, ops
    else:
        assert ops.get("selp.f32") == 6 * per_thread and ops.get("setp.nan.f32") == per_thread, ops
