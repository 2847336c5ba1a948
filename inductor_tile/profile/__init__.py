"""A profiler that points at the model: per kernel time, bytes, roofline, FX nodes and source lines.

    with inductor_tile.profile() as p:      # or inductor_tile.profile(out_dir="prof")
        model(x)
    p.print()

    python -m inductor_tile.profile [--out DIR] script.py [args...]

``inductor_tile.profile`` is this module, and the module is callable: ``inductor_tile.profile(...)``
returns a ``Profiler`` (so ``import inductor_tile.profile`` and the call never clash).
Compile-time records (``registry``) are kept by the backend whether or not a profiler runs;
launches are only wrapped while a profiler is active (see ``session``).
"""

from __future__ import annotations

import sys
import types


class Profiler:
    """A context manager: profiles the kernels launched inside it.

    ``out_dir``: also write the outputs there on exit (``save``).  ``device``: "cpu" or "cuda"
    (default: cuda when available).
    """

    def __init__(self, out_dir: str | None = None, device: str | None = None):
        self.out_dir = out_dir
        self.device = device
        self.session = None
        self._rows = None
        self.copy_bandwidth = 0.0

    def __enter__(self) -> "Profiler":
        from .session import Session

        self.session = Session(self.device)
        self._rows = None
        self.session.start()
        return self

    def __exit__(self, *exc) -> None:
        self.session.stop()
        if self.out_dir is not None and exc[0] is None:
            self.save(self.out_dir)

    @property
    def rows(self):
        """The kernels (``session.Row``), slowest first, with roofline and diagnosis."""
        if self._rows is None:
            from .bandwidth import copy_bandwidth
            from .report import diagnose
            from .rows import collect_rows

            self._rows = collect_rows(self.session)
            self.copy_bandwidth = copy_bandwidth(self.session.device)
            diagnose(self._rows, self.copy_bandwidth)
        return self._rows

    @property
    def device_total(self) -> float | None:
        """GPU: torch.profiler's total device time (every kernel, memset and memcpy of its trace),
        which the rows add up to; None on the CPU."""
        if self.session.device != "cuda":
            return None
        from .trace import device_total_seconds

        return device_total_seconds(self.session.trace())

    def text(self, limit: int | None = None) -> str:
        """The table, the tree by source line, each kernel's FX nodes and the fallbacks (the slowest
        ``limit`` kernels and lines of each; all when None)."""
        from .report import details, fallbacks_text, table, tree

        rows = self.rows
        return "\n\n".join([table(rows, self.copy_bandwidth, self.session.device, limit, self.device_total),
                            tree(rows, limit), details(rows, limit), fallbacks_text(self.session.fallbacks())])

    def print(self, limit: int | None = 30, file=None) -> None:
        """Print ``text(limit)`` (``profile.txt`` of ``save`` has everything)."""
        print(self.text(limit), file=file or sys.stdout)

    def save(self, out_dir: str, gzip_trace: bool = False) -> dict[str, str]:
        """Write trace.json (``gzip_trace``: trace.json.gz), profile.txt, profile.json and chart.html
        into ``out_dir``; returns their paths."""
        from .outputs import write_directory

        return write_directory(self, out_dir, gzip_trace)


def from_trace(trace_path: str, json_path: str | None = None) -> Profiler:
    """The profile of an earlier GPU run, again, from its ``trace.json[.gz]`` and ``profile.json``
    (default: next to the trace): the rows as this version attributes the trace's device events,
    with the kernels' FX nodes, source lines and bytes as that run recorded them."""
    from .offline import load_profile

    return load_profile(Profiler(), trace_path, json_path)


def profile(out_dir: str | None = None, device: str | None = None) -> Profiler:
    """A ``Profiler``: ``with inductor_tile.profile() as p: ...; p.print()``."""
    return Profiler(out_dir, device)


class _CallableModule(types.ModuleType):
    """This module's type: calling the module calls ``profile``."""

    def __call__(self, *args, **kwargs) -> Profiler:
        return profile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["Profiler", "from_trace", "profile"]
