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
