"""Layer norm and RMSNorm backward in two kernels (``config.mix_order``): the first reads x and dy once
for the input gradient and the weight/bias gradients' per-program partial sums (a workspace), the
second sums the workspace over programs and applies the sums' epilogue (the casts to float16).

Forward and backward run through ``torch.compile(backend="tile")`` with the switch on; every gradient
is compared with eager in float64, and every buffer the compiled graph allocates (outputs and the
workspace) starts as NaN. 300 rows are not a multiple of the rows per program (16 here), so the last
program's rows are masked; 48 columns (Inductor splits these column sums in two stages) and 200
(not split, the casts fused into the column sums' group) are not powers of two.
"""

from __future__ import annotations

import copy
import re

import pytest
import torch
from mix_order_checks import poisoned_allocations, two_launches

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend

ROWS, COLUMNS = 300, 48  # 48 columns: a masked [1, 64] row block
DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
TOL = {torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 5e-2}


class Norms(torch.nn.Module):
    """Layer norm (weight and bias), then RMSNorm (weight): two mix-order pairs in one backward."""

    def __init__(self, columns: int, generator: torch.Generator):
        super().__init__()
        self.ln_weight = torch.nn.Parameter(torch.randn(columns, generator=generator) + 1.0)
        self.ln_bias = torch.nn.Parameter(torch.randn(columns, generator=generator))
        self.rms_weight = torch.nn.Parameter(torch.randn(columns, generator=generator) + 1.0)

    def forward(self, x, kind: str):
        if kind == "layernorm":
            return torch.nn.functional.layer_norm(x, x.shape[-1:], self.ln_weight, self.ln_bias, eps=1e-5)
        xf = x.to(torch.promote_types(x.dtype, torch.float32))  # the float64 reference stays float64
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * self.rms_weight


def _gradients(model, x, dy, kind, compiled: bool):
    x = x.detach().requires_grad_(True)
    fn = torch.compile(model, backend=tile_backend) if compiled else model
    out = fn(x, kind)
    if compiled:
        metrics.reset()  # count the backward graph's kernels alone
    params = [p for name, p in model.named_parameters() if name.startswith("ln" if kind == "layernorm" else "rms")]
    return torch.autograd.grad(out, [x, *params], dy)


def _check(got, want, dtype):
    for value, ref in zip(got, want):
        assert value.dtype == dtype and torch.isfinite(value).all()
        scale = ref.abs().max().item()
        torch.testing.assert_close(value.double(), ref, rtol=TOL[dtype], atol=TOL[dtype] * scale)


@pytest.mark.parametrize("dtype", DTYPES.values(), ids=DTYPES.keys())
@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("columns", [COLUMNS, 200], ids=["split-sums", "whole-sums"])
def test_norm_backward_is_two_kernels(kind, dtype, columns, monkeypatch):
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(ROWS, columns, generator=gen) * 2.0 + 0.5
    dy = torch.randn(ROWS, columns, generator=gen)
    model = Norms(columns, gen)
    reference = _gradients(model.double(), x.double(), dy.double(), kind, compiled=False)
    torch._dynamo.reset()
    with config.patch(mix_order="on"), poisoned_allocations(monkeypatch) as allocated:
        grads = _gradients(model.to(dtype), x.to(dtype), dy.to(dtype), kind, compiled=True)
    assert allocated
    mix, total = two_launches()
    source = metrics.kernel_sources[mix.split("[")[0]]
    assert "for xoffset in range(xstart, xstart + SPLIT, XBLOCK):" in source
    assert "SPLIT=16" in mix and f", {columns}, 19, XBLOCK=" in total  # 19 programs of 16 rows
    before, inside = source.split("for xoffset")
    assert re.search(r"tl\.load\(in_ptr\d \+ r0, mask=rmask", before), source  # the weight: once, not per row
    assert not re.search(r"tl\.load\(in_ptr\d \+ r0, ", inside), source
    _check(grads, reference, dtype)


def _rmsnorm_backward_recomputing_rstd(dy, x, w):
    """As model_benchmarks' micro case: rstd is a row reduction of this graph, read by the column sum."""
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    g = dy * w
    dx = rstd * (g - x * rstd.pow(2) * (g * x).mean(-1, keepdim=True))
    return dx, (dy * x * rstd).sum(0)


def test_column_sum_reading_the_row_reduction_with_dynamic_rows(monkeypatch):
    gen = torch.Generator().manual_seed(9)
    compiled = torch.compile(_rmsnorm_backward_recomputing_rstd, backend=tile_backend)
    torch._dynamo.reset()
    for rows in (300, 517):  # one graph, symbolic rows (the programs are counted at run time)
        dy, x = torch.randn(rows, COLUMNS, generator=gen), torch.randn(rows, COLUMNS, generator=gen) + 0.5
        w = torch.randn(COLUMNS, generator=gen)
        torch._dynamo.mark_dynamic(dy, 0)
        torch._dynamo.mark_dynamic(x, 0)
        if rows == 300:
            metrics.reset()
        with config.patch(mix_order="on"), poisoned_allocations(monkeypatch) as allocated:
            got = compiled(dy, x, w)
        assert allocated
        for value, want in zip(got, _rmsnorm_backward_recomputing_rstd(dy.double(), x.double(), w.double())):
            torch.testing.assert_close(value.double(), want, rtol=1e-4, atol=1e-4 * want.abs().max().item())
    assert metrics.compiled_graphs == 1
    mix, total = two_launches()
    assert "// 16" in mix and "// 16" in total, (mix, total)  # the programs, counted at run time


def test_half_row_and_column_sums_of_one_input(monkeypatch):
    """Sums kept in float16 (no upcast in the graph): the column total is rounded once, from float32."""
    gen = torch.Generator().manual_seed(10)
    x, w = torch.randn(ROWS, COLUMNS, generator=gen), torch.randn(COLUMNS, generator=gen)

    def fn(x, w):
        return (x * w).sum(-1), x.sum(0)

    torch._dynamo.reset()
    metrics.reset()
    with config.patch(mix_order="on"), poisoned_allocations(monkeypatch):
        got = torch.compile(fn, backend=tile_backend)(x.half(), w.half())
    two_launches()
    for value, want in zip(got, fn(x.half().double(), w.half().double())):
        assert value.dtype == torch.float16
        torch.testing.assert_close(value.double(), want, rtol=2e-3, atol=2e-3 * want.abs().max().item())


@pytest.mark.parametrize("columns", [COLUMNS, 200], ids=["split-sums", "whole-sums"])
def test_sum_read_after_its_epilogue_is_stored(columns, monkeypatch):
    """A column sum that is also a graph output is stored by the totals' kernel, with its cast and
    the epilogue reading another input (a bias) in the same kernel."""
    gen = torch.Generator().manual_seed(12)
    x, w = torch.randn(ROWS, columns, generator=gen) + 0.25, torch.randn(columns, generator=gen)
    b = torch.randn(columns, generator=gen)

    def fn(x, w, b):
        compute = torch.promote_types(x.dtype, torch.float32)  # the float64 reference stays float64
        total = x.to(compute).sum(0)
        return (x * w).sum(-1), total, (total * 0.5 + b.to(compute)).to(x.dtype)

    torch._dynamo.reset()
    metrics.reset()
    with config.patch(mix_order="on"), poisoned_allocations(monkeypatch):
        got = torch.compile(fn, backend=tile_backend)(x.half(), w.half(), b.half())
    mix, total = two_launches()
    assert len(metrics.kernel_sources[total.split("[")[0]].split("tl.store(")) == 3  # the sum and the epilogue
    for value, want in zip(got, fn(x.half().double(), w.half().double(), b.half().double())):
        torch.testing.assert_close(value.double(), want.double(), rtol=2e-3, atol=2e-3 * want.abs().max().item())


class Block(torch.nn.Module):
    """A pre-norm MLP block and a final RMSNorm: the backward's column sums include the linear layers'
    bias gradients beside the norms' weight gradients."""

    def __init__(self, hidden: int):
        super().__init__()
        self.ln = torch.nn.LayerNorm(hidden)
        self.fc1, self.fc2 = torch.nn.Linear(hidden, 2 * hidden), torch.nn.Linear(2 * hidden, hidden)
        self.rms = torch.nn.RMSNorm(hidden, eps=1e-6)

    def forward(self, x):
        h = x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln(x))))
        return self.rms(h) * 2 + h


@pytest.mark.parametrize("hidden, dtype", [(48, torch.float16), (200, torch.bfloat16)])
def test_block_backward(hidden, dtype, monkeypatch):
    torch.manual_seed(13)
    model = Block(hidden)
    x, dy = torch.randn(ROWS, hidden) * 2 + 0.3, torch.randn(ROWS, hidden)

    def gradients(model, x, dy, compiled):
        x = x.detach().requires_grad_(True)
        out = (torch.compile(model, backend=tile_backend) if compiled else model)(x)
        metrics.reset()  # the backward graph's kernels
        return torch.autograd.grad(out, [x, *model.parameters()], dy)

    reference = gradients(copy.deepcopy(model).double(), x.double(), dy.double(), compiled=False)
    torch._dynamo.reset()
    with config.patch(mix_order="on"), poisoned_allocations(monkeypatch):
        grads = gradients(model.to(dtype), x.to(dtype), dy.to(dtype), compiled=True)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    totals = [name for name in metrics.launch_lines if name.startswith("tile_mixsum_")]
    assert metrics.mix_order_kernels >= 1 and len(totals) == metrics.mix_order_kernels, list(metrics.launch_lines)
    _check(grads, reference, dtype)


def test_integer_column_sums_are_not_paired(monkeypatch):
    """Float32 partials would round sums of large integers: such a pair is generated as its two groups
    (the buffers both read are freed after the second)."""
    x = torch.randint(-2**40, 2**40, (ROWS, COLUMNS), generator=torch.Generator().manual_seed(11))

    def fn(x):
        return (x * 3).sum(-1), x.sum(0)

    torch._dynamo.reset()
    metrics.reset()
    with config.patch(mix_order="on"), poisoned_allocations(monkeypatch):
        got = torch.compile(fn, backend=tile_backend)(x)
    assert metrics.mix_order_kernels == 0 and metrics.fallback_kernels == 0, metrics.fallback_reasons
    for value, want in zip(got, fn(x)):
        assert torch.equal(value, want)


def test_switch_off_keeps_two_kernels():
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(ROWS, COLUMNS, generator=gen)
    model = Norms(COLUMNS, gen)
    torch._dynamo.reset()
    with config.patch(mix_order="off"):
        _gradients(model, x, torch.randn(ROWS, COLUMNS, generator=gen), "rmsnorm", compiled=True)
    assert metrics.mix_order_kernels == 0
    assert metrics.generated_kernels >= 2


def test_default_pairs_on_gpus_only():
    """The default ``"gpu"`` leaves the CPU target its two kernels (the pair is measured on GPUs only)."""
    assert config.mix_order == "gpu"
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(ROWS, COLUMNS, generator=gen)
    model = Norms(COLUMNS, gen)
    torch._dynamo.reset()
    metrics.reset()
    _gradients(model, x, torch.randn(ROWS, COLUMNS, generator=gen), "rmsnorm", compiled=True)
    assert metrics.mix_order_kernels == 0
    assert metrics.generated_kernels >= 2


def test_pairing_answers_only_in_the_compiling_thread(monkeypatch):
    # Inductor's checks are wrapped once; another thread (a `backend="inductor"` compile) and this thread
    # after the block keep Inductor's own, which never asks can_pair
    import threading

    from torch._inductor.scheduler import MixOrderReduction

    from inductor_tile.scheduler import mix_order

    asked = []
    monkeypatch.setattr(mix_order, "can_pair", lambda node1, node2: asked.append(threading.get_ident()) or True)

    def inductor_check():
        try:  # with no nodes Inductor's check raises or refuses
            MixOrderReduction.can_fuse(None, None)
        except Exception:  # noqa: BLE001
            pass

    with config.patch(mix_order="on"), mix_order.pairing():
        assert MixOrderReduction.can_fuse(None, None) is True  # ours, in this thread
        other = threading.Thread(target=inductor_check)
        other.start()
        other.join()
    inductor_check()
    assert asked == [threading.get_ident()]
