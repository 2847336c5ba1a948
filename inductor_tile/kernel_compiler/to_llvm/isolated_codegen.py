"""Machine code of a CPU kernel that holds inline assembly, made by a child process.

LLVM assembles inline assembly while it emits machine code, and assembly it cannot parse (a typo, PTX
on x86) goes to LLVM's default diagnostic handler, which prints the error and exits the process: llvmlite
installs no handler there and exposes none. So such a kernel's object (and assembly text) is emitted by a
fresh interpreter that imports only llvmlite -- the same LLVM, the same target machine options, the same
optimized IR, hence the same bytes -- and if it dies, what LLVM printed becomes the compile error
(inline_asm_errors.py). Kernels without inline assembly never come here. The child runs this file.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

# `python -c` puts the working directory first on sys.path: a child must not import from there
_BOOT = ("import runpy, sys; sys.path[:1] = [p for p in sys.path[:1] if p]; "
         "runpy.run_path(sys.argv[1], run_name='__main__')")
_SIZES = struct.Struct("<QQ")  # the reply: object and assembly byte counts, then the bytes


class IsolatedCodegenError(RuntimeError):
    """The child process failed: `returncode` and `stderr` (what LLVM printed before exiting)."""

    def __init__(self, returncode: int, stderr: str):
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"machine code generation in a child process failed (exit status {returncode}):\n"
                         f"{stderr.rstrip()}")


def available() -> bool:
    """Whether this process can start a Python child (an embedding interpreter may have no executable)."""
    return bool(sys.executable)


def emit(llvm_ir: str, machine_options: dict, want_object: bool, want_assembly: bool
         ) -> tuple[bytes | None, str | None, str]:
    """(object file, assembly text, what LLVM printed) of the module `llvm_ir` for the target machine of
    `machine_options` (llvm_tools.host_machine_options); the assembly first, as the in-process path does
    (code generation changes the module it runs on). Raises IsolatedCodegenError if the child fails."""
    import llvmlite

    header = {"machine": machine_options, "object": want_object, "assembly": want_assembly}
    env = dict(os.environ)  # this process's llvmlite, whatever sys.path found it by
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(llvmlite.__file__)),
                                                      env.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-c", _BOOT, os.path.abspath(__file__)], capture_output=True, env=env,
                          input=json.dumps(header).encode() + b"\n" + llvm_ir.encode())
    stderr = proc.stderr.decode(errors="replace")
    if proc.returncode != 0 or len(proc.stdout) < _SIZES.size:
        raise IsolatedCodegenError(proc.returncode, stderr)
    object_size, assembly_size = _SIZES.unpack_from(proc.stdout)
    body = proc.stdout[_SIZES.size:]
    obj, assembly = body[:object_size], body[object_size:object_size + assembly_size]
    return (obj if want_object else None), (assembly.decode() if want_assembly else None), stderr


def _child() -> None:
    """Read the request from stdin, write the reply to stdout."""
    import llvmlite.binding as llvm

    header = json.loads(sys.stdin.buffer.readline())
    text = sys.stdin.buffer.read().decode()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    llvm.initialize_native_asmparser()
    options = dict(header["machine"])
    machine = llvm.Target.from_triple(options.pop("triple")).create_target_machine(**options)
    module = llvm.parse_assembly(text)
    module.verify()
    assembly = machine.emit_assembly(module).encode() if header["assembly"] else b""
    obj = machine.emit_object(module) if header["object"] else b""
    out = sys.stdout.buffer
    out.write(_SIZES.pack(len(obj), len(assembly)))
    out.write(obj)
    out.write(assembly)
    out.flush()


if __name__ == "__main__":
    _child()
