"""inductor_tile: a tile-kernel compiler and torch.compile backend, in Python."""

from .kernel_compiler.errors import CompilationError, PerformanceWarning
from .kernel_compiler.runtime.sanitizer import SanitizerError
from .kernel_compiler.runtime.jit import JITFunction, jit, must_use_result
from .kernel_compiler.runtime.autotuner import Autotuner, Config, Heuristics, autotune, heuristics
from . import config, language, metrics, testing
from .language.builtins import cdiv


def next_power_of_2(n: int) -> int:
    """The smallest power of two >= n (1 for n <= 1), for choosing block sizes."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


__version__ = "0.1.0"

# submodules that pull in torch._inductor or other heavy imports, loaded on first access
_LAZY_SUBMODULES = ("backend", "cache", "graph_cache", "codegen", "scheduler", "tools", "profile")
# names defined by the compiler, which imports xdsl and the passes: a process that only launches
# kernels from the disk cache (a warm start of a compiled model) never imports it
_LAZY_NAMES = {"compile": "kernel_compiler.compiler", "CompiledKernel": "kernel_compiler.compiler"}


def __getattr__(name: str):
    import importlib

    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY_NAMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["Autotuner", "Config", "Heuristics", "autotune", "heuristics", "CompilationError", "PerformanceWarning", "SanitizerError", "CompiledKernel", "cdiv", "next_power_of_2", "JITFunction", "compile", "config", "jit", "must_use_result", "language", "metrics", "testing", "__version__"]
