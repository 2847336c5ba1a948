"""torch.compile(backend="tile") on the CPU for Inductor's scans, sorts and index-bound checks:
cumsum/cumprod/logcumsumexp/cummax/cummin become `tl.associative_scan` kernels (persistent, or
looped with a carry), sort/argsort `tl.sort` kernels, and an index Inductor cannot prove in range
a `tl.device_assert` (codegen/scans.py, codegen/ops.py); none of them falls back to aten or to
Inductor's kernels. Results are compared with eager in float64."""

from __future__ import annotations

import pytest
import torch

from inductor_tile import metrics
from inductor_tile.backend import tile_backend
from inductor_tile.kernel_compiler.runtime.device_assert import DeviceAssertionError


def _compile(fn, **kwargs):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend, **kwargs)


def _rand(*shape, seed=0, dtype=torch.float32):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _kernels_with(text: str) -> list[str]:
    return [name for name, source in metrics.kernel_sources.items() if text in source]


def _assert_generated(text: str) -> None:
    """No node fell back, and some generated kernel contains `text` (the op did not stay aten)."""
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert _kernels_with(text), f"no kernel uses {text}: {list(metrics.kernel_sources)}"


def _close(actual, expected, rtol=1e-5, atol=1e-5):
    torch.testing.assert_close(actual.double(), expected.double(), rtol=rtol, atol=atol, equal_nan=True)


# ===--------------------------------------------------------------------------===
# scans
# ===--------------------------------------------------------------------------===
def scans(x, out):
    values, indices = torch.cummax(x, 1)
    out.copy_(torch.cumsum(x, 1))  # into a NaN-poisoned buffer: every element must be written
    return (torch.cumprod(x[:4], 0), torch.logcumsumexp(x, 1), values, indices, torch.cummin(x, 1)[1],
            torch.cumsum(x, 1).flip(1) * 2.0)


def test_scans_in_one_block_match_float64():
    x = _rand(6, 50)
    x[2, 10] = x[2, 30] = 3.0  # ties: cummax's index is the last one (as eager)
    out = torch.full((6, 50), float("nan"))
    got = _compile(scans)(x, out)
    _assert_generated("tl.associative_scan(")
    ref_out = torch.empty(6, 50, dtype=torch.float64)
    expected = scans(x.double(), ref_out)
    _close(out, ref_out)
    for g, e in zip(got, expected):
        _close(g, e) if e.is_floating_point() else torch.testing.assert_close(g, e)


def long_scans(x, n):
    values, indices = torch.cummax(x, 1)
    return torch.cumsum(x, 1), torch.logcumsumexp(x, 1), values, indices, torch.cumsum(n, 1)


def test_scans_over_long_rows_loop_with_a_carry():
    x, n = _rand(3, 1000, seed=1), torch.randint(-9, 9, (3, 700), dtype=torch.int32)
    got = _compile(long_scans)(x, n)
    _assert_generated("carry")  # looped: each chunk combined with the rows' carry
    expected = long_scans(x.double(), n)
    _close(got[0], expected[0], rtol=1e-5, atol=1e-4)
    _close(got[1], expected[1])
    _close(got[2], expected[2])
    torch.testing.assert_close(got[3], expected[3])
    assert got[4].dtype == torch.int64
    torch.testing.assert_close(got[4], expected[4])


def cumsum_scaled(x):
    return torch.cumsum(x, 1) * 0.5


def test_cumsum_with_dynamic_shapes():
    compiled = _compile(cumsum_scaled, dynamic=True)
    for rows, cols in ((3, 40), (5, 600)):  # one block, then a loop: the same compiled graph
        x = _rand(rows, cols, seed=cols)
        _close(compiled(x), cumsum_scaled(x.double()), atol=1e-4)
    _assert_generated("tl.associative_scan(")
    assert not metrics.recompiles, metrics.recompiles


def scan_loss(x, w):
    return (torch.cumsum(x, 1) * w).sum() + torch.logcumsumexp(x, 1).sum() + (torch.cumprod(x, 1) * w).sum()


def test_scan_backward_matches_float64():
    x, w = _rand(4, 40, seed=2).requires_grad_(), _rand(4, 40, seed=3)
    _compile(scan_loss)(x, w).backward()
    _assert_generated("tl.associative_scan(")
    x64 = x.detach().double().requires_grad_()
    scan_loss(x64, w.double()).backward()
    _close(x.grad, x64.grad, rtol=1e-4, atol=1e-4)


# ===--------------------------------------------------------------------------===
# sorts
# ===--------------------------------------------------------------------------===
def sorts(x, h, i):
    down = torch.sort(x, dim=1, descending=True, stable=True)
    return (torch.sort(x, dim=1, stable=True), down.values, down.indices, torch.argsort(x, dim=0, stable=True),
            torch.sort(h, dim=1).values, torch.sort(i, dim=1, stable=True).indices,
            torch.sort(i, dim=1, descending=True, stable=True).indices)


def test_sort_and_argsort_match_eager():
    x = _rand(6, 37)
    x[0, 3] = x[0, 9] = float("nan")  # after every number (before, descending)
    x[1, :] = 1.0  # all equal: stable keeps the order
    x[2, 4], x[2, 5], x[2, 6] = -0.0, 0.0, -0.0  # equal keys
    x[3, 7], x[3, 8] = float("-inf"), float("inf")
    h = _rand(5, 20, seed=4, dtype=torch.float16)
    i = torch.randint(-4, 4, (4, 100), generator=torch.Generator().manual_seed(5), dtype=torch.int16)
    got = _compile(sorts)(x, h, i)
    _assert_generated("tl.sort(")
    expected = sorts(x, h, i)
    (values, indices), (ref_values, ref_indices) = got[0], expected[0]
    torch.testing.assert_close(values, ref_values, equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(indices, ref_indices)
    # the signed zeros come back in place (values are gathered, not rebuilt from the keys)
    assert torch.equal(torch.signbit(values), torch.signbit(ref_values))
    for g, e in zip(got[1:], expected[1:]):
        torch.testing.assert_close(g, e, equal_nan=True, rtol=0, atol=0)


def test_sort_by_64bit_keys_stays_with_aten():
    keys = torch.randint(-2**40, 2**40, (3, 30), generator=torch.Generator().manual_seed(6))
    got = _compile(lambda k: torch.argsort(k, dim=1, stable=True) + 1)(keys)
    torch.testing.assert_close(got, torch.argsort(keys, dim=1, stable=True) + 1)
    assert metrics.fallback_kernels == 0 and not _kernels_with("tl.sort("), metrics.fallback_reasons


# ===--------------------------------------------------------------------------===
# index-bound asserts
# ===--------------------------------------------------------------------------===
def add_positions(x, table):
    return x + table[torch.arange(x.shape[0])]


def test_index_bound_check_becomes_a_device_assert():
    table = _rand(40, seed=7)
    compiled = _compile(add_positions, dynamic=True)  # arange(s0) < 40 is unknown at compile time
    x = _rand(30, seed=8)
    _close(compiled(x, table), add_positions(x.double(), table.double()))
    _assert_generated("tl.device_assert(")
    assert any("debug=True" in metrics.kernel_sources[name] for name in _kernels_with("tl.device_assert("))
    with pytest.raises(DeviceAssertionError, match="index out of bounds"):
        compiled(_rand(45, seed=9), table)  # eager raises an IndexError


def test_scans_config_picks_the_devices(monkeypatch):
    """config.scans: "on" (default) everywhere, "cpu" keeps Inductor's scan kernels on GPUs, "off" nowhere."""
    from inductor_tile import config
    from inductor_tile.scheduler.scan_gate import _device_wanted

    cuda, cpu = torch.device("cuda"), torch.device("cpu")
    monkeypatch.setattr(config, "scans", "cpu")
    assert _device_wanted((), {"device": cpu}) and _device_wanted((cpu,), {})
    assert not _device_wanted((), {"device": cuda}) and not _device_wanted((cuda,), {})
    monkeypatch.setattr(config, "scans", "on")
    assert _device_wanted((), {"device": cuda})
    monkeypatch.setattr(config, "scans", "off")
    assert not _device_wanted((), {"device": cpu})
