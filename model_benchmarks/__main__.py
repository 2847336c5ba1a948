"""`python -m model_benchmarks`: HuggingFace models and torchvision classifiers (random weights)
under eager, Inductor, tile and tile's fusion/inlining ablations; CSV, markdown and plots.

`python -m model_benchmarks micro ...` runs the kernel micro-benchmarks (model_benchmarks.micro).
"""

from __future__ import annotations

import argparse
import datetime
import faulthandler
import json
import os
import signal
import sys
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def parse_args(argv: list[str]) -> argparse.Namespace:
    from . import backends, models

    p = argparse.ArgumentParser(
        prog="python -m model_benchmarks",
        description="Speedup over eager of HuggingFace architectures built from their configs and of torchvision's "
                    "classifiers (tv_*; random weights, nothing downloaded) under each backend, with compile time, "
                    "kernel counts and an accuracy check. Subcommand: 'micro' (kernel micro-benchmarks; see "
                    "'micro --help').")
    p.add_argument("--small", action="store_true",
                   help="tiny configs (2 layers, hidden 64, vocab 1024, batch 2, 32 tokens; torchvision: one or two "
                        "narrow blocks per stage, batch 2, 32x32 images) that run on a CPU; "
                        f"default models then: {', '.join(models.SMALL_DEFAULT)}")
    p.add_argument("--models", help="comma-separated model names, 'all' (every HuggingFace model) or 'torchvision' "
                                    "(every tv_* model, needs torchvision), or a selector's K-th of N parts "
                                    "('all:1/2') (default: all; with --small, the short list above). --list shows them")
    p.add_argument("--backends", default=",".join(backends.DEFAULT),
                   help=f"comma-separated, from: {', '.join(backends.BACKENDS)} (default: %(default)s; eager always "
                        "runs, as the reference)")
    p.add_argument("--mode", default="inference", help="inference, training (forward, backward, Adam step), "
                                                       "or both comma-separated (default: %(default)s)")
    p.add_argument("--precision", default="fp32", help="fp32, fp16, bf16, comma-separated (default: %(default)s)")
    p.add_argument("--amp", action="store_true", help="fp16/bf16 through autocast with fp32 weights "
                                                      "(default: cast the model)")
    p.add_argument("--device", default=None, help="cuda or cpu (default: cuda if available)")
    p.add_argument("--repeats", type=int, default=30, help="timed runs of eager and each backend, taking turns "
                                                           "(default: %(default)s)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs after compiling (default: %(default)s)")
    p.add_argument("--cudagraphs", action="store_true",
                   help="CUDA graphs for every compiled backend (mode='reduce-overhead'); default: none")
    p.add_argument("--accuracy", choices=["fp64", "cosine"], default="fp64",
                   help="rule for outputs that are not allclose to eager (default: %(default)s)")
    p.add_argument("--fresh-caches", action="store_true",
                   help="compile into empty kernel caches (Inductor's and tile's), so compile times are cold")
    p.add_argument("--out", type=Path, help="output directory (default: model_benchmarks/results/<device>-<date>)")
    p.add_argument("--update-benchmarks-md", action="store_true", help="also rewrite this run's section of "
                                                                       "BENCHMARKS.md")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--threads", type=int, help="torch CPU threads (default: torch's); on a shared CPU, 1 "
                                               "gives steadier times")
    p.add_argument("--note", help="a line for the report's header (machine state, purpose of the run)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--from-results", type=Path, metavar="DIR",
                   help="run nothing: rewrite DIR's results.md and plots from its results.csv and run.json "
                        "(with --update-benchmarks-md, BENCHMARKS.md too)")
    p.add_argument("--merge", type=Path, nargs="+", metavar="DIR",
                   help="run nothing: merge the results of earlier runs (same suite, modes, precisions, device) "
                        "into --out, each model's rows from the last run that measured it, then write its "
                        "reports (with --update-benchmarks-md, BENCHMARKS.md too)")
    p.add_argument("--isolate", action="store_true",
                   help="one child process per model (a crash or hang costs only that model's rows), spread "
                        "over --gpus GPUs, each stopped after --model-timeout seconds")
    p.add_argument("--gpus", type=int, help="with --isolate: models run at once, one per GPU (default: every "
                                            "visible GPU, 1 on a CPU)")
    p.add_argument("--model-timeout", type=float, default=900,
                   help="with --isolate: seconds one model may take, all its backends (default: %(default)s)")
    p.add_argument("--list", action="store_true", help="list the models (batch size, sequence length or image "
                                                       "side) and exit")
    return p.parse_args(argv)


def _interrupt(signum, frame):
    # once is enough: `timeout` signals the process and then its whole group, so a second SIGTERM
    # would otherwise break the clean-up that writes the partial results
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt(f"signal {signum}")


def _split(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["micro"]:
        from . import micro

        return micro.main(argv[1:])
    args = parse_args(argv)
    if hasattr(faulthandler, "register"):  # `kill -USR1 <pid>` prints where a long run is
        faulthandler.register(signal.SIGUSR1, all_threads=True)

    from . import models

    if args.list:
        for spec in models.SPECS.values():
            print(f"{spec.name:42s} {spec.cls:42s} batch {spec.batch_size:4d}  seq {spec.seq_len:5d}")
        for spec in models.vision_models.SPECS.values():
            side = spec.image_size
            print(f"{spec.name:42s} {spec.cls:42s} batch {spec.batch_size:4d}  image {side}x{side}")
        return 0
    if args.from_results:
        return rewrite(args.from_results, args.update_benchmarks_md)
    if args.merge:
        from .merge import merge

        if args.out is None:
            raise SystemExit("--merge needs --out DIR")
        merge(args.merge, args.out)
        return rewrite(args.out, args.update_benchmarks_md)
    if args.fresh_caches:  # before anything compiles
        root = Path(tempfile.mkdtemp(prefix="model_benchmarks_caches_"))
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(root / "inductor")
        os.environ["TILE_CACHE_DIR"] = str(root / "tile")

    import torch
    import transformers
    from tqdm import tqdm

    from . import backends, report, runner

    transformers.logging.set_verbosity_error()
    if args.threads:
        torch.set_num_threads(args.threads)
    modes = _split(args.mode)
    precisions = _split(args.precision)
    for m in modes:
        if m not in ("inference", "training"):
            raise SystemExit(f"--mode: {m!r} is neither inference nor training")
    for p in precisions:
        if p not in runner.DTYPES:
            raise SystemExit(f"--precision: {p!r} is not one of {', '.join(runner.DTYPES)}")
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA device")
    cudagraphs = args.cudagraphs and device.type == "cuda"
    specs = models.resolve(_split(args.models) or None, args.small)
    backend_list = backends.resolve(_split(args.backends) or None)

    # Inductor's FX-graph and AOTAutograd caches and tile's graph cache would skip compilation (and
    # the kernel and fallback counts of a compile): off for everyone, so compile times compare
    # compilations (model_benchmarks.compile_times measures start-up with the caches)
    import torch._functorch.config
    import torch._inductor.config

    import inductor_tile.config

    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False
    inductor_tile.config.graph_cache = False

    env = report.environment(device)
    suite = "small" if args.small else "full"
    out = args.out or RESULTS / f"{report.slug(env['device'] if device.type == 'cuda' else 'cpu')}-" \
                               f"{datetime.date.today().isoformat()}{'-small' if args.small else ''}"
    out.mkdir(parents=True, exist_ok=True)
    timer = "CUDA events" if device.type == "cuda" else "wall clock"
    sizes = "2 layers, hidden 64, batch 2, 32 tokens" if args.small else "PyTorch list sizes"
    if any(isinstance(spec, models.vision_models.VisionSpec) for spec in specs):
        sizes += ("; torchvision: toy blocks, batch 2, 32x32 images" if args.small
                  else "; torchvision: published sizes, 224x224 images")
    settings = {
        "suite": f"{suite} configs ({sizes})",
        "CUDA graphs": "on for every compiled backend (mode='reduce-overhead')" if cudagraphs
                       else "off for every backend",
        "timing": f"median of {args.repeats} runs, eager and every backend taking turns, after {args.warmup} "
                  f"warm-up rounds ({timer}); speedup = eager median / backend median",
        "compile time": "first call (compilation + one run); Inductor's FX-graph/AOTAutograd caches off; kernel "
                        "caches " + ("fresh (empty)" if args.fresh_caches else "as found on disk"),
        "accuracy": f"allclose to eager, else the {args.accuracy} rule (model_benchmarks/accuracy.py)",
        "seed": str(args.seed),
    }
    if args.note:
        settings["note"] = args.note

    rows: list[dict] = []
    total = len(modes) * len(precisions) * len(specs) * len(backend_list)
    bar = tqdm(total=total, disable=True if args.no_progress else None, unit="run", dynamic_ncols=True,
               file=sys.stderr)
    # `timeout` and job control send SIGTERM: stop there and still write what was measured
    signal.signal(signal.SIGTERM, _interrupt)
    if args.isolate:
        from . import isolate

        gpus = args.gpus or (torch.cuda.device_count() if device.type == "cuda" else 1)
        settings["processes"] = (f"one per model, {gpus} at a time (one GPU each), at most "
                                 f"{args.model_timeout:.0f} s per model")
    try:
        if args.isolate:
            rows = isolate.run(args, [s.name for s in specs], modes, precisions, [b.name for b in backend_list],
                               out, gpus, args.model_timeout, bar)
            report.write_csv(rows, out / "results.csv")
            specs = []  # every model ran in a child
        for mode in modes if specs else []:
            for precision in precisions:
                s = runner.RunSettings(mode=mode, precision=precision, amp=args.amp, device=device,
                                       small=args.small, repeats=args.repeats, warmup=args.warmup,
                                       cudagraphs=cudagraphs, accuracy=args.accuracy, seed=args.seed)
                for spec in specs:
                    start = bar.n

                    def step(text, _s=s):
                        bar.set_description(f"{_s.mode} {_s.precision_label} {text}"[:70])
                        bar.refresh()

                    model_rows = runner.run_model(spec, s, backend_list, on_step=step,
                                                  on_done=lambda: bar.update(1))
                    bar.update(start + len(backend_list) - bar.n)
                    rows += model_rows
                    for r in model_rows:
                        if r["status"] != "ok":
                            bar.write(f"{r['model']} / {r['backend']}: {r['status']}: {r['reason']}")
                    report.write_csv(rows, out / "results.csv")  # partial results survive a crash
    except KeyboardInterrupt:
        settings["interrupted"] = (f"yes: stopped after {len(rows) // len(backend_list)} of "
                                   f"{total // len(backend_list)} model runs; the others are missing")
        bar.write(f"interrupted: {settings['interrupted']}")
    finally:
        bar.close()

    meta = {"env": env, "settings": settings, "argv": argv, "suite": suite, "modes": modes,
            "precisions": precisions, "amp": args.amp}
    (out / "run.json").write_text(json.dumps(meta, indent=1))
    md, paths = write_reports(rows, meta, out, args.update_benchmarks_md)
    print(md)
    print(f"wrote {out / 'results.csv'}, {out / 'results.md'}, " + ", ".join(str(p.name) for p in paths))
    return 0


def write_reports(rows: list[dict], meta: dict, out: Path, update_benchmarks_md: bool):
    """results.md, plots and (optionally) this run's BENCHMARKS.md section."""
    from . import plots, report
    from .backends import ABLATION

    env, suite = meta["env"], meta["suite"]
    title = f"{env['device']}, torch {env['torch']}, commit {env['commit']}, {env['date']}"
    md = report.markdown(rows, env, meta["settings"], f"Models ({suite}), {env['device']}")
    (out / "results.md").write_text(md)
    paths = plots.all_plots(rows, title, out)
    if update_benchmarks_md:
        ablation = any(r["backend"] in ABLATION.values() and r["backend"] != "tile" for r in rows)
        key = (f"models {suite} {report.slug(env['device'])} {'+'.join(meta['modes'])} "
               f"{'+'.join(meta['precisions'])}{' amp' if meta['amp'] else ''}{' ablation' if ablation else ''}")
        report.update_benchmarks_md(key, md)
    return md, paths


def rewrite(directory: Path, update_benchmarks_md: bool) -> int:
    from . import report

    rows = report.read_csv(directory / "results.csv")
    meta = json.loads((directory / "run.json").read_text())
    md, paths = write_reports(rows, meta, directory, update_benchmarks_md)
    print(md)
    print(f"wrote {directory / 'results.md'}, " + ", ".join(p.name for p in paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
