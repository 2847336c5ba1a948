"""Errors as users should see them: without the compiler's stack frames.

A mistake in a kernel surfaces as a `CompilationError` pointing at the kernel line. Its `__cause__` is the
error as the language raised it (`language_error`), keeping the frames inside `inductor_tile.language` (which
builtin refused the value, and why) but none of the front end's recursive AST walk.
"""

from __future__ import annotations

import os
import types

_COMPILER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # inductor_tile/kernel_compiler/


def _is_compiler_frame(tb: types.TracebackType) -> bool:
    return os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_COMPILER_DIR)


def without_compiler_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """The part of traceback `tb` below the last frame of `inductor_tile/kernel_compiler/`: where the language
    (or a Python function the kernel called at compile time) raised the error."""
    kept = []
    while tb is not None:
        kept = [] if _is_compiler_frame(tb) else kept + [tb]
        tb = tb.tb_next
    result = None
    for entry in reversed(kept):
        result = types.TracebackType(result, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return result


def language_error(error: BaseException) -> BaseException | None:
    """A copy of `error` with only its frames below the compiler's and no chained errors (None if it cannot be
    copied)."""
    try:
        copy = type(error)(*error.args)
    except Exception:
        return None
    copy.__suppress_context__ = True
    return copy.with_traceback(without_compiler_frames(error.__traceback__))
