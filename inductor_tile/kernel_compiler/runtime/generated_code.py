"""Running the small functions the runtime generates per kernel (launchers, binders, launch sites).

Each kernel's launch function, binder and launch site are Python source made for its signature and
run with `exec`.  Kernels with the same signature get the same source (what differs between them, the
driver function, the slots, the kernel's constants, lives in the scope the code runs in), and
compiling the source costs far more than running it: a warm start, which loads every kernel of a model
at its first launch, compiled tens of identical sources.  `run_generated` compiles each distinct
source once a process and gives every later copy its own file name (tracebacks name the kernel) and
its own `linecache` entry.
"""

from __future__ import annotations

import linecache
import threading
from types import CodeType
from typing import Any

_compiled: dict[str, CodeType] = {}  # source -> its code, compiled under the first file name
_lock = threading.Lock()
MAX_SOURCES = 4096  # a process generating more distinct sources starts over (memory stays bounded)


def _renamed(code: CodeType, filename: str) -> CodeType:
    """`code` and the code objects nested in it (its functions) as if compiled from `filename`."""
    consts = tuple(_renamed(c, filename) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def code_for(source: str, filename: str) -> CodeType:
    """The code of `source` (module mode), compiled once a process, named `filename`."""
    code = _compiled.get(source)
    if code is None:
        code = compile(source, filename, "exec")
        with _lock:
            if len(_compiled) >= MAX_SOURCES:
                _compiled.clear()
            _compiled[source] = code
        return code
    return code if code.co_filename == filename else _renamed(code, filename)


def run_generated(source: str, filename: str, scope: dict[str, Any]) -> dict[str, Any]:
    """Execute generated `source` in `scope` (returned), shown in tracebacks as `filename`."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(code_for(source, filename), scope)
    return scope
