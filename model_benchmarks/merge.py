"""Merging partial runs of the suite into one results directory.

``python -m model_benchmarks --merge DIR [DIR ...] --out OUT [--update-benchmarks-md]``: when device
time runs out, the suite is measured over several runs (other machines' sessions, other commits).
Each model's rows come from the last run that measured it; rows of a run that never got to a model
(``interrupted``, ``not run``) replace nothing and stay only for models no run measured. The merged
``run.json`` names each commit with the models measured at it, so the tables say what they mix.
"""

from __future__ import annotations

import json
from pathlib import Path

from . import report

MISSING = ("interrupted", "not run")
_SAME = ("suite", "modes", "precisions", "amp")


def merge_rows(runs: list[list[dict]]) -> tuple[list[dict], list[int]]:
    """(merged rows sorted by model name, index of the run each row came from)."""
    chosen: dict[str, tuple[int, list[dict]]] = {}
    for i, rows in enumerate(runs):
        by_model: dict[str, list[dict]] = {}
        for row in rows:
            by_model.setdefault(row["model"], []).append(row)
        for model, group in by_model.items():
            measured = any(r["status"] not in MISSING for r in group)
            if model not in chosen or measured:
                chosen[model] = (i, group)
    out, origin = [], []
    for model in sorted(chosen, key=str.lower):
        i, group = chosen[model]
        out += group
        origin += [i] * len(group)
    return out, origin


def _date_range(date: str) -> list[str]:
    """A run's date, or the two ends of a merged run's "2026-11-22 05:07 to 07:31" (day repeated)."""
    first, _, last = date.partition(" to ")
    if last and " " not in last.strip():
        last = f"{first.split()[0]} {last.strip()}"
    return [first, last] if last else [first]


def merge(directories: list[Path], out: Path) -> tuple[list[dict], dict]:
    """Merged rows and run metadata of the runs in `directories` (later runs win)."""
    metas = [json.loads((d / "run.json").read_text()) for d in directories]
    runs = [report.read_csv(d / "results.csv") for d in directories]
    for d, meta in zip(directories[1:], metas[1:]):
        for key in _SAME:
            if meta.get(key) != metas[0].get(key):
                raise ValueError(f"cannot merge {d} into {directories[0]}: {key} differs "
                                 f"({meta.get(key)!r} vs {metas[0].get(key)!r})")
        if meta["env"]["device"] != metas[0]["env"]["device"]:
            raise ValueError(f"cannot merge {d}: measured on {meta['env']['device']}, "
                             f"not {metas[0]['env']['device']}")
    rows, origin = merge_rows(runs)
    commits: dict[str, str] = {}  # model -> commit; a merged run keeps its own per-model record
    for row, i in zip(rows, origin):
        commits[row["model"]] = metas[i].get("commits", {}).get(row["model"], metas[i]["env"]["commit"])
    models_at: dict[str, set[str]] = {}
    for model, commit in commits.items():
        models_at.setdefault(commit, set()).add(model)
    env = dict(metas[0]["env"])
    env["commit"] = ", ".join(f"{c} ({len(m)} model{'' if len(m) == 1 else 's'})" for c, m in models_at.items())
    dates = sorted(d for m in metas for d in _date_range(m["env"]["date"]))
    env["date"] = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    settings = dict(metas[0]["settings"])
    names = ", ".join(d.name for d in directories)
    settings["merged from"] = f"{len(directories)} runs ({names}); per model the last run that measured it"
    meta = {**{k: metas[0].get(k) for k in _SAME}, "env": env, "settings": settings,
            "argv": [m.get("argv") for m in metas], "commits": commits}
    out.mkdir(parents=True, exist_ok=True)
    report.write_csv(rows, out / "results.csv")
    (out / "run.json").write_text(json.dumps(meta, indent=1))
    return rows, meta
