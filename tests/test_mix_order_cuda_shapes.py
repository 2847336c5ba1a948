"""Mix-order reductions shaped for CUDA (``config.mix_order``), checked on this machine: the shapes the
GPU rule picks (few programs over many rows, 16 warps, ``XBLOCK`` rows per step, [XBLOCK, RBLOCK] column
accumulators), the generated kernels run on the CPU with those shapes (values against float64, every
allocation NaN-poisoned), and the first kernel compiled for sm_90: no spills, and the threads the rule
puts on an SM fit its 65536 registers (1024 with [XBLOCK, RBLOCK] tiles at 64 registers; 256 with chunked
rows, ``mix_order._chunked_launch``, whose rows of up to 1024 columns have no barrier in the loop)."""

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


@pytest.mark.parametrize("rows, cols, itemsize, xblock, warps, rchunk, split", [
    (16384, 768, 2, 4, 4, 256, 64), (8192, 4096, 2, 1, 4, 256, 32), (16384, 2048, 2, 2, 4, 256, 64),
    (8192, 8192, 2, 1, 8, 256, 63), (16384, 768, 4, 4, 4, 128, 64)])
def test_gpu_rule_chunked_rows(h100, rows, cols, itemsize, xblock, warps, rchunk, split):
    # up to 32 columns a lane per warp: one warp per row up to 1024 columns, 4 warps at 4096
    launch, chunk = mix_order._chunked_launch("cuda", GroupPlan("reduction", [rows], [cols]), itemsize)
    assert (launch.xblock, launch.num_warps, chunk) == (xblock, warps, rchunk)
    assert launch.rblock // (launch.num_warps // launch.xblock * 32) <= mix_order.GPU_ROW_ELEMS_PER_LANE
    split_ = mix_order._split("cuda", rows, launch, threads_per_sm=mix_order.GPU_ROW_THREADS_PER_SM)
    assert split_ == split and -(-rows // split_) * warps * 32 <= SMS * mix_order.GPU_ROW_THREADS_PER_SM


def test_gpu_rule_chunked_rows_only_where_a_row_fills_a_chunk(h100, monkeypatch):
    assert mix_order._chunked_launch("cuda", GroupPlan("reduction", [16384], [128]), 2) is None
    assert mix_order._chunked_launch("cpu", GroupPlan("reduction", [16384], [768]), 2) is None
    monkeypatch.setattr(config, "mix_order_warp_rows", False)
    assert mix_order._chunked_launch("cuda", GroupPlan("reduction", [16384], [768]), 2) is None


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
    monkeypatch.setattr(config, "mix_order_warp_rows", False)  # [XBLOCK, RBLOCK] row tiles
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


@pytest.mark.parametrize("kind, cols, dtype, launch, prefetch", [
    ("layernorm", 600, torch.float16, "XBLOCK=4, RBLOCK=1024, SPLIT=20, RCHUNK=256, num_warps=4", True),
    ("rmsnorm", 2000, torch.bfloat16, "XBLOCK=2, RBLOCK=2048, SPLIT=20, RCHUNK=256, num_warps=4", False),
    ("layernorm", 300, torch.float32, "XBLOCK=4, RBLOCK=512, SPLIT=20, RCHUNK=128, num_warps=4", True),
    ("rmsnorm", 1000, torch.float16, "XBLOCK=4, RBLOCK=1024, SPLIT=20, RCHUNK=256, num_warps=4", False),
    ("layernorm", 768, torch.float16, "XBLOCK=4, RBLOCK=1024, SPLIT=20, RCHUNK=256, num_warps=4", True),
    ("rmsnorm", 384, torch.float32, "XBLOCK=4, RBLOCK=512, SPLIT=20, RCHUNK=128, num_warps=4", True)])
def test_chunked_rows_run_on_the_cpu(cuda_heuristics, h100, kind, cols, dtype, launch, prefetch, monkeypatch):
    # 5001 rows, 20 per program (251 programs, the last has 1); rows of 2000 columns: 2 warps each; the next
    # step's rows loaded in this one where a lane holds at most three 16-byte accesses of a row (600 and
    # 300 columns; 1000 columns of fp16 take four)
    mix, total = _compile_and_check(kind, 5001, cols, dtype, monkeypatch)
    assert "[(251, 1, 1)]" in mix and launch in mix, mix
    assert f", {cols}, 251, XBLOCK=" in total, total
    source = metrics.kernel_sources[mix.split("[")[0]]
    assert "xindex = xoffset + tl.arange(0, XBLOCK)[:, None, None]" in source
    assert "colacc0 = tl.zeros([XBLOCK, RBLOCK // RCHUNK, RCHUNK], tl.float32)" in source
    inside, after = source.split("programs = tl.num_programs(0)")
    rows, columns = inside.split("(column sum)", 1)
    # a row in one warp: its chunks summed in each thread, then across lanes; in several: the reverse
    in_warp = ", 1)[:, None, :], 2)[:, :, None]" in rows
    assert in_warp == (cols <= 1024) and (in_warp or ", 2), 1)[:, None, None]" in rows), source
    assert "colacc0 = colacc0 + tmp" in columns and "tl.sum(" not in columns, source
    assert "tl.sum(colacc0, 0)[None, :, :]" in after, source
    before, step = inside.split("for xoffset in range(")  # the step's loads first, then the rows' reductions
    assert step.count("tl.load(") >= 2 and step.rindex("tl.load(") < step.index("tl.sum("), source
    assert ("_next = tl.load(" in step and "x0_first)" in before) == prefetch, source
    # rows of whole chunks (768 = 3 x 256, 384 = 3 x 128) are masked by chunk, and the chunk past the row's
    # end adds -0.0 to the column partials and stores 0: all of it folds away (test_dead_chunk_is_dropped)
    chunk_masked = cols % int(re.search(r"RCHUNK=(\d+)", launch).group(1)) == 0
    assert ("rmask = (tl.arange(0, RBLOCK // RCHUNK) < 3)[None, :, None]" in source) == chunk_masked, source
    assert ("rmask = rindex < rnumel" in source) != chunk_masked, source
    assert ("tl.where(xmask & rmask, " in columns and "-0.0)" in columns) == chunk_masked, source
    stored = re.search(r"tl\.store\(out_ptr0 \+ [^,]*, (tmp\d+),", rows).group(1)
    assert (f"{stored} = tl.where(rmask, " in rows) == chunk_masked, source


def _loop_barriers(ptx: str) -> int:
    """bar.sync inside the PTX's longest backward branch (the loop over rows)."""
    lines, labels, loop = ptx.splitlines(), {}, (0, -1)
    for i, line in enumerate(lines):
        if match := re.match(r"^(\$L__BB\d+_\d+):", line):
            labels[match.group(1)] = i
        match = re.search(r"bra(?:\.uni)?\s+(\$L__BB\d+_\d+);", line)
        if match and match.group(1) in labels and i - labels[match.group(1)] > loop[1] - loop[0]:
            loop = (labels[match.group(1)], i)
    assert loop[1] > 0, "no loop"
    return sum("bar.sync" in line or "barrier.sync" in line for line in lines[loop[0]:loop[1] + 1])


@pytest.mark.parametrize("warp_rows", [True, False], ids=["chunked", "tiles"])
@pytest.mark.parametrize("rows, cols, dtype", [
    (1100, 768, torch.float16), (1100, 768, torch.float32), (300, 4096, torch.float16), (300, 4096, torch.float32),
    (300, 8192, torch.bfloat16)])
def test_first_kernel_fits_its_threads_per_sm(cuda_heuristics, h100, rows, cols, dtype, warp_rows, monkeypatch):
    import inductor_tile

    monkeypatch.setattr(config, "mix_order_warp_rows", warp_rows)
    _compile_and_check("layernorm", rows, cols, dtype, monkeypatch)
    (fn, signature, constexprs), = [r for r in cuda_heuristics if r[0].__name__.startswith("tile_mix_")]
    pointers = [name for name, ty in signature.items() if ty.startswith("*") or ty.startswith("i")]
    warps = int(re.search(r"num_warps=(\d+)", metrics.launch_lines[fn.__name__]).group(1))
    ptx = inductor_tile.compile(fn, signature, constexprs=constexprs, target="cuda:90", num_warps=warps,
                                divisible_by_16=pointers).asm["ptx"]
    stats = ptx_stats(ptx, "sm_90")
    chunked = "RCHUNK=" in metrics.launch_lines[fn.__name__]
    assert chunked == warp_rows
    threads = mix_order.GPU_ROW_THREADS_PER_SM if chunked else mix_order.GPU_THREADS_PER_SM
    assert stats["spill bytes"] == 0 and stats["registers"] * threads <= 65536, stats
    if chunked and cols <= 1024:  # one warp per row: its reductions are shuffles, no barrier in the loop
        assert _loop_barriers(ptx) == 0


def _mix_kernel_ptx(cuda_heuristics, kind: str, cols: int, dtype, monkeypatch) -> tuple[str, str]:
    """The norm backward's mix-order kernel for `cols` columns (1100 rows, the CUDA rule): source and sm_90 PTX."""
    import inductor_tile

    cuda_heuristics.clear()
    torch._dynamo.reset()
    metrics.reset()
    _compile_and_check(kind, 1100, cols, dtype, monkeypatch)
    (fn, signature, constexprs), = [r for r in cuda_heuristics if r[0].__name__.startswith("tile_mix_")]
    warps = int(re.search(r"num_warps=(\d+)", metrics.launch_lines[fn.__name__]).group(1))
    pointers = [name for name, ty in signature.items() if ty[0] in "*i"]
    ptx = inductor_tile.compile(fn, signature, constexprs=constexprs, target="cuda:90", num_warps=warps,
                                divisible_by_16=pointers).asm["ptx"]
    return metrics.kernel_sources[fn.__name__], ptx


def test_dead_chunk_is_dropped(cuda_heuristics, h100, monkeypatch):
    from inductor_tile.codegen import mix_order as source_mix_order

    # 768 fp16 columns: RBLOCK 1024 in 4 chunks of 256, the last past the row's end. Masked by chunk, a lane
    # converts 24 of dy, x and the weight each (3 x 8), not 32, and takes fewer registers (sm_90: 236 -> 206)
    _, masked = _mix_kernel_ptx(cuda_heuristics, "layernorm", 768, torch.float16, monkeypatch)
    monkeypatch.setattr(source_mix_order, "CHUNK_MASK", False)
    source, whole = _mix_kernel_ptx(cuda_heuristics, "layernorm", 768, torch.float16, monkeypatch)
    assert "rmask = rindex < rnumel" in source
    assert masked.count("cvt.f32.f16") * 4 == whole.count("cvt.f32.f16") * 3 > 0
    registers = [ptx_stats(ptx, "sm_90")["registers"] for ptx in (masked, whole)]
    assert registers[0] + 16 <= registers[1], registers
