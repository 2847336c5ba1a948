"""The front end's entry point for the compiler: a kernel's TTIR, or a `CompilationError` that leaves
without the front end's frames (the traceback ends here, under the user's call; the error's message and
its cause say where in the kernel and why)."""

from __future__ import annotations

from typing import Any

from ..errors import CompilationError


def generate_ttir(jit_fn: Any, specs: list, builder: Any, num_warps: int = 4) -> Any:
    from .code_generator import generate_ttir as generate

    try:
        return generate(jit_fn, specs, builder, num_warps)
    except CompilationError as e:
        raise e.with_traceback(None)
