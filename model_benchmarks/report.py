"""Results as CSV and markdown, and the sections of BENCHMARKS.md that a run regenerates."""

from __future__ import annotations

import csv
import datetime
import math
import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

from . import backends, timing

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS_MD = REPO / "BENCHMARKS.md"

COLUMNS = ["model", "mode", "precision", "backend", "status", "batch_size", "seq_len", "median_ms", "eager_ms",
           "speedup", "compile_s", "graphs", "kernels", "tile_kernels", "inductor_kernels", "fallback_nodes",
           "fallbacks", "accuracy", "reason"]

#: TorchInductor's published ablation (geomean speedup over eager, 45 HuggingFace fp16 models),
#: as quoted in this project's design and issue 7; not measured here
PUBLISHED_ABLATION = {
    "inference": {"all": 1.91, "no fusion": 1.68, "no inlining": 1.58, "neither": 0.80},
    "training": {"all": 1.45, "no fusion": 1.27, "no inlining": 1.31, "neither": 0.59},
}


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"CPU {name}, torch threads: {torch.get_num_threads()}"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def commit() -> str:
    """The git commit (with "+dirty" for uncommitted changes to tracked files); MODEL_BENCHMARKS_COMMIT
    overrides it, for copies of the tree without .git."""
    if os.environ.get("MODEL_BENCHMARKS_COMMIT"):
        return os.environ["MODEL_BENCHMARKS_COMMIT"]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def environment(device: torch.device) -> dict[str, str]:
    import transformers

    env = {"device": device_name(device), "torch": torch.__version__, "transformers": transformers.__version__}
    if "torchvision" in sys.modules:  # imported when a torchvision model was asked for
        env["torchvision"] = sys.modules["torchvision"].__version__
    return {**env, "commit": commit(), "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M")}


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_value(row.get(k)) for k in COLUMNS})


def read_csv(path: Path) -> list[dict[str, Any]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return value


def _num(value: Any) -> float | None:
    if value in (None, ""):
        return None
    value = float(value)
    return None if math.isnan(value) else value


def groups(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Rows by (mode, precision), in order of appearance."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault((row["mode"], row["precision"]), []).append(row)
    return out


def geomeans(rows: list[dict[str, Any]]) -> dict[str, tuple[float, int, int]]:
    """backend -> (geomean speedup over rows with status ok, models counted, models run)."""
    out = {}
    for name in dict.fromkeys(r["backend"] for r in rows):
        mine = [r for r in rows if r["backend"] == name]
        good = [_num(r["speedup"]) for r in mine if r["status"] == "ok" and _num(r["speedup"])]
        out[name] = (timing.geomean(good), len(good), len(mine))
    return out


def time_ratio(cells: dict[str, dict[str, Any]], over: str = "inductor", of: str = "tile") -> float | None:
    """`over`'s median time / `of`'s for one model (both ok): how much faster `of` runs. Taken from the two
    backends' own medians, not their speedups: eager is re-timed beside each backend and drifts between them."""
    a, b = cells.get(over, {}), cells.get(of, {})
    if a.get("status") != "ok" or b.get("status") != "ok":
        return None
    slow, fast = _num(a.get("median_ms")), _num(b.get("median_ms"))
    return slow / fast if slow and fast else None


def _cell(row: dict[str, Any]) -> str:
    speedup = _num(row["speedup"])
    if row["status"] == "error":
        return "error"
    text = f"{speedup:.2f}x" if speedup else "-"
    return text + (" (mismatch)" if row["status"] == "mismatch" else "")


def _ratio_cell(ratio: float | None) -> str:
    return f"{ratio:.2f}x" if ratio else "-"


def _geomean_cell(value: float, counted: int, run: int) -> str:
    return (f"**{value:.2f}x**" if counted else "-") + f" ({counted}/{run})"


def _label(name: str) -> str:
    backend = backends.BACKENDS.get(name)
    return backend.label if backend else name


def markdown(rows: list[dict[str, Any]], env: dict[str, str], settings: dict[str, str], title: str) -> str:
    lines = [f"### {title}", "", "| | |", "| --- | --- |"]
    for key, value in {**env, **settings}.items():
        lines.append(f"| {key} | {value} |")
    for (mode, precision), grp in groups(rows).items():
        names = list(dict.fromkeys(r["backend"] for r in grp))
        compiled = [n for n in names if n != "eager"]
        by_model: dict[str, dict[str, dict[str, Any]]] = {}
        for r in grp:
            by_model.setdefault(r["model"], {})[r["backend"]] = r
        versus = "tile" in compiled and "inductor" in compiled  # a column of tile's speed over Inductor's
        lines += ["", f"#### {mode}, {precision}: speedup over eager", "",
                  "| model | batch x seq (or image side) | eager ms | "
                  + " | ".join(_label(n) for n in compiled) + (" | tile vs Inductor (time ratio)" if versus else "")
                  + " |", "| --- | --- | --- |" + " --- |" * (len(compiled) + versus)]
        ratios = []
        for model, cells in by_model.items():
            eager = cells.get("eager", {})
            eager_ms = _num(eager.get("median_ms"))
            any_row = next(iter(cells.values()))
            lines.append(f"| {model} | {any_row['batch_size']} x {any_row['seq_len']} | "
                         + (f"{eager_ms:.3g}" if eager_ms else eager.get("status", "-")) + " | "
                         + " | ".join(_cell(cells[n]) if n in cells else "-" for n in compiled)
                         + (f" | {_ratio_cell(time_ratio(cells))}" if versus else "") + " |")
            if versus and time_ratio(cells):
                ratios.append(time_ratio(cells))
        gm = geomeans(grp)
        lines.append("| **geomean** (models that passed / run) | | | "
                     + " | ".join(_geomean_cell(*gm[n]) for n in compiled)
                     + (f" | {_geomean_cell(timing.geomean(ratios), len(ratios), len(by_model))}, min "
                        f"{min(ratios, default=float('nan')):.2f}x" if versus else "") + " |")

        lines += ["", f"#### {mode}, {precision}: compile time (first call, s) / generated kernels", "",
                  "| model | " + " | ".join(_label(n) for n in compiled) + " |",
                  "| --- |" + " --- |" * len(compiled)]
        for model, cells in by_model.items():
            out = []
            for n in compiled:
                r = cells.get(n, {})
                c, k = _num(r.get("compile_s")), r.get("kernels")
                out.append(f"{c:.1f} / {k}" if c is not None else "-")
            lines.append(f"| {model} | " + " | ".join(out) + " |")

        ablation, counted = ablation_geomeans(grp)
        timed, timed_models = ablation_geomeans(grp, timed=True)
        if timed and mode in PUBLISHED_ABLATION:
            pub = PUBLISHED_ABLATION[mode]
            run = len({r["model"] for r in grp})

            def _row(label: str, gm: dict[str, float]) -> str:
                return f"| {label} | " + " | ".join(f"{gm[k]:.2f}x" if k in gm else "-" for k in pub) + " |"

            lines += ["", f"#### {mode}, {precision}: fusion / inlining ablation (geomean speedup over eager)", "",
                      "| | " + " | ".join(pub) + " |", "| --- |" + " --- |" * len(pub),
                      _row("TorchInductor, published (45 HF fp16 models, not measured here)", pub)]
            if ablation:
                lines.append(_row(f"tile, this run: {len(counted)} of {run} models, those that passed "
                                  "under every variant", ablation))
            if timed_models != counted:
                lines.append(_row(f"tile, this run: {len(timed_models)} of {run} models, those timed under "
                                  "every variant (mismatches included)", timed))

        problems = [r for r in grp if r["status"] != "ok"]
        lines += ["", f"#### {mode}, {precision}: failures and mismatches", ""]
        lines += [f"- {r['model']} / {r['backend']}: **{r['status']}**: {r['reason'] or 'no reason recorded'}"
                  for r in problems] or ["none"]
        fallbacks = [r for r in grp if r.get("fallbacks")]
        if fallbacks:
            lines += ["", f"#### {mode}, {precision}: nodes that tile handed to Inductor's kernels, graphs it ran "
                          "eagerly", ""]
            lines += [f"- {r['model']} / {r['backend']}: {r['fallback_nodes']} nodes: {r['fallbacks']}"
                      for r in fallbacks]
    return "\n".join(lines) + "\n"


def ablation_geomeans(rows: list[dict[str, Any]], timed: bool = False) -> tuple[dict[str, float], set[str]]:
    """(ablation column ('all', 'no fusion', ...) -> tile's geomean, the models counted).

    Every column is a geomean over the same models: those that passed under every ablation
    variant that ran, or with ``timed``, those timed under every variant whether or not
    their results matched eager (a variant's mismatch does not change what it costs).
    """
    ran = {col: name for col, name in backends.ABLATION.items() if any(r["backend"] == name for r in rows)}
    if len(ran) < 2:
        return {}, set()
    ok = ("ok", "mismatch") if timed else ("ok",)
    speedups: dict[str, dict[str, float]] = {col: {} for col in ran}
    for col, name in ran.items():
        for r in rows:
            if r["backend"] == name and r["status"] in ok and _num(r["speedup"]):
                speedups[col][r["model"]] = _num(r["speedup"])
    common = set.intersection(*(set(v) for v in speedups.values()))
    if not common:
        return {}, set()
    return {col: timing.geomean([v[m] for m in common]) for col, v in speedups.items()}, common


def update_benchmarks_md(key: str, section: str, path: Path = BENCHMARKS_MD) -> None:
    """Replace (or append) the section between this key's markers in BENCHMARKS.md."""
    begin, end = f"<!-- BEGIN {key} -->", f"<!-- END {key} -->"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    block = f"{begin}\n{section.rstrip()}\n{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        marker = "<!-- NEW SECTIONS -->"
        if marker in text:
            text = text.replace(marker, block + "\n\n" + marker)
        else:
            text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)
