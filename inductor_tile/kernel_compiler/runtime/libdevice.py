"""The part of NVIDIA's libdevice a kernel calls, as bitcode to link into it.

libdevice.10.bc holds about 500 functions (465 KB of bitcode).  Parsing all of it into every
kernel that calls one of them, linking it in and letting O3 throw the rest away cost 0.1-0.2 s of
a 0.25 s PTX compile (measured 2026-11-27: a GELU's `__nv_tanhf`, a log-softmax's `__nv_logf`).
Instead each process parses libdevice once, into an LLVM context of its own, and for each set of
functions kernels ask for keeps a bitcode copy holding those functions and what they use (the rest
made internal and removed by global dead-code elimination): linking that is a few milliseconds
(a whole PTX compile then takes 0.05 s), and the PTX is the same as with the whole library, the
optimized IR too but for the order of intrinsic declarations (tests/test_libdevice_subset.py).
"""

from __future__ import annotations

import threading
from typing import Any, Iterable

_lock = threading.Lock()  # the parsed library and its context serve one thread at a time
_parsed: dict[str, Any] = {}  # libdevice path -> its module (in a context of its own, kept for the process)
_subsets: dict[tuple[str, frozenset[str]], bytes] = {}


class Stats:
    parses = 0  # libdevice files parsed whole (once per path and process)
    subsets = 0  # distinct subsets made


stats = Stats()


def subset_bitcode(names: Iterable[str]) -> bytes:
    """Bitcode of the libdevice functions `names` (`__nv_tanhf`, ...) and everything they use."""
    from .cuda_tools import find_libdevice

    path = find_libdevice()
    key = (path, frozenset(names))
    with _lock:
        data = _subsets.get(key)
        if data is None:
            data = _subsets[key] = _make_subset(path, key[1])
            stats.subsets += 1
        return data


def _make_subset(path: str, names: frozenset[str]) -> bytes:
    import llvmlite.binding as llvm

    from ..to_llvm import llvm_tools

    library = _parsed.get(path)
    if library is None:
        llvm_tools.initialize()
        context = llvm.create_context()
        llvm_tools._ENGINE_CONTEXTS.append(context)  # never disposed: the module below lives as long
        with open(path, "rb") as f:
            library = _parsed[path] = llvm.parse_bitcode(f.read(), context=context)
        stats.parses += 1
    subset = library.clone()
    for fn in subset.functions:
        if not fn.is_declaration and fn.name not in names:
            fn.linkage = llvm.Linkage.internal
    for variable in subset.global_variables:
        if not variable.is_declaration:
            variable.linkage = llvm.Linkage.internal
    passes = llvm.create_new_module_pass_manager()
    passes.add_global_dead_code_eliminate_pass()
    passes.run(subset, llvm.create_pass_builder(llvm_tools.host_target_machine(),
                                                 llvm.create_pipeline_tuning_options()))
    return subset.as_bitcode()
