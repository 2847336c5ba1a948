"""The ports tool on small "tutorials" and a small "library" written here (not Triton's or Liger's code):
only definitions are loaded, `triton` resolves to inductor_tile, allocations the port makes are NaN-poisoned
so a kernel that skips an element fails its check, and the Triton APIs tutorials use around their kernels
(`warmup`, launch options, the driver, `perf_report`) work. The tool installs the import shim for the
whole process, so each scenario runs in a child process."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from inductor_tile.tools.triton_ports import definitions_only

ROOT = Path(__file__).resolve().parents[1]

TUTORIAL = '''
import torch
import triton
import triton.language as tl
from triton.runtime import driver

DEVICE = triton.runtime.driver.active.get_active_torch_device()
PROPS = driver.active.utils.get_device_properties(DEVICE.index)


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, factor, BLOCK: tl.constexpr, num_stages: tl.constexpr):
    start = tl.program_id(0) * BLOCK
    for block in tl.range(start, n, tl.num_programs(0) * BLOCK, num_stages=num_stages):
        offs = block + tl.arange(0, BLOCK)
        end = min(block + BLOCK, n)  # Python's min of a tile: tl.minimum
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < end) * factor, mask=offs < n - LAST)


LAST: tl.constexpr = tl.constexpr(0)  # 1 leaves the last element unwritten


def scale(x, factor):
    out = torch.empty_like(x)
    warm = scale_kernel.warmup(x, out, x.numel(), factor, BLOCK=64, num_stages=2, num_warps=4, grid=(1,))
    warm._init_handles()
    programs = max(1, min(PROPS["max_num_regs"] // (warm.n_regs * PROPS["warpSize"] * 4),
                          PROPS["max_shared_mem"] // warm.metadata.shared, 3))
    warm[(programs, 1, 1)](x, out, x.numel(), factor, 64, 2)
    return out


@triton.autotune(configs=[triton.Config({"BLOCK": 32, "waves_per_eu": 2}, num_warps=2, num_stages=1)], key=["n"])
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + tl.load(y_ptr + offs, mask=offs < n),
             mask=offs < n)


def add(x, y):
    out = torch.empty_like(x)
    add_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, out, x.numel())
    return out


demo = add(torch.ones(3), torch.ones(3))  # demonstration code: not run by the tool
assert False, "top-level checks are not run"


@triton.testing.perf_report(triton.testing.Benchmark(x_names=["n"], x_vals=[1], line_arg="p", line_vals=["t"],
                                                     line_names=["T"], ylabel="GB/s", plot_name="p", args={}))
def benchmark(n, p):
    raise RuntimeError("benchmarks are not run")


benchmark.run(print_data=True, show_plots=True)
if __name__ == "__main__":
    raise SystemExit("not run")
'''

LIBRARY_INIT = 'raise ImportError("a package __init__ that imports optional dependencies")\n'
LIBRARY_UTILS = '''
import triton


def settings(n):
    return triton.next_power_of_2(n)
'''
LIBRARY_OP = '''
import torch
import triton
import triton.language as tl

from minilib.ops.utils import settings


@triton.jit
def _square_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * x, mask=offs < n)


def square(x):
    out = torch.empty(x.shape, dtype=x.dtype)
    _square_kernel[(1,)](x, out, x.numel(), BLOCK=settings(x.numel()))
    return out
'''

DRIVER = '''
import json, sys, torch
from pathlib import Path
from inductor_tile.tools import triton_ports as tp
from inductor_tile.tools.triton_port_checks import compare
from inductor_tile.tools.triton_shim import install

install("cpu", compile_only_api=True)
tutorials, library = Path(sys.argv[1]), Path(sys.argv[2])


def check_tutorial(module, device):
    x = torch.randn(1000)
    notes = [compare("scale", module.scale(x, 2.5), x.double() * 2.5, atol=1e-6)]
    y = torch.randn(1000)
    notes.append(compare("add", module.add(x, y), x.double() + y.double(), atol=1e-6))
    assert not hasattr(module, "demo"), "demonstration code ran"
    return notes


def check_library(module, device):
    x = torch.randn(37)
    return [compare("square", module.square(x), x.double() ** 2, atol=1e-6)]


ports = [tp.Port("tutorial", "tutorials", "tutorial.py", check_tutorial),
         tp.Port("skipping tutorial", "tutorials", "skipping.py", check_tutorial),
         tp.Port("library op", "liger", "minilib.ops.square", check_library),
         tp.Port("missing feature", "tutorials", "tutorial.py", check_tutorial, needs=("no_such_name",)),
         tp.Port("gpu only", "tutorials", "tutorial.py", check_tutorial, devices=("cuda",)),
         tp.Port("asks capability", "tutorials", "capability.py", check_tutorial, asks_capability=True)]
roots = {"tutorials": tutorials, "liger": library}
outcomes = [tp.run_port(port, roots, "cpu") for port in ports]
tp.report(outcomes)
print("JSON " + json.dumps({o.port.name: [o.status, o.detail, o.notes] for o in outcomes}))
'''


def _write_fixtures(tmp_path: Path) -> tuple[Path, Path]:
    tutorials = tmp_path / "tutorials"
    tutorials.mkdir()
    (tutorials / "tutorial.py").write_text(TUTORIAL)
    # a kernel that leaves the last element unwritten: the poisoned allocation shows it
    (tutorials / "skipping.py").write_text(TUTORIAL.replace("tl.constexpr(0)", "tl.constexpr(1)"))
    # a tutorial that asks the GPU's generation at import (as tutorial 06 does to filter its configs)
    (tutorials / "capability.py").write_text(TUTORIAL + "\nMAJOR = torch.cuda.get_device_capability()[0]\n")
    library = tmp_path / "library"
    ops = library / "src" / "minilib" / "ops"
    ops.mkdir(parents=True)
    (library / "src" / "minilib" / "__init__.py").write_text(LIBRARY_INIT)
    (ops / "__init__.py").write_text(LIBRARY_INIT)
    (ops / "utils.py").write_text(LIBRARY_UTILS)
    (ops / "square.py").write_text(LIBRARY_OP)
    return tutorials, library


def test_tool_runs_checks_and_catches_unwritten_outputs(tmp_path: Path):
    tutorials, library = _write_fixtures(tmp_path)
    (tmp_path / "driver.py").write_text(DRIVER)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "TILE_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("TILE_INTERPRET", None)
    done = subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(tutorials), str(library)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("JSON "))
    outcomes = json.loads(line[5:])
    assert outcomes["tutorial"][:2] == ["pass", ""], outcomes
    assert outcomes["library op"][:2] == ["pass", ""], outcomes
    status, detail, _ = outcomes["skipping tutorial"]
    assert status == "fail" and "NaN" in detail and "(999,)" in detail, detail
    assert outcomes["missing feature"][0] == "n.a." and "tl.no_such_name" in outcomes["missing feature"][1]
    assert outcomes["gpu only"][0] == "n.a." and "cuda" in outcomes["gpu only"][1]
    status, _, notes = outcomes["asks capability"]
    assert status == "pass" and "get_device_capability() with (0, 0)" in notes[0], outcomes["asks capability"]
    assert "3 pass, 1 fail, 2 n.a." in done.stdout


def _kept(source: str) -> str:
    return ast.unparse(definitions_only(ast.parse(textwrap.dedent(source))))


def test_definitions_only_keeps_definitions_and_drops_demonstrations():
    kept = _kept('''
        import torch
        try:
            import apex
            HAS_APEX = True
        except ModuleNotFoundError:
            HAS_APEX = False
        def f(x):
            return x
        class C:
            pass
        apply = C.apply if hasattr(C, "apply") else None
        y = f(1)
        print(y)
        assert y == 1
        if HAS_APEX:
            z = f(2)
            W = 3
        for i in range(3):
            pass
        if __name__ == "__main__":
            K = 4
        ''')
    for wanted in ("import torch", "import apex", "HAS_APEX = True", "HAS_APEX = False", "def f", "class C",
                   "apply = C.apply", "W = 3"):
        assert wanted in kept, (wanted, kept)
    for unwanted in ("y = f(1)", "print", "assert", "z = f(2)", "for i", "K = 4"):
        assert unwanted not in kept, (unwanted, kept)


def test_definitions_keep_their_line_numbers():
    tree = definitions_only(ast.parse("x = 1\nprint(x)\n\ndef f():\n    return 2\n"))
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef))
    assert function.lineno == 4


TRITON_TUTORIALS = os.environ.get("TRITON_TUTORIALS", "")
LIGER_KERNEL = os.environ.get("LIGER_KERNEL", "")


@pytest.mark.external
@pytest.mark.skipif(not (TRITON_TUTORIALS and Path(TRITON_TUTORIALS).is_dir()),
                    reason="set TRITON_TUTORIALS to a Triton checkout's python/tutorials (and LIGER_KERNEL to a "
                           "Liger-Kernel checkout) to run the real ports")
def test_real_ports_on_cpu():
    command = [sys.executable, "-m", "inductor_tile.tools.triton_ports", "--tutorials", TRITON_TUTORIALS,
               "--device", "cpu", "--only", "01,02,04,05,liger"]
    if LIGER_KERNEL and Path(LIGER_KERNEL).is_dir():
        command += ["--liger", LIGER_KERNEL]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
