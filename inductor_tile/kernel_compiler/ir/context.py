"""The xdsl context of TTIR, and text in/out."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import builtin, func, scf, ub
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from .arith_ext import Arith
from .math_ext import Math
from .tt import TT
from .ttg import TTG


def make_context() -> Context:
    """A context with builtin, arith (tile-capable, see `arith_ext`), math (with the special functions of
    `math_ext`), scf, func, ub, tt and ttg."""
    ctx = Context()
    for dialect in (builtin.Builtin, Arith, Math, scf.Scf, func.Func, ub.UB, TT, TTG):
        ctx.load_dialect(dialect)
    return ctx


def parse_ttir(text: str, ctx: Context | None = None, name: str = "<ttir>") -> ModuleOp:
    """Parse TTIR text into a module (not verified). A bare list of ops is wrapped in a
    module; `name` is the file name that parse errors mention."""
    return Parser(ctx or make_context(), text, name).parse_module()


def print_ir(module: ModuleOp) -> str:
    """The module's text in xdsl's custom syntax (re-parses with `parse_ttir`); each type's text made once
    (type_text.py)."""
    from .type_text import print_module

    return print_module(module)
