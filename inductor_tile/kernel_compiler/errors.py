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


class CompilationError(Exception):
    """A kernel could not be compiled. The message shows the offending source line with a caret.

    `internal` holds the original exception when the cause was a compiler bug rather than
    the user's code (set TILE_DEBUG=1 to see its traceback chained).
    """

    def __init__(self, fn_name: str, filename: str, first_line: int, src: str, node: ast.AST | None, message: str,
                 internal: BaseException | None = None):
        self.fn_name = fn_name
        self.filename = filename
        self.message = message
        self.error_message = message  # Triton's name for it
        self.internal = internal
        self.lineno = first_line + getattr(node, "lineno", 1) - 1
        self.col = getattr(node, "col_offset", 0)
        lines = src.splitlines()
        line_index = getattr(node, "lineno", 1) - 1
        source_line = lines[line_index] if 0 <= line_index < len(lines) else ""
        self.source_line = source_line
        text = format_location(fn_name, filename, self.lineno, self.col, source_line) + message
        self.notes_: list[str] = []
        super().__init__(text)

    def add_call_site(self, caller: str, filename: str, lineno: int, line: str) -> None:
        """Record the call site when the error is inside an inlined @jit helper."""
        self.args = (self.args[0] + f"\n  called from `{caller}`, {filename}:{lineno}:\n    {line.strip()}",)

    def __reduce__(self):
        return (Exception, (str(self),))
