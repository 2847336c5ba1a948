"""Run Triton's own language tests against inductor_tile: `python -m inductor_tile.tools.triton_conformance PATH`.

PATH is the `python/test/unit/language/` directory of a Triton checkout (read, never
modified). The tests run under pytest with an import shim (`triton_shim.py`) that makes
`import triton` give inductor_tile, on the CPU target (`--device cpu`, default) or a GPU
(`--device cuda`); Triton's conftest files are not loaded (the tool supplies the fixtures).
For every test function the tool prints how many of its parametrizations passed, failed or
were not applicable, and for failures the first error; then a summary.

Not applicable: skipped by the test itself, or a family outside this project's language
(`NOT_APPLICABLE_FAMILIES`: dot/MMA, fp8, Triton compiler internals, and the few compile-error tests
that check a refusal of Triton's where inductor_tile accepts the code, or Triton's exact message text),
or failing only because it uses a Triton API outside the language (`NOT_APPLICABLE_ERRORS`: Triton IR
text, Triton's compiler knobs, CUDA-only torch calls).
A failure is anything else: a wrong result, a compile error, a missing `tl.` name.

`--per-function N` runs at most N parametrizations of each function (spread evenly), which
keeps a CPU run short; `--files` picks test files (default: test_core.py). Python processes the tests
start (test_subprocess.py) get the shim through a `sitecustomize` module on PYTHONPATH. test_random.py
imports scipy (not a dependency of this project: install it to run that file).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# test-function name patterns outside the language this project implements, with the reason
NOT_APPLICABLE_FAMILIES = [
    (r"dot|mma|matmul|gemm", "tl.dot (another issue)"),
    (r"fp8|f8|float8|e4m3|e5m2|mxfp|scaled", "fp8 types"),
    (r"ptx|ttgir|llir|amdgcn|(?<!inline_)asm", "GPU assembly / Triton IR text"),
    (r"convert2d|convert_layout|local_load|shared_layout|linear_layout|chain_reduce_layout|layout",
     "Triton layout attributes in MLIR text"),
    (r"num_ctas|cluster|warp_special|maxnreg|enable_fp_fusion|override_arch|env_var|launcher|compile_only",
     "Triton compiler options and internals"),
    (r"^test_pointer_arguments$", "Triton's GPU launch refuses CPU tensors (here kernels run where their tensors are)"),
    # test_compile_errors: Triton refusing what inductor_tile accepts, or Triton's exact wording
    (r"^test_(global_var_access|captured_var_access|constexpr_annotated_global_var_access)$",
     "Triton refuses non-constexpr globals and captured variables; inductor_tile reads them (as they are at the "
     "kernel's first compile)"),
    (r"^test_err_in_unary_op$", "Triton cannot evaluate `not` of a tuple; inductor_tile can"),
    (r"^test_power_of_two_shapes(_2)?$", "compares Triton's exact error text (ours is in our own words)"),
]
# errors that mean "uses an API outside the tile language" (Triton's compiler, knobs, fp8 tensors)
NOT_APPLICABLE_ERRORS = [
    (r"`triton\.(compile|knobs|runtime|compiler)[^`]*` is not provided", "Triton compiler API"),
    (r"`JITFunction\.warmup`", "Triton compile-only API"),
    (r"fp8 tensors|`triton\.language\.float8|float8_e|float8e", "fp8 types"),
    (r"launch_cooperative_grid|launch_pdl|maxnreg", "Triton launch options"),
    (r"`triton\.language\.(dot|dot_scaled)`", "outside this issue"),
    (r"MLIR|ttgir|\.asm\[", "Triton IR text"),
    (r"<missing triton\.language\.(dot|dot_scaled|float8)",
     "outside this issue"),
    (r"Torch not compiled with CUDA|torch\.cuda\.", "needs CUDA"),
    (r"No module named 'triton\.backends", "Triton compiler internals (triton.backends)"),
    (r'assert err_msg != ""', "expects Triton's compile error for a noinline helper (inductor_tile inlines it)"),
    (r"assert 'cp\.async\.wait_group \d+' in", "Triton's software pipeliner's wait depth in its PTX (results checked first)"),
]


@dataclass
class FunctionResult:
    passed: int = 0
    failed: int = 0
    not_applicable: int = 0
    first_error: str = ""
    reasons: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def _function_of(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


# families that run on some devices only: (pattern, devices where not applicable, reason)
NOT_APPLICABLE_FAMILIES_ON = [
    (r"inline_asm", ("cpu",), "Triton's tests pass PTX to tl.inline_asm_elementwise (the CPU target takes x86 asm)"),
]


def _family_reason(function: str, device: str = "cpu") -> str | None:
    name = function.rsplit("::", 1)[-1]
    for pattern, reason in NOT_APPLICABLE_FAMILIES:
        if re.search(pattern, name, re.IGNORECASE):
            return reason
    for pattern, devices, reason in NOT_APPLICABLE_FAMILIES_ON:
        if device in devices and re.search(pattern, name, re.IGNORECASE):
            return reason
    return None


# parametrizations (test function pattern, test id pattern, devices): hardware number formats outside this
# project, and expectations that hold only for a GPU's threads
NOT_APPLICABLE_PARAMETERS = [
    (r"", r"float8|fp8|f8e|e4m3|e5m2|mxfp|fp4", ("cpu", "cuda"), "fp8 types"),
    (r"^test_print$", r"^(device_print_scalar|no_arg_print|print_no_arg)-", ("cpu",),
     "expects a scalar's line once per GPU thread (128 copies); a CPU program prints it once"),
    (r"^test_print$", r"^device_print_2d_tensor-", ("cpu",),
     "its expected index widths assume 32-lane warps (the shape comes from the warp size)"),
    (r"^test_print$", r"^static_print-", ("cpu", "cuda"), "compares Triton's type text (int32[constexpr[128]])"),
]


def _parameter_reason(nodeid: str, device: str = "cpu") -> str | None:
    function, _, parameters = nodeid.partition("[")
    function = function.rsplit("::", 1)[-1]
    for function_pattern, pattern, devices, reason in NOT_APPLICABLE_PARAMETERS:
        if device in devices and re.search(function_pattern, function) and re.search(pattern, parameters, re.I):
            return reason
    return None


def _error_reason(text: str) -> str | None:
    for pattern, reason in NOT_APPLICABLE_ERRORS:
        if re.search(pattern, text):
            return reason
    return None


def _first_error(longrepr: str) -> str:
    lines = [line for line in longrepr.splitlines() if line.startswith("E ")]
    text = " ".join(line[1:].strip() for line in lines[:3]) or (longrepr.strip().splitlines() or [""])[-1]
    return text[:240]


class ConformancePlugin:
    """Supplies Triton's test fixtures, samples parametrizations, and writes each outcome as a JSON line
    (`log`) as soon as it is known, after a `start` line, so a crash loses nothing but the crashing test."""

    def __init__(self, device: str, per_function: int, log, done: set[str] = frozenset()):
        self.device_name = device
        self.sample = per_function
        self.log = log
        self.done = done  # node ids an earlier (crashed) session finished

    # --- fixtures Triton's conftest would provide -------------------------------------------
    @pytest.fixture
    def device(self):
        return self.device_name

    @pytest.fixture
    def fresh_triton_cache(self, tmp_path):
        yield str(tmp_path)

    @pytest.fixture
    def fresh_knobs(self):
        yield None

    @pytest.fixture
    def with_allocator(self):
        yield None

    @pytest.fixture
    def fresh_knobs_except_libraries(self):
        yield None

    def pytest_configure(self, config):
        for marker in ("interpreter", "gpu", "cpu"):
            config.addinivalue_line("markers", f"{marker}: Triton test marker")

    # --- sampling -------------------------------------------------------------------------------
    def pytest_collection_modifyitems(self, config, items):
        self._sample(config, items)
        if self.done:
            drop = [item for item in items if item.nodeid in self.done]
            items[:] = [item for item in items if item.nodeid not in self.done]
            config.hook.pytest_deselected(items=drop)

    def _sample(self, config, items):
        if self.sample <= 0:
            return
        groups: dict[str, list] = defaultdict(list)
        for item in items:
            groups[_function_of(item.nodeid)].append(item)
        keep, drop = [], []
        for group in groups.values():
            if len(group) <= self.sample:
                keep += group
                continue
            step = len(group) / self.sample
            chosen = {int(i * step) for i in range(self.sample)}
            for i, item in enumerate(group):
                (keep if i in chosen else drop).append(item)
        items[:] = keep
        config.hook.pytest_deselected(items=drop)

    # --- outcomes -----------------------------------------------------------------------------
    def _write(self, **record) -> None:
        self.log.write(json.dumps(record) + "\n")
        self.log.flush()

    def pytest_runtest_logstart(self, nodeid, location):
        self._write(event="start", nodeid=nodeid)

    def pytest_runtest_logreport(self, report):
        if report.when == "call" and report.passed:
            self._write(event="pass", nodeid=report.nodeid)
        elif report.skipped and report.when in ("setup", "call"):
            self._write(event="na", nodeid=report.nodeid, reason="skipped by the test")
        elif report.failed:
            text = str(report.longrepr)
            reason = _family_reason(_function_of(report.nodeid), self.device_name) or _parameter_reason(report.nodeid, self.device_name) or \
                _error_reason(text)
            if reason:
                self._write(event="na", nodeid=report.nodeid, reason=reason)
            else:
                self._write(event="fail", nodeid=report.nodeid, error=_first_error(text))

    def pytest_collectreport(self, report):
        if report.failed:  # the module did not import: n.a. if only for a reason outside the language
            nodeid, text = report.nodeid + "::<collection>", str(report.longrepr)
            reason = _family_reason(report.nodeid.rsplit("/", 1)[-1].removesuffix(".py")) or _error_reason(text)
            if reason:
                self._write(event="na", nodeid=nodeid, reason=reason)
            else:
                self._write(event="fail", nodeid=nodeid, error=_first_error(text))


def _shim_subprocesses(device: str, folder: Path) -> None:
    """Python processes the tests start (test_subprocess.py runs a helper script) get the shim too: a
    `sitecustomize` module on their PYTHONPATH installs it at start-up."""
    site = folder / "shim_site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        "from inductor_tile.tools.triton_shim import install\n"
        f"install({device!r})\n")
    paths = [str(site), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(paths)


def _child(path: Path, files: list[str], device: str, per_function: int, keyword: str | None, log_path: Path,
           done: Path | None) -> None:
    """One pytest session (in a child process) appending its outcomes to `log_path`."""
    from .triton_shim import install

    install(device, compile_only_api=True)  # JITFunction.warmup compiles (its IR-text checks are n.a. below)
    _shim_subprocesses(device, log_path.parent)
    if device == "cpu":
        os.environ.pop("TILE_INTERPRET", None)
    args = [*(str(path / f) for f in files), "--noconftest", "-q", "--tb=short", "-p", "no:cacheprovider",
            "--no-header", "--continue-on-collection-errors", "-o", "python_files=test_*.py", "--rootdir", str(path), "-W", "ignore"]
    if keyword:
        args += ["-k", keyword]
    skip = set(done.read_text().splitlines()) if done is not None else set()
    with open(log_path, "a") as log:
        pytest.main(args, plugins=[ConformancePlugin(device, per_function, log, skip)])


def _read_log(log_path: Path) -> tuple[dict[str, FunctionResult], set[str], str | None]:
    """Results per function, the node ids finished, and the one started but not finished (a crash)."""
    results: dict[str, FunctionResult] = defaultdict(FunctionResult)
    finished: set[str] = set()
    started = None
    if not log_path.exists():
        return results, finished, None
    for line in log_path.read_text().splitlines():
        record = json.loads(line)
        nodeid, event = record["nodeid"], record["event"]
        if event == "start":
            started = nodeid
            continue
        if nodeid in finished:  # a module that failed to import is reported again by each restarted session
            continue
        result = results[_function_of(nodeid)]
        if event == "pass":
            result.passed += 1
        elif event == "na":
            result.not_applicable += 1
            result.reasons[record["reason"]] += 1
        else:
            result.failed += 1
            result.first_error = result.first_error or record["error"]
        finished.add(nodeid)
        if nodeid == started:
            started = None
    return results, finished, started


def _watch(child: subprocess.Popen, log_path: Path, timeout: float) -> tuple[int, bool]:
    """Wait for the child; kill it if one test runs longer than `timeout` seconds. (exit status, timed out)"""
    current, since = None, time.monotonic()
    while True:
        try:
            return child.wait(timeout=1.0), False
        except subprocess.TimeoutExpired:
            pass
        _, _, started = _read_log(log_path)
        if started != current:
            current, since = started, time.monotonic()
        elif started is not None and time.monotonic() - since > timeout:
            child.kill()
            return child.wait(), True


def run(path: Path, files: list[str], device: str, per_function: int, keyword: str | None,
        max_crashes: int = 200, timeout: float = 120.0) -> dict[str, FunctionResult]:
    """Run the tests in child processes; a test that kills its process, or runs longer than `timeout`
    seconds, counts as failed and the run goes on without it."""
    with tempfile.TemporaryDirectory(prefix="tile-conformance-") as tmp:
        log_path, done_path = Path(tmp) / "outcomes.jsonl", Path(tmp) / "done.txt"
        crashes = 0
        while True:
            command = [sys.executable, "-m", "inductor_tile.tools.triton_conformance", "--child", str(log_path),
                       str(path), "--device", device, "--per-function", str(per_function), "--files", *files]
            if keyword:
                command += ["-k", keyword]
            if done_path.exists():
                command += ["--done", str(done_path)]
            code, timed_out = _watch(subprocess.Popen(command), log_path, timeout)
            _, finished, started = _read_log(log_path)
            if started is None or code == 0 or crashes >= max_crashes:
                break
            error = f"timed out after {timeout} s" if timed_out else f"the test process died (exit status {code})"
            reason = _family_reason(_function_of(started), device) or _parameter_reason(started, device)
            record = {"event": "na", "nodeid": started, "reason": reason} if reason else \
                {"event": "fail", "nodeid": started, "error": error}
            with open(log_path, "a") as log:  # the test that took its process down
                log.write(json.dumps(record) + "\n")
            crashes += 1
            done_path.write_text("\n".join(sorted(finished | {started})))  # the next session skips these
        results, _, _ = _read_log(log_path)
    return results


def report(results: dict[str, FunctionResult], seconds: float, out=None) -> None:
    out = out or sys.stdout
    width = max([len(f.rsplit("::", 1)[-1]) for f in results] + [10])
    print(f"\n{'test function':<{width}}  status          pass  fail   n/a  first failure / reason", file=out)
    totals = FunctionResult()
    for function in sorted(results):
        r = results[function]
        name = function.rsplit("::", 1)[-1]
        status = "fail" if r.failed else "pass" if r.passed else "not-applicable"
        note = r.first_error if r.failed else ", ".join(f"{k}: {v}" for k, v in r.reasons.items()) if not r.passed else ""
        print(f"{name:<{width}}  {status:<14}  {r.passed:>4}  {r.failed:>4}  {r.not_applicable:>4}  {note}", file=out)
        totals.passed += r.passed
        totals.failed += r.failed
        totals.not_applicable += r.not_applicable
    functions = len(results)
    passing = sum(1 for r in results.values() if r.passed and not r.failed)
    failing = sum(1 for r in results.values() if r.failed)
    applicable = totals.passed + totals.failed
    share = 100.0 * totals.passed / applicable if applicable else 0.0
    print(f"\nfunctions: {functions} ({passing} pass, {failing} fail, {functions - passing - failing} not applicable)",
          file=out)
    print(f"parametrizations: {totals.passed} passed, {totals.failed} failed, {totals.not_applicable} not applicable; "
          f"{share:.1f}% of the applicable ones pass ({seconds:.0f} s)", file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="a Triton checkout's python/test/unit/language/ directory")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--files", nargs="+", default=["test_core.py"], help="test files in PATH (default: test_core.py)")
    parser.add_argument("--per-function", type=int, default=0, help="at most this many parametrizations per function")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one test may run (default 120)")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)  # internal: run one session, log here
    parser.add_argument("--done", type=Path, help=argparse.SUPPRESS)  # internal: node ids to leave out
    args = parser.parse_args(argv)
    if args.child is not None:
        _child(args.path.resolve(), args.files, args.device, args.per_function, args.keyword, args.child, args.done)
        return 0
    if not args.path.is_dir():
        parser.error(f"{args.path} is not a directory")
    start = time.perf_counter()
    results = run(args.path.resolve(), args.files, args.device, args.per_function, args.keyword,
                  timeout=args.timeout)
    report(results, time.perf_counter() - start)
    return 0 if results and not any(r.failed for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
