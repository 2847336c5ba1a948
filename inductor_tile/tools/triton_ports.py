"""Run Triton's tutorials and popular Triton kernel libraries on inductor_tile, changing only their imports.

    python -m inductor_tile.tools.triton_ports --tutorials TRITON/python/tutorials [--liger LIGER] --device cpu

The sources are read where the user points (never copied, never modified). `import triton` resolves
to inductor_tile through the import shim of the conformance tool (`triton_shim.py`). A tutorial is
loaded as its definitions only (imports, functions, classes, plain assignments): its demonstration
code, self-checks and benchmarks are left out (`definitions_only`), and `triton.testing.perf_report`
measures nothing. A library (Liger-Kernel) is imported as a package from its `src/` directory.
Then the checks of `triton_port_checks.py` call the port's entry points with small random inputs on
the chosen device, with the outputs the port allocates through `torch.empty*` filled with NaN first,
and compare against torch in float64. Each port runs in its own process (an LLVM abort or a hang fails
that port alone; `--timeout`); `--interpret` runs the kernels in the interpreter. The table says per
port: pass / fail / n.a. (with the reason), and what beyond imports had to change (ideally nothing).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import sys
import time
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch


#: what `torch.cuda.get_device_capability()` answers in a CPU run of a port that asks (`Port.asks_capability`)
CPU_CAPABILITY = (0, 0)


class NotApplicable(Exception):
    """The port needs something outside this project (hardware feature, missing package): n.a., not fail."""


@dataclass
class Port:
    """One kernel (or group of kernels) ported: where its source is and how to check it."""

    name: str
    source: str  # "tutorials" or "liger": which user-given checkout it comes from
    path: str  # file (tutorials) or module (liger) inside that checkout
    check: Callable[[Any, str], list[str]]  # (loaded module, device) -> notes; raises on a wrong result
    changes: str = "none"  # what beyond imports the port needs
    needs: tuple[str, ...] = ()  # `tl.` names the port uses that inductor_tile may lack: n.a. while it does
    devices: tuple[str, ...] = ("cpu", "cuda")  # where the port can run at all
    # the port asks torch.cuda.get_device_capability() at import (to filter its autotuning configs): on the
    # CPU the tool answers (0, 0), as no GPU there is any particular generation
    asks_capability: bool = False

    def not_applicable(self, device: str) -> str | None:
        """Why the port cannot run here (None: it can)."""
        import inductor_tile.language as tl

        missing = [name for name in self.needs if not hasattr(tl, name)]
        if missing:
            return f"needs {', '.join('tl.' + n for n in missing)}, not provided by inductor_tile"
        if device not in self.devices:
            return f"runs on {'/'.join(self.devices)} only"
        return None


@dataclass
class Outcome:
    port: Port
    status: str  # "pass", "fail", "n.a."
    detail: str = ""
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


# ===------------------------------------------------------------------------===
# Loading
# ===------------------------------------------------------------------------===
_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def definitions_only(tree: ast.Module) -> ast.Module:
    """The module's definitions: imports, functions, classes, and assignments that call none of the module's
    own functions; `if`/`try` blocks keep their definitions. Demonstrations (`output = add(x, y)`), prints,
    asserts, `benchmark.run(...)` and `if __name__ == "__main__":` blocks are left out. Line numbers are kept,
    so the kernels' source (read by `@jit` from the file) matches."""
    defined = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}

    def calls_module_function(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defined
                   for n in ast.walk(node))

    def keep(statements: list[ast.stmt]) -> list[ast.stmt]:
        kept: list[ast.stmt] = []
        for node in statements:
            if isinstance(node, _DEFINITIONS):
                kept.append(node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and not calls_module_function(node):
                kept.append(node)
            elif isinstance(node, ast.If) and not _is_main_guard(node):
                body, orelse = keep(node.body), keep(node.orelse)
                if body or orelse:
                    node.body, node.orelse = body or [ast.Pass()], orelse
                    kept.append(node)
            elif isinstance(node, ast.Try):
                body = keep(node.body)
                if body:
                    node.body = body
                    for handler in node.handlers:
                        handler.body = keep(handler.body) or [ast.Pass()]
                    node.orelse, node.finalbody = keep(node.orelse), keep(node.finalbody)
                    kept.append(node)
        return kept

    module = ast.Module(body=keep(tree.body), type_ignores=[])
    return ast.fix_missing_locations(module)


def _is_main_guard(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__")


def load_definitions(path: Path, module_name: str) -> types.ModuleType:
    """Execute a tutorial's definitions (see `definitions_only`) as module `module_name`."""
    tree = definitions_only(ast.parse(path.read_text(), filename=str(path)))
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    sys.modules[module_name] = module  # dataclasses, pickling and `@jit` look the module up
    exec(compile(tree, str(path), "exec"), module.__dict__)
    return module


def load_package_module(src: Path, dotted: str) -> tuple[types.ModuleType, list[str]]:
    """Import `dotted` (e.g. `liger_kernel.ops.rms_norm`) from the checkout's `src/` directory as its users do,
    packages' `__init__.py` included (they import every op, which also sets up what the ops expect, e.g.
    `torch.distributed.tensor`). If a package's `__init__` fails (an optional dependency, a feature we lack),
    the module is imported again without running any `__init__`, and a note says so."""
    top = dotted.split(".")[0]
    if str(src) not in sys.path:
        sys.path.insert(0, str(src))
    try:
        return importlib.import_module(dotted), []
    except Exception as e:
        failure = " ".join(f"{type(e).__name__}: {e}".split())[:160]
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]
    parts = dotted.split(".")
    for i in range(1, len(parts)):
        package = ".".join(parts[:i])
        stub = types.ModuleType(package)
        stub.__path__ = [str(src.joinpath(*parts[:i]))]
        sys.modules[package] = stub
    return importlib.import_module(dotted), [f"imported without its packages' __init__ ({failure})"]


# ===------------------------------------------------------------------------===
# Poisoned allocations
# ===------------------------------------------------------------------------===
class PoisonedTorch(types.ModuleType):
    """`torch`, except that `empty`, `empty_like` and `empty_strided` fill floating tensors with NaN, so that
    an element a kernel should write but does not shows up in the comparison. Installed as the `torch` of
    the ported modules' globals (the modules themselves are not changed)."""

    def __init__(self) -> None:
        super().__init__("torch")

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)

    @staticmethod
    def _poison(tensor: torch.Tensor) -> torch.Tensor:
        if tensor.is_floating_point() or tensor.is_complex():
            with torch.no_grad():
                tensor.fill_(float("nan"))
        return tensor

    def empty(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        return self._poison(torch.empty(*args, **kwargs))

    def empty_like(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        return self._poison(torch.empty_like(*args, **kwargs))

    def empty_strided(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        return self._poison(torch.empty_strided(*args, **kwargs))


_POISONED_TORCH = PoisonedTorch()


def poison_allocations(module: types.ModuleType) -> types.ModuleType:
    if module.__dict__.get("torch") is torch:
        module.torch = _POISONED_TORCH
    return module


# ===------------------------------------------------------------------------===
# Running
# ===------------------------------------------------------------------------===
def load_port(port: Port, roots: dict[str, Path]) -> tuple[types.ModuleType, list[str]]:
    """The port's module, with its allocations poisoned, and notes on how it was loaded."""
    root = roots[port.source]
    if port.source == "tutorials":
        path = root / port.path
        if not path.is_file():
            raise NotApplicable(f"{path} not found")
        name = "tile_port_" + "".join(c if c.isalnum() else "_" for c in path.stem)
        return poison_allocations(load_definitions(path, name)), []
    src = root / "src" if (root / "src").is_dir() else root
    module, notes = load_package_module(src, port.path)
    for name, loaded in list(sys.modules.items()):  # the module and the package helpers it imported
        if name.split(".")[0] == port.path.split(".")[0] and isinstance(loaded, types.ModuleType):
            poison_allocations(loaded)
    return module, notes


def run_port(port: Port, roots: dict[str, Path], device: str) -> Outcome:
    start = time.perf_counter()
    reason = port.not_applicable(device)
    if reason:
        return Outcome(port, "n.a.", reason)
    try:
        notes = []
        if port.asks_capability and device == "cpu":
            torch.cuda.get_device_capability = lambda *args, **kwargs: CPU_CAPABILITY
            notes.append(f"the tool answered torch.cuda.get_device_capability() with {CPU_CAPABILITY} (the port "
                         "asks at import)")
        module, load_notes = load_port(port, roots)
        notes += load_notes
        notes += port.check(module, device) or []
        return Outcome(port, "pass", "", time.perf_counter() - start, notes)
    except NotApplicable as e:
        return Outcome(port, "n.a.", str(e), time.perf_counter() - start)
    except ModuleNotFoundError as e:
        if e.name and e.name.split(".")[0] != "triton":
            return Outcome(port, "n.a.", f"needs the package `{e.name}`", time.perf_counter() - start)
        return Outcome(port, "fail", _describe(e), time.perf_counter() - start)
    except Exception as e:  # a wrong result, a compile error, a missing name
        return Outcome(port, "fail", _describe(e), time.perf_counter() - start)


def _describe(error: BaseException) -> str:
    """The error and where in the port's source it came from (the last frame outside inductor_tile)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if "inductor_tile" not in f.filename]
    where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return (text[:300] + "...") if len(text) > 300 else text + where


def report(outcomes: list[Outcome], out=None) -> None:
    out = out or sys.stdout
    width = max([len(o.port.name) for o in outcomes] + [4])
    print(f"\n{'port':<{width}}  status  seconds  changes beyond imports / failure", file=out)
    for o in outcomes:
        detail = o.detail if o.status != "pass" else o.port.changes
        print(f"{o.port.name:<{width}}  {o.status:<6}  {o.seconds:>7.1f}  {detail}", file=out)
        for note in o.notes:
            print(f"{'':<{width}}                   {note}", file=out)
    counts = {s: sum(1 for o in outcomes if o.status == s) for s in ("pass", "fail", "n.a.")}
    print(f"\n{counts['pass']} pass, {counts['fail']} fail, {counts['n.a.']} n.a.", file=out)


def select(ports: list[Port], roots: dict[str, Path], only: str | None) -> list[Port]:
    chosen = [p for p in ports if p.source in roots]
    if only:
        chosen = [p for p in chosen if any(word in p.name for word in only.split(","))]
    return chosen


def run_isolated(port: Port, roots: dict[str, Path], device: str, timeout: float) -> Outcome:
    """`run_port` in a child process: a port that takes its process down (an LLVM assertion, a hang past
    `timeout` seconds) fails alone."""
    import json
    import subprocess

    command = [sys.executable, "-m", "inductor_tile.tools.triton_ports", "--device", device, "--child", port.name]
    for name, path in roots.items():
        command += [f"--{name}", str(path)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome(port, "fail", f"timed out after {timeout:.0f} s", time.perf_counter() - start)
    for line in done.stdout.splitlines():
        if line.startswith(_RESULT):
            record = json.loads(line[len(_RESULT):])
            return Outcome(port, record["status"], record["detail"], record["seconds"], record["notes"])
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    if "Assertion" in last:  # an LLVM assertion: its message, not its source path
        last = "LLVM a" + last.split("Assertion", 1)[1].strip()
    return Outcome(port, "fail", f"the process died (exit status {done.returncode}): {last[:200]}",
                   time.perf_counter() - start)


_RESULT = "TILE_PORT_RESULT "


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tutorials", type=Path, help="a Triton checkout's python/tutorials directory")
    parser.add_argument("--liger", type=Path, help="a linkedin/Liger-Kernel checkout (its root or its src/)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--only", help="comma-separated words; run the ports whose names contain one")
    parser.add_argument("--interpret", action="store_true", help="run the kernels in the interpreter (TILE_INTERPRET=1)")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds one port may take (default 1200)")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # internal: run this one port, print its outcome
    args = parser.parse_args(argv)
    roots = {name: path.resolve() for name, path in (("tutorials", args.tutorials), ("liger", args.liger)) if path}
    if not roots:
        parser.error("give --tutorials and/or --liger")
    for name, path in roots.items():
        if not path.is_dir():
            parser.error(f"--{name} {path}: not a directory")
    from .triton_port_checks import PORTS
    from .triton_shim import install

    if args.child:
        import json

        install(args.device, compile_only_api=True)
        o = run_port(next(p for p in PORTS if p.name == args.child), roots, args.device)
        print(_RESULT + json.dumps({"status": o.status, "detail": o.detail, "seconds": o.seconds, "notes": o.notes}))
        return 0
    if args.interpret:
        os.environ["TILE_INTERPRET"] = "1"  # the children inherit it
    outcomes = []
    for port in select(PORTS, roots, args.only):
        outcomes.append(run_isolated(port, roots, args.device, args.timeout))
        o = outcomes[-1]
        print(f"{o.port.name}: {o.status} ({o.seconds:.1f} s) {o.detail}", flush=True)
    report(outcomes)
    return 0 if outcomes and not any(o.status == "fail" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
