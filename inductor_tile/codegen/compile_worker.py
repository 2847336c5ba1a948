"""A compile worker: `python -m inductor_tile.codegen.compile_worker`.

Reads tasks from stdin (compile_workers.write_message framing) until stdin closes, compiles
each kernel into the disk cache and answers ("ok", True) or ("error", text) on stdout.
A task: (kernel name, kernel source, parameter specs, target, num_warps, environment, compiler
fingerprint of the launching process).

The worker's compiler fingerprint (the disk cache's name for the compiler's code) is taken when
it starts, from the source files it imports then.  A task from a process whose fingerprint differs
is refused: their compilers' source files changed on disk between the two starts (a checkout
edited while a program or the test suite runs), so a kernel compiled here would be stored under a
key the launching process never looks up; it compiles where it is launched instead.
"""

from __future__ import annotations

import gc
import os
import sys
import traceback


class CompilerChanged(RuntimeError):
    """The launching process runs other compiler code than this worker."""


def compile_task(name: str, source: str, specs: list[tuple], target: str, num_warps: int,
                 env: dict[str, str | None], compiler: str | None = None) -> bool:
    from ..kernel_compiler.runtime import disk_cache

    if compiler is not None and compiler != disk_cache.compiler_fingerprint():
        raise CompilerChanged("inductor_tile's compiler source files changed on disk between the start of the "
                              "launching process and of this compile worker; the kernel compiles at its launch")
    for flag, value in env.items():  # the settings that enter the cache key, as the parent had them
        if value is None:
            os.environ.pop(flag, None)
        else:
            os.environ[flag] = value
    from ..kernel_compiler.compiler import compile_specialized
    from .compile_workers import arg_specs
    from .runtime import load_kernel

    fn = load_kernel(name, source)
    compile_specialized(fn, arg_specs(specs), target=target, num_warps=num_warps, load=False,  # no GPU context here
                        sanitize=os.environ.get("TILE_SANITIZE") == "1")
    return True


def warm_up() -> None:
    """Import the compiler (torch, xdsl dialects, passes, lowering rules) and initialize LLVM before
    the first task arrives: a pool is started while the parent is still tracing and lowering its
    graph, so this happens in parallel with that work instead of delaying the first compile."""
    from ..kernel_compiler import compiler  # noqa: F401
    from ..kernel_compiler.ir_builder import TTIRBuilder  # noqa: F401
    from ..kernel_compiler.passes import pipeline  # noqa: F401
    from ..kernel_compiler.runtime import disk_cache
    from ..kernel_compiler.to_llvm import llvm_tools, lowering  # noqa: F401
    from . import runtime  # noqa: F401

    disk_cache.compiler_fingerprint()  # of the source files just imported, not of later edits
    llvm_tools.initialize_all()


def main() -> int:
    from .compile_workers import read_message, write_message

    # replies go to a private copy of fd 1; fd 1 itself becomes stderr, so that nothing else
    # written to stdout (prints, C libraries, child processes) can corrupt them
    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        warm_up()
    except Exception:  # noqa: BLE001 - the first task reports whatever is really broken
        pass
    # the imported compiler lives as long as the worker: later collections need not walk it (the 155
    # kernels of nvidia_compile_stages --gc-freeze: collector 0.8 -> 0.34 CPU s)
    gc.freeze()
    while True:
        task = read_message(stdin)
        if task is None:
            return 0
        try:
            reply = ("ok", compile_task(*task))
        except BaseException as e:  # noqa: BLE001 - every failure is the parent's to report
            reply = ("error", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=8)}")
        write_message(stdout, reply)


if __name__ == "__main__":
    sys.exit(main())
