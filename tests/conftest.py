import os
import sys

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
    _share_cores_between_xdist_workers()
    import inductor_tile.config

    inductor_tile.config.graph_cache = os.environ["TILE_GRAPH_CACHE"] not in ("0", "false", "off", "no")


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
