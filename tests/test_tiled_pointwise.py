"""Pointwise kernels over 2-D [YBLOCK, XBLOCK] tiles for transposed accesses
(`config.tiled_pointwise`; GPUs by default, forced on here so the CPU target runs them)."""

from __future__ import annotations

import pytest
import torch

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from inductor_tile.codegen import heuristics


def _run(fn, *args, tiled="on"):
    torch._dynamo.reset()
    metrics.reset()
    with config.patch(tiled_pointwise=tiled):
        out = torch.compile(fn, backend=tile_backend)(*args)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    return out


def _rand(*shape, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype)


def _tiled_sources() -> list[str]:
    return [s for s in metrics.kernel_sources.values() if "YBLOCK" in s]


def _check(out, ref, atol=1e-12):
    for o, r in zip(out, ref):
        assert o.dtype == r.dtype and o.shape == r.shape
        torch.testing.assert_close(o, r, rtol=atol, atol=atol)


def head_permute(q, bias):
    # attention's key transpose: [B, S, H, D] -> [B, H, D, S] materialized, scaled, cast, plus a
    # bias broadcast along the transposed dim
    k = q.permute(0, 2, 3, 1) * 0.125 + bias[None, None, :, None]
    return k.contiguous().to(torch.float32), torch.tanh(k).contiguous()


def test_transpose_with_ragged_edges_matches_eager():
    x = _rand(37, 53)  # neither side a multiple of the tile
    fn = lambda x: ((x.t() * 2.0 + 1.0).contiguous(), torch.sigmoid(x.t()).contiguous())  # noqa: E731
    _check(_run(fn, x), fn(x))
    (source,) = _tiled_sources()
    assert "yindex = (tl.program_id(0) // xprograms) * YBLOCK" in source
    assert "xmask = (yindex < ynumel) & (xindex < xnumel)" in source
    (line,) = metrics.launch_lines.values()
    assert "YBLOCK=16, XBLOCK=16" in line and "[(12, 1, 1)]" in line  # 3 x 4 tiles of 16 x 16


def test_head_permute_splits_between_the_transposed_dims():
    q, bias = _rand(2, 40, 3, 24), _rand(24, seed=1)
    _check(_run(head_permute, q, bias), head_permute(q, bias), atol=1e-6)
    sources = _tiled_sources()
    assert sources, metrics.kernel_sources
    # loop dims [B, H, D] x [S]: the load steps by one along D, the store along S
    assert all("ynumel" in s and "xnumel" in s for s in sources)


def test_half_precision_transpose():
    x = _rand(64, 96, dtype=torch.float16, seed=3)
    fn = lambda x: (x.t().float() * 3.0).contiguous()  # noqa: E731
    out = _run(fn, x)
    torch.testing.assert_close(out, fn(x.double()).float(), rtol=1e-6, atol=1e-6)
    assert _tiled_sources()


def test_a_halved_dim_counts_as_consecutive_for_tiling():
    """Grouped-query attention's repeated key heads read a [B, D, S, Hkv] buffer (as Inductor lays out
    the rotary embedding's output) at h // 2: steps of 0 and 1, consecutive for a tile along h."""
    import sympy
    from torch.utils._sympy.functions import FloorDiv

    from inductor_tile.codegen.kernel import _tile_strides

    b, h, s, d = sympy.symbols("x0 x1 x2 x3", integer=True, nonnegative=True)
    sizes = [8, 16, 512, 128]
    read = 524288 * b + FloorDiv(h, 2) + 8 * s + 4096 * d
    assert _tile_strides(read, [b, h, s, d], sizes, [524288, 0, 8, 4096]) == [524288, 1, 8, 4096]
    broadcast = 4096 * d + 8 * s  # h unused: stays 0
    assert _tile_strides(broadcast, [b, h, s, d], sizes, [0, 0, 8, 4096]) == [0, 0, 8, 4096]
    quarter_rows = 64 * FloorDiv(h, 4) + d  # h // 4 rows apart: 16 elements per step on average
    assert _tile_strides(quarter_rows, [b, h, s, d], sizes, [0, 0, 0, 1]) == [0, 0, 0, 1]


def test_contiguous_kernels_stay_one_dimensional():
    x, y = _rand(37, 53), _rand(37, 53, seed=1)
    fn = lambda x, y: (x * y + 1.0, torch.relu(x).t() + 0.0)  # noqa: E731
    _check(_run(fn, x, y, tiled="off"), fn(x, y))
    assert not _tiled_sources()
    _run(lambda x, y: x * y + 1.0, x, y)
    assert not _tiled_sources()  # nothing transposed: no reason to tile


@pytest.mark.parametrize("value,expected", [("", "gpu"), ("GPU", "gpu"), ("1", "on"), ("off", "off"), ("no", "off")])
def test_environment_setting(monkeypatch, value, expected):
    monkeypatch.setenv("TILE_TILED_POINTWISE", value)
    assert config._env_choice("TILE_TILED_POINTWISE", "gpu", ("gpu", "on", "off")) == expected


def test_unknown_environment_setting_warns_and_keeps_the_default(monkeypatch):
    monkeypatch.setenv("TILE_TILED_POINTWISE", "sometimes")
    with pytest.warns(UserWarning, match="TILE_TILED_POINTWISE='sometimes' is not one of gpu, on, off"):
        assert config._env_choice("TILE_TILED_POINTWISE", "gpu", ("gpu", "on", "off")) == "gpu"


def test_default_tiles_on_gpus_only():
    with config.patch(tiled_pointwise="gpu"):
        assert heuristics.use_tiled_pointwise("cuda") and not heuristics.use_tiled_pointwise("cpu")


@pytest.mark.parametrize("device,side,warps", [("cuda", 64, 8), ("cpu", 16, None)])
def test_tiled_launch_config(device, side, warps):
    launch = heuristics.pointwise_tiled(device, 24576, 512, 2)
    assert (launch.yblock, launch.xblock, launch.num_warps, launch.ysplit) == (side, side, warps, 2)
    assert list(launch.launch_kwargs(False))[:2] == ["YBLOCK", "XBLOCK"]
    small = heuristics.pointwise_tiled(device, 20, 5, 1)
    assert (small.yblock, small.xblock) == (min(side, 32), 8)
    for cand in heuristics.candidates(device, launch, False):
        assert cand.ysplit == 2  # autotuning keeps the kernel's shape


def _split_of(accesses, syms, sizes) -> int:
    """`TileKernelSource.transposed_split` of a static 1-D pointwise kernel over `syms` with these accesses."""
    from types import SimpleNamespace

    from torch._inductor.sizevars import SizeVarAllocator
    from torch._inductor.virtualized import V

    from inductor_tile.codegen.kernel import TileKernelSource

    kernel = SimpleNamespace(plan=SimpleNamespace(kind="pointwise", is_static=True, xsizes=sizes), tiled=False,
                             xsyms=syms, accesses=accesses)
    with V.set_graph_handler(SimpleNamespace(sizevars=SizeVarAllocator())):
        return TileKernelSource.transposed_split(kernel)


def test_channels_last_walked_in_nchw_order_tiles_along_the_channels():
    """EfficientNet's squeeze-excitation product on the H200: [N, C, HW] loop order over channels-last
    tensors (every access strided by C along the last loop dim, contiguous along C). A [N*C, HW] tile
    coalesces both (the 1-D kernel read 2 bytes in every 192); the per-channel scale is a broadcast."""
    import sympy

    n, c, hw = sympy.symbols("x0 x1 x2", integer=True, nonnegative=True)
    sizes = [256, 96, 3136]
    big = c + 96 * hw + 301056 * n
    scale = c + 96 * n
    assert _split_of([scale, big, big], [n, c, hw], sizes) == 2
    assert _split_of([c + 96 * hw + 301056 * n], [n, c, hw], [256, 8, 3136]) == 0  # 8 channels: too few
    contiguous = hw + 3136 * c + 301056 * n
    assert _split_of([contiguous, contiguous], [n, c, hw], sizes) == 0  # nothing strided: stays 1-D
    assert _split_of([contiguous, big], [n, c, hw], sizes) == 2  # a transpose, as before


def test_squeeze_excitation_over_channels_last_matches_eager():
    x = _rand(2, 32, 9, 11).to(memory_format=torch.channels_last)
    w = _rand(32, seed=1)

    def fn(x, w):
        s = torch.sigmoid(x.mean((2, 3), keepdim=True) * w[None, :, None, None])
        return torch.nn.functional.silu(x) * s

    out = _run(fn, x, w)
    torch.testing.assert_close(out, fn(x, w), rtol=1e-12, atol=1e-12)


def stem_to_channels_last(images):
    # a CNN's first step: NCHW images copied to channels-last, 3 channels (scaled, so it is a kernel)
    return (images * 0.5).contiguous(memory_format=torch.channels_last)


def test_stem_copy_to_channels_last_stays_1d():
    # the channels' dim is 3 long: tiled over batch and channels it measured 2x slower than 1-D
    images = _rand(6, 3, 20, 24)
    out = _run(stem_to_channels_last, images)
    ref = stem_to_channels_last(images)
    assert out.stride() == ref.stride()
    _check([out], [ref])
    assert not _tiled_sources()
