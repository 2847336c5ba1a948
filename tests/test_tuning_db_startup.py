"""The tuning database at start-up: a warm process opens it once for all its tuned kernels, reads it
with the standard library alone (no sqlite-utils import), and reads and writes databases that
earlier versions wrote through sqlite-utils."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile import Config
from inductor_tile.kernel_compiler.runtime import autotuner, tuning_db
from suite import poison

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILE_CACHE_DISABLE", raising=False)
    monkeypatch.setenv("TILE_INTERPRET", "1")  # the database is under test, not the compiler: no compiles
    tuning_db.forget_connections()
    autotuner.stats.reset()
    tuning_db.stats.reset()
    yield tmp_path / "cache"
    tuning_db.forget_connections()


@inductor_tile.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * alpha, mask=mask)


@inductor_tile.jit
def shift_kernel(x_ptr, out_ptr, n, beta, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + beta, mask=mask)


def _bench(times: dict[int, float], calls: list[int]):
    def bench(kernel_call, quantiles=None):
        kernel_call()
        calls.append(kernel_call.config.kwargs["BLOCK"])
        return [times[kernel_call.config.kwargs["BLOCK"]]] * (len(quantiles) if quantiles else 1)

    return bench


def _grid(meta):
    return (inductor_tile.cdiv(meta["n"], meta["BLOCK"]),)


def _tuned(kernel, calls):
    times = {16: 2.0, 32: 1.0}  # BLOCK 32 wins
    return inductor_tile.autotune([Config({"BLOCK": b}) for b in times], key=["n"], do_bench=_bench(times, calls))(kernel)


def _launch_both(seed: int, calls: list[int]) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(70, generator=gen)
    for kernel, expected in ((scale_kernel, x * 1.5), (shift_kernel, x + 1.5)):
        out = poison(torch.empty(70))
        _tuned(kernel, calls)[_grid](x, out, 70, 1.5)
        torch.testing.assert_close(out, expected)


def test_a_warm_process_opens_the_database_once_for_all_its_kernels():
    calls: list[int] = []
    _launch_both(0, calls)  # cold: both kernels tuned and stored
    assert sorted(calls) == [16, 16, 32, 32] and tuning_db.stats.opens == 1
    tuning_db.forget_connections()  # as a new process
    tuning_db.stats.reset()
    autotuner.stats.reset()
    calls.clear()
    _launch_both(1, calls)  # warm: fresh autotuners find both results
    assert calls == [] and autotuner.stats.db_hits == 2
    assert tuning_db.stats.opens == 1 and tuning_db.stats.lookups == 2


LOOKUP = """
import json, sys
from inductor_tile.kernel_compiler.runtime import tuning_db
key = dict(source_hash="s", device="d", key_values="[1]", dtypes="[]", configs="c", compiler_version="v")
if sys.argv[1] == "store":
    tuning_db.store(key, "k", {"kwargs": {"BLOCK": 8}}, [])
else:
    print("FOUND", json.dumps(tuning_db.lookup(key)), "sqlite_utils" in sys.modules)
"""


def test_a_lookup_imports_no_sqlite_utils(cache_dir):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               TILE_CACHE_DIR=str(cache_dir))
    for mode in ("store", "lookup"):
        done = subprocess.run([sys.executable, "-c", LOOKUP, mode], env=env, capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
    found = [line for line in done.stdout.splitlines() if line.startswith("FOUND ")]
    assert found == ['FOUND {"config": {"kwargs": {"BLOCK": 8}}, "timings": []} False']


def test_databases_written_through_sqlite_utils_are_read_and_updated(cache_dir):
    sqlite_utils = pytest.importorskip("sqlite_utils")
    cache_dir.mkdir(parents=True)
    path = cache_dir / tuning_db.DB_NAME
    old = sqlite_utils.Database(str(path))  # the table as earlier versions created and filled it
    old[tuning_db.TABLE].create({"source_hash": str, "device": str, "key_values": str, "dtypes": str, "configs": str,
                                 "compiler_version": str, "kernel": str, "config": str, "timings": str,
                                 "created": float}, pk=tuning_db.PRIMARY_KEY)
    key = dict(source_hash="s", device="d", key_values="[4]", dtypes='["torch.float32"]', configs="c",
               compiler_version="v")
    old[tuning_db.TABLE].upsert({**key, "kernel": "k", "config": json.dumps({"BLOCK": 4}), "timings": "[[1.0]]",
                                 "created": 1.0}, pk=tuning_db.PRIMARY_KEY)
    old.conn.close()
    assert tuning_db.lookup(key) == {"config": {"BLOCK": 4}, "timings": [[1.0]]}
    tuning_db.store(key, "k", {"BLOCK": 8}, [[0.5]])  # the same key again: replaced, not added
    other = dict(key, key_values="[8]")
    tuning_db.store(other, "k", {"BLOCK": 16}, [])
    tuning_db.forget_connections()
    assert tuning_db.count(path) == 2
    rows = {row["key_values"]: row for row in tuning_db.rows(path)}
    assert json.loads(rows["[4]"]["config"]) == {"BLOCK": 8} and json.loads(rows["[8]"]["config"]) == {"BLOCK": 16}
    assert {row["config"] for row in sqlite_utils.Database(str(path))[tuning_db.TABLE].rows} == \
        {json.dumps({"BLOCK": 8}, sort_keys=True), json.dumps({"BLOCK": 16}, sort_keys=True)}
