"""A compile worker: `python -m inductor_tile.codegen.compile_worker`.

Reads tasks from stdin (compile_workers.write_message framing) until stdin closes, compiles
each kernel into the disk cache and answers ("ok", True) or ("error", text) on stdout.
A task: (kernel name, kernel source, parameter specs, target, num_warps, environment).
"""

from __future__ import annotations

import os
import sys
import traceback


def compile_task(name: str, source: str, specs: list[tuple], target: str, num_warps: int,
                 env: dict[str, str | None]) -> bool:
    for flag, value in env.items():  # the settings that enter the cache key, as the parent had them
        if value is None:
            os.environ.pop(flag, None)
        else:
            os.environ[flag] = value
    from ..kernel_compiler.compiler import compile_specialized
    from .compile_workers import arg_specs
    from .runtime import load_kernel

    fn = load_kernel(name, source)
    compile_specialized(fn, arg_specs(specs), target=target, num_warps=num_warps, load=False)  # no GPU context here
    return True


def main() -> int:
    from .compile_workers import read_message, write_message

    # replies go to a private copy of fd 1; fd 1 itself becomes stderr, so that nothing else
    # written to stdout (prints, C libraries, child processes) can corrupt them
    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
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
