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


def test_a_cuda_kernel_key_and_launch_target_import_no_llvm(tmp_path):
    """A GPU warm start names the target and computes each kernel's cache key before loading its cubin:
    neither may import llvmlite's IR builder or its binding (nor the compiler)."""
    script = tmp_path / "cuda_key.py"  # a file: @jit reads the kernel's source
    script.write_text(
        "import sys\n"
        "import inductor_tile, inductor_tile.language as tl\n"
        "from inductor_tile.kernel_compiler.runtime import disk_cache, jit\n"
        "from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature\n"
        "from inductor_tile.kernel_compiler.to_llvm.targets import gpu_target\n"
        "@inductor_tile.jit\n"
        "def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):\n"
        "    tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)))\n"
        "specs = [spec_from_signature('x_ptr', '*fp16'), spec_from_signature('y_ptr', '*fp16'),\n"
        "         spec_from_signature('BLOCK', 'constexpr', 64)]\n"
        "keys = {disk_cache.kernel_key(copy, specs, 4, t) for t in ('cuda:90', 'cuda:80')}\n"
        "print(gpu_target(), len(keys), len(next(iter(keys))))\n"
        "heavy = ['llvmlite.ir', 'llvmlite.binding', 'xdsl', 'inductor_tile.kernel_compiler.to_llvm.target']\n"
        "print([m for m in heavy if m in sys.modules])\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "cuda 2 64"  # two capabilities, two keys (sha256 hex)
    assert lines[1] == "[]"
