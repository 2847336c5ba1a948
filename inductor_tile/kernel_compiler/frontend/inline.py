"""Inline a @jit function called from inside a builtin (a combine function of tl.reduce or
tl.associative_scan): the same as a call written in the kernel, without its call site."""

from __future__ import annotations

from typing import Any

from ...language.core import constexpr


def inline_jit_call(fn: Any, semantic: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """Build `fn(*args, **kwargs)` at the builder's insertion point; returns what `fn` returns."""
    from .code_generator import CodeGenerator

    bound = fn.signature.bind(*args, **kwargs)
    bound.apply_defaults()
    scope = {name: constexpr(value) if name in fn.constexpr_names else value for name, value in bound.arguments.items()}
    return CodeGenerator(fn, semantic, scope).visit(fn.parse())
