"""The on-disk kernel cache: reuse across processes, damaged entries, concurrent writers, the CLI.

Every test uses its own tmp_path as TILE_CACHE_DIR. Outputs are poisoned with NaN and
compared with torch, so a kernel loaded from a damaged entry could not pass unnoticed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.runtime import disk_cache, tuning_db
from suite import poison

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("TILE_CACHE_DIR", str(root))
    monkeypatch.delenv("TILE_CACHE_DISABLE", raising=False)
    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    monkeypatch.delenv("TILE_DUMP_IR", raising=False)
    disk_cache.stats.reset()
    yield root
    tuning_db.forget_connections()


@inductor_tile.jit
def scale(x):
    return x * 2.0


@inductor_tile.jit
def math_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Calls a helper (a dependency in the source hash) and libm functions (symbols the loaded object needs)."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, scale(tl.exp(x)) + tl.sin(y) + tl.log(tl.abs(y) + 1.0), mask=mask)


def _forget(kernel) -> None:
    kernel.cache.clear()
    kernel.launch_cache.clear()


def _launch_and_check(n: int = 1000, block: int = 128, seed: int = 0) -> None:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=gen)
    y = torch.randn(n, generator=gen)
    out = poison(torch.empty(n))
    math_kernel[(inductor_tile.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    expected = (x.double().exp() * 2 + y.double().sin() + (y.double().abs() + 1).log()).float()
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)


def _entries(root: Path) -> list[Path]:
    return list(disk_cache.entries(root))


def test_compile_stores_then_loads_from_disk(cache_dir):
    _forget(math_kernel)
    _launch_and_check()
    assert disk_cache.stats.compiles == 1 and disk_cache.stats.writes == 1 and disk_cache.stats.hits == 0
    (entry,) = _entries(cache_dir)
    names = sorted(p.name for p in entry.iterdir())
    assert names == ["math_kernel.llir", "math_kernel.o", "math_kernel.ttgir", "math_kernel.ttir", "metadata.json"]
    meta = disk_cache.read_metadata(entry)
    assert meta["name"] == "math_kernel" and meta["target"] == "cpu" and meta["entry"]
    assert set(meta["files"]) == set(names) - {"metadata.json"}

    _forget(math_kernel)  # the in-memory cache is in front: clear it to reach the disk
    _launch_and_check(seed=1)
    assert disk_cache.stats.hits == 1 and disk_cache.stats.compiles == 1
    compiled = next(iter(math_kernel.cache.values()))
    assert compiled.from_disk and "ttir" in compiled.asm and "llir" in compiled.asm
    _launch_and_check(seed=2)  # the in-memory cache answers now
    assert disk_cache.stats.hits == 1


def test_source_hash_follows_dependencies(tmp_path, monkeypatch):
    """Editing a called @jit helper (or a global constant it reads) changes the kernel's key."""
    monkeypatch.syspath_prepend(str(tmp_path))
    template = textwrap.dedent('''
        import inductor_tile
        import inductor_tile.language as tl
        FACTOR = {factor}

        @inductor_tile.jit
        def inner(x):
            return x * {inner}

        @inductor_tile.jit
        def helper(x):
            return inner(x) + FACTOR

        @inductor_tile.jit
        def kernel(p, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            tl.store(p + o, helper(tl.load(p + o)))
    ''')
    keys = []
    for i, (inner, factor) in enumerate([(2, 1), (2, 1), (3, 1), (2, 5)]):
        (tmp_path / f"depmod{i}.py").write_text(template.format(inner=inner, factor=factor))
        module = __import__(f"depmod{i}")
        keys.append(module.kernel.cache_key)
    assert keys[0] == keys[1]
    assert keys[2] != keys[0], "a change in a transitively called helper must change the key"
    assert keys[3] != keys[0], "a change in a global constant must change the key"


def _damage(path: Path, damage: str) -> None:
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "scribble":
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes(b ^ 0x5A for b in data[middle:middle + 16]) + data[middle + 16:])
    else:
        path.unlink()


@pytest.mark.parametrize("damage", ["truncate", "scribble", "delete"])
def test_damaged_entries_are_detected_and_recompiled(cache_dir, damage):
    """The files a launch reads (the metadata, the binary): detected at the launch, which recompiles."""
    _forget(math_kernel)
    _launch_and_check()
    (entry,) = _entries(cache_dir)
    files = sorted(p.name for p in entry.iterdir())
    assert len(files) == 5
    launch_files = ["math_kernel.o", "metadata.json"]
    for name in launch_files:
        (entry,) = _entries(cache_dir)
        _damage(entry / name, damage)
        _forget(math_kernel)
        corrupt_before = disk_cache.stats.corrupt
        with pytest.warns(UserWarning, match=f"damaged kernel cache entry .*{entry.name}"):
            _launch_and_check(seed=len(name))
        assert disk_cache.stats.corrupt == corrupt_before + 1, name
        # the damaged entry was replaced by a fresh, valid one
        (fresh,) = _entries(cache_dir)
        assert disk_cache.read_metadata(fresh) is not None
        _forget(math_kernel)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _launch_and_check(seed=99)
    assert disk_cache.stats.compiles == 1 + len(launch_files)


@pytest.mark.parametrize("damage", ["truncate", "scribble", "delete"])
def test_a_damaged_stage_text_is_found_when_read_and_made_again(cache_dir, damage):
    """A launch from the cache reads no stage text; reading one checks it: a damaged text is warned about,
    its entry deleted (the next process compiles afresh) and the text made again, the same as before."""
    _forget(math_kernel)
    _launch_and_check()
    texts = dict(next(iter(math_kernel.cache.values())).asm)
    for stage in ("ttir", "ttgir", "llir"):
        _forget(math_kernel)
        _launch_and_check(seed=3)  # stores the entry again after a previous round deleted it
        (entry,) = _entries(cache_dir)
        _damage(entry / f"math_kernel.{stage}", damage)
        _forget(math_kernel)
        hits, compiles = disk_cache.stats.hits, disk_cache.stats.compiles
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _launch_and_check(seed=4)  # nothing read but the metadata and the binary
        assert (disk_cache.stats.hits, disk_cache.stats.compiles) == (hits + 1, compiles)
        compiled = next(iter(math_kernel.cache.values()))
        assert compiled.from_disk
        with pytest.warns(UserWarning, match=f"damaged kernel cache entry .*{entry.name}.*math_kernel.{stage}"):
            assert compiled.asm[stage] == texts[stage]
        assert _entries(cache_dir) == [] and compiled.asm["llir"] == texts["llir"]


def test_a_stage_text_of_an_entry_written_again_since_the_load_is_taken_from_the_new_entry(cache_dir):
    """Another process deleted the entry a kernel was loaded from and wrote it again (same key), with texts that
    differ: the new entry's metadata vouches for them, so they are read without a warning."""
    _forget(math_kernel)
    _launch_and_check()
    _forget(math_kernel)
    _launch_and_check(seed=6)
    compiled = next(iter(math_kernel.cache.values()))
    (entry,) = _entries(cache_dir)
    body = disk_cache.read_metadata(entry)
    text = (entry / "math_kernel.llir").read_bytes() + b"; written again\n"
    (entry / "math_kernel.llir").write_bytes(text)
    body["files"]["math_kernel.llir"] = disk_cache._sha256(text)
    (entry / disk_cache.METADATA).write_bytes(disk_cache._seal(body))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert compiled.asm["llir"].endswith("; written again\n")
    assert _entries(cache_dir) == [entry]


def test_a_launch_from_the_cache_reads_only_the_metadata_and_the_binary(cache_dir, monkeypatch):
    _forget(math_kernel)
    _launch_and_check()
    read = []
    original = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self.name) or original(self))
    _forget(math_kernel)
    _launch_and_check(seed=5)
    assert sorted(read) == ["math_kernel.o", "metadata.json"]
    compiled = next(iter(math_kernel.cache.values()))
    assert "func.func public @math_kernel" in compiled.asm["ttgir"]  # read now, checked
    assert sorted(read) == ["math_kernel.llir", "math_kernel.o", "math_kernel.ttgir", "math_kernel.ttir",
                            "metadata.json"]


def test_unwritable_cache_dir_warns_once_and_still_runs(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("TILE_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.delenv("TILE_CACHE_DISABLE", raising=False)
    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    _forget(math_kernel)
    with pytest.warns(UserWarning, match="not usable") as record:
        _launch_and_check()
        _forget(math_kernel)
        _launch_and_check(seed=3)
    assert sum("not usable" in str(w.message) for w in record) == 1


def test_cache_disable(cache_dir, monkeypatch):
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    _forget(math_kernel)
    _launch_and_check()
    assert not cache_dir.exists() or not _entries(cache_dir)
    assert disk_cache.stats.writes == 0 and disk_cache.stats.compiles == 1


SCRIPT = textwrap.dedent('''
    import json, os, sys, time
    from pathlib import Path
    import torch
    import inductor_tile
    import inductor_tile.language as tl
    from inductor_tile.kernel_compiler.runtime import disk_cache, autotuner

    @inductor_tile.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, tl.exp(x) + tl.load(y_ptr + offsets, mask=mask), mask=mask)

    FAKE_MS = {32: 2.0, 64: 0.5, 128: 1.0}

    def fake_bench(kernel_call, quantiles=None):
        kernel_call()
        return FAKE_MS[kernel_call.config.kwargs["BLOCK"]]

    tuned = inductor_tile.autotune([inductor_tile.Config({"BLOCK": b}) for b in FAKE_MS], key=["n"],
                                   do_bench=fake_bench)(add_kernel)

    barrier = os.environ.get("BARRIER")
    if barrier:  # start together with the other process
        Path(barrier + "." + sys.argv[1]).touch()
        while not Path(barrier).exists():
            time.sleep(0.001)
    n = 3000
    x, y = torch.randn(n), torch.randn(n)
    out = torch.full((n,), float("nan"))
    add_kernel[(inductor_tile.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    torch.testing.assert_close(out, x.exp() + y)
    out.fill_(float("nan"))
    tuned[lambda meta: (inductor_tile.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
    torch.testing.assert_close(out, x.exp() + y)
    print(json.dumps({"cache": disk_cache.stats.as_dict(), "benchmarks": autotuner.stats.benchmarks,
                      "db_hits": autotuner.stats.db_hits, "best": tuned.best_config.kwargs}))
''')


def _run_script(tmp_path: Path, cache_dir: Path, tag: str = "0", barrier: str | None = None) -> subprocess.Popen:
    script = tmp_path / "launch_script.py"
    if not script.exists():
        script.write_text(SCRIPT)
    env = dict(os.environ, TILE_CACHE_DIR=str(cache_dir), PYTHONPATH=_pythonpath())
    env.pop("TILE_CACHE_DISABLE", None)
    env.pop("TILE_INTERPRET", None)
    if barrier:
        env["BARRIER"] = barrier
    return subprocess.Popen([sys.executable, str(script), tag], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _result(proc: subprocess.Popen) -> dict:
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    return json.loads(stdout.strip().splitlines()[-1])


def test_second_process_reuses_kernels_and_tuning(tmp_path, cache_dir):
    first = _result(_run_script(tmp_path, cache_dir))
    assert first["cache"]["compiles"] == 4 and first["cache"]["writes"] == 4 and first["cache"]["hits"] == 0
    assert first["benchmarks"] == 3 and first["best"] == {"BLOCK": 64}
    second = _result(_run_script(tmp_path, cache_dir))
    # the plain launch and the tuned config's kernel come from disk; nothing is compiled or benchmarked
    assert second["cache"]["compiles"] == 0 and second["cache"]["hits"] == 2, second
    assert second["benchmarks"] == 0 and second["db_hits"] == 1 and second["best"] == {"BLOCK": 64}


def test_two_processes_compiling_at_once(tmp_path, cache_dir):
    barrier = str(tmp_path / "go")
    procs = [_run_script(tmp_path, cache_dir, tag=str(i), barrier=barrier) for i in range(2)]
    deadline = time.time() + 240
    while not all(Path(f"{barrier}.{i}").exists() for i in range(2)):
        assert time.time() < deadline and all(p.poll() is None for p in procs), "a process did not reach the barrier"
        time.sleep(0.01)
    Path(barrier).touch()
    results = [_result(p) for p in procs]
    assert all(r["best"] == {"BLOCK": 64} for r in results)
    entries = _entries(cache_dir)
    assert len(entries) == 4
    leftovers = [p for shard in (cache_dir / "kernels").iterdir() for p in shard.iterdir() if p.name.startswith(".")]
    assert not leftovers
    # every entry is valid: loading it raises no warning
    disk_cache.stats.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for entry in entries:
            assert disk_cache.load(entry.name) is not None
    assert disk_cache.stats.hits == 4 and disk_cache.stats.corrupt == 0
    # and a third process uses them
    third = _result(_run_script(tmp_path, cache_dir))
    assert third["cache"]["compiles"] == 0 and third["benchmarks"] == 0


def test_cli_list_stats_clear(cache_dir, capsys):
    from inductor_tile import cache as cli

    _forget(math_kernel)
    _launch_and_check()
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "math_kernel" in out and "cpu" in out
    assert cli.main(["stats"]) == 0
    out = capsys.readouterr().out
    assert "1 entries" in out
    assert cli.main(["clear", "--kernels"]) == 0
    assert not _entries(cache_dir)
    assert cli.main(["stats"]) == 0
    assert "0 entries" in capsys.readouterr().out


def test_cli_help():
    proc = subprocess.run([sys.executable, "-m", "inductor_tile.cache", "--help"], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=_pythonpath()))
    assert proc.returncode == 0 and "list" in proc.stdout and "clear" in proc.stdout and "stats" in proc.stdout


def _pythonpath() -> str:
    """This checkout first, then what the parent had (the GPU machine's packages live there)."""
    return os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
