"""Block sizes and warps of generated kernels (inductor_tile.codegen.heuristics).

The choices are pure functions of size hints, tested directly; then the CUDA choices are
exercised end to end on this CPU-only machine: the scheduler is told the nodes are on
"cuda" (only the heuristics read that), so the wrapper launches with the GPU's blocks and
``num_warps``; the kernels still run on the CPU target and must match eager, and each
generated kernel is compiled to PTX for sm_90 with its warps and checked by ptxas.
"""

import math
import platform
import re

import pytest
import torch
from torch._inductor.utils import run_and_get_code

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from inductor_tile.codegen import heuristics
from inductor_tile.codegen.heuristics import LaunchConfig, next_pow2
from inductor_tile.scheduler import scheduling

# -- the choices --------------------------------------------------------------------------------


CPU_BLOCKS = dict(pointwise_block=1024, max_rblock=1024, max_block_elems=1024, loop_rblock=256,
                  loop_block_elems=1024, gather_block_elems=128)


def test_cpu_choices_follow_config():
    with config.patch(**CPU_BLOCKS):
        assert heuristics.pointwise("cpu", 37 * 53) == LaunchConfig(1024)
        assert heuristics.pointwise("cpu", 50) == LaunchConfig(64)
        assert heuristics.pointwise("cpu", 5000, gather=True) == LaunchConfig(128)
        # a row of 53 fits one block: persistent, several rows per program
        assert heuristics.reduction("cpu", 37, 53, 53) == LaunchConfig(16, 64, persistent=True)
        # longer than max_rblock: looped with loop_rblock
        assert heuristics.reduction("cpu", 6, 3000, 3000) == LaunchConfig(4, 256, persistent=False)
        # gathers get small tiles
        assert heuristics.reduction("cpu", 3000, 6, 6, gather=True) == LaunchConfig(16, 8, persistent=True)
    with config.patch(pointwise_block=256, max_rblock=256, max_block_elems=256):
        assert heuristics.pointwise("cpu", 37 * 53) == LaunchConfig(256)
        assert heuristics.reduction("cpu", 37, 53, 53) == LaunchConfig(4, 64, persistent=True)
        assert not heuristics.reduction("cpu", 37, 300, 300).persistent
    for choice in (heuristics.pointwise("cpu", 10**6), heuristics.reduction("cpu", 10, 10, 10)):
        assert choice.num_warps is None  # the CPU target runs one thread per program


def test_unbounded_reductions_loop():
    for device in ("cpu", "cuda"):
        assert not heuristics.reduction(device, 7, 33, None).persistent
        assert heuristics.reduction(device, 7, 33, 33).persistent


def test_gpu_pointwise():
    assert heuristics.pointwise("cuda", 1 << 20) == LaunchConfig(1024, num_warps=4)
    # large tensors too: 8 fp16 elements (16 bytes) per thread, not 4 on 8 warps (half-width accesses)
    assert heuristics.pointwise("cuda", 1 << 25) == LaunchConfig(1024, num_warps=4)
    assert heuristics.pointwise("cuda", 1 << 26) == LaunchConfig(1024, num_warps=4)
    # mid-sized: smaller blocks so that there are programs for every SM
    assert heuristics.pointwise("cuda", 1 << 16) == LaunchConfig(512, num_warps=4)
    assert heuristics.pointwise("cuda", 1000) == LaunchConfig(256, num_warps=4)
    assert heuristics.pointwise("cuda", 50) == LaunchConfig(64, num_warps=2)


def test_gpu_persistent_reductions():
    # one row per program, warps growing with the row: 8 elements per thread, 16 from 4096 on
    assert heuristics.reduction("cuda", 512, 1024, 1024) == LaunchConfig(1, 1024, True, 4)
    assert heuristics.reduction("cuda", 8192, 2048, 2048) == LaunchConfig(1, 2048, True, 8)
    assert heuristics.reduction("cuda", 8192, 3000, 3000) == LaunchConfig(1, 4096, True, 8)
    # many rows of 256 to 1024: 1024 elements per program on 4 warps (the one-warp rule is off)
    assert heuristics.reduction("cuda", 16384, 768, 768) == LaunchConfig(1, 1024, True, 4)
    assert heuristics.reduction("cuda", 49152, 512, 512) == LaunchConfig(2, 512, True, 4)
    assert heuristics.reduction("cuda", 1 << 16, 200, 200) == LaunchConfig(4, 256, True, 4)
    # short rows: several per program
    assert heuristics.reduction("cuda", 1 << 16, 64, 64) == LaunchConfig(16, 64, True, 4)
    # ... but not so many that the grid leaves SMs idle
    assert heuristics.reduction("cuda", 512, 64, 64) == LaunchConfig(2, 64, True, 1)
    # strided reductions are persistent only when short
    assert heuristics.reduction("cuda", 8192, 32, 32, gather=True).persistent
    assert not heuristics.reduction("cuda", 8192, 128, 128, gather=True).persistent


def test_gpu_one_warp_rows_when_on(monkeypatch):
    # the rule as data: many rows of 256 to 1024 elements take one warp per program, 1024 elements
    # (reductions in shuffles only); few rows keep 4 warps
    monkeypatch.setattr(heuristics, "GPU_ONE_WARP_ROWS", (256, 1024))
    assert heuristics.reduction("cuda", 16384, 768, 768) == LaunchConfig(1, 1024, True, 1)
    assert heuristics.reduction("cuda", 49152, 512, 512) == LaunchConfig(2, 512, True, 1)
    assert heuristics.reduction("cuda", 1 << 16, 200, 200) == LaunchConfig(4, 256, True, 1)
    assert heuristics.reduction("cuda", 1000, 768, 768) == LaunchConfig(1, 1024, True, 4)
    assert heuristics.reduction("cuda", 16384, 768, 768, gather=True) != LaunchConfig(1, 1024, True, 1)


def test_gpu_wide_rows():
    # rows of 8192 and 16384 stay persistent with 16 warps (16 or 32 fp32 per thread: one read
    # of the row instead of two); longer ones loop
    assert heuristics.reduction("cuda", 4096, 8192, 8192) == LaunchConfig(1, 8192, True, 16)
    assert heuristics.reduction("cuda", 4096, 10000, 10000) == LaunchConfig(1, 16384, True, 16)
    for r in (16385, 32768):
        assert heuristics.reduction("cuda", 4096, r, r) == LaunchConfig(1, 2048, False, 16)
    # a dynamic row of hint 100: looped, RBLOCK from the hint, several rows per program
    assert heuristics.reduction("cuda", 1 << 16, 100, None) == LaunchConfig(16, 128, False, 16)
    # column sums loop over rows with 512 elements per step; `columns` is for the CPU only.
    # Many columns: 64 per program (the first stages of Inductor's split sums, [128 rows x 768k])
    assert heuristics.reduction("cuda", 98304, 128, 128, gather=True, columns=True) == LaunchConfig(64, 8, False, 4)
    # up to 36863 columns (a vocabulary bias gradient, 30522): 16 per program, so ~2000 programs
    assert heuristics.reduction("cuda", 30522, 16384, 16384, gather=True) == LaunchConfig(16, 32, False, 4)
    assert heuristics.reduction("cuda", 8192, 8192, 8192, gather=True) == LaunchConfig(16, 32, False, 4)
    # up to 1024 (second stages of split sums, [768] from [128 x 768]): 2 to 8 per program
    assert heuristics.reduction("cuda", 768, 128, 128, gather=True) == LaunchConfig(8, 64, False, 4)
    assert heuristics.reduction("cuda", 20, 8192, 8192, gather=True) == LaunchConfig(2, 256, False, 4)


@pytest.mark.parametrize("gather", [False, True])
def test_gpu_choices_are_sane_for_every_size(gather):
    for x in [1, 3, 17, 100, 1000, 4096, 65536, 1 << 20]:
        for r in [1, 2, 7, 64, 100, 255, 1024, 3000, 4096, 5000, 100000]:
            for bound in (r, None):
                c = heuristics.reduction("cuda", x, r, bound, gather)
                assert c.xblock == next_pow2(c.xblock) and c.rblock == next_pow2(c.rblock)
                assert c.num_warps == next_pow2(c.num_warps) and 1 <= c.num_warps <= 16
                assert c.xblock <= next_pow2(x)
                assert c.xblock * c.rblock <= (4096 if not c.persistent else 16384)
                # at most 16 elements per thread (32 in persistent rows of over 8192 elements
                # and in one-warp programs of 1024 elements)
                wide = c.rblock > 8192 or (c.persistent and c.num_warps == 1)
                assert c.xblock * c.rblock <= (32 if wide else 16) * 32 * c.num_warps
                if c.persistent:
                    assert bound is not None and c.rblock >= r
        c = heuristics.pointwise("cuda", x, gather)
        assert c.xblock <= 1024 and c.num_warps in (1, 2, 4, 8)


def test_warps_grow_with_the_row():
    warps = [heuristics.reduction("cuda", 1000, r, r).num_warps for r in (256, 512, 1024, 2048, 4096)]
    assert warps == sorted(warps) and warps[0] < warps[-1] == 8  # persistent: at most 8 warps
    looped = [heuristics.reduction("cuda", 1 << 16, r, None).num_warps for r in (128, 512, 2048)]
    assert looped == sorted(looped) and looped[-1] == 16


def test_candidates():
    for chosen, reduction in [(heuristics.pointwise("cuda", 1 << 20), False),
                              (heuristics.reduction("cuda", 8192, 1024, 1024), True),
                              (heuristics.reduction("cuda", 64, 64, 64), True),
                              (heuristics.reduction("cuda", 8192, 8192, 8192), True)]:
        cands = heuristics.candidates("cuda", chosen, reduction)
        assert cands[0] == chosen and 2 <= len(cands) <= 5 and len(set(cands)) == len(cands)
        assert all(c.persistent == chosen.persistent for c in cands)
        if chosen.persistent:  # the block must still cover the row
            assert all(c.rblock == chosen.rblock for c in cands)
    cpu = heuristics.reduction("cpu", 64, 64, 64)
    assert heuristics.candidates("cpu", cpu, True) == [cpu]


def test_candidates_of_rows_of_256_to_1024_include_one_warp():
    # the forward norms are faster on one warp, kernels with Philox chains slower: tuning decides
    for rows, cols in [(16384, 768), (49152, 512), (1 << 16, 256)]:
        chosen = heuristics.reduction("cuda", rows, cols, cols)
        cands = heuristics.candidates("cuda", chosen, True)
        assert cands[0] == chosen and chosen.num_warps == 4 and len(cands) <= 5
        assert LaunchConfig(chosen.xblock, chosen.rblock, True, 1) in cands
    wide = heuristics.reduction("cuda", 8192, 2048, 2048)
    assert all(c.num_warps > 1 for c in heuristics.candidates("cuda", wide, True))


def test_channels_last_means_also_try_inductors_outer_tile():
    """EfficientNet's squeeze-excitation means (channels-last [N, HW, C], reduced over HW): N*C = 24576
    "columns" in runs of only C = 96, so 16 columns a program read 32 of every 192 bytes a row; the
    tuner also tries 64 columns x 8 rows. Row reductions' loops do not get it."""
    chosen = heuristics.reduction("cuda", 24576, 3136, 3136, gather=True, columns=True)
    assert (chosen.xblock, chosen.persistent) == (16, False)
    assert LaunchConfig(64, 8, False, 4) in heuristics.candidates("cuda", chosen, True)
    rows = heuristics.reduction("cuda", 8192, 8192, 8192)
    assert all(c.xblock < 64 for c in heuristics.candidates("cuda", rows, True))


# -- CUDA choices in generated code (on the CPU) -------------------------------------------------


def _compile_run(fn, *args, **kwargs):
    torch._dynamo.reset()
    metrics.reset()
    out, codes = run_and_get_code(torch.compile(fn, backend=tile_backend, **kwargs), *args)
    ref = fn(*args)
    for o, r in zip(out if isinstance(out, tuple) else (out,), ref if isinstance(ref, tuple) else (ref,)):
        torch.testing.assert_close(o, r, rtol=1e-12, atol=1e-12)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    return "\n".join(codes)


def _launches(code: str) -> dict[str, str]:
    """Each kernel's launch (`metrics.launch_lines`), checked to be what the wrapper launches."""
    for name, line in metrics.launch_lines.items():
        if "lambda meta" in line:  # autotuned: a TunedLaunchSite holding the grid(meta) of the line
            grid = line[line.index("[") + 1:line.index("](")]
            assert f"{name}.launcher(grid={grid})" in code, (name, code)
            assert re.search(rf"{name}_launch\d+\.run\(None, ", code), code
            continue
        kwargs = line[line.index("XBLOCK") if "YBLOCK" not in line else line.index("YBLOCK"):-1]
        assert f"{name}.launcher({kwargs})" in code, (name, line, code)
        assert re.search(rf"{name}_launch\d+\.run\(\(", code), code
    return dict(metrics.launch_lines)


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def pointwise_and_reductions(x, w):
    return torch.relu(x * w) + 1.0, torch.softmax(x, -1), x.sum(0)


def test_cuda_launch_lines_carry_num_warps(cuda_heuristics):
    x, w = _rand(40, 300), _rand(300, seed=1)
    code = _compile_run(pointwise_and_reductions, x, w)
    launches = _launches(code)
    assert len(launches) == metrics.generated_kernels >= 2
    for line in launches.values():
        assert re.search(r"num_warps=\d+\)$", line), line
    softmax = next(line for name, line in launches.items() if "softmax" in name)
    assert "RBLOCK=512, num_warps=2" in softmax and "XBLOCK=1," in softmax  # one row of 300 per program


def test_cpu_launch_lines_have_no_num_warps():
    code = _compile_run(pointwise_and_reductions, _rand(40, 300), _rand(300, seed=1))
    assert "num_warps" not in code


def test_cuda_launch_with_dynamic_shapes(cuda_heuristics):
    fn = lambda t: (torch.softmax(t, -1), t * 2.0)  # noqa: E731
    code = _compile_run(fn, _rand(7, 33), dynamic=True)
    for line in _launches(code).values():
        assert "num_warps=" in line, line
        assert not re.match(r"tile_\w+\[\(\d+, 1, 1\)\]", line), line  # the grid comes from the symbolic numel


needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@needs_ptxas
def test_generated_cuda_kernels_assemble_with_their_warps(cuda_heuristics):
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    code = _compile_run(pointwise_and_reductions, _rand(40, 300), _rand(300, seed=1))
    launches = _launches(code)
    assert len(cuda_heuristics) == len(launches)
    for fn, signature, constexprs in cuda_heuristics:
        line = next(line for name, line in launches.items() if name == fn.__name__)
        num_warps = int(re.search(r"num_warps=(\d+)", line).group(1))
        specs = [spec_from_signature(n, "constexpr", constexprs[n]) if n in constexprs
                 else spec_from_signature(n, signature[n], divisible_by_16=signature[n].startswith("*"))
                 for n in fn.arg_names]
        ptx = compile_specialized(fn, specs, target="cuda:90", num_warps=num_warps, native=False).asm["ptx"]
        assert f".maxntid {32 * num_warps}" in ptx
        check_ptx(ptx, "sm_90", fn.__name__)


def test_autotune_reductions_only(cuda_heuristics, monkeypatch):
    # TILE_AUTOTUNE=reductions: reduction kernels are tuned, pointwise ones keep the heuristic's launch
    monkeypatch.setattr(config, "autotune", "reductions", raising=False)
    x, w = _rand(40, 300), _rand(300, seed=1)
    code = _compile_run(lambda x, w: (torch.relu(w) + 1.0, torch.softmax(x, -1)), x, w)  # two kernels
    launches = _launches(code)
    tuned = [line for line in launches.values() if "lambda meta" in line]
    fixed = [line for line in launches.values() if "lambda meta" not in line]
    assert tuned and fixed and "autotune=[{" in code
    assert all("RBLOCK" not in line and "num_warps=" in line for line in fixed)  # the pointwise kernels


def test_autotune_among_gpu_configs(cuda_heuristics, monkeypatch):
    monkeypatch.setattr(config, "autotune", True, raising=False)
    x, w = _rand(40, 300), _rand(300, seed=1)
    code = _compile_run(pointwise_and_reductions, x, w)
    assert "autotune=[{" in code and "lambda meta:" in code
    for line in _launches(code).values():
        assert "num_warps" not in line and "XBLOCK=" not in line  # the autotuner passes them
    # a second call reuses the tuned choice and still agrees with eager
    out = torch.compile(pointwise_and_reductions, backend=tile_backend)(x, w)
    torch.testing.assert_close(out, pointwise_and_reductions(x, w), rtol=1e-12, atol=1e-12)


def _generated_kernels(monkeypatch, fn, *args):
    """Compile fn with backend tile on the CPU; return the TileKernelSource of every generated kernel."""
    import torch

    from inductor_tile.backend import tile_backend
    from inductor_tile.scheduler import scheduling

    seen = []
    generate = scheduling._generate

    def spy(kernel):
        source = generate(kernel)
        seen.append(kernel)
        return source

    monkeypatch.setattr(scheduling, "_generate", spy)
    torch._dynamo.reset()
    out = torch.compile(fn, backend=tile_backend)(*args)
    torch.testing.assert_close(out, fn(*args), rtol=1e-12, atol=1e-12)
    return [k for k in seen if k.name != "probe"]


def test_gpu_tile_shape_follows_the_reduced_dims_stride(monkeypatch):
    """A softmax over attention scores plus a broadcast mask is a row reduction on a GPU (the CPU
    calls it a gather); a sum over dim 0 steps through memory along the reduced dim."""
    import torch

    from inductor_tile.scheduler import scheduling

    g = torch.Generator().manual_seed(0)
    scores = torch.randn(2, 3, 16, 16, generator=g, dtype=torch.float64)
    mask = torch.randn(2, 16, generator=g, dtype=torch.float64)
    kernels = _generated_kernels(monkeypatch, lambda s, m: torch.softmax(s + m[:, None, None, :], -1), scores, mask)
    masked = [k for k in kernels if "add" in k.name]
    assert masked and all(k.gather for k in masked)
    assert all(scheduling._wants_gather_shape(k, "cpu") for k in masked)
    assert not any(scheduling._wants_gather_shape(k, "cuda") for k in kernels)

    x = torch.randn(64, 48, generator=g, dtype=torch.float64)
    kernels = _generated_kernels(monkeypatch, lambda x: x.sum(0), x)
    assert kernels and all(k.strided_reduction for k in kernels)
    assert all(scheduling._wants_gather_shape(k, "cuda") for k in kernels)


def test_cpu_column_sums_take_many_columns_and_few_rows():
    # one contiguous load of up to 128 columns per row, instead of a 128-row gather per column
    assert heuristics.reduction("cpu", 512, 1024, 1024, gather=True, columns=True) == LaunchConfig(128, 2, False)
    assert heuristics.reduction("cpu", 300, 5000, None, gather=True, columns=True) == LaunchConfig(128, 2, False)
    assert heuristics.reduction("cpu", 20, 4, 4, gather=True, columns=True) == LaunchConfig(32, 4, True)
    # other gathers keep the small gather tiles
    assert heuristics.reduction("cpu", 512, 1024, 1024, gather=True) == LaunchConfig(1, 128, False)


def test_random_number_kernels_get_warps_for_four_elements_per_thread():
    launch = heuristics.reduction("cuda", 196608, 512, 512)
    assert launch.xblock * launch.rblock // (32 * launch.num_warps) > heuristics.GPU_RANDOM_ELEMS_PER_THREAD
    tuned = heuristics.for_random_numbers("cuda", launch)
    assert (tuned.xblock, tuned.rblock) == (launch.xblock, launch.rblock)
    assert tuned.xblock * tuned.rblock // (32 * tuned.num_warps) == heuristics.GPU_RANDOM_ELEMS_PER_THREAD
    assert heuristics.for_random_numbers("cpu", heuristics.reduction("cpu", 4096, 512, 512)).num_warps is None
    few = heuristics.LaunchConfig(2, 64, True, 4)  # already at most 4 per thread: unchanged
    assert heuristics.for_random_numbers("cuda", few) == few


def attention_dropout(scores, mask):
    return torch.nn.functional.dropout(torch.softmax(scores / 8.0 + mask, -1), 0.1, training=True), scores * 2.0


def test_dropout_kernels_get_more_warps(monkeypatch):
    monkeypatch.setattr(scheduling, "_heuristics_device", lambda nodes: "cuda")
    monkeypatch.setattr(config, "autotune", False)
    torch._dynamo.reset()
    metrics.reset()
    scores, mask = _rand(2, 4, 64, 512), _rand(2, 1, 1, 512, seed=1)
    probs, doubled = torch.compile(attention_dropout, backend=tile_backend)(scores, mask)
    kept = probs != 0
    assert 0.85 < kept.double().mean().item() < 0.95  # dropout p=0.1 did drop
    torch.testing.assert_close(probs[kept], (torch.softmax(scores / 8.0 + mask, -1) / 0.9)[kept], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(doubled, scores * 2.0)
    dropout = [line for line in metrics.launch_lines.values() if "dropout" in line or "rand" in line]
    assert dropout, metrics.launch_lines
    for line in dropout:
        blocks = [int(v) for v in re.findall(r"[XYR]BLOCK=(\d+)", line)]
        warps = int(re.search(r"num_warps=(\d+)", line).group(1))
        assert math.prod(blocks) // (32 * warps) <= heuristics.GPU_RANDOM_ELEMS_PER_THREAD, line


def embedding_layer_norm(ids, table, w, b):
    return torch.nn.functional.layer_norm(table[ids] * 2.0, (table.shape[1],), w, b)


def test_gpu_persistent_reductions_load_first(cuda_heuristics):
    # a norm's weights load with its rows, before the reductions (whose barriers keep ptxas from
    # moving loads up); an indirect load (embedding rows) cannot move above its index
    ids = torch.randint(0, 50, (64,), generator=torch.Generator().manual_seed(2))
    table, w, b = _rand(50, 384), _rand(384, seed=1), _rand(384, seed=3)
    _compile_run(embedding_layer_norm, ids, table, w, b)
    (source,) = metrics.kernel_sources.values()
    first_sum = source.index("tl.sum(")
    weights = [m.start() for m in re.finditer(r"tl\.load\(in_ptr[0-9] \+ r0,", source)]
    assert len(weights) == 2 and max(weights) < first_sum, source
    rows = re.search(r"(tmp\d+) = tl\.load\(in_ptr\d+ \+ \(.*tmp", source)  # the gathered rows ...
    assert rows and source.index(rows.group(0)) > source.index("tl.load(in_ptr0 + x0"), source  # ... after the ids


def test_row_reduction_with_a_transposed_epilogue_keeps_its_row_shape(monkeypatch):
    """An RMSNorm over head dims followed by a rotary embedding whose output is stored transposed
    (Qwen3's q/k norm): the epilogue's strided store and the cat's halves do not make it a column
    sum on a GPU, and the halves (masked blocks of the cat) read the sum of squares from registers,
    not back from memory (which other threads of a GPU program may not have written yet)."""
    import torch
    import torch._inductor.config as inductor_config

    from inductor_tile.scheduler import scheduling

    B, S, H, D = 2, 8, 4, 16
    g = torch.Generator().manual_seed(0)

    def norm_rotary(q, w, cos, sin):
        q = q.view(B, S, H, D)
        q = q * torch.rsqrt(q.pow(2).mean(-1, keepdim=True) + 1e-6) * w
        q = q.transpose(1, 2)
        out = q * cos + torch.cat((-q[..., D // 2:], q[..., :D // 2]), -1) * sin
        return out.transpose(-1, -2).contiguous()  # stored with the head dim strided

    shapes = ((B, S, H * D), (D,), (1, 1, S, D), (1, 1, S, D))
    args = tuple(torch.randn(*shape, generator=g, dtype=torch.float64) for shape in shapes)
    with inductor_config.patch(force_pointwise_cat=True):  # the cat as a GPU lowers it (config.patch: monkeypatch's
        kernels = _generated_kernels(monkeypatch, norm_rotary, *args)  # undo deletes a config module's entry)
    assert len({k.name for k in kernels}) == 1, [k.name for k in kernels]  # one kernel (its source made twice)
    kernel = kernels[-1]
    assert not kernel.strided_reduction and not scheduling._wants_gather_shape(kernel, "cuda")
    source = "\n".join(kernel.lines)
    assert "tl.load(out_ptr" not in source and len(kernel.out_args) == 1


def test_pointwise_candidates_include_inductors_second_config():
    # Inductor tunes 1-D pointwise kernels between XBLOCK at 256 elements per warp and half of it at 64
    chosen = heuristics.pointwise("cuda", 1 << 24)
    cands = heuristics.candidates("cuda", chosen, False)
    assert (chosen.xblock, chosen.num_warps) == (1024, 4)
    assert LaunchConfig(512, 1, chosen.persistent, 8) in cands and len(cands) <= 5
