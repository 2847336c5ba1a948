"""Sweep PyTorch's OpInfo database through ``torch.compile(backend="tile")``.

    python -m inductor_tile.tools.opinfo_sweep [--dtype float32] [--ops abs,add,...] [--start N] [--limit N]
        [--samples K] [--device cpu] [--timeout S] [--jobs J] [--csv out.csv] [--dynamic] [--backward]

For every op of ``torch.testing._internal.common_methods_invocations.op_db`` (and its first
``--samples`` sample inputs), the op is compiled with the tile backend after
``torch._dynamo.reset()`` and its outputs are compared with eager PyTorch:

- float outputs pass if they are close to eager under torch.testing's default tolerances
  for the dtype, or no further from a float64 reference (the op run on float64 copies of
  the inputs) than twice eager's own error plus those tolerances; NaN/inf where eager has
  them; integer, bool and non-tensor outputs must equal eager's.

Each op gets one status (the worst over its samples):

- ``correct``: every node became a tile kernel and the outputs match;
- ``fell back``: the outputs match, but some node ran as Inductor's own kernel
  (``metrics.fallback_kernels > 0``; the reasons are listed), or a whole graph ran eagerly
  (its reason ends in "(backend='inductor' fails too)" when Inductor's compile_fx raises on
  the sample as well: an upstream failure, e.g. a data-dependent size under dynamic=True);
- ``no kernel``: the outputs match and the graph had no loop kernel at all (only aten or
  extern calls, e.g. matmul, or views);
- ``failed``: wrong result, a crash while compiling or running, or a timeout;
- ``skipped``: not a test of the backend: eager itself fails, Dynamo fails to trace it with
  ``backend="eager"`` too, the dtype is unsupported, the op is random, its outputs are complex
  or uninitialized, or it has no samples.

With ``--jobs J`` (default 1) ops run in J worker processes, each op under ``--timeout``
seconds (a worker that hangs or crashes is replaced); ``--jobs 0`` runs in this process
without timeouts.  ``run_op`` / ``sweep`` are the library API the tests use.
"""

from __future__ import annotations

import argparse
import csv
import logging
import math
import sys
import time
import traceback
from dataclasses import dataclass, field

STATUSES = ("correct", "fell back", "no kernel", "failed", "skipped")

# how each sample is compiled: ``dynamic``: torch.compile(dynamic=True) (sizes are symbols);
# ``backward``: gradients of sum(out * w) wrt the float inputs are compared too
OPTIONS = {"dynamic": False, "backward": False}
_RANK = {"skipped": 0, "no kernel": 1, "correct": 2, "fell back": 3, "failed": 4}

# ops whose outputs are random or uninitialized (the random ones are also caught by running twice)
_NONDETERMINISTIC = ("rand", "normal", "bernoulli", "multinomial", "dropout", "uniform", "exponential", "cauchy",
                     "geometric", "log_normal", "empty", "new_empty")


@dataclass
class OpResult:
    op: str
    status: str
    samples: int = 0  # samples that were compiled and compared
    generated: int = 0  # tile kernels over all samples
    fallbacks: int = 0  # nodes that ran as Inductor's kernels
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0


def op_name(op) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def _torch_dtype(name: str):
    import torch

    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise SystemExit(f"unknown dtype {name!r}")
    return dtype


def select_ops(names: list[str] | None = None, limit: int | None = None, start: int = 0) -> list:
    """OpInfos by full name (``div.floor_rounding``) or base name (every variant), in op_db order;
    `start` skips the first ops of that selection (to resume a long sweep), `limit` keeps the next N."""
    from torch.testing._internal.common_methods_invocations import op_db

    ops = list(op_db)
    if names:
        wanted = set(names)
        ops = [o for o in ops if op_name(o) in wanted or o.name in wanted]
        unknown = wanted - {op_name(o) for o in ops} - {o.name for o in ops}
        if unknown:
            raise SystemExit(f"unknown ops: {', '.join(sorted(unknown))}")
    if start < 0:
        raise SystemExit(f"--start must be >= 0, not {start}")
    ops = ops[start:]
    return ops[:limit] if limit else ops


# ===--------------------------------------------------------------------------===
# One op
# ===--------------------------------------------------------------------------===
class _Skip(Exception):
    pass


def run_op(op, dtype, device: str = "cpu", max_samples: int = 3) -> OpResult:
    """Compile and compare the first `max_samples` samples of `op` (in this process)."""
    import torch

    start = time.perf_counter()
    result = OpResult(op_name(op), "skipped")
    name = op.name.split(".")[-1]
    if any(word in name for word in _NONDETERMINISTIC):
        result.reasons.append("random or uninitialized output")
        return result
    if dtype not in op.supported_dtypes(device):
        result.reasons.append(f"{dtype} not supported")
        return result
    try:
        samples = list(_first(op.sample_inputs(device, dtype, requires_grad=False), max_samples))
    except Exception as e:  # noqa: BLE001 - the OpInfo itself fails here
        result.reasons.append(f"no samples: {type(e).__name__}: {e}")
        return result
    if not samples:
        result.reasons.append("no samples")
    statuses = []
    for i, sample in enumerate(samples):
        try:
            status, detail, generated, fallbacks = _run_sample(op, sample, dtype)
        except _Skip as e:
            status, detail, generated, fallbacks = "skipped", [str(e)], 0, 0
        except Exception as e:  # noqa: BLE001 - the compiled op crashed
            status, detail, generated, fallbacks = "failed", [_crash_reason(e)], 0, 0
        finally:
            torch._dynamo.reset()
        statuses.append(status)
        result.generated += generated
        result.fallbacks += fallbacks
        if status != "skipped":
            result.samples += 1
        for reason in detail:
            tagged = f"sample {i}: {reason}" if status in ("failed", "skipped") else reason
            if tagged not in result.reasons:
                result.reasons.append(tagged)
    if statuses:
        result.status = max(statuses, key=_RANK.__getitem__)
    result.seconds = time.perf_counter() - start
    return result


def _first(iterable, n: int):
    for i, item in enumerate(iterable):
        if i >= n:
            return
        yield item


def _crash_reason(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip().splitlines()
    return "crash: " + (text[0][:300] if text else type(e).__name__)


def _run_sample(op, sample, dtype):
    """(status, reasons, tile kernels, fallback nodes) of one sample."""
    import torch
    from torch.utils import _pytree as pytree

    from .. import metrics
    from ..backend import tile_backend

    leaves, spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
    tensor_at = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
    for i in tensor_at:
        if leaves[i].layout != torch.strided or leaves[i].is_complex():
            raise _Skip("sparse or complex input")

    def call(*tensors):
        values = list(leaves)
        for i, t in zip(tensor_at, tensors):
            values[i] = t
        inp, args, kwargs = pytree.tree_unflatten(values, spec)
        return op.op(inp, *args, **kwargs)

    def inputs(convert=None):
        out = []
        for i in tensor_at:
            t = leaves[i].detach().clone()
            out.append(convert(t) if convert is not None else t)
        return out

    try:
        torch.manual_seed(0)
        eager = call(*inputs())
        torch.manual_seed(1)
        again = call(*inputs())
    except Exception as e:  # noqa: BLE001
        raise _Skip(f"eager fails: {type(e).__name__}") from None
    for t in pytree.tree_leaves(eager):
        if isinstance(t, torch.Tensor) and (t.is_complex() or t.layout != torch.strided):
            raise _Skip("complex or sparse output")
    if _mismatch(again, eager, None, exact=True) is not None:
        raise _Skip("random output")
    reference = _float64_reference(call, inputs, eager)

    torch._dynamo.reset()
    metrics.reset()
    dynamic = True if OPTIONS["dynamic"] else None
    compiled = torch.compile(call, backend=tile_backend, dynamic=dynamic)
    torch.manual_seed(0)
    try:
        out = compiled(*inputs())
    except Exception as e:  # noqa: BLE001 - a crash: say whether Dynamo or Inductor's own backend shares it
        if _dynamo_fails(call, inputs, dynamic):
            raise _Skip(f"Dynamo fails (backend='eager' too): {_crash_reason(e)[7:]}") from None
        return "failed", [_crash_reason(e) + _inductor_note(call, inputs, dynamic, None)], 0, 0
    problem = _mismatch(out, eager, reference)
    if problem is not None:
        generated, fallbacks = metrics.generated_kernels, metrics.fallback_kernels
        reasons = [_strip_node(r) for r in metrics.fallback_reasons]
        return "failed", [problem + _inductor_note(call, inputs, dynamic, out)] + reasons, generated, fallbacks
    if OPTIONS["backward"] and op.supports_autograd and dtype.is_floating_point:
        try:
            problem = _backward_mismatch(call, compiled, inputs)
        except Exception as e:  # noqa: BLE001
            problem = "backward: " + _crash_reason(e)
        if problem is not None:
            reasons = [_strip_node(r) for r in metrics.fallback_reasons]
            theirs = torch.compile(call, backend="inductor", dynamic=dynamic)
            try:
                shared = _backward_mismatch(call, theirs, inputs) is not None
            except Exception:  # noqa: BLE001
                shared = True
            finally:
                torch._dynamo.reset()
            note = " (backend='inductor' fails too)" if shared else ""
            return "failed", [problem + note] + reasons, metrics.generated_kernels, metrics.fallback_kernels
    generated, fallbacks = metrics.generated_kernels, metrics.fallback_kernels + len(metrics.eager_graphs)
    eager = [f"ran eagerly: {r}" for r in metrics.eager_graphs]
    if eager and _inductor_compile_fails(call, inputs, dynamic):
        eager = [r + " (backend='inductor' fails too)" for r in eager]
    reasons = [_strip_node(r) for r in metrics.fallback_reasons] + eager
    if fallbacks:
        return "fell back", reasons, generated, fallbacks
    return ("correct" if generated else "no kernel"), [], generated, fallbacks


def _backward_mismatch(call, compiled, inputs) -> str | None:
    """Why the compiled gradients of sum(out * w) wrt the float inputs differ from eager's (or None)."""
    import torch
    from torch.utils import _pytree as pytree

    def grads(fn, convert=None):
        leaves = [t.requires_grad_() if t.is_floating_point() else t for t in inputs(convert)]
        torch.manual_seed(0)
        outs = [t for t in pytree.tree_leaves(fn(*leaves))
                if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]
        wanted = [t for t in leaves if t.requires_grad]
        if not outs or not wanted:
            return None
        g = torch.Generator().manual_seed(2)
        loss = sum((t * torch.randn(t.shape, generator=g, dtype=torch.float64).to(t)).sum() for t in outs)
        found = torch.autograd.grad(loss, wanted, allow_unused=True)
        return [torch.zeros_like(w) if x is None else x.detach() for x, w in zip(found, wanted)]

    try:
        eager = grads(call)
    except Exception:  # noqa: BLE001 - eager has no backward for these inputs: nothing to compare
        return None
    if eager is None:
        return None
    try:
        reference = grads(call, lambda t: t.double() if t.is_floating_point() else t)
    except Exception:  # noqa: BLE001
        reference = None
    out = grads(compiled)
    problem = _mismatch(out, eager, reference)
    return None if problem is None else f"backward: {problem}"


def _dynamo_fails(call, inputs, dynamic) -> bool:
    """Whether tracing alone fails (``backend="eager"``): no backend gets the graph (e.g. cov with
    dynamic=True: its C++ kernel asks a fake tensor for ``numel()``), so it is not a test of ours."""
    import torch

    torch._dynamo.reset()
    try:
        torch.compile(call, backend="eager", dynamic=dynamic)(*inputs())
        return False
    except Exception:  # noqa: BLE001
        return True
    finally:
        torch._dynamo.reset()


def _inductor_note(call, inputs, dynamic, out) -> str:
    """What Inductor's own backend does with the sample, when it shares our failure: for a crash
    (`out` None) it crashes too; for a result off eager's it returns exactly what we returned."""
    import torch

    torch._dynamo.reset()
    try:
        torch.manual_seed(0)
        theirs = torch.compile(call, backend="inductor", dynamic=dynamic)(*inputs())
    except Exception:  # noqa: BLE001
        return " (backend='inductor' crashes too)" if out is None else ""
    finally:
        torch._dynamo.reset()
    if out is not None and _mismatch(out, theirs, None, exact=True) is None:
        return " (backend='inductor' gives the same)"
    return ""


def _inductor_compile_fails(call, inputs, dynamic) -> bool:
    """Whether Inductor's own compile_fx raises on the sample (forward, and backward with
    ``OPTIONS["backward"]``): then a graph of ours that ran eagerly shares an upstream failure
    (Dynamo or AOTAutograd, e.g. a data-dependent size, or Inductor's lowering)."""
    import torch
    from torch._inductor.compile_fx import compile_fx

    raised = []

    def inductor(gm, example_inputs):
        try:
            return compile_fx(gm, example_inputs)
        except Exception:  # noqa: BLE001 - Dynamo may catch it and run the graph eagerly: note it here
            raised.append(True)
            raise

    torch._dynamo.reset()
    try:
        compiled = torch.compile(call, backend=inductor, dynamic=dynamic)
        torch.manual_seed(0)
        compiled(*inputs())
        if OPTIONS["backward"]:
            _backward_mismatch(call, compiled, inputs)
    except Exception:  # noqa: BLE001 - it crashes outright
        return True
    finally:
        torch._dynamo.reset()
    return bool(raised)


def _strip_node(reason: str) -> str:
    """'buf3: op tanh' -> 'op tanh' (node names differ between graphs)."""
    head, sep, tail = reason.partition(": ")
    return tail if sep and head.replace("_", "").isalnum() and " " not in head else reason


def _float64_reference(call, inputs, eager):
    """The op on float64 copies of the float inputs (None where that fails or changes the structure)."""
    import torch
    from torch.utils import _pytree as pytree

    def widen(t):
        return t.double() if t.is_floating_point() else t

    try:
        torch.manual_seed(0)
        ref = call(*inputs(widen))
    except Exception:  # noqa: BLE001 - some ops have no float64 kernel; compare with eager only
        return None
    if pytree.tree_structure(ref) != pytree.tree_structure(eager):
        return None
    return ref


# ===--------------------------------------------------------------------------===
# Comparing outputs
# ===--------------------------------------------------------------------------===
def _mismatch(out, eager, reference, exact: bool = False) -> str | None:
    """Why `out` does not match `eager` (None if it does)."""
    from torch.utils import _pytree as pytree

    out_leaves, out_spec = pytree.tree_flatten(out)
    eager_leaves, eager_spec = pytree.tree_flatten(eager)
    if out_spec != eager_spec:
        return f"output structure {out_spec} differs from eager's {eager_spec}"
    ref_leaves = pytree.tree_leaves(reference) if reference is not None else [None] * len(eager_leaves)
    for i, (o, e, r) in enumerate(zip(out_leaves, eager_leaves, ref_leaves)):
        problem = _leaf_mismatch(o, e, r, exact)
        if problem is not None:
            return f"output {i}: {problem}"
    return None


def _leaf_mismatch(o, e, r, exact: bool) -> str | None:
    import torch

    if not isinstance(e, torch.Tensor):
        if isinstance(e, float) and isinstance(o, float):
            return None if (o == e or (math.isnan(o) and math.isnan(e)) or math.isclose(o, e, rel_tol=1e-6)) \
                else f"{o} != {e}"
        return None if o == e else f"{o!r} != {e!r}"
    if not isinstance(o, torch.Tensor):
        return f"a {type(o).__name__} instead of a tensor"
    if o.dtype != e.dtype or o.shape != e.shape:
        return f"{o.dtype}{list(o.shape)} instead of {e.dtype}{list(e.shape)}"
    if not e.is_floating_point():
        return None if torch.equal(o, e) else "values differ"
    if exact:
        return None if torch.equal(o.isnan(), e.isnan()) and torch.equal(o.nan_to_num(), e.nan_to_num()) \
            else "values differ"
    try:
        torch.testing.assert_close(o, e, equal_nan=True)
        return None
    except AssertionError as err:
        message = str(err).strip().splitlines()
    if r is not None and isinstance(r, torch.Tensor) and r.shape == e.shape and _no_worse_than_eager(o, e, r):
        return None
    return " ".join(line.strip() for line in message[:4] if line.strip())


def _no_worse_than_eager(o, e, r) -> bool:
    """`o` is within tolerance of the float64 reference `r`, or at most twice as far as eager `e`."""
    import torch
    from torch.testing._comparison import default_tolerances

    rtol, atol = default_tolerances(e)
    o64, e64, r64 = o.double(), e.double(), r.double()
    finite = torch.isfinite(e64)
    same_specials = torch.equal(torch.where(finite, 0.0, e64.nan_to_num(nan=1.5)),
                                torch.where(finite, 0.0, o64.nan_to_num(nan=1.5)))
    if not same_specials or not torch.isfinite(o64[finite]).all():
        return False
    error, eager_error = (o64 - r64).abs(), (e64 - r64).abs()
    allowed = atol + rtol * r64.abs() + 2 * eager_error
    return bool((error[finite] <= allowed[finite]).all())


# ===--------------------------------------------------------------------------===
# Many ops
# ===--------------------------------------------------------------------------===
def sweep(names: list[str] | None = None, dtype_name: str = "float32", device: str = "cpu", max_samples: int = 3,
          limit: int | None = None, jobs: int = 1, timeout: float = 300.0, progress=None, dynamic: bool = False,
          backward: bool = False, start: int = 0) -> list[OpResult]:
    """Run every selected op (see ``select_ops`` for `start` and `limit`); `progress(result)` is
    called as each op finishes.  ``dynamic``, ``backward``: see ``OPTIONS``."""
    ops = [op_name(o) for o in select_ops(names, limit, start)]
    options = {"dynamic": dynamic, "backward": backward}
    from .. import config

    # a graph compiled by an earlier sweep would come from the graph cache: no kernel generated to count
    saved, cache = dict(OPTIONS), config.graph_cache
    OPTIONS.update(options)
    config.graph_cache = False
    try:
        if jobs <= 0:
            return _sweep_here(ops, dtype_name, device, max_samples, progress)
    finally:
        OPTIONS.update(saved)
        config.graph_cache = cache
    return _sweep_workers(ops, dtype_name, device, max_samples, jobs, timeout, progress, options)


def _quiet() -> None:
    logging.getLogger("inductor_tile").setLevel(logging.ERROR)
    logging.getLogger("torch").setLevel(logging.ERROR)


def _sweep_here(ops, dtype_name, device, max_samples, progress):
    _quiet()
    dtype = _torch_dtype(dtype_name)
    by_name = {op_name(o): o for o in select_ops(ops)}
    results = []
    for name in ops:
        result = run_op(by_name[name], dtype, device, max_samples)
        results.append(result)
        if progress:
            progress(result)
    return results


def _worker(conn, dtype_name, device, max_samples, threads, options) -> None:
    import torch

    from .. import config

    _quiet()
    OPTIONS.update(options)
    config.graph_cache = False  # as in sweep(): every op's kernels are generated, not loaded
    torch.set_num_threads(threads)
    dtype = _torch_dtype(dtype_name)
    by_name = {op_name(o): o for o in select_ops()}
    while True:
        name = conn.recv()
        if name is None:
            return
        try:
            result = run_op(by_name[name], dtype, device, max_samples)
        except BaseException as e:  # noqa: BLE001 - report, keep the worker alive
            result = OpResult(name, "failed", reasons=[_crash_reason(e), traceback.format_exc(limit=3)])
        conn.send(result)


class _Worker:
    def __init__(self, ctx, args):
        self.ctx, self.args = ctx, args
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker, args=(child, *args), daemon=True)
        self.process.start()
        child.close()
        self.op: str | None = None
        self.started = 0.0

    def give(self, name: str) -> None:
        self.op, self.started = name, time.perf_counter()
        self.conn.send(name)

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.process.join(timeout=10)
        self.conn.close()


def _sweep_workers(ops, dtype_name, device, max_samples, jobs, timeout, progress, options):
    import multiprocessing
    from multiprocessing.connection import wait

    ctx = multiprocessing.get_context("spawn")
    threads = max(1, (multiprocessing.cpu_count() // jobs))
    args = (dtype_name, device, max_samples, threads, options)
    workers = [_Worker(ctx, args) for _ in range(min(jobs, len(ops)) or 1)]
    pending, results = list(reversed(ops)), {}

    def finish(worker, result):
        results[worker.op] = result
        worker.op = None
        if progress:
            progress(result)

    try:
        while pending or any(w.op for w in workers):
            for w in workers:
                if w.op is None and pending:
                    w.give(pending.pop())
            ready = wait([w.conn for w in workers if w.op], timeout=1.0)
            for i, w in enumerate(workers):
                if w.op is None:
                    continue
                elapsed = time.perf_counter() - w.started
                if w.conn in ready:
                    try:
                        finish(w, w.conn.recv())
                        continue
                    except (EOFError, OSError):
                        reason = f"worker died (exit code {w.process.exitcode})"
                elif elapsed > timeout:
                    reason = f"timeout after {timeout:.0f} s"
                else:
                    continue
                finish(w, OpResult(w.op, "failed", reasons=[reason], seconds=elapsed))
                w.stop(kill=True)
                workers[i] = _Worker(ctx, args)
    finally:
        for w in workers:
            w.stop(kill=w.op is not None)
    return [results[name] for name in ops]


# ===--------------------------------------------------------------------------===
# Reporting
# ===--------------------------------------------------------------------------===
def counts(results: list[OpResult]) -> dict[str, int]:
    return {status: sum(r.status == status for r in results) for status in STATUSES}


def top_reasons(results: list[OpResult], status: str, n: int = 15) -> list[tuple[str, int]]:
    """The most common reasons among ops of `status` (each op counts once per reason)."""
    tally: dict[str, int] = {}
    for r in results:
        if r.status == status:
            for reason in {_generic(x) for x in r.reasons}:
                tally[reason] = tally.get(reason, 0) + 1
    return sorted(tally.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def _generic(reason: str) -> str:
    """Reasons without sample numbers and with long messages cut, so equal causes group."""
    if reason.startswith("sample ") and ": " in reason:
        reason = reason.split(": ", 1)[1]
    return reason[:120]


def report(results: list[OpResult], out=None) -> None:
    out = out or sys.stdout
    total = counts(results)
    print("\nstatus      ops", file=out)
    for status in STATUSES:
        print(f"{status:<11} {total[status]:>4}", file=out)
    print(f"{'total':<11} {len(results):>4}", file=out)
    for status in ("fell back", "failed"):
        reasons = top_reasons(results, status)
        if reasons:
            print(f"\ntop reasons ({status}):", file=out)
            for reason, n in reasons:
                print(f"  {n:>4}  {reason}", file=out)
    print("\nper op:", file=out)
    for r in results:
        if r.status != "correct":
            detail = "; ".join(r.reasons[:4])
            print(f"  {r.op:<40} {r.status:<10} {detail[:300]}", file=out)


def write_csv(results: list[OpResult], path: str) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["op", "status", "samples", "tile_kernels", "fallback_nodes", "seconds", "reasons"])
        for r in results:
            writer.writerow([r.op, r.status, r.samples, r.generated, r.fallbacks, f"{r.seconds:.1f}",
                             " | ".join(r.reasons)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m inductor_tile.tools.opinfo_sweep", description=__doc__.split("\n")[0])
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--ops", default="", help="comma-separated op names (base names select every variant)")
    parser.add_argument("--start", type=int, default=0,
                        help="skip the first N selected ops (0-based index of the first op to run)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N selected ops (after --start)")
    parser.add_argument("--samples", type=int, default=3, help="sample inputs per op")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per op (with --jobs >= 1)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes; 0 runs in this process")
    parser.add_argument("--csv", default=None, help="write one row per op here")
    parser.add_argument("--dynamic", action="store_true", help="compile with dynamic=True (symbolic sizes)")
    parser.add_argument("--backward", action="store_true", help="compare input gradients too")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.ops.split(",") if n.strip()] or None
    start = time.perf_counter()
    done = [0]

    def progress(r: OpResult) -> None:
        done[0] += 1
        print(f"[{args.start + done[0]}] {r.op}: {r.status} ({r.seconds:.1f} s)", flush=True)

    results = sweep(names, args.dtype, args.device, args.samples, args.limit, args.jobs, args.timeout, progress,
                    dynamic=args.dynamic, backward=args.backward, start=args.start)
    report(results)
    if args.csv:
        write_csv(results, args.csv)
    print(f"\n{len(results)} ops in {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
