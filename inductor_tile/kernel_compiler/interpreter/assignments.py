"""The interpreter's copy of a kernel, with the compiler's assignment rule.

The compiler binds `x = 0` to an int32 scalar tile (and `x = 1.5` to fp32, `x += 1` likewise), as
Triton does; only `x: tl.constexpr = ...` keeps a Python number. The interpreter runs the kernel's
own Python, where `x = 0` would stay a Python int, so `x.to(tl.int64)` or `x.dtype` would fail
there and promotions would differ. `interpretable(jit_fn)` recompiles the kernel with every
assignment to a name routed through `as_assigned`, keeping the file name and line numbers (pdb
and tracebacks still show the user's lines). Each `assert` statement becomes a call to `check_assert`:
an assertion on a tile is `tl.device_assert` (checked in debug mode only, as the compiler and Triton do),
one on a Python value is checked as Python would.
"""

from __future__ import annotations

import ast
import types
from typing import Any, Callable

from ...language.core import constexpr, current_semantic

HELPER = "__tile_as_assigned__"
ASSERT_HELPER = "__tile_check_assert__"


_NOTHING = object()


def as_assigned(value: Any, unpack: bool = False, into: Any = _NOTHING, at: Any = None) -> Any:
    """What a name is bound to: a Python number (or a constexpr of one) becomes a scalar tile.
    With `into`: `name[at] = value`, where `name` holds `into`; a tuple is replaced by a new tuple with that
    element changed (Triton's rule), other containers change in place."""
    if into is not _NOTHING:
        value = as_assigned(value)
        index = at.value if isinstance(at, constexpr) else at
        if isinstance(into, tuple):
            items = list(into)
            items[index] = value
            return type(into)(*items) if hasattr(into, "_fields") else tuple(items)
        into[index] = value
        return into
    if unpack and isinstance(value, (tuple, list)):
        return type(value)(as_assigned(v) for v in value)
    number = value.value if isinstance(value, constexpr) else value
    if isinstance(number, (bool, int, float)):
        return current_semantic().to_tensor(number)
    return value


def check_assert(condition: Any, message: Callable[[], Any] | None, source: str) -> None:
    """`assert condition, message()`: on a tile, a device assertion (debug mode only); else Python's rule.
    `message` is called only when it is needed (Python evaluates an assert's message lazily)."""
    from ...language.core import tensor

    if isinstance(condition, tensor):
        text = "" if message is None else str(_plain(message()))
        current_semantic().device_assert(condition, text or source, None)
        return
    if not _plain(condition):
        raise AssertionError(*(() if message is None else (_plain(message()),)))


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, constexpr) else value


def _is_constexpr_annotation(annotation: ast.expr) -> bool:
    return ast.unparse(annotation).split(".")[-1] == "constexpr"


def _wrap(value: ast.expr, target: ast.expr) -> ast.expr:
    unpack = isinstance(target, (ast.Tuple, ast.List))
    call = ast.Call(func=ast.Name(id=HELPER, ctx=ast.Load()), args=[value], keywords=[])
    if unpack:
        call.keywords.append(ast.keyword(arg="unpack", value=ast.Constant(value=True)))
    return ast.copy_location(call, value)


class _RouteAssignments(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        message = ast.Constant(value=None) if node.msg is None else ast.Lambda(
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]), body=node.msg)
        call = ast.Call(func=ast.Name(id=ASSERT_HELPER, ctx=ast.Load()),
                        args=[node.test, message, ast.Constant(value=ast.unparse(node.test))], keywords=[])
        return ast.copy_location(ast.Expr(value=ast.copy_location(call, node)), node)

    def visit_Assign(self, node: ast.Assign) -> ast.Assign:
        if len(node.targets) == 1 and isinstance(node.targets[0], (ast.Name, ast.Tuple, ast.List)):
            node.value = _wrap(node.value, node.targets[0])
        elif len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) and isinstance(
                node.targets[0].value, ast.Name):  # `t[i] = v`: `t = as_assigned(v, into=t, at=i)`
            target = node.targets[0]
            name = target.value.id
            call = ast.Call(func=ast.Name(id=HELPER, ctx=ast.Load()), args=[node.value], keywords=[
                ast.keyword(arg="into", value=ast.Name(id=name, ctx=ast.Load())),
                ast.keyword(arg="at", value=target.slice)])
            node = ast.copy_location(ast.Assign(targets=[ast.copy_location(ast.Name(id=name, ctx=ast.Store()), target)],
                                                value=ast.copy_location(call, node.value)), node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AnnAssign:
        if node.value is not None and isinstance(node.target, ast.Name) and not _is_constexpr_annotation(node.annotation):
            node.value = _wrap(node.value, node.target)
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.stmt:
        if not isinstance(node.target, ast.Name):
            return node
        current = ast.copy_location(ast.Name(id=node.target.id, ctx=ast.Load()), node.target)
        value = ast.copy_location(ast.BinOp(left=current, op=node.op, right=node.value), node)
        return ast.copy_location(ast.Assign(targets=[node.target], value=_wrap(value, node.target)), node)


def _kernel_builtins() -> dict[str, Any]:
    from ...language.builtins import range as tile_range
    from ...language.python_min_max import kernel_max, kernel_min
    from ...language.python_print import kernel_print

    # as compiled: `range` loops as tl.range, `print` of tiles is tl.device_print
    return {"min": kernel_min, "max": kernel_max, "range": tile_range, "print": kernel_print}


#: Python builtins that mean something else given tile values (as in the compiler's front end)
_KERNEL_BUILTINS = _kernel_builtins()


def _outer_names(fn: Any) -> tuple[str, ...]:
    """The wrapper's parameters: the assignment and assert helpers, the kernel's closure, then the builtins it shadows
    (unless the kernel's own globals or closure define those names)."""
    free = fn.__code__.co_freevars
    shadowed = tuple(name for name in _KERNEL_BUILTINS if name not in free and name not in fn.__globals__)
    return (HELPER, ASSERT_HELPER) + free + shadowed


def interpretable(jit_fn: Any) -> Callable[..., Any]:
    """`jit_fn`'s Python function with the assignment rule (compiled once, closure read per call)."""
    code = jit_fn.__dict__.get("_interpreter_code")
    fn = jit_fn.fn
    if code is None:
        definition = jit_fn.parse()
        definition.decorator_list = []
        definition.returns = None
        for arg in definition.args.posonlyargs + definition.args.args + definition.args.kwonlyargs:
            arg.annotation = None  # annotations are read from the original function, never evaluated again
        _RouteAssignments().visit(definition)
        from ..runtime.jit import AST_LOCK

        with AST_LOCK:  # see AST_LOCK
            outer = ast.parse(f"def __tile_outer__({', '.join(_outer_names(fn))}):\n    pass").body[0]
            outer.body = [definition, ast.Return(value=ast.Name(id=definition.name, ctx=ast.Load()))]
            module = ast.Module(body=[outer], type_ignores=[])
            ast.fix_missing_locations(module)
            ast.increment_lineno(module, jit_fn.first_line - 1)
            compiled = compile(module, jit_fn.filename, "exec")
        code = jit_fn._interpreter_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    cells = [cell.cell_contents for cell in fn.__closure__ or ()]
    shadowed = [_KERNEL_BUILTINS[name] for name in _outer_names(fn)[2 + len(cells):]]
    rewritten = types.FunctionType(code, fn.__globals__)(as_assigned, check_assert, *cells, *shadowed)
    rewritten.__defaults__, rewritten.__kwdefaults__ = fn.__defaults__, fn.__kwdefaults__
    return rewritten
