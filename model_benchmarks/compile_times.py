"""`python -m model_benchmarks.compile_times`: cold compile time of each suite kernel, per stage target.

Specializations come from running the kernel suite (tests/suite.py) once in the interpreter;
each is then compiled from source with the disk cache off: front end + TTIR passes, and the
full pipeline to native code for the CPU (TTGIR, LLVM O3, MCJIT) and to PTX for sm_90.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import torch


def suite_specializations():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    import suite  # noqa: E402
    from inductor_tile.kernel_compiler import compiler

    seen: dict = {}
    original = compiler.compile_specialized

    def record(jit_fn, specs, target=None, num_warps=4, native=True):
        seen.setdefault(jit_fn, specs)
        return compiler.CompiledKernel(jit_fn.__name__, specs, "cpu", num_warps)

    compiler.compile_specialized = record
    try:
        gen = torch.Generator().manual_seed(0)
        for case in suite.CASES.values():
            case(gen)
    finally:
        compiler.compile_specialized = original
        for kernel in seen:
            kernel.cache.clear()
            kernel.launch_cache.clear()
    return seen


def main() -> int:
    os.environ["TILE_CACHE_DISABLE"] = "1"
    from inductor_tile.kernel_compiler.compiler import compile_specialized

    specializations = suite_specializations()
    print(f"{'kernel':<24} {'TTIR s':>8} {'CPU native s':>13} {'PTX sm_90 s':>12}")
    for kernel, specs in specializations.items():
        times = []
        for target, native in (("cpu", None), ("cpu", True), ("cuda:90", False)):
            start = time.perf_counter()
            if native is None:
                from inductor_tile.kernel_compiler.frontend.code_generator import generate_ttir
                from inductor_tile.kernel_compiler.ir_builder import TTIRBuilder
                from inductor_tile.kernel_compiler.passes.pipeline import optimize_ttir

                optimize_ttir(generate_ttir(kernel, specs, TTIRBuilder()))
            else:
                compile_specialized(kernel, specs, target=target, num_warps=4, native=native)
            times.append(time.perf_counter() - start)
        print(f"{kernel.__name__:<24} {times[0]:>8.3f} {times[1]:>13.3f} {times[2]:>12.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
