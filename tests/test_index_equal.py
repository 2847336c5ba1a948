"""Index expressions proven equal over loop ranges (codegen/index_equal.py), and the fusion it
unblocks: a realized pointwise buffer over 4-D sizes read back by a reduction over rows of its
last dim (Swin's shifted-window attention: scores + bias + mask, then softmax)."""

from __future__ import annotations

import sympy
import torch
import torch._inductor.config as inductor_config
from torch.utils._sympy.functions import FloorDiv, ModularIndexing

from inductor_tile import metrics
from inductor_tile.backend import tile_backend
from inductor_tile.codegen.index_equal import same_address, split_row_digits
from model_benchmarks.vision_models import shifted_window_softmax

x0, r0 = sympy.symbols("x0 r0", integer=True, nonnegative=True)


def test_split_row_digits_are_the_flat_index():
    written = 2401 * FloorDiv(x0, 49) + ModularIndexing(r0 + 49 * x0, 1, 2401)
    assert same_address(written, r0 + 49 * x0, {x0: 18816, r0: 49})
    # padded rows (stride 2432 between heads): the reduction reads them at its own spelling
    padded = 2432 * FloorDiv(x0, 49) + ModularIndexing(r0 + 49 * x0, 1, 2401)
    assert same_address(padded, r0 + 49 * ModularIndexing(x0, 1, 49) + 2432 * FloorDiv(x0, 49), {x0: 18816, r0: 49})


def test_swin_scores_decoded_from_the_softmax_rows():
    # H200 Swin-T: scores [4096, 3, 49, 49] stored with padded strides (7296, 2432, 49, 1); the softmax
    # runs over rows x0 (12288 heads x windows), x1 (49), r0 (49); the scores' digits decoded from them
    x1 = sympy.Symbol("x1", integer=True, nonnegative=True)
    flat = r0 + 49 * x1 + 2401 * x0
    written = (ModularIndexing(flat, 1, 49) + 49 * ModularIndexing(flat, 49, 49) + 2432 * ModularIndexing(flat, 2401, 3)
               + 7296 * FloorDiv(flat, 7203))
    ranges = {x0: 12288, x1: 49, r0: 49}
    assert same_address(written, r0 + 49 * x1 + 2432 * x0, ranges)
    assert not same_address(written, r0 + 49 * x1 + 2401 * x0, ranges)


def test_not_shown_when_the_low_part_can_reach_the_divisor():
    written = 2401 * FloorDiv(x0, 49) + ModularIndexing(r0 + 49 * x0, 1, 2401)
    assert not same_address(written, r0 + 49 * x0, {x0: 18816, r0: 50})  # r0 = 49 carries into the next row
    assert not same_address(written, r0 + 49 * x0, {x0: 18816})  # r0 unbounded
    assert not same_address(FloorDiv(r0 + 49 * x0, 2401), FloorDiv(x0, 49) + 1, {x0: 100, r0: 49})


def test_whole_multiples_leave_a_division():
    assert same_address(FloorDiv(98 * x0 + r0, 49), 2 * x0, {x0: 7, r0: 49})
    assert same_address(ModularIndexing(r0 + 8 * x0, 4, 2), 0, {x0: 9, r0: 4})  # (2*x0 + r0 // 4) % 2


def test_split_row_digits_divides_the_row_not_the_element():
    ranges = {x0: 18816, r0: 49}
    assert split_row_digits(ModularIndexing(r0 + 49 * x0, 1, 2401), ranges) == r0 + 49 * ModularIndexing(x0, 1, 49)
    assert split_row_digits(FloorDiv(r0 + 49 * x0, 2401), ranges) == FloorDiv(x0, 49)
    # r0 may reach 49: left as it is; 49 does not divide 2400: left as it is
    wide = ModularIndexing(r0 + 49 * x0, 1, 2401)
    assert split_row_digits(wide, {x0: 18816, r0: 50}) == wide
    assert split_row_digits(ModularIndexing(r0 + 49 * x0, 1, 2400), ranges) == ModularIndexing(r0 + 49 * x0, 1, 2400)


def _compile_window_softmax(seed: int):
    """shifted_window_softmax compiled as on a GPU (Inductor realizes the scores there: 5 reads >
    realize_reads_threshold; the CPU heuristic inlines them, so the threshold is lowered to build the GPU's
    graph), checked against eager in float64."""
    g = torch.Generator().manual_seed(seed)
    attn = torch.randn(32, 3, 49, 49, generator=g, dtype=torch.float64)
    table = torch.randn(169, 3, generator=g, dtype=torch.float64)
    index = torch.randint(0, 169, (49 * 49,), generator=g)
    img = torch.randint(0, 9, (28, 28), generator=g).to(torch.float64)
    torch._dynamo.reset()
    metrics.reset()
    with inductor_config.patch(realize_reads_threshold=1):
        out = torch.compile(shifted_window_softmax, backend=tile_backend)(attn, table, index, img)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    torch.testing.assert_close(out, shifted_window_softmax(attn, table, index, img), rtol=1e-12, atol=1e-12)


def test_realized_scores_fuse_into_their_softmax():
    _compile_window_softmax(seed=0)
    reductions = [name for name in metrics.kernel_sources if name.startswith("tile_red_")]
    assert len(reductions) == 1 and len(metrics.kernel_sources) == 2, list(metrics.kernel_sources)
    (source,) = [metrics.kernel_sources[name] for name in reductions]
    assert source.count("tl.store(") == 1  # the scores stay in registers: only the probabilities are stored
    # a row's bias and mask are found with divisions of the row index only (split_row_digits)
    loads = [line for line in source.splitlines() if "tl.load(" in line and "r0" in line]
    assert loads and not any("% 2401" in line or "// 2401" in line for line in loads), loads


def test_unprovable_read_back_keeps_the_softmax_one_kernel(monkeypatch):
    # were the read-back not shown, the group splits into its longest runs that generate: the
    # scores on their own and the softmax's max, sum and normalization still one kernel
    # (scheduling._longest_runs), not a kernel per node
    import inductor_tile.codegen.index_simplify as simplify_module
    import inductor_tile.codegen.kernel as kernel_module

    monkeypatch.setattr(kernel_module, "same_address", lambda a, b, ranges: False)
    monkeypatch.setattr(simplify_module, "split_row_digits", lambda expr, ranges: expr)
    _compile_window_softmax(seed=1)
    names = list(metrics.kernel_sources)
    assert len(names) == 3 and sum(name.startswith("tile_red_") for name in names) == 1, names


def test_shown_equal_only_when_equal_everywhere():
    # random digit expressions over small ranges, checked at every point: a pair shown equal is equal
    # everywhere, and split_row_digits never changes a value
    import itertools
    import random

    x1 = sympy.Symbol("x1", integer=True, nonnegative=True)
    rng = random.Random(0)
    shown = 0
    for _ in range(300):
        sizes = {x0: rng.choice([3, 7, 12]), x1: rng.choice([2, 5, 8]), r0: rng.choice([4, 7, 8, 9])}
        c1, c2 = rng.choice([1, 2, 4, 7, 8, 9, 14, 16]), rng.choice([7, 8, 9, 28, 49, 56, 63, 64])
        base = r0 + c1 * x1 + c2 * x0
        m, d = rng.choice([2, 3, 4, 7, 8, 9, 14, 16, 28, 49, 56]), rng.choice([1, 1, 2, 4, 7])
        a = rng.choice([ModularIndexing(base, d, m), FloorDiv(base, m),
                        m * FloorDiv(base, m) + ModularIndexing(base, 1, m)])
        b = rng.choice([base, ModularIndexing(r0 + c1 * x1, 1, m) + c2 * x0, FloorDiv(c2 * x0 + c1 * x1, m),
                        r0 + c1 * ModularIndexing(x1, 1, max(1, m // c1)), ModularIndexing(base, d, m)])
        points = [dict(zip(sizes, v)) for v in itertools.product(*[range(s) for s in sizes.values()])]
        split = split_row_digits(a, sizes)
        for point in points:
            assert int(a.subs(point)) == int(split.subs(point)), (a, split, point)
        if same_address(a, b, sizes):
            shown += 1
            for point in points:
                assert int(a.subs(point)) == int(b.subs(point)), (a, b, point)
    assert shown > 20
