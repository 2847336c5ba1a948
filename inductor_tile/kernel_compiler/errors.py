"""Errors the compiler shows to users: they point at the kernel's source line."""

from __future__ import annotations

import ast


def format_location(fn_name: str, filename: str, lineno: int, col: int, source_line: str,
                    caret_col: int | None = None) -> str:
    """`in kernel `k`, file:line:col:` (`col` 0-based) and the source line with a caret under
    `caret_col` (default `col`; they differ when the line is shown without its indentation)."""
    text = f"in kernel `{fn_name}`, {filename}:{lineno}:{col + 1}:\n"
    if source_line:
        text += f"    {source_line}\n    {' ' * (col if caret_col is None else caret_col)}^\n"
    return text


class PerformanceWarning(UserWarning):
    """A compiled kernel may run slower than it could; the message says where and why
    (shown with TILE_PERF_WARNINGS=1 or `inductor_tile.config.perf_warnings = True`)."""


def _def_line_index(lines: list[str]) -> int:
    """Where the `def` is in a function's dedented source (after its decorators)."""
    return next((i for i, line in enumerate(lines) if line.startswith(("def ", "async def "))), 0)


class CompilationError(Exception):
    """A kernel could not be compiled. The message shows the offending source line with a caret.

    The first line gives the position twice: `at L:C:` counts from the function's `def` line (line 1) and
    its first column (0), as Triton's messages do, then the file's own line and column. An error inside
    an inlined @jit helper is raised at the call site, with the helper's own error as `__cause__`.
    `internal` holds the original exception when the cause was a compiler bug rather than
    the user's code (set TILE_DEBUG=1 to see its traceback chained).
    """

    def __init__(self, fn_name: str, filename: str, first_line: int, src: str, node: ast.AST | None, message: str,
                 internal: BaseException | None = None, indent: int = 0):
        self.fn_name = fn_name
        self.filename = filename
        self.message = message
        self.error_message = message  # Triton's name for it
        self.internal = internal
        lines = src.splitlines()
        line_index = getattr(node, "lineno", 1) - 1  # in `src`, which starts with the decorators
        self.relative_line = line_index - _def_line_index(lines) + 1  # 1: the `def` line
        self.relative_col = getattr(node, "col_offset", 0)  # in the dedented source
        self.lineno = first_line + line_index
        self.col = self.relative_col + indent  # 0-based, in the file
        source_line = lines[line_index] if 0 <= line_index < len(lines) else ""
        self.source_line = source_line
        where = format_location(fn_name, filename, self.lineno, self.col, source_line, self.relative_col)
        text = f"at {self.relative_line}:{self.relative_col}: {where}{message}"
        self.notes_: list[str] = []
        super().__init__(text)

    def __reduce__(self):
        return (Exception, (str(self),))


class CompileTimeAssertionFailure(CompilationError):
    """A `tl.static_assert` (or an `assert` on compile-time values) failed while the kernel was compiled."""
