"""`import inductor_tile` gives its settings and counters without importing submodules first,
and stays cheap: torch._inductor is loaded only when a submodule that needs it is used."""

import subprocess
import sys


def run_fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_config_and_metrics_without_submodule_import():
    out = run_fresh(
        "import sys, inductor_tile\n"
        "inductor_tile.config.fusion = False\n"
        "from inductor_tile import config\n"
        "print(config.fusion, inductor_tile.metrics.generated_kernels)\n"
        "print('torch._inductor.compile_fx' in sys.modules)\n"
        "print(inductor_tile.backend.tile_backend.__name__)\n"
        "try:\n"
        "    inductor_tile.no_such_thing\n"
        "except AttributeError as e:\n"
        "    print('AttributeError', e)\n")
    lines = out.splitlines()
    assert lines[0] == "False 0"
    assert lines[1] == "False"  # importing the package did not load Inductor
    assert lines[2] == "tile_backend"  # lazy submodule
    assert lines[3].startswith("AttributeError") and "no_such_thing" in lines[3]


def test_package_and_backend_import_no_compiler_and_no_llvm():
    """What a warm start imports before its first launch: the compiler (xdsl, front end, passes) and
    LLVM stay out until a kernel compiles (or a CPU kernel loads); `compile` is still there on access."""
    out = run_fresh(
        "import sys, inductor_tile, inductor_tile.backend, inductor_tile.graph_cache\n"
        "import inductor_tile.kernel_compiler.runtime.jit, inductor_tile.kernel_compiler.runtime.launch_site\n"
        "heavy = ['xdsl', 'llvmlite.binding', 'inductor_tile.kernel_compiler.frontend.code_generator',\n"
        "         'inductor_tile.kernel_compiler.passes.pipeline', 'inductor_tile.kernel_compiler.to_llvm.lowering']\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "print(inductor_tile.compile.__module__, inductor_tile.CompiledKernel.__name__)\n")
    lines = out.splitlines()
    assert lines[0] == "[]"
    assert lines[1] == "inductor_tile.kernel_compiler.compiler CompiledKernel"
