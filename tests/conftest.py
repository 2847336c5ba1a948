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
    import inductor_tile.config

    inductor_tile.config.graph_cache = os.environ["TILE_GRAPH_CACHE"] not in ("0", "false", "off", "no")


def pytest_collection_modifyitems(config, items):
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
