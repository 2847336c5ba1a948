"""Mix-order reductions on CUDA (``config.mix_order``): layer norm and RMSNorm backward as two kernels
(the input gradient with the weight/bias gradients' per-program partials, then the partials' totals with
their casts), at sizes where the pairing applies on GPUs (more than 5M elements, at least 4096 rows):
the micro benchmark's shapes, rows that are not a multiple of the rows per program, 8192-wide rows (eight
warps a row, one program per SM), fp16/bf16/fp32; rows in chunks (one warp per row up to 1024 columns,
the default) and, for four shapes, in [XBLOCK, RBLOCK] tiles (``TILE_MIX_ORDER_WARP_ROWS=0``). Every
gradient is compared with eager in float64; every buffer the graph allocates starts as NaN."""

import pytest
import torch
from mix_order_checks import poisoned_allocations, two_launches

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from inductor_tile.scheduler import mix_order

pytestmark = pytest.mark.gpu
aten = torch.ops.aten
TOL = {torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 5e-2}


def _rand(*shape, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", dtype=dtype, generator=g)


def _check(got, want, dtype):
    for value, ref in zip(got, want):
        assert value.dtype == dtype and torch.isfinite(value).all()
        torch.testing.assert_close(value.double(), ref, rtol=TOL[dtype], atol=TOL[dtype] * ref.abs().max().item())


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32], ids=["fp16", "fp32"])
@pytest.mark.parametrize("kind", ["layernorm", "rmsnorm"])
def test_norm_forward_backward(kind, dtype, monkeypatch):
    rows, cols = 16383, 768
    x, dy = _rand(rows, cols, dtype=dtype, seed=1), _rand(rows, cols, dtype=dtype, seed=2)
    w, b = _rand(cols, dtype=dtype, seed=3) + 1.0, _rand(cols, dtype=dtype, seed=4)

    def fn(x, w, b=None):
        if kind == "layernorm":
            return torch.nn.functional.layer_norm(x, (cols,), w, b)
        xf = x.to(torch.promote_types(x.dtype, torch.float32))  # the float64 reference stays float64
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w

    params = (x, w, b) if kind == "layernorm" else (x, w)
    inputs = [t.detach().requires_grad_(True) for t in params]
    torch._dynamo.reset()
    with config.patch(mix_order="on"), poisoned_allocations(monkeypatch) as allocated:
        out = torch.compile(fn, backend=tile_backend)(*inputs)
        metrics.reset()
        got = torch.autograd.grad(out, inputs, dy)
    assert allocated
    two_launches()
    ref_inputs = [t.detach().double().requires_grad_(True) for t in params]
    want = torch.autograd.grad(fn(*ref_inputs), ref_inputs, dy.double())
    _check(got, want, dtype)


def _layer_norm_backward(dy, x, mean, rstd, w, b):  # the micro benchmark's case
    return aten.native_layer_norm_backward(dy, x, [x.shape[-1]], mean, rstd, w, b, [True, True, True])


def _rmsnorm_backward(dy, x, w):  # rstd recomputed: the column sum reads the row reduction
    compute = torch.promote_types(x.dtype, torch.float32)  # the float64 reference stays float64
    xf, gf = x.to(compute), dy.to(compute) * w.to(compute)
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    dx = rstd * (gf - xf * rstd.pow(2) * (gf * xf).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dy.to(compute) * xf * rstd).sum(0).to(w.dtype)


CASES = [("layernorm", 16384, 768, torch.float16), ("layernorm", 8192, 4096, torch.float16),
         ("rmsnorm", 16384, 2048, torch.float16), ("rmsnorm", 8192, 4096, torch.float16),
         ("layernorm", 4097, 1536, torch.bfloat16), ("rmsnorm", 8191, 1024, torch.bfloat16),
         ("layernorm", 16385, 8192, torch.bfloat16), ("rmsnorm", 50000, 768, torch.float32)]


@pytest.mark.parametrize("kind, rows, cols, dtype", CASES)
def test_norm_backward_two_launches(kind, rows, cols, dtype, monkeypatch):
    # rows in chunks of one 16-byte access per lane: one warp per row up to 1024 columns, several beyond
    mix = _norm_backward(kind, rows, cols, dtype, monkeypatch)
    assert f"RCHUNK={128 if dtype == torch.float32 else 256}," in mix, mix


@pytest.mark.parametrize("kind, rows, cols, dtype", CASES[:3] + CASES[-1:])
def test_norm_backward_row_tiles(kind, rows, cols, dtype, monkeypatch):
    monkeypatch.setattr(config, "mix_order_warp_rows", False)  # [XBLOCK, RBLOCK] tiles, rows across warps
    mix = _norm_backward(kind, rows, cols, dtype, monkeypatch)
    assert "RCHUNK" not in mix, mix


def _norm_backward(kind, rows, cols, dtype, monkeypatch) -> str:
    x, dy = _rand(rows, cols, dtype=dtype, seed=5) + 0.5, _rand(rows, cols, dtype=dtype, seed=6)
    w, b = _rand(cols, dtype=dtype, seed=7) + 1.0, _rand(cols, dtype=dtype, seed=8)
    if kind == "layernorm":
        _, mean, rstd = aten.native_layer_norm(x.float(), [cols], None, None, 1e-5)
        fn, args = _layer_norm_backward, (dy, x, mean, rstd, w, b)
    else:
        fn, args = _rmsnorm_backward, (dy, x, w)
    torch._dynamo.reset()
    metrics.reset()
    with config.patch(mix_order="on"), poisoned_allocations(monkeypatch) as allocated:
        got = torch.compile(fn, backend=tile_backend)(*args)
    assert allocated
    mix, total = two_launches()
    programs = int(mix.split("[(")[1].split(",")[0])
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert programs <= 2 * sms, mix  # the workspace: at most two rows per SM per column sum
    _check(got, fn(*(a.double() for a in args)), dtype)
    return mix


@pytest.mark.parametrize("cols, paired", [(768, False), (1024, True), (2048, True)])
def test_default_pairs_rows_of_1024_columns_and_more(cols, paired, monkeypatch):
    """``config.mix_order`` "gpu" (the default): the pair where it measured faster than two kernels."""
    assert config.mix_order == "gpu"
    rows, dtype = 16384, torch.float16
    dy, x = _rand(rows, cols, dtype=dtype, seed=5), _rand(rows, cols, dtype=dtype, seed=6)
    w = _rand(cols, dtype=dtype, seed=7) + 1.0
    torch._dynamo.reset()
    metrics.reset()
    with poisoned_allocations(monkeypatch):
        got = torch.compile(_rmsnorm_backward, backend=tile_backend)(dy, x, w)
    assert (metrics.mix_order_kernels > 0) == paired
    _check(got, _rmsnorm_backward(dy.double(), x.double(), w.double()), dtype)
