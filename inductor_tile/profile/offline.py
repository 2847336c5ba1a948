"""An earlier GPU profile, read back: ``python -m inductor_tile.profile --from-trace DIR``.

The run's ``trace.json[.gz]`` has every device event and its launch; its ``profile.json`` has what
only the run knew: each tile kernel's launch key, calls and bytes, the FX nodes and source lines
(with their text) of every row, the fallbacks and the copy bandwidth.  The rows are attributed
again from the trace (``rows.gpu_rows``), so a newer profiler re-reads an old run.  Bytes that the
run did not mark exact (``bytes_bound``, written since the byte model) count as upper bounds.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil

from . import registry
from .session import LaunchStats


class OfflineSession:
    """What ``Profiler`` and ``outputs`` read of a session, from a saved trace and profile.json."""

    def __init__(self, trace_path: str, data: dict):
        from .trace import load

        self.device = data.get("device", "cuda")
        self.trace_path = trace_path
        self._trace = load(trace_path)
        self.launches = {row["key"]: LaunchStats(name=row["name"].split("#")[0], calls=row["calls"],
                                                 timed_calls=row["calls"], bytes=row["bytes"])
                         for row in data.get("rows", ()) if row.get("kind") == "tile" and row.get("key")}
        self._fallbacks = [_info(f["node"], "fallback", [], f.get("source_lines", []), {}, f.get("reasons", []))
                           for f in data.get("fallbacks", ())]

    def trace(self) -> dict:
        return self._trace

    def write_trace(self, path: str) -> None:
        opener = gzip.open if self.trace_path.endswith(".gz") else open
        with opener(self.trace_path, "rb") as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)

    def graphs(self) -> set[int]:
        return set()

    def fallbacks(self) -> list[registry.KernelInfo]:
        return self._fallbacks


def _source_line(text: str) -> registry.SourceLine:
    file, _, line = text.rpartition(":")
    return registry.SourceLine(file, int(line))


def _info(name: str, kind: str, nodes: list[str], lines: list[str], shares: dict[str, float],
          reasons: list[str]) -> registry.KernelInfo:
    found = [_source_line(text) for text in lines]
    weights = {line: shares.get(text, 1.0) for line, text in zip(found, lines)}
    return registry.KernelInfo(name, kind, [registry.Site(list(nodes), found, weights)], list(reasons))


def paths(where: str, json_path: str | None = None) -> tuple[str, str]:
    """(trace, profile.json) of ``where``: a trace file, or a directory holding both."""
    trace_path = where
    if os.path.isdir(where):
        trace_path = next((os.path.join(where, name) for name in ("trace.json", "trace.json.gz")
                           if os.path.exists(os.path.join(where, name))), os.path.join(where, "trace.json"))
    return trace_path, json_path or os.path.join(os.path.dirname(trace_path), "profile.json")


def load_profile(profiler, where: str, json_path: str | None = None):
    """Fill ``profiler`` (a ``Profiler``) with the rows of a saved run; returns it."""
    from .report import diagnose, recorded_text
    from .rows import gpu_rows

    trace_path, json_path = paths(where, json_path)
    with open(json_path) as f:
        data = json.load(f)
    if data.get("device", "cuda") != "cuda":
        raise ValueError(f"{json_path}: a {data['device']} run; --from-trace reads GPU runs (their time is in the trace)")
    session = OfflineSession(trace_path, data)
    recorded = {}
    for row in data.get("rows", ()):
        recorded.setdefault((row["kind"], row.get("key") or row["name"]), row)
        for text, source in row.get("source_text", {}).items():
            recorded_text[_source_line(text)] = source
    rows = gpu_rows(session.trace(), session.launches, set())
    for row in rows:
        saved = recorded.get((row.kind, row.key or row.name))
        if saved is None:
            continue
        row.info = _info(row.name, row.kind, saved.get("fx_nodes", []), saved.get("source_lines", []),
                         saved.get("line_shares", {}), saved.get("reasons", []))
        row.findings = list(saved.get("findings", []))
        if row.kind == "tile" and "bytes_bound" in saved:
            row.bytes_bound = saved["bytes_bound"]
    profiler.session = session
    profiler.copy_bandwidth = data.get("copy_bandwidth_bytes_per_second", 0.0)
    diagnose(rows, profiler.copy_bandwidth)
    profiler._rows = rows
    return profiler
