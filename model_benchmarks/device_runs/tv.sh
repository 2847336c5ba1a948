# bash .probe/tv.sh [MODELS] [extra args]: torchvision classifiers (default: every tv_* model), Inductor and tile,
# fp16 inference, one process per model; one line per model, then the geomean of tile / Inductor.
# 8 models x ~50-60 s: about 7-8 minutes; if that is too close to the 10-minute limit, run it twice, e.g.
# "tv_resnet50,tv_mobilenet_v3_large,tv_efficientnet_b0,tv_convnext_tiny" then
# "tv_regnet_y_1_6gf,tv_densenet121,tv_vit_b_16,tv_swin_t". Training: extra args "--mode training --amp".
unset PINNED  # the tv_* models are newer than the pinned code
. .probe/prelude.sh
python3 -c "import torch; from model_benchmarks.vision_models import import_torchvision as tv; print('torch', torch.__version__, 'torchvision', tv().__version__)"
timeout ${TV_T:-560} python3 -m model_benchmarks --backends inductor,tile --precision fp16 --repeats 5 --warmup 2 --isolate \
  --model-timeout 300 --no-progress --models "${1:-torchvision}" --out /tmp/tv "${@:2}" > $OUT/tv.log 2>&1; echo rc=$?
cp /tmp/tv/results.csv /tmp/tv/results.md $OUT/ 2>/dev/null
python3 - /tmp/tv/results.csv <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault((r["model"], r["mode"], r["precision"]), {})[r["backend"]] = r
def num(x):
    try: return float(x)
    except (TypeError, ValueError): return float("nan")
print(f"{'model':24s} {'mode':5s} {'prec':8s} {'eager ms':>8s} {'ind':>5s} {'tile':>5s} {'t/i':>5s} status   acc  fb  kernels(t/i)")
ratios = []
for (m, mode, prec), b in by.items():
    e, i, t = b.get("eager", {}), b.get("inductor", {}), b.get("tile", {})
    si, st = num(i.get("speedup")), num(t.get("speedup"))
    ratio = num(i.get("median_ms")) / num(t.get("median_ms"))  # eager is re-timed beside each backend and drifts
    if ratio == ratio and t.get("status") == "ok" and i.get("status") == "ok":
        ratios.append(ratio)
    print(f"{m[:24]:24s} {mode[:5]:5s} {prec[:8]:8s} {num(e.get('median_ms')):8.2f} {si:5.2f} {st:5.2f} {ratio:5.2f} "
          f"{t.get('status', '?')[:8]:8s} {t.get('accuracy', '')[:4]:4s} {t.get('fallback_nodes', '')!s:>3s} "
          f"{t.get('kernels', '')}/{i.get('kernels', '')} {(t.get('reason') or i.get('reason') or '')[:70]}")
if ratios:
    g = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"geomean tile/inductor {g:.3f} over {len(ratios)} models (both ok); min {min(ratios):.3f}; "
          f"below 0.95: {sum(r < 0.95 for r in ratios)}")
PY
grep -il "Traceback" /tmp/tv/parts/*/log.txt 2>/dev/null | head -3 | while read f; do echo "== $f"; grep -v Warning "$f" | tail -4 | cut -c1-300; done
