"""``config.gpu_persistent_rblock``: CUDA reductions over rows of up to 32768 (a cross-entropy over a 32000-word
vocabulary) in one block, untuned, instead of a loop over 2048-element steps: the kernels run on the CPU with
that shape (values against float64, outputs NaN-poisoned) and their sm_90 PTX has no spills, fits 512 threads
an SM and loads 16 bytes at a time (issue 17)."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from mix_order_checks import poisoned_allocations

import inductor_tile
from inductor_tile import config, metrics
from inductor_tile.codegen import heuristics
from inductor_tile.tools.ptx_stats import ptx_stats

pytestmark = pytest.mark.usefixtures("fresh_backend")
aten = torch.ops.aten


def test_default_limit_loops_over_vocabulary_rows():
    assert heuristics.reduction("cuda", 8192, 32000, 32000).persistent is False
    with config.patch(gpu_persistent_rblock=32768):
        launch = heuristics.reduction("cuda", 8192, 32000, 32000)
        assert (launch.xblock, launch.rblock, launch.persistent, launch.num_warps) == (1, 32768, True, 16)
        assert heuristics.candidates("cuda", launch, True) == [launch]  # more rows or fewer warps spill
        assert heuristics.reduction("cuda", 8192, 50257, 50257).persistent is False


def _cross_entropy(logits, target):
    return F.cross_entropy(logits.float(), target)


def _cross_entropy_backward(logits, target, grad):
    lsm = torch.log_softmax(logits.float(), -1)
    total = torch.tensor(float(target.numel()))
    g = aten.nll_loss_backward(grad, lsm, target, None, 1, -100, total)
    return aten._log_softmax_backward_data(g, lsm, 1, torch.float32).to(logits.dtype)


@pytest.mark.parametrize("backward", [False, True], ids=["forward", "backward"])
def test_cross_entropy_rows_in_one_block_values(cuda_heuristics, backward, monkeypatch):
    # the same rule at a tenth of the size (the CPU target compiles 32768-wide blocks for minutes):
    # rows of 3000 columns, looped by default here, held in one block of 4096 when the limit is raised
    monkeypatch.setattr(heuristics, "GPU_PERSISTENT_RBLOCK", 2048)
    g = torch.Generator().manual_seed(3)
    logits = (torch.randn(40, 3000, generator=g) * 3).half()
    target = torch.randint(0, 3000, (40,), generator=g)
    target[5] = -100  # ignored
    args = (logits, target, torch.tensor(1.7)) if backward else (logits, target)
    fn = _cross_entropy_backward if backward else _cross_entropy
    with config.patch(gpu_persistent_rblock=4096), poisoned_allocations(monkeypatch) as allocated:
        out = torch.compile(fn, backend="tile")(*args)
    assert allocated and metrics.fallback_kernels == 0, metrics.fallback_reasons
    wide = [name for name, line in metrics.launch_lines.items() if "RBLOCK=4096" in line]
    assert len(wide) == 1, list(metrics.launch_lines.values())
    assert "for roffset" not in metrics.kernel_sources[wide[0]]  # each row's logits read once
    if backward:
        ref = fn(logits.float(), target, torch.tensor(1.7))  # in fp32 throughout (the op takes no float64)
        assert out.dtype == torch.float16 and torch.isfinite(out).all()
        torch.testing.assert_close(out.float(), ref, rtol=1e-3, atol=1e-7)
    else:
        torch.testing.assert_close(out, fn(logits.double(), target).float(), rtol=1e-5, atol=0)


def test_cross_entropy_32000_columns_ptx(cuda_heuristics):
    g = torch.Generator().manual_seed(4)
    logits, target = torch.randn(8, 32000, generator=g).half(), torch.randint(0, 32000, (8,), generator=g)
    with config.patch(gpu_persistent_rblock=32768):
        out = torch.compile(_cross_entropy, backend="tile")(logits, target)
    torch.testing.assert_close(out, _cross_entropy(logits.double(), target).float(), rtol=1e-5, atol=0)
    (fn, signature, constexprs), = [r for r in cuda_heuristics if "RBLOCK=32768" in metrics.launch_lines[r[0].__name__]]
    assert "for roffset" not in metrics.kernel_sources[fn.__name__]
    pointers = [name for name, ty in signature.items() if ty[0] in "*i"]
    ptx = inductor_tile.compile(fn, signature, constexprs=constexprs, target="cuda:90", num_warps=16,
                                divisible_by_16=pointers).asm["ptx"]
    stats = ptx_stats(ptx, "sm_90")
    assert stats["spill bytes"] == 0 and stats["registers"] * 512 <= 65536, stats
    assert len(re.findall(r"ld\.global(?:\.\w+)*\.v4\.b32", ptx)) == 32768 // 512 // 8, stats  # 8 halves a load
