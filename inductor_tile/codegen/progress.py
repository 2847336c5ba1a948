"""One updating line on stderr while many generated kernels compile.

    [inductor_tile] compiling kernels: 37/120 done, 8 workers, 12.4s

Every kernel a graph starts compiling ahead of its launch (``JITFunction.precompile``: worker
processes or background threads) is counted; the line appears once a batch has been busy for
``SHOW_AFTER_SECONDS``, is redrawn a few times a second and ends with the batch's total.

Shown only when stderr is a terminal, ``inductor_tile.config.progress`` is on (``TILE_PROGRESS=0``
turns it off) and the ``inductor_tile`` logger is not set above WARNING (``logging.ERROR`` silences
it, as it silences our warnings).
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from concurrent.futures import Future

#: a batch of compiles shorter than this prints nothing
SHOW_AFTER_SECONDS = 1.0
REDRAW_SECONDS = 0.25


def enabled() -> bool:
    from .. import config

    if not config.progress or logging.getLogger("inductor_tile").getEffectiveLevel() > logging.WARNING:
        return False
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (ValueError, OSError):  # a closed stream
        return False


def _workers() -> str:
    from .. import config

    if config.compile_workers > 0:
        return f"{config.compile_workers} worker{'s' if config.compile_workers != 1 else ''}"
    return "threads"


class Progress:
    """Counts of the current batch of compiles and the thread that draws them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.total = self.done = 0
        self.started = 0.0
        self.shown = False
        self.thread: threading.Thread | None = None

    def track(self, future: Future) -> None:
        if not enabled():
            return
        with self.lock:
            if self.total == self.done:  # a new batch
                self.total = self.done = 0
                self.started = time.monotonic()
                self.shown = False
            self.total += 1
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._draw_until_idle, name="tile-compile-progress", daemon=True)
                self.thread.start()
        future.add_done_callback(self._finished)

    def _finished(self, _future: Future) -> None:
        with self.lock:
            self.done += 1

    def line(self, final: bool = False) -> str:
        elapsed = time.monotonic() - self.started
        if final:
            return f"[inductor_tile] compiled {self.total} kernels in {elapsed:.1f}s ({_workers()})"
        return f"[inductor_tile] compiling kernels: {self.done}/{self.total} done, {_workers()}, {elapsed:.1f}s"

    def _draw_until_idle(self) -> None:
        while True:
            time.sleep(REDRAW_SECONDS)
            with self.lock:
                finished = self.done >= self.total
                visible = self.shown or time.monotonic() - self.started >= SHOW_AFTER_SECONDS
                if visible and enabled():
                    text = self.line(final=finished)
                    try:
                        sys.stderr.write(f"\r\x1b[K{text}" + ("\n" if finished else ""))
                        sys.stderr.flush()
                    except (ValueError, OSError):
                        pass
                    self.shown = True
                if finished:
                    self.thread = None
                    return


_progress = Progress()


def track(future: Future) -> None:
    """Count `future` (a kernel compile started ahead of its launch) in the progress line."""
    _progress.track(future)
