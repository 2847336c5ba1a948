"""A module of inductor_tile kernels compiled by Triton instead: the same source with its imports swapped,
for side-by-side measurements (`model_benchmarks.gpu_kernels`, `tools.ptx_stats`)."""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import types
from pathlib import Path


def load_as_triton(source: Path) -> types.ModuleType | None:
    """`source` with `inductor_tile` swapped for `triton` (`@inductor_tile.jit` becomes Triton's jit), loaded
    from a temporary copy; None where Triton is not installed."""
    if importlib.util.find_spec("triton") is None:
        return None
    text = source.read_text()
    text = text.replace("import inductor_tile.language as tl", "import triton.language as tl")
    text = text.replace("import inductor_tile\n", "import triton as inductor_tile\n")
    name = f"triton_{source.stem}"
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Triton's jit reads the kernel's source through its module
    spec.loader.exec_module(module)
    return module
