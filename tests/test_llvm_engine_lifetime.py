"""CPU kernels' MCJIT engines survive Python's cyclic GC: an engine collected in one pass with its
module's LLVM context must not be finalized after the context (llvmlite then frees the module from
freed memory: a segfault at some later `gc.collect`, seen when CPU test files ran in one process)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import gc
    from inductor_tile.kernel_compiler.to_llvm import llvm_tools
    for _ in range(100):
        module = llvm_tools.parse("define i32 @f() {\\n  ret i32 1\\n}\\n")
        engine = llvm_tools.jit_engine(module, llvm_tools.host_target_machine())
        engine.finalize_object()
        assert engine.get_function_address("f")
        cycle = [engine]
        cycle.append(cycle)  # unreachable together with the engine and, through it, the context
        del module, engine, cycle
        gc.collect()
    print("collected")
""")


def test_engines_collected_in_a_cycle_with_their_context():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "collected" in result.stdout, (result.returncode, result.stderr[-2000:])
