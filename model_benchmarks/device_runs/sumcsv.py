"""Condense model_benchmarks result CSVs: one line per model, speedups over eager and tile/inductor ratio."""
import csv, math, sys
from pathlib import Path
rows = []
for p in sys.argv[1:]:
    for f in Path(p).rglob("results.csv"):
        rows += list(csv.DictReader(open(f)))
by = {}
for r in rows:
    by.setdefault((r["model"], r["mode"]), {})[r["backend"]] = r
ratios = []
for (m, mode), b in sorted(by.items()):
    t, i = b.get("tile", {}), b.get("inductor", {})
    def sp(x):
        try: return float(x.get("speedup") or "nan")
        except ValueError: return float("nan")
    st, si = sp(t), sp(i)
    def ms(x):
        try: return float(x.get("median_ms") or "nan")
        except ValueError: return float("nan")
    ratio = ms(i) / ms(t)  # Inductor's time over tile's (eager is re-timed beside each backend and drifts)
    if ratio == ratio: ratios.append(ratio)
    print(f"{m[:34]:34s} {mode[:5]} ind {si:5.2f} tile {st:5.2f} t/i {ratio:5.2f} {t.get('status','?')[:6]} acc={t.get('accuracy','')[:8]} fb={t.get('fallback_nodes','')} k={t.get('tile_kernels','')}/{i.get('kernels','')} {t.get('reason','')[:60]}")
if ratios:
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"n={len(ratios)} geomean tile/inductor {g:.3f} min {min(ratios):.3f}")
