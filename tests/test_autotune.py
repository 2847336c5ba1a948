"""Autotuning (Triton's API): choosing configs, skipping failing ones, reset_to_zero,
restore_value, heuristics, pruning, the tuning database, and do_bench.

Benchmarks are replaced by a deterministic stub (`do_bench=`) that runs the kernel and
returns a fake time per config, so the choice is known in advance. Outputs are poisoned
with NaN and compared with torch.
"""

from __future__ import annotations

import logging
import sys

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile import Config
from inductor_tile.kernel_compiler.runtime import autotuner, disk_cache, tuning_db
from inductor_tile.kernel_compiler.runtime.autotuner import AutotuneError
from inductor_tile.testing import do_bench
from suite import poison


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILE_CACHE_DISABLE", raising=False)
    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    autotuner.stats.reset()
    yield tmp_path / "cache"
    tuning_db.forget_connections()


@inductor_tile.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + tl.sin(y), mask=mask)


@inductor_tile.jit
def accumulate_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    """acc += x: its result depends on how often it ran, unless acc is reset between runs."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    acc = tl.load(acc_ptr + offsets, mask=mask)
    tl.store(acc_ptr + offsets, acc + tl.load(x_ptr + offsets, mask=mask), mask=mask)


@inductor_tile.jit
def double_in_place_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2, mask=mask)


def fake_bench(times: dict[int, float], calls: list | None = None, runs: int = 1):
    """A do_bench stub: runs the kernel `runs` times and returns the config's fake time."""

    def bench(kernel_call, quantiles=None):
        for _ in range(runs):
            kernel_call()
        if calls is not None:
            calls.append(kernel_call.config.kwargs["BLOCK"])
        return [times[kernel_call.config.kwargs["BLOCK"]]] * (len(quantiles) if quantiles else 1)

    return bench


def grid(meta):
    return (inductor_tile.cdiv(meta["n"], meta["BLOCK"]),)


def _axpy_inputs(n: int, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, generator=gen), torch.randn(n, generator=gen), poison(torch.empty(n))


def test_picks_the_fastest_config_and_remembers_it():
    times = {16: 3.0, 32: 0.7, 64: 1.5, 128: 0.9}
    calls: list[int] = []
    kernel = inductor_tile.autotune([Config({"BLOCK": b}, num_warps=4) for b in times], key=["n"],
                                    do_bench=fake_bench(times, calls))(axpy_kernel)
    seen_meta = []

    def recording_grid(meta):
        seen_meta.append(dict(meta))
        return grid(meta)

    x, y, out = _axpy_inputs(1000)
    kernel[recording_grid](x, y, out, 1000, 0.5)
    torch.testing.assert_close(out, 0.5 * x + torch.sin(y))
    assert kernel.best_config.kwargs == {"BLOCK": 32}
    assert sorted(calls) == sorted(times)
    assert seen_meta[-1]["BLOCK"] == 32 and seen_meta[-1]["n"] == 1000  # the grid sees the config's kwargs
    # the same key launches without benchmarking
    x, y, out = _axpy_inputs(1000, seed=1)
    kernel[grid](x, y, out, 1000, 0.5)
    torch.testing.assert_close(out, 0.5 * x + torch.sin(y))
    assert len(calls) == len(times)
    # a new key tunes again
    x, y, out = _axpy_inputs(777)
    kernel[grid](x, y, out, 777, 0.5)
    torch.testing.assert_close(out, 0.5 * x + torch.sin(y))
    assert len(calls) == 2 * len(times)
    assert autotuner.stats.tunings == 2
    # another dtype is another key, even for a launch that takes the quick path
    x, y, out = (t.double() for t in _axpy_inputs(777))
    kernel[grid](x, y, out, 777, 0.5)
    torch.testing.assert_close(out, 0.5 * x + torch.sin(y))
    assert autotuner.stats.tunings == 3


def test_a_known_key_launches_without_building_the_tuning_key(monkeypatch):
    times = {16: 3.0, 32: 0.7}
    kernel = inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"],
                                    do_bench=fake_bench(times))(axpy_kernel)
    x, y, out = _axpy_inputs(1000)
    kernel[grid](x, y, out, 1000, 0.5)

    def no_slow_path(named):
        raise AssertionError("tuning_key built for a known launch")

    monkeypatch.setattr(kernel, "tuning_key", no_slow_path)
    out = poison(out)
    kernel[grid](x, y, out, 1000, 0.5)
    torch.testing.assert_close(out, 0.5 * x + torch.sin(y))


def test_results_persist_in_the_tuning_database(cache_dir):
    times = {32: 2.0, 64: 1.0}
    calls: list[int] = []
    configs = [Config({"BLOCK": b}) for b in times]
    first = inductor_tile.autotune(configs, key=["n"], do_bench=fake_bench(times, calls))(axpy_kernel)
    x, y, out = _axpy_inputs(500)
    first[grid](x, y, out, 500, 2.0)
    assert len(calls) == 2
    rows = tuning_db.rows(cache_dir / "tuning.db")
    assert len(rows) == 1 and '"BLOCK": 64' in rows[0]["config"] and rows[0]["kernel"] == "axpy_kernel"
    # a fresh autotuner (as in another process) finds the result and does not benchmark
    second = inductor_tile.autotune(configs, key=["n"], do_bench=fake_bench(times, calls))(axpy_kernel)
    x, y, out = _axpy_inputs(500, seed=3)
    second[grid](x, y, out, 500, 2.0)
    torch.testing.assert_close(out, 2.0 * x + torch.sin(y))
    assert len(calls) == 2 and autotuner.stats.db_hits == 1 and second.best_config.kwargs == {"BLOCK": 64}
    # other dtypes are another key
    x64, y64, out64 = (t.double() for t in _axpy_inputs(500))
    second[grid](x64, y64, out64, 500, 2.0)
    assert len(calls) == 4


def test_failing_configs_are_skipped_with_a_logged_reason(caplog):
    times = {100: 0.1, 48: 0.2, 64: 1.0, 32: 2.0}  # 100 and 48 are not powers of two: they do not compile
    kernel = inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"],
                                    do_bench=fake_bench(times))(axpy_kernel)
    x, y, out = _axpy_inputs(300)
    with caplog.at_level(logging.INFO, logger="inductor_tile"):
        kernel[grid](x, y, out, 300, 1.0)
    torch.testing.assert_close(out, x + torch.sin(y))
    assert kernel.best_config.kwargs == {"BLOCK": 64}
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 2
    assert all("CompilationError" in m and "power of two" in m for m in skipped)
    assert any("BLOCK: 100" in m for m in skipped) and any("BLOCK: 48" in m for m in skipped)
    # one INFO line per config
    per_config = [r for r in caplog.records if r.getMessage().startswith("autotune axpy_kernel: config")]
    assert len(per_config) == 4


def test_every_config_failing_is_a_clear_error():
    times = {100: 1.0, 12: 2.0}
    kernel = inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"],
                                    do_bench=fake_bench(times))(axpy_kernel)
    x, y, out = _axpy_inputs(50)
    with pytest.raises(AutotuneError, match=r"every config failed") as info:
        kernel[grid](x, y, out, 50, 1.0)
    assert "BLOCK: 100" in str(info.value) and "BLOCK: 12" in str(info.value)
    assert "power of two" in str(info.value)


def test_a_config_whose_launch_raises_is_skipped():
    times = {32: 0.1, 64: 1.0}

    def failing_hook(meta):
        if meta["BLOCK"] == 32:
            raise RuntimeError("out of resources (simulated)")

    configs = [Config({"BLOCK": 32}, pre_hook=failing_hook), Config({"BLOCK": 64})]
    kernel = inductor_tile.autotune(configs, key=["n"], do_bench=fake_bench(times))(axpy_kernel)
    x, y, out = _axpy_inputs(200)
    kernel[grid](x, y, out, 200, 1.0)
    assert kernel.best_config.kwargs == {"BLOCK": 64}
    torch.testing.assert_close(out, x + torch.sin(y))


def test_reset_to_zero():
    times = {32: 1.0, 64: 2.0, 128: 3.0}
    n = 1000
    x = torch.randn(n)
    kernel = inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"], reset_to_zero=["acc_ptr"],
                                    do_bench=fake_bench(times, runs=3))(accumulate_kernel)
    acc = torch.zeros(n)
    kernel[grid](x, acc, n)
    torch.testing.assert_close(acc, x)  # the benchmark runs left no trace
    # without reset_to_zero they would have
    plain = inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"],
                                   do_bench=fake_bench(times, runs=3), cache_results=False)(accumulate_kernel)
    acc = torch.zeros(n)
    plain[grid](x, acc, n)
    assert not torch.allclose(acc, x)


def test_restore_value():
    times = {32: 1.0, 64: 2.0, 128: 0.5}
    n = 700
    original = torch.randn(n)
    seen_by_config = {}

    def bench(kernel_call, quantiles=None):
        block = kernel_call.config.kwargs["BLOCK"]
        seen_by_config[block] = x.clone()
        kernel_call()
        kernel_call()
        return times[block]

    kernel = inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"], restore_value=["x_ptr"],
                                    do_bench=bench)(double_in_place_kernel)
    x = original.clone()
    kernel[grid](x, n)
    torch.testing.assert_close(x, original * 2)  # exactly one doubling: the launch after tuning
    for block, before in seen_by_config.items():
        torch.testing.assert_close(before, original, msg=f"config BLOCK={block} saw modified input")
    assert kernel.best_config.kwargs == {"BLOCK": 128}


def test_heuristics_compute_meta_parameters():
    seen = []

    def block_for(meta):
        seen.append(dict(meta))
        return inductor_tile.next_power_of_2(meta["n"])

    kernel = inductor_tile.heuristics({"BLOCK": block_for})(axpy_kernel)
    for n in (1, 33, 100):
        x, y, out = _axpy_inputs(n)
        kernel[(1,)](x, y, out, n, 3.0)  # one program covers everything: BLOCK >= n
        torch.testing.assert_close(out, 3.0 * x + torch.sin(y))
    assert seen[-1]["n"] == 100 and seen[-1]["alpha"] == 3.0


@inductor_tile.jit
def maybe_masked_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets) + 1)
    else:
        mask = offsets < n
        tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)


def test_autotune_over_heuristics():
    times = {16: 2.0, 64: 1.0}
    even_values = []

    def even(meta):
        even_values.append(meta["n"] % meta["BLOCK"] == 0)
        return even_values[-1]

    kernel = inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"],
                                    do_bench=fake_bench(times))(inductor_tile.heuristics({"EVEN": even})(
                                        maybe_masked_kernel))
    for n in (128, 100):
        x = torch.randn(n)
        out = poison(torch.empty(n))
        kernel[grid](x, out, n)
        torch.testing.assert_close(out, x + 1)
        assert kernel.best_config.kwargs == {"BLOCK": 64}
    assert True in even_values and False in even_values
    assert kernel.base_fn is maybe_masked_kernel.fn  # the Python function under the decorators (Triton's)


def test_prune_configs_by():
    times = {16: 0.1, 32: 1.0, 64: 2.0, 128: 3.0}
    calls: list[int] = []

    def early_prune(configs, named):
        return [c for c in configs if c.kwargs["BLOCK"] >= 32]

    def perf_model(**kwargs):
        return -kwargs["BLOCK"]  # the model prefers big blocks

    kernel = inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"], do_bench=fake_bench(times, calls),
                                    prune_configs_by={"early_config_prune": early_prune, "perf_model": perf_model,
                                                      "top_k": 2})(axpy_kernel)
    x, y, out = _axpy_inputs(256)
    kernel[grid](x, y, out, 256, 1.0)
    assert sorted(calls) == [64, 128]
    assert kernel.best_config.kwargs == {"BLOCK": 64}
    torch.testing.assert_close(out, x + torch.sin(y))


@pytest.mark.parametrize("terminal", [True, False])
def test_progress_line_for_many_configs_on_a_terminal(capsys, monkeypatch, terminal):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    times = {8: 5.0, 16: 4.0, 32: 3.0, 64: 2.0, 128: 1.0}
    kernel = inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"],
                                    do_bench=fake_bench(times))(axpy_kernel)
    x, y, out = _axpy_inputs(100)
    kernel[grid](x, y, out, 100, 1.0)
    err = capsys.readouterr().err
    assert ("autotuning axpy_kernel: config 5/5" in err) == terminal


def test_conflicting_meta_parameters_are_rejected():
    kernel = inductor_tile.autotune([Config({"BLOCK": 32}), Config({"BLOCK": 64})], key=["n"],
                                    do_bench=fake_bench({32: 1.0, 64: 2.0}))(axpy_kernel)
    x, y, out = _axpy_inputs(64)
    with pytest.raises(AutotuneError):  # every config fails: BLOCK given twice
        kernel[grid](x, y, out, 64, 1.0, BLOCK=32)


def test_real_benchmark_on_cpu():
    """No stub: inductor_tile.testing.do_bench times each config on the CPU."""
    kernel = inductor_tile.autotune([Config({"BLOCK": 64}), Config({"BLOCK": 256})], key=["n"], warmup=1,
                                    rep=5)(axpy_kernel)
    x, y, out = _axpy_inputs(4096)
    kernel[grid](x, y, out, 4096, 1.5)
    torch.testing.assert_close(out, 1.5 * x + torch.sin(y))
    assert kernel.best_config.kwargs["BLOCK"] in (64, 256)
    assert autotuner.stats.benchmarks == 2


def test_do_bench_modes():
    a = torch.randn(256, 256)

    def work():
        a @ a

    mean = do_bench(work, warmup=1, rep=5, device="cpu")
    assert isinstance(mean, float) and mean > 0
    low, mid, high = do_bench(work, warmup=1, rep=5, quantiles=[0.2, 0.5, 0.8], device="cpu")
    assert 0 < low <= mid <= high
    times = do_bench(work, warmup=1, rep=5, return_mode="all", device="cpu")
    assert isinstance(times, list) and len(times) >= 1
    # the same unit as "all" (a unit slip is 1000x); separate runs on a shared CPU can differ 10-50x
    assert do_bench(work, warmup=1, rep=5, return_mode="min", device="cpu") <= max(times) * 100
    with pytest.raises(ValueError):
        do_bench(work, return_mode="bogus", device="cpu")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64])
def test_tuned_kernel_numerics(dtype):
    """Random inputs, poisoned outputs, several sizes and dtypes, against torch."""
    times = {32: 1.0, 128: 0.5}
    kernel = inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"],
                                    do_bench=fake_bench(times))(axpy_kernel)
    gen = torch.Generator().manual_seed(11)
    for n in (1, 129, 1000):
        x = torch.randn(n, generator=gen, dtype=torch.float64).to(dtype)
        y = torch.randn(n, generator=gen, dtype=torch.float64).to(dtype)
        out = poison(torch.empty(n, dtype=dtype))
        kernel[grid](x, y, out, n, 0.25)
        expected = (0.25 * x.double() + torch.sin(y.double())).to(dtype)
        tol = {torch.float16: 2e-3, torch.float32: 1e-5, torch.float64: 1e-12}[dtype]
        torch.testing.assert_close(out, expected, atol=tol, rtol=tol)
    assert disk_cache.stats is not None
