"""Plots (matplotlib, Agg): per-model speedup bars, and the fusion/inlining ablation next to the
published TorchInductor figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from . import report  # noqa: E402


#: models per row of the speedup chart (a 50-model suite is four rows, not one very wide plot)
MODELS_PER_ROW = 14


def speedup_bars(rows: list[dict[str, Any]], mode: str, precision: str, title: str, path: Path) -> Path:
    """One group of bars per model, one bar per compiled backend; mismatches hatched, errors marked."""
    names = [n for n in dict.fromkeys(r["backend"] for r in rows) if n != "eager"]
    models = list(dict.fromkeys(r["model"] for r in rows))
    chunks = [models[i:i + MODELS_PER_ROW] for i in range(0, len(models), MODELS_PER_ROW)] or [[]]
    cell = {(r["model"], r["backend"]): r for r in rows}
    width = 0.8 / max(1, len(names))
    per_row = len(chunks[0])
    fig, axes = plt.subplots(len(chunks), 1, squeeze=False,
                             figsize=(max(6.0, 0.9 * per_row * max(1, len(names)) ** 0.5 + 2), 4.5 * len(chunks)))
    top = max([report._num(r["speedup"]) or 0 for r in rows if r["backend"] != "eager"] + [1.0])
    for ax, chunk in zip(axes[:, 0], chunks):
        _speedup_row(ax, chunk, names, cell, width)
        ax.set_xlim(-0.6, per_row - 0.4)
        ax.set_ylim(0, top * 1.08)
    axes[0, 0].set_title(f"{title}\n{mode}, {precision} (hatched: accuracy mismatch; red x: error)", fontsize=9)
    axes[0, 0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def _speedup_row(ax, models: list[str], names: list[str], cell: dict, width: float) -> None:
    for i, name in enumerate(names):
        xs, ys, hatches = [], [], []
        for j, model in enumerate(models):
            r = cell.get((model, name))
            x = j + (i - (len(names) - 1) / 2) * width
            speedup = report._num(r["speedup"]) if r else None
            if r is None or r["status"] == "error" or not speedup:
                ax.text(x, 0.02, "x", ha="center", va="bottom", color="red", fontsize=8,
                        transform=ax.get_xaxis_transform())
                continue
            xs.append(x)
            ys.append(speedup)
            hatches.append("//" if r["status"] == "mismatch" else "")
        bars = ax.bar(xs, ys, width, label=report._label(name), color=f"C{i}")
        for bar, hatch in zip(bars, hatches):
            bar.set_hatch(hatch)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(models)))
    ax.set_xticklabels(models, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("speedup over eager")


def ablation_chart(rows: list[dict[str, Any]], title: str, path: Path) -> Path | None:
    """For each (mode, precision) with tile ablation results: tile's geomeans next to the published ones."""
    panels = [(key, report.ablation_geomeans(grp), report.ablation_geomeans(grp, timed=True))
              for key, grp in report.groups(rows).items()]
    panels = [p for p in panels if p[2][0] and p[0][0] in report.PUBLISHED_ABLATION]
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.2), squeeze=False)
    for ax, ((mode, precision), (gm, counted), (timed, timed_models)) in zip(axes[0], panels):
        published = report.PUBLISHED_ABLATION[mode]
        cols = list(published)
        xs = range(len(cols))
        bars = [("TorchInductor, published (45 HF fp16)", published, "#999999", "")]
        if gm:
            bars.append((f"tile, this run ({precision}, {len(counted)} models passing every variant)", gm,
                         "tab:blue", ""))
        if timed_models != counted:
            bars.append((f"tile, this run ({precision}, {len(timed_models)} models timed, mismatches included)",
                         timed, "#9ecae1", "//"))
        width = 0.8 / len(bars)
        ours = []
        for i, (label, values, color, hatch) in enumerate(bars):
            offset = (i - (len(bars) - 1) / 2) * width
            points = [(x + offset, values[c]) for x, c in zip(xs, cols) if c in values]
            ax.bar([x for x, _ in points], [v for _, v in points], width, label=label, color=color, hatch=hatch)
            for x, v in points:
                ax.text(x, v, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
            if i:
                ours += points
        same = counted or timed_models  # inductor over the models of tile's first bar
        inductor = report.geomeans([r for r in report.groups(rows)[(mode, precision)]
                                    if r["model"] in same]).get("inductor")
        if inductor and inductor[1]:
            ax.axhline(inductor[0], color="tab:green", linestyle="--", linewidth=1,
                       label=f"inductor, this run, same models: {inductor[0]:.2f}x ({inductor[1]} passed)")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(cols)
        ax.set_ylabel("geomean speedup over eager")
        ax.set_title(f"{mode}", fontsize=10)
        top = max([*published.values(), *(v for _, v in ours), inductor[0] if inductor and inductor[1] else 0])
        ax.set_ylim(0, top * 1.12)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=1)
    fig.suptitle(title, fontsize=9)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def all_plots(rows: list[dict[str, Any]], title: str, out_dir: Path) -> list[Path]:
    paths = []
    for (mode, precision), grp in report.groups(rows).items():
        paths.append(speedup_bars(grp, mode, precision, title, out_dir / f"speedup_{mode}_{precision}.png"))
    ablation = ablation_chart(rows, title, out_dir / "ablation.png")
    if ablation:
        paths.append(ablation)
    return paths
