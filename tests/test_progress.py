"""The progress line of long kernel compiles (inductor_tile/codegen/progress.py): drawn on a
terminal while compiles are pending, ended with the batch's total; silent when stderr is not a
terminal, when config.progress is off, or when the inductor_tile logger is set above WARNING."""

import io
import logging
import sys
import time
from concurrent.futures import Future

import pytest

from inductor_tile import config
from inductor_tile.codegen import progress


class Terminal(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setattr(progress, "SHOW_AFTER_SECONDS", 0.05)
    monkeypatch.setattr(progress, "REDRAW_SECONDS", 0.02)
    monkeypatch.setattr(progress, "_progress", progress.Progress())
    # the line shows at the default level; an earlier test may have left the logger (or torch's
    # logging setup, its parent) above WARNING
    logger = logging.getLogger("inductor_tile")
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        with config.patch(compile_workers=3, progress=True):
            yield
    finally:
        logger.setLevel(level)


def run_batch(count: int = 4) -> None:
    futures = [Future() for _ in range(count)]
    for f in futures:
        progress.track(f)
    time.sleep(0.2)
    for f in futures[:-1]:
        f.set_result(True)
    time.sleep(0.1)
    futures[-1].set_result(True)
    deadline = time.monotonic() + 5
    while progress._progress.thread is not None and time.monotonic() < deadline:
        time.sleep(0.02)


def test_line_on_a_terminal(fast, monkeypatch):
    stream = Terminal(tty=True)
    monkeypatch.setattr(sys, "stderr", stream)
    run_batch()
    out = stream.getvalue()
    assert "compiling kernels: 0/4 done, 3 workers" in out
    assert "compiling kernels: 3/4 done" in out
    assert out.rstrip("\n").split("\r")[-1].startswith("\x1b[K[inductor_tile] compiled 4 kernels in ")
    assert out.endswith("(3 workers)\n") and out.count("\n") == 1


def test_silent_when_not_a_terminal(fast, monkeypatch):
    stream = Terminal(tty=False)
    monkeypatch.setattr(sys, "stderr", stream)
    run_batch()
    assert stream.getvalue() == ""


@pytest.mark.parametrize("how", ["config", "logging"])
def test_silenced(fast, monkeypatch, how):
    stream = Terminal(tty=True)
    monkeypatch.setattr(sys, "stderr", stream)
    logger = logging.getLogger("inductor_tile")
    level = logger.level
    try:
        if how == "config":
            monkeypatch.setattr(config, "progress", False)
        else:
            logger.setLevel(logging.ERROR)
        run_batch()
    finally:
        logger.setLevel(level)
    assert stream.getvalue() == ""
