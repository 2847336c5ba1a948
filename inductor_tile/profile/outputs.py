"""The profile written to a directory: ``trace.json`` (Chrome trace from torch.profiler, open it in
chrome://tracing or Perfetto), ``profile.txt`` (what ``print`` shows, every row), ``profile.json``
(the rows and fallbacks) and ``chart.html`` (bar charts of kernel time and time by source line; no dependency, inline SVG)."""

from __future__ import annotations

import gzip
import html
import json
import os
import shutil

from .report import _source_text, by_line, roofline_text, short_name

_COLORS = {"tile": "#4878d0", "fallback": "#ee854a", "extern": "#6acc64", "other": "#8c8c8c"}


def write_directory(profiler, out_dir: str, gzip_trace: bool = False) -> dict[str, str]:
    """Write every output file into ``out_dir``; returns their paths by kind.
    ``gzip_trace``: the trace as ``trace.json.gz`` (Perfetto opens it as it is)."""
    os.makedirs(out_dir, exist_ok=True)
    paths = {name: os.path.join(out_dir, file) for name, file in
             (("trace", "trace.json"), ("text", "profile.txt"), ("json", "profile.json"), ("chart", "chart.html"))}
    profiler.session.write_trace(paths["trace"])
    if gzip_trace:
        with open(paths["trace"], "rb") as plain, gzip.open(paths["trace"] + ".gz", "wb") as packed:
            shutil.copyfileobj(plain, packed)
        os.remove(paths["trace"])
        paths["trace"] += ".gz"
    with open(paths["text"], "w") as f:
        f.write(profiler.text() + "\n")
    with open(paths["json"], "w") as f:
        json.dump(_rows_json(profiler), f, indent=1)
    with open(paths["chart"], "w") as f:
        f.write(chart_html(profiler))
    return paths


def _rows_json(profiler) -> dict:
    rows = []
    for row in profiler.rows:
        lines = row.info.line_shares() if row.info else {}
        rows.append({
            "name": row.name, "key": row.key, "kind": row.kind, "calls": row.calls, "seconds": row.seconds, "bytes": row.bytes,
            "bytes_bound": row.bytes_bound, "roofline": row.roofline, "diagnosis": row.diagnosis,
            "findings": row.findings,
            "fx_nodes": row.info.nodes if row.info else [],
            "source_lines": [f"{line.file}:{line.line}" for line in row.info.lines] if row.info else [],
            "line_shares": {f"{line.file}:{line.line}": share for line, share in lines.items() if line is not None},
            "source_text": {f"{line.file}:{line.line}": _source_text(line) for line in lines if line is not None},
            "device_events": {name: {"count": calls, "seconds": seconds}
                              for name, (calls, seconds) in row.kernels.items()},
            "reasons": row.info.reasons if row.info else [],
        })
    fallbacks = [{"node": info.name, "reasons": info.reasons,
                  "source_lines": [f"{line.file}:{line.line}" for line in info.lines]}
                 for info in profiler.session.fallbacks()]
    return {"device": profiler.session.device, "copy_bandwidth_bytes_per_second": profiler.copy_bandwidth,
            "kernel_seconds": sum(row.seconds for row in profiler.rows), "device_total_seconds": profiler.device_total,
            "rows": rows, "fallbacks": fallbacks}


def _bars(title: str, items: list[tuple[str, float, str, str]]) -> str:
    """A horizontal bar chart: (label, seconds, color, tooltip) per bar, as inline SVG."""
    if not items:
        return f"<h2>{html.escape(title)}</h2><p>nothing recorded</p>"
    top = max(seconds for _, seconds, _, _ in items) or 1.0
    label_w, bar_w, row_h = 420, 520, 22
    parts = [f'<h2>{html.escape(title)}</h2>',
             f'<svg width="{label_w + bar_w + 110}" height="{row_h * len(items) + 10}" font-family="monospace" '
             f'font-size="12">']
    for i, (label, seconds, color, tip) in enumerate(items):
        y = 5 + i * row_h
        width = max(1.0, bar_w * seconds / top)
        parts.append(f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">{html.escape(label[:60])}</text>')
        parts.append(f'<rect x="{label_w}" y="{y + 3}" width="{width:.1f}" height="{row_h - 6}" fill="{color}">'
                     f'<title>{html.escape(tip)}</title></rect>')
        parts.append(f'<text x="{label_w + width + 6:.1f}" y="{y + 15}">{seconds * 1e3:.3f} ms</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def chart_html(profiler, top: int = 30) -> str:
    rows = profiler.rows[:top]
    kernels = [(short_name(r.name, 60), r.seconds, _COLORS.get(r.kind, "#8c8c8c"),
                f"{short_name(r.name, 200)}: {r.kind}, {r.calls} calls"
                + (f", {roofline_text(r)} of copy bandwidth" if r.roofline else "")
                + (f"; {r.diagnosis}" if r.diagnosis else "")) for r in rows]
    lines = []
    for node in by_line(profiler.rows)[:top]:
        label = f"{os.path.basename(node.line.file)}:{node.line.line}" if node.line else "(no source line)"
        tip = ", ".join(f"{k} {s * 1e3:.3f} ms" for k, s in sorted(node.kernels.items(), key=lambda kv: -kv[1]))
        lines.append((label, node.seconds, "#4878d0", tip))
    legend = " ".join(f'<span style="color:{c}">&#9632; {k}</span>' for k, c in _COLORS.items())
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>inductor_tile profile</title>
<style>body{{font-family:sans-serif;margin:2em}} pre{{font-size:12px;background:#f6f6f6;padding:1em;overflow:auto}}</style>
</head><body>
<h1>inductor_tile profile</h1>
<p>{legend}</p>
{_bars("Kernel time", kernels)}
{_bars("Time by source line", lines)}
<h2>Table</h2>
<pre>{html.escape(profiler.text())}</pre>
</body></html>
"""
