"""`python -m model_benchmarks --isolate`: one process per model, several GPUs at once.

A model that hangs, crashes the process (a CUDA error poisons the context) or runs out of
memory then costs only its own rows, and a long suite spreads over the GPUs of one host:
each model runs in a child `python -m model_benchmarks --models NAME` pinned to one GPU
(``CUDA_VISIBLE_DEVICES``), at most ``--gpus`` children at a time, each stopped after
``--model-timeout`` seconds (SIGTERM first: the child still writes what it measured).
The parent merges the children's ``results.csv``; every row a child did not write appears
as ``timeout``, ``crashed`` (with the child's exit status) or ``interrupted`` (the whole run was
stopped while it ran), with its log file, never dropped.
Timings stay comparable: eager and the compiled backends of a model share one process and
one GPU, interleaved as in a plain run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from . import models as suite
from . import report

KILL_GRACE_S = 30  # after SIGTERM, how long a child may take to write its partial results


def child_command(args: argparse.Namespace, model: str, part: Path) -> list[str]:
    """The command line of the child that runs `model` alone with the parent's settings."""
    cmd = [sys.executable, "-m", "model_benchmarks", "--models", model, "--out", str(part), "--no-progress",
           "--backends", args.backends, "--mode", args.mode, "--precision", args.precision,
           "--repeats", str(args.repeats), "--warmup", str(args.warmup), "--accuracy", args.accuracy,
           "--seed", str(args.seed)]
    for flag in ("small", "amp", "cudagraphs", "fresh_caches"):
        if getattr(args, flag):
            cmd.append("--" + flag.replace("_", "-"))
    if args.device:
        cmd += ["--device", args.device]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    return cmd


def _missing_rows(model: str, small: bool, modes: list[str], precisions: list[str], backends: list[str],
                  have: set, status: str, reason: str) -> list[dict]:
    batch, seq = suite.shape(suite.find(model), small)
    rows = []
    for mode in modes:
        for precision in precisions:
            for backend in backends:
                if (mode, precision, backend) not in have:
                    rows.append({**dict.fromkeys(report.COLUMNS), "model": model, "mode": mode,
                                 "precision": precision, "backend": backend, "status": status, "batch_size": batch,
                                 "seq_len": seq, "fallbacks": "", "accuracy": "", "reason": reason})
    return rows


def run(args: argparse.Namespace, models: list[str], modes: list[str], precisions: list[str],
        backends: list[str], out: Path, gpus: int, timeout_s: float, bar) -> list[dict]:
    """Run every model in its own child process, at most `gpus` at a time; the merged rows."""
    parts = out / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    queue = list(models)
    free = list(range(gpus))
    running: dict[str, tuple[subprocess.Popen, int, float, object]] = {}
    ended: dict[str, tuple[int, float, bool]] = {}  # model -> (exit status, seconds, timed out)
    interrupted: set[str] = set()  # models stopped because the whole run was
    try:
        _drive(args, queue, free, running, ended, parts, len(modes) * len(precisions) * len(backends), timeout_s,
               bar)
    except KeyboardInterrupt:  # stop the children; their rows say so
        bar.write("interrupted: stopping the running models")
        for model, (proc, _gpu, start, log) in running.items():
            _stop(proc)
            log.close()
            ended[model] = (proc.returncode, time.monotonic() - start, False)
            interrupted.add(model)
    rows: list[dict] = []
    for model in models:
        csv_path = parts / model / "results.csv"
        got = report.read_csv(csv_path) if csv_path.exists() else []
        rows += got
        if model not in ended:
            status, why = "not run", "the run was interrupted before this model started"
        else:
            code, elapsed, timed_out = ended[model]
            status, why = _ended_status(code, elapsed, timed_out, model in interrupted, timeout_s)
            why += f"; log: parts/{model}/log.txt"
        labels = [f"amp-{p}" if args.amp and p != "fp32" else p for p in precisions]
        rows += _missing_rows(model, args.small, modes, labels, backends,
                              {(r["mode"], r["precision"], r["backend"]) for r in got}, status, why)
    return rows


def _ended_status(code: int, elapsed: float, timed_out: bool, interrupted: bool, timeout_s: float) -> tuple[str, str]:
    """(status, reason) of a model whose child process ended without rows for every backend."""
    if interrupted:
        return "interrupted", f"the run was interrupted while this model ran ({elapsed:.0f} s in)"
    if timed_out:
        return "timeout", f"stopped after the {timeout_s:.0f} s limit per model"
    return "crashed", f"process ended with exit status {code} after {elapsed:.0f} s"


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM (the child writes its partial results), SIGKILL after KILL_GRACE_S."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(KILL_GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _drive(args, queue: list[str], free: list[int], running: dict, ended: dict, parts: Path, rows_per_model: int,
           timeout_s: float, bar) -> None:
    """Start children while GPUs are free; reap them; stop those over the time limit."""
    gpus = len(free)
    while queue or running:
        while queue and free:
            model = queue.pop(0)
            gpu = free.pop(0)
            part = parts / model
            part.mkdir(parents=True, exist_ok=True)
            env = dict(os.environ)
            if gpus > 1:  # the gpu-th of the devices this process sees
                visible = [d for d in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if d.strip()]
                env["CUDA_VISIBLE_DEVICES"] = visible[gpu] if gpu < len(visible) else str(gpu)
            log = open(part / "log.txt", "w")
            proc = subprocess.Popen(child_command(args, model, part), stdout=log, stderr=subprocess.STDOUT, env=env)
            running[model] = (proc, gpu, time.monotonic(), log)
            bar.set_description(f"running {', '.join(running)}"[:70])
        time.sleep(0.5)
        for model, (proc, gpu, start, log) in list(running.items()):
            elapsed = time.monotonic() - start
            timed_out = elapsed > timeout_s
            if timed_out:
                _stop(proc)
            if proc.poll() is None:
                continue
            log.close()
            ended[model] = (proc.returncode, elapsed, timed_out)
            del running[model]
            free.append(gpu)
            bar.update(rows_per_model)
            if proc.returncode != 0 or timed_out:
                bar.write(f"{model}: {'timed out' if timed_out else 'exit status ' + str(proc.returncode)} after "
                          f"{elapsed:.0f} s (log: {parts / model / 'log.txt'})")
