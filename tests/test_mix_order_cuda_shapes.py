"""Mix-order reductions shaped for CUDA (``config.mix_order``), checked on this machine: the shapes the
GPU rule picks (few programs over many rows, 16 warps, ``XBLOCK`` rows per step, [XBLOCK, RBLOCK] column
accumulators), the generated kernels run on the CPU with those shapes (values against float64, every
allocation NaN-poisoned), and the first kernel compiled for sm_90: at most 64 registers a thread and no
spills, so that 1024 threads of programs (two of 16 warps, one of 32) fit an SM's 65536 registers, as the
rule assumes."""

from __future__ import annotations

import re

import pytest
import torch
from mix_order_checks import poisoned_allocations, two_launches

from inductor_tile import config, metrics
from inductor_tile.codegen.plan import GroupPlan
from inductor_tile.scheduler import mix_order
from inductor_tile.tools.ptx_stats import ptx_stats

pytestmark = pytest.mark.usefixtures("fresh_backend")
aten = torch.ops.aten
SMS = 132  # an H100's


@pytest.fixture
def h100(monkeypatch):
    monkeypatch.setattr(mix_order, "_sm_count", lambda index=None: SMS)


@pytest.mark.parametrize("rows, cols, xblock, rblock, warps, split", [
    (16384, 768, 4, 1024, 16, 64), (8192, 4096, 1, 4096, 16, 32), (16384, 2048, 2, 2048, 16, 64),
    (50000, 768, 4, 1024, 16, 192), (4097, 1536, 2, 2048, 16, 16), (8192, 8192, 1, 8192, 32, 63)])
def test_gpu_rule_few_programs_many_rows(h100, rows, cols, xblock, rblock, warps, split):
    launch = mix_order._launch("cuda", GroupPlan("reduction", [rows], [cols]))
    assert (launch.xblock, launch.rblock, launch.persistent, launch.num_warps) == (xblock, rblock, True, warps)
    assert mix_order._split("cuda", rows, launch) == split and split % xblock == 0
    programs = -(-rows // split)
    per_sm = 2 if warps == 16 else 1  # 1024 threads per SM
    assert programs <= per_sm * SMS and programs * split >= rows
    # each column accumulator holds XBLOCK * RBLOCK / 512 floats a thread: 8 to 32
    assert mix_order._row_accumulators("cuda", launch)


@pytest.mark.parametrize("rows, cols, xblock, split", [(16384, 768, 8, 128), (8192, 4096, 2, 64)])
def test_gpu_rule_with_8192_element_steps(h100, rows, cols, xblock, split):
    with config.patch(mix_order_step=8192):  # one 32-warp program per SM: half the workspace
        launch = mix_order._launch("cuda", GroupPlan("reduction", [rows], [cols]))
    assert (launch.xblock, launch.num_warps) == (xblock, 32)
    assert mix_order._split("cuda", rows, launch) == split and -(-rows // split) <= SMS


def test_cpu_rule_unchanged():
    launch = mix_order._launch("cpu", GroupPlan("reduction", [300], [48]))
    assert (launch.xblock, launch.rblock, launch.num_warps) == (4, 64, None)
    assert mix_order._split("cpu", 300, launch) == 16 and not mix_order._row_accumulators("cpu", launch)


def _layer_norm_backward(dy, x, mean, rstd, w, b):
    return aten.native_layer_norm_backward(dy, x, [x.shape[-1]], mean, rstd, w, b, [True, True, True])


def _rms_norm_backward(dy, x, w):  # model_benchmarks' micro case: rstd recomputed, read by the column sum
    xf, gf = x.float(), dy.float() * w.float()
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
    dx = rstd * (gf - xf * rstd.pow(2) * (gf * xf).mean(-1, keepdim=True))
    return dx.to(x.dtype), (dy.float() * xf * rstd).sum(0).to(w.dtype)


def _inputs(kind: str, rows: int, cols: int, dtype: torch.dtype):
    gen = torch.Generator().manual_seed(rows + cols)
    x, dy = (torch.randn(rows, cols, generator=gen) * 1.5 + 0.3 for _ in range(2))
    w, b = torch.randn(cols, generator=gen) + 1.0, torch.randn(cols, generator=gen)
    if kind == "rmsnorm":
        return _rms_norm_backward, (dy.to(dtype), x.to(dtype), w.to(dtype))
    _, mean, rstd = aten.native_layer_norm(x.to(dtype).float(), [cols], None, None, 1e-5)
    return _layer_norm_backward, (dy.to(dtype), x.to(dtype), mean, rstd, w.to(dtype), b.to(dtype))


def _compile_and_check(kind, rows, cols, dtype, monkeypatch):
    fn, args = _inputs(kind, rows, cols, dtype)
    with config.patch(mix_order=True, max_rblock=8192), poisoned_allocations(monkeypatch) as allocated:
        got = torch.compile(fn, backend="tile")(*args)
    assert allocated
    want = fn(*(a.double() for a in args))
    tol = {torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 5e-2}[dtype]
    for value, ref in zip(got, want):
        assert value.dtype == dtype and torch.isfinite(value).all()
        torch.testing.assert_close(value.double(), ref, rtol=tol, atol=tol * ref.abs().max().item())
    return two_launches()


@pytest.mark.parametrize("kind, dtype", [("layernorm", torch.float16), ("rmsnorm", torch.bfloat16)])
def test_cuda_shaped_kernels_run_on_the_cpu(cuda_heuristics, h100, kind, dtype, monkeypatch):
    # 1001 rows: 16 per program (XBLOCK 16 x RBLOCK 256), the last program has 9; 200 columns of 256
    mix, total = _compile_and_check(kind, 1001, 200, dtype, monkeypatch)
    assert "[(63, 1, 1)]" in mix and "XBLOCK=16, RBLOCK=256, SPLIT=16, num_warps=16" in mix, mix
    assert ", 200, 63, XBLOCK=" in total, total
    source = metrics.kernel_sources[mix.split("[")[0]]
    assert "colacc0 = tl.zeros([XBLOCK, RBLOCK], tl.float32)" in source
    inside, after = source.split("programs = tl.num_programs(0)")
    columns = inside[inside.index("(column sum)"):]  # added elementwise in the loop, reduced once after it
    assert "colacc0 = colacc0 + tmp" in columns and "tl.sum(" not in columns, source
    assert "tl.sum(colacc0, 0)" in after, source


@pytest.mark.parametrize("rows, cols, dtype", [
    (1100, 768, torch.float16), (1100, 768, torch.float32), (300, 4096, torch.float16), (300, 4096, torch.float32),
    (300, 8192, torch.bfloat16)])
def test_first_kernel_fits_1024_threads_per_sm(cuda_heuristics, h100, rows, cols, dtype, monkeypatch):
    import inductor_tile

    _compile_and_check("layernorm", rows, cols, dtype, monkeypatch)
    (fn, signature, constexprs), = [r for r in cuda_heuristics if r[0].__name__.startswith("tile_mix_")]
    pointers = [name for name, ty in signature.items() if ty.startswith("*") or ty.startswith("i")]
    warps = int(re.search(r"num_warps=(\d+)", metrics.launch_lines[fn.__name__]).group(1))
    ptx = inductor_tile.compile(fn, signature, constexprs=constexprs, target="cuda:90", num_warps=warps,
                                divisible_by_16=pointers).asm["ptx"]
    stats = ptx_stats(ptx, "sm_90")
    assert stats["spill bytes"] == 0 and stats["registers"] <= 64, stats
