"""inductor_tile/tree_keys.py: hashes of source trees reused across processes only while every file
is unchanged; and Inductor's torch_key, primed from it, equal to the one torch computes itself."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_tile import tree_keys
from inductor_tile.kernel_compiler.runtime import disk_cache

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TILE_CACHE_DISABLE", raising=False)
    disk_cache.clear_memory_state()
    yield tmp_path / "cache"
    disk_cache.clear_memory_state()


def make_package(root: Path) -> Path:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("VERSION = 1\n")
    (root / "pkg" / "sub" / "__init__.py").write_text("")
    (root / "pkg" / "sub" / "mod.py").write_text("def f():\n    return 1\n")
    (root / "pkg" / "data").mkdir()  # not a package
    (root / "pkg" / "data" / "notes.txt").write_text("x")
    return root / "pkg"


def content_hash(package: Path) -> str:
    h = hashlib.sha256()
    for file in sorted(package.rglob("*.py")):
        h.update(file.read_bytes())
    return h.hexdigest()


class Counting:
    def __init__(self, package: Path):
        self.package, self.calls = package, 0

    def __call__(self) -> str:
        self.calls += 1
        return content_hash(self.package)


def test_value_is_reused_until_a_file_changes_even_with_its_old_size_and_mtime(cache, tmp_path):
    package = make_package(tmp_path)
    tree = tree_keys.Tree(package, packages_only=True, salt="v1")
    compute = Counting(package)
    first = tree_keys.cached("pkg", tree, compute)
    assert first == content_hash(package) and compute.calls == 1
    assert tree_keys.cached("pkg", tree, compute) == first and compute.calls == 1  # the entry serves
    # an edit that keeps the size and puts the old mtime back: the ctime still tells
    module = package / "sub" / "mod.py"
    before = module.stat()
    module.write_text("def f():\n    return 2\n")
    os.utime(module, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert module.stat().st_size == before.st_size and module.stat().st_mtime_ns == before.st_mtime_ns
    second = tree_keys.cached("pkg", tree, compute)
    assert compute.calls == 2 and second == content_hash(package) != first  # stale entry rebuilt
    assert tree_keys.cached("pkg", tree, compute) == second and compute.calls == 2
    (package / "sub" / "new.py").write_text("X = 1\n")  # an added module
    assert tree_keys.cached("pkg", tree, compute) == content_hash(package) and compute.calls == 3
    (package / "sub" / "new.py").unlink()  # a removed one
    assert tree_keys.cached("pkg", tree, compute) == second and compute.calls == 4
    assert tree_keys.cached("pkg", tree_keys.Tree(package, packages_only=True, salt="v2"), compute) and compute.calls == 5


def test_extra_files_and_non_package_directories_are_watched(cache, tmp_path):
    package = make_package(tmp_path)
    (package / "data" / "script.ld").write_text("a")
    tree = tree_keys.Tree(package, packages_only=True, extra=("data/script.ld",))
    compute = Counting(package)
    tree_keys.cached("pkg", tree, compute)
    (package / "data" / "script.ld").write_text("bb")
    tree_keys.cached("pkg", tree, compute)
    assert compute.calls == 2
    (package / "data" / "__init__.py").write_text("")  # the directory becomes a package
    tree_keys.cached("pkg", tree, compute)
    assert compute.calls == 3


def test_damaged_entry_is_computed_again_and_rewritten(cache, tmp_path):
    package = make_package(tmp_path)
    tree = tree_keys.Tree(package)
    compute = Counting(package)
    good = tree_keys.cached("pkg", tree, compute)
    entry = cache / "keys" / "pkg.json"
    data = json.loads(entry.read_text())
    entry.write_text(json.dumps(dict(data, value="0" * 64)))  # a wrong value: the checksum no longer matches
    assert tree_keys.cached("pkg", tree, compute) == good and compute.calls == 2
    assert json.loads(entry.read_text())["value"] == good
    entry.write_text("{not json")
    assert tree_keys.cached("pkg", tree, compute) == good and compute.calls == 3


def test_without_a_cache_directory_the_value_is_always_computed(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    package = make_package(tmp_path)
    compute = Counting(package)
    for _ in range(2):
        assert tree_keys.cached("pkg", tree_keys.Tree(package), compute) == content_hash(package)
    assert compute.calls == 2


PRIMED = """
import sys, torch
from torch._inductor import codecache
from inductor_tile import graph_cache, tree_keys
graph_cache.prime_inductor_keys()
primed = codecache.torch_key()
codecache.torch_key.clear()
print("RESULT", tree_keys.stats["hits"], tree_keys.stats["computed"], primed.hex(), codecache.torch_key().hex())
"""


def test_primed_torch_key_is_the_one_torch_computes(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
               TILE_CACHE_DIR=str(tmp_path / "tile"))
    env.pop("TILE_CACHE_DISABLE", None)
    results = []
    for _ in range(2):  # the first process computes and stores it, the second reuses it
        done = subprocess.run([sys.executable, "-c", PRIMED], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        results.append([line for line in done.stdout.splitlines() if line.startswith("RESULT ")][0].split()[1:])
    (hits0, computed0, primed0, real0), (hits1, computed1, primed1, real1) = results
    assert (hits0, computed0) == ("0", "1") and (hits1, computed1) == ("1", "0")
    assert primed0 == real0 == primed1 == real1


def test_cli_clear_everything_removes_the_source_hashes_too(cache, tmp_path, capsys):
    from inductor_tile import cache as cli

    package = make_package(tmp_path)
    tree_keys.cached("pkg", tree_keys.Tree(package), Counting(package))
    assert (cache / "keys" / "pkg.json").is_file()
    assert cli.main(["--dir", str(cache), "clear", "--kernels"]) == 0
    assert (cache / "keys" / "pkg.json").is_file()  # only what was asked for
    assert cli.main(["--dir", str(cache), "clear"]) == 0
    assert "removed 1 source hash(es)" in capsys.readouterr().out and not (cache / "keys").exists()


class FakeKeyCache:
    """Stands for Inductor's triton_key: a one-value cache with set()."""

    def __init__(self, value: str):
        self.value, self.calls, self.given = value, 0, None

    def __call__(self) -> str:
        self.calls += 1
        return self.value

    def set(self, value) -> None:
        if self.given is not None:
            raise RuntimeError("already set")
        self.given = value


def test_triton_key_is_primed_from_the_triton_tree(cache, tmp_path, monkeypatch):
    import importlib.util
    import types

    from torch._inductor import codecache

    from inductor_tile import graph_cache

    fake_triton = make_package(tmp_path)  # stands for Triton's directory (no Triton here)
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: types.SimpleNamespace(
        submodule_search_locations=[str(fake_triton)]) if name == "triton" else real_find_spec(name, *args))

    def prime(value: str) -> FakeKeyCache:
        key = FakeKeyCache(value)
        monkeypatch.setattr(codecache, "triton_key", key)
        monkeypatch.setattr(graph_cache, "_primed", [])
        graph_cache.prime_inductor_keys()
        return key

    first = prime("3.6.0-abc")
    assert first.calls == 1 and first.given == "3.6.0-abc"
    second = prime("never computed")  # a later process: from the entry, nothing hashed
    assert second.calls == 0 and second.given == "3.6.0-abc"
    (fake_triton / "sub" / "mod.py").write_text("def f():\n    return 3\n")  # Triton changed: computed again
    third = prime("3.6.0-def")
    assert third.calls == 1 and third.given == "3.6.0-def"
