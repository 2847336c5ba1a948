"""A `@jit` function's source text, found through its file's syntax tree rather than `inspect`'s tokenizer.

`inspect.getsourcelines` finds where a function ends by running Python's pure-Python tokenizer over
its lines: 0.7 ms for a generated kernel, paid by every kernel a warm start loads (and the kernel's
cache key then parsed the text again).  Here the file is parsed once (consecutive definitions from one
file, as a module's import makes them, share that parse) and the function's definition is looked up by
its first line; the text runs from there (its decorators) to the definition's last line.  The definition's
node comes along, for what needs only the names the function uses (`jit._referenced_values`).

Anything unusual (no file, a file changed since, a definition not found) falls back to `inspect`.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import threading
from typing import Any, Callable

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_lock = threading.Lock()


class _ParsedFile:
    """One file's definitions by first line: the top-level ones at once, nested ones when first asked for."""

    def __init__(self, filename: str, lines: list[str], tree: ast.Module):
        self.filename, self.lines, self.tree = filename, lines, tree
        self.definitions = {_first_line(node): node for node in tree.body if isinstance(node, _DEFINITIONS)}
        self.walked = False

    def find(self, first_line: int) -> ast.AST | None:
        node = self.definitions.get(first_line)
        if node is None and not self.walked:  # a kernel defined inside a function or an `if`
            self.walked = True
            for node in ast.walk(self.tree):
                if isinstance(node, _DEFINITIONS):
                    self.definitions.setdefault(_first_line(node), node)
            node = self.definitions.get(first_line)
        return node


_last: _ParsedFile | None = None  # the last file parsed (a module's definitions come one after another)


def _first_line(node: Any) -> int:
    """Where a definition starts as its code object counts it: at its first decorator."""
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


def _definition(filename: str, lines: list[str], first_line: int, parse_lock: Any) -> ast.AST | None:
    global _last
    with _lock:
        parsed = _last
    if parsed is None or parsed.filename != filename or parsed.lines is not lines:
        with parse_lock:
            tree = ast.parse("".join(lines), filename)
        parsed = _ParsedFile(filename, lines, tree)
        with _lock:
            _last = parsed
    with _lock:
        return parsed.find(first_line)


def function_source(fn: Callable, filename: str | None, parse_lock: Any) -> tuple[str, int, ast.AST | None]:
    """(dedented source text, first line in its file, its definition node or None) of `fn`, defined in
    `filename` (inspect.getsourcefile); `parse_lock` serializes `ast.parse` (jit.AST_LOCK)."""
    code = fn.__code__
    node, lines = None, []
    if filename:
        linecache.checkcache(filename)  # as inspect does: a file edited since it was read is read again
        lines = linecache.getlines(filename, fn.__globals__)
    if lines:
        try:
            node = _definition(filename, lines, code.co_firstlineno, parse_lock)
        except (SyntaxError, ValueError):
            node = None
    if node is None or node.name != code.co_name or node.end_lineno is None or node.end_lineno > len(lines):
        found, first = inspect.getsourcelines(fn)
        return textwrap.dedent("".join(found)), first, None
    first = code.co_firstlineno
    return textwrap.dedent("".join(lines[first - 1:node.end_lineno])), first, node
