"""A CPU kernel's entry as a Python built-in function: `fn(*runtime_values, gx, gy, gz)`.

A launch through ctypes packs the frame with `struct.pack_into` and then makes a ctypes call, which
converts its argument and releases and retakes the GIL: together about 1 us, which is more than many
of a small model's kernels run.  A trampoline does both in machine code: a METH_FASTCALL C function,
written here in LLVM IR against the Python C API of this process, reads each argument (`PyLong_As...`,
`PyFloat_AsDouble`), writes the frame on its own stack (the layout of `cpu_frame.py`: one 8-byte slot
per argument, then gx, gy, gz as int32, padding, and the program range [0, gx*gy*gz) as int64) and
calls the kernel's entry, whose address is the function's `self` (a Python int). A conversion error
(an int out of range, a non-number) raises the usual Python exception before the kernel runs.

The GIL stays held while the kernel runs, so only launches that run on the calling thread take this
path (`cpu_launcher`: the thread pool keeps ctypes, which releases it). One trampoline is compiled per
argument layout (the struct format of the runtime arguments) and shared by every kernel with that layout.

Start-up: a warm start builds one trampoline per layout its kernels use (nine for a tiny GPT-2). They
all go into one MCJIT engine of their own, in one LLVM context, each as a module added and finalized
alone, and their machine code is made at -O0: 1.4 ms a layout instead of 5 ms with an engine and
-O2 each (the body is straight-line calls into the C API; launches timed the same, 2026-11-27).
"""

from __future__ import annotations

import ctypes
import itertools
import threading
from typing import Any, Callable

import llvmlite.binding as llvm

from ..cpu_frame import FRAME_SLOT

METH_FASTCALL = 0x0080

#: struct format letter -> (C-API reader, LLVM type read, LLVM type stored)
_READERS = {
    "Q": ("PyLong_AsUnsignedLongLong", "i64", "i64"),
    "q": ("PyLong_AsLongLong", "i64", "i64"),
    "i": ("PyLong_AsLongLong", "i64", "i32"),
    "I": ("PyLong_AsLongLong", "i64", "i32"),
    "h": ("PyLong_AsLongLong", "i64", "i16"),
    "H": ("PyLong_AsLongLong", "i64", "i16"),
    "b": ("PyLong_AsLongLong", "i64", "i8"),
    "B": ("PyLong_AsLongLong", "i64", "i8"),
    "?": ("PyObject_IsTrue", "i32", "i8"),
    "f": ("PyFloat_AsDouble", "double", "float"),
    "d": ("PyFloat_AsDouble", "double", "double"),
}
_C_API = {"PyLong_AsUnsignedLongLong": "i64 (ptr)", "PyLong_AsLongLong": "i64 (ptr)", "PyObject_IsTrue": "i32 (ptr)",
          "PyFloat_AsDouble": "double (ptr)", "PyLong_AsVoidPtr": "ptr (ptr)", "PyErr_Occurred": "ptr ()",
          "PyErr_SetString": "void (ptr, ptr)", "Py_IncRef": "void (ptr)"}


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p), ("ml_flags", ctypes.c_int),
                ("ml_doc", ctypes.c_char_p)]


_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype = ctypes.py_object
_new_function.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]
_lock = threading.Lock()
_symbols_added = False
#: argument formats -> (execution engine, method def): kept alive for the process
_compiled: dict[str, tuple[Any, _MethodDef]] = {}
#: the engine (and LLVM context) every trampoline of this process is added to, made at the first one
_engine: list[tuple[Any, Any]] = []
_names = itertools.count()


def direct_launcher(formats: list[str], entry_address: int) -> Callable[..., None]:
    """`fn(*values, gx, gy, gz)` running programs [0, gx*gy*gz) of the entry at `entry_address`
    (values: one per runtime argument, pointers as addresses, in the struct `formats` given)."""
    key = "".join(formats)
    with _lock:
        if key not in _compiled:
            _compiled[key] = _compile(formats)
        _, method = _compiled[key]
    return _new_function(ctypes.addressof(method), entry_address, None)


def trampoline_ir(formats: list[str], none_address: int, type_error_address: int, overflow_error_address: int,
                  name: str = "trampoline") -> str:
    """The LLVM IR of the trampoline `name` for arguments of `formats` (struct letters, one per argument);
    the addresses are those of None, TypeError and OverflowError in this process."""
    n = len(formats)
    frame_bytes = FRAME_SLOT * n + 32
    lines = _message("count", f"a CPU kernel launch takes {n} values and the grid (3 ints)")
    lines += _message("range", "an int argument does not fit the kernel's integer type")
    lines += [f"declare {sig.split(' ', 1)[0]} @{name}{sig.split(' ', 1)[1]}" for name, sig in _C_API.items()]
    lines += [f"define ptr @{name}(ptr %self, ptr %args, i64 %nargs) {{",
              "entry:",
              f"  %frame = alloca [{frame_bytes} x i8], align 16",
              f"  %count_ok = icmp eq i64 %nargs, {n + 3}",
              "  br i1 %count_ok, label %read, label %wrong_count",
              "wrong_count:",
              f"  call void @PyErr_SetString(ptr inttoptr (i64 {type_error_address} to ptr), ptr @count)",
              "  ret ptr null",
              "read:"]
    fit = "true"  # every narrow int so far comes back unchanged from its width (struct.pack's range check)
    for i, letter in enumerate(formats + ["i", "i", "i"]):
        reader, got, stored = _READERS[letter]
        offset = FRAME_SLOT * i if i < n else FRAME_SLOT * n + 4 * (i - n)
        lines += [f"  %p{i} = getelementptr ptr, ptr %args, i64 {i}", f"  %o{i} = load ptr, ptr %p{i}",
                  f"  %r{i} = call {got} @{reader}(ptr %o{i})"]
        value = f"%r{i}"
        if got == "double" and stored == "float":
            lines.append(f"  %v{i} = fptrunc double %r{i} to float")
            value = f"%v{i}"
        elif letter == "?":  # (PyObject_IsTrue's -1 is an error: PyErr_Occurred below)
            lines += [f"  %t{i} = icmp ne i32 %r{i}, 0", f"  %v{i} = zext i1 %t{i} to i8"]
            value = f"%v{i}"
        elif stored != got:
            extend = "zext" if letter.isupper() else "sext"
            lines += [f"  %v{i} = trunc {got} %r{i} to {stored}", f"  %w{i} = {extend} {stored} %v{i} to {got}",
                      f"  %k{i} = icmp eq {got} %w{i}, %r{i}", f"  %fit{i} = and i1 {fit}, %k{i}"]
            fit, value = f"%fit{i}", f"%v{i}"
        lines += [f"  %a{i} = getelementptr i8, ptr %frame, i64 {offset}", f"  store {stored} {value}, ptr %a{i}"]
    grid_at = FRAME_SLOT * n
    lines += [f"  %x = sext i32 %v{n} to i64", f"  %y = sext i32 %v{n + 1} to i64", f"  %z = sext i32 %v{n + 2} to i64",
              "  %xy = mul i64 %x, %y", "  %total = mul i64 %xy, %z",
              f"  %start_at = getelementptr i8, ptr %frame, i64 {grid_at + 16}", "  store i64 0, ptr %start_at",
              f"  %end_at = getelementptr i8, ptr %frame, i64 {grid_at + 24}", "  store i64 %total, ptr %end_at",
              "  %entry_fn = call ptr @PyLong_AsVoidPtr(ptr %self)",
              "  %error = call ptr @PyErr_Occurred()",
              "  %failed = icmp ne ptr %error, null",
              "  br i1 %failed, label %fail, label %check_range",
              "fail:", "  ret ptr null",
              "check_range:", f"  br i1 {fit}, label %run, label %out_of_range",
              "out_of_range:",
              f"  call void @PyErr_SetString(ptr inttoptr (i64 {overflow_error_address} to ptr), ptr @range)",
              "  ret ptr null",
              "run:", "  call void %entry_fn(ptr %frame)",
              f"  call void @Py_IncRef(ptr inttoptr (i64 {none_address} to ptr))",
              f"  ret ptr inttoptr (i64 {none_address} to ptr)", "}"]
    return "\n".join(lines) + "\n"


def _message(name: str, text: str) -> list[str]:
    return [f'@{name} = private constant [{len(text) + 1} x i8] c"{text}\\00"']


def _compile(formats: list[str]) -> tuple[Any, _MethodDef]:
    """Add the trampoline for `formats` to the process's trampoline engine (callers hold `_lock`)."""
    from ..to_llvm import llvm_tools

    global _symbols_added
    if not _symbols_added:
        for name in _C_API:  # this process's Python C API, by address (the interpreter may not export them)
            llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value)
        _symbols_added = True
    if not _engine:  # an empty module: the engine's own; trampolines come as modules of one context
        llvm_tools.initialize()
        context = llvm.create_context()
        empty = llvm.parse_assembly("", context=context)
        llvm_tools._ENGINE_CONTEXTS.append(context)  # outlives the engine (see llvm_tools.jit_engine)
        _engine.append((llvm.create_mcjit_compiler(empty, llvm_tools.host_target_machine(opt=0)), context))
    engine, context = _engine[0]
    name = f"tile_trampoline_{next(_names)}"
    module = llvm.parse_assembly(trampoline_ir(formats, id(None), id(TypeError), id(OverflowError), name),
                                 context=context)
    module.verify()
    engine.add_module(module)
    engine.finalize_object()
    method = _MethodDef(b"tile_cpu_launch", engine.get_function_address(name), METH_FASTCALL, None)
    return engine, method
