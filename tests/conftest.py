import hashlib
import os
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))


def pytest_configure(config):
    """A fresh on-disk cache per test session: tests exercise the compiler, not a previous run's cache."""
    import tempfile

    os.environ.setdefault("TILE_CACHE_DIR", tempfile.mkdtemp(prefix="tile-test-cache-"))
    # tests exercise codegen: a graph compiled by an earlier test must not come from the graph
    # cache (tests/test_graph_cache.py turns it on where it is the subject)
    os.environ.setdefault("TILE_GRAPH_CACHE", "0")
    # a compile error in a test is a failure, not a graph quietly run eagerly (test_eager_fallback.py
    # turns the fallback on where it is the subject)
    os.environ.setdefault("TILE_EAGER_FALLBACK", "0")
    # generated kernels' IR verified after the TTIR and TTGIR pipelines (production skips it for them:
    # passes/pipeline.verifies), so that a codegen or pass bug that makes invalid IR fails here
    os.environ.setdefault("TILE_VERIFY", "end")
    _share_cores_between_xdist_workers()
    import inductor_tile.config

    off = ("0", "false", "off", "no")
    inductor_tile.config.graph_cache = os.environ["TILE_GRAPH_CACHE"] not in off
    inductor_tile.config.eager_fallback = os.environ["TILE_EAGER_FALLBACK"] not in off
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # the process that reports
        config.stash[_SOURCES_AT_START] = _package_sources()


# ===--------------------------------------------------------------------------===
# A checkout edited while the suite runs (a merge, an editor's save): processes started after the
# edit (compile workers, the graph cache test's second process) fingerprint other compiler code
# than the test processes, so their kernels and graphs are not this process's, and the tests that
# compare the two fail.  The summary says so, with the files, so that such failures are not taken
# for the product's.  (Editing a compiler file after the session started fails exactly the four
# tests that failed in the first `-n 2` run of 2026-11-25, and only those.)
# ===--------------------------------------------------------------------------===
_SOURCES_AT_START = pytest.StashKey[dict]()


def _package_sources() -> dict[str, str]:
    import inductor_tile

    package = Path(inductor_tile.__file__).parent
    return {str(path.relative_to(package)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(package.rglob("*.py"))}


def pytest_terminal_summary(terminalreporter, config):
    before = config.stash.get(_SOURCES_AT_START, None)
    if before is None:
        return
    after = _package_sources()
    changed = sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    if not changed:
        return
    terminalreporter.write_sep("!", "inductor_tile's source files changed on disk during this run", red=True)
    terminalreporter.write_line(
        "Processes started after the change (compile workers, the graph cache's second process) compile with "
        "other code than the test processes: tests comparing the two fail (tests/test_compile_workers.py, "
        "test_graph_cache.py::test_second_process_hits_the_graph_cache). Rerun on a checkout nobody edits. "
        f"Changed: {', '.join(changed[:10])}{' ...' if len(changed) > 10 else ''}")


def _share_cores_between_xdist_workers() -> None:
    """Under pytest-xdist (README's `-n 2`) the test workers share the cores: each gets the
    compile-worker pool its share of the cores would get (config.compile_workers' default rule).
    The workers share the on-disk kernel cache above (it is safe for concurrent processes)."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1 and "TILE_COMPILE_WORKERS" not in os.environ:
        cores = (os.cpu_count() or 1) // workers
        os.environ["TILE_COMPILE_WORKERS"] = str(min(8, cores // 2) if cores >= 4 else 0)


# The slowest test files (about a minute or more each on 2 cores), slowest first.  Under
# `--dist loadfile` the workers take them first, so that no long file is left running alone at
# the end while the other worker idles.  Only the schedule depends on this list.
SLOW_FILES_FIRST = (
    "test_opinfo_sweep.py", "test_models.py", "test_filecheck.py", "test_model_benchmarks.py",
    "test_random_codegen.py", "test_fuzz.py", "test_fallback.py", "test_distributed.py",
    "test_ttgir.py", "test_suite_ttir.py", "test_backend.py", "test_random.py",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` hands out files in collection order (slow files first, see
    pytest_collection_modifyitems), not xdist's default of files with the most tests first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False
    return LoadFileScheduling(config, log)


def _slow_files_first(items) -> None:
    rank = {name: i for i, name in enumerate(SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


def pytest_collection_modifyitems(config, items):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _slow_files_first(items)
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU; run on the device machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def interpret(monkeypatch):
    """Run kernels in the interpreter (TILE_INTERPRET=1)."""
    monkeypatch.setenv("TILE_INTERPRET", "1")


@pytest.fixture
def compiled(monkeypatch):
    """Run kernels through the compiler (TILE_INTERPRET unset)."""
    monkeypatch.delenv("TILE_INTERPRET", raising=False)


@pytest.fixture
def gen():
    return torch.Generator().manual_seed(1234)


@pytest.fixture
def fresh_backend():
    """A test that compiles with backend="tile" and reads `metrics`: Dynamo and the counters start empty, seed 0."""
    from inductor_tile import metrics

    torch._dynamo.reset()
    metrics.reset()
    torch.manual_seed(0)
    yield
    torch._dynamo.reset()


@pytest.fixture
def cuda_heuristics(monkeypatch):
    """Generate kernels with the CUDA heuristics on this machine, untuned (the heuristic's own launch);
    the (fn, signature, constexprs) of each kernel the backend generates, in order (for PTX)."""
    from inductor_tile import config
    from inductor_tile.codegen import runtime
    from inductor_tile.scheduler import scheduling

    monkeypatch.setattr(scheduling, "_heuristics_device", lambda nodes: "cuda")
    monkeypatch.setattr(config, "autotune", False)
    recorded = []
    check = runtime.check_frontend

    def record(fn, signature, constexprs):
        recorded.append((fn, signature, constexprs))
        return check(fn, signature, constexprs)

    monkeypatch.setattr(runtime, "check_frontend", record)
    return recorded
