"""The front end: walks the Python AST of a @jit function and builds TTIR.

Python values known at compile time (constexpr arguments, literals, dtypes, modules)
are evaluated here, in Python; tile values become IR through the language's semantic
(`language/semantic.py`) and the TTIR builder. Control flow on tile values becomes
`scf.for` / `scf.while` / `scf.if`; `tl.static_range` loops and `if` on compile-time values unroll.
Calls to other @jit functions are inlined.
"""

from __future__ import annotations

import ast
import builtins as py_builtins
import linecache
import operator
import os
from typing import Any, Callable

from xdsl.dialects import arith
from xdsl.rewriter import InsertPoint

from ...language import builtins as tl_builtins
from ...language import dtypes as T
from ...language.core import constexpr, is_builtin, tensor
from ...language.python_min_max import kernel_max, kernel_min
from ...language.python_print import kernel_print
from ...language.semantic import Semantic
from ..errors import CompilationError, CompileTimeAssertionFailure
from .branch_values import BranchValues
from .grouped_arguments import unflatten
from .specialization import ArgSpec
from .user_frames import language_error

_BINARY_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
}
_COMPARE_OPERATORS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_UNARY_OPERATORS: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert,
}
# Python builtins a kernel may call on compile-time values.
_PYTHON_BUILTINS = {
    name: getattr(py_builtins, name)
    for name in ("min", "max", "int", "float", "bool", "len", "range", "isinstance", "getattr", "tuple", "list",
                 "abs", "print", "enumerate", "zip", "ValueError", "TypeError", "hasattr")
}

_TILE_MIN_MAX = {py_builtins.min: kernel_min, py_builtins.max: kernel_max}


def _constant_of(x: tensor) -> int | float | None:
    """The value of a scalar tile that is an `arith.constant` (a name assigned a number), else None."""
    owner = getattr(x.handle, "owner", None)
    if x.type.is_block() or not isinstance(owner, arith.ConstantOp):
        return None
    return owner.value.value.data


class _Unsupported(Exception):
    pass


def _unwrap(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


def _is_tile(x: Any) -> bool:
    return isinstance(x, tensor)


def assigned_names(stmts: list[ast.stmt]) -> list[str]:
    """Names a list of statements assigns to, in order of first assignment."""
    names: list[str] = []
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
                names.append(node.id)
    return names


def _has_return(stmt: ast.stmt) -> bool:
    """Whether a `return` is somewhere inside `stmt` (not counting nested function definitions)."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def _ends_in_return(stmts: list[ast.stmt]) -> bool:
    """Whether every path through `stmts` ends in a `return`."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _ends_in_return(last.body) and _ends_in_return(last.orelse)


def _then(branch: list[ast.stmt], rest: list[ast.stmt]) -> list[ast.stmt]:
    """A branch followed by the statements after its `if`, unless it returns first."""
    return branch if _ends_in_return(branch) else branch + rest


class CodeGenerator(BranchValues, ast.NodeVisitor):
    """Generates one function body (the kernel, or an inlined @jit helper)."""

    def __init__(self, jit_fn: Any, semantic: Semantic, scope: dict[str, Any]):
        self.jit_fn = jit_fn
        self.semantic = semantic
        self.builder = semantic.builder
        self.scope = scope
        self.globals = jit_fn.fn.__globals__
        self.closure = jit_fn.closure_vars()
        self.return_value: Any = None
        self.returned = False
        self.return_node: ast.Return | None = None  # the `return` that set return_value (errors point at it)
        self.loop_depth = 0  # enclosing loops and branches on runtime values
        self.in_loop = 0  # enclosing loops on runtime values
        self.at_tail = True  # the statement being generated is the last one the function runs on its path
        self.is_kernel = False  # the launched function (not an inlined helper): it returns no value
        first = linecache.getline(jit_fn.filename, jit_fn.first_line)  # the source was dedented by this much
        self.indent = len(first) - len(first.lstrip()) if first.strip() else 0

    # ===--------------------------------------------------------------------===
    # Errors
    # ===--------------------------------------------------------------------===
    def error(self, node: ast.AST | None, message: str, internal: BaseException | None = None,
              kind: type[CompilationError] = CompilationError) -> CompilationError:
        fn = self.jit_fn
        return kind(fn.__name__, fn.filename, fn.first_line, fn.src, node, message, internal, self.indent)

    def unsupported(self, node: ast.AST, message: str) -> CompilationError:
        return self.error(node, f"unsupported in a kernel: {message}")

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.stmt):  # what a device assertion reports
            self.semantic.location = (self.jit_fn.filename, self.jit_fn.first_line + node.lineno - 1)
        outer = getattr(self.builder, "location", None)  # ops built for `node` carry its position
        if hasattr(node, "lineno") and hasattr(self.builder, "location"):
            self.builder.location = (self.jit_fn.filename, self.jit_fn.first_line + node.lineno - 1,
                                     node.col_offset + self.indent)
        try:
            return super().visit(node)
        except CompilationError:
            raise
        except tl_builtins.StaticAssertionError as e:  # the user's own check: the message says it all
            raise self.error(node, str(e), kind=CompileTimeAssertionFailure) from None
        except (TypeError, ValueError, NameError, AttributeError, AssertionError, IndexError, KeyError,
                RuntimeError, ZeroDivisionError) as e:
            if os.environ.get("TILE_DEBUG") == "1":
                raise self.error(node, f"{type(e).__name__}: {e}", e) from e
            # the cause is the error as the language raised it, with the language's frames but none of the
            # compiler's (Triton's tests read `__cause__`)
            raise self.error(node, str(e) or type(e).__name__, e) from language_error(e)
        except Exception as e:  # a compiler bug: still point at the user's line, keep the cause
            if os.environ.get("TILE_DEBUG") == "1":
                raise self.error(node, f"internal compiler error: {type(e).__name__}: {e}", e) from e
            raise self.error(node, f"internal compiler error: {type(e).__name__}: {e} (TILE_DEBUG=1 shows the traceback)",
                             e) from None
        finally:
            if outer is not None:
                self.builder.location = outer

    def generic_visit(self, node: ast.AST) -> Any:
        raise self.unsupported(node, f"the Python construct `{type(node).__name__}`")

    # ===--------------------------------------------------------------------===
    # Functions and statements
    # ===--------------------------------------------------------------------===
    def visit_statements(self, stmts: list[ast.stmt]) -> None:
        outer_tail = self.at_tail
        try:
            for i, stmt in enumerate(stmts):
                if self.returned:
                    break
                rest = stmts[i + 1:]
                self.at_tail = outer_tail and not rest
                if rest and isinstance(stmt, ast.If) and _has_return(stmt):
                    # an early `return` in a branch: what follows the `if` runs in the branches that go on
                    # (as if written there), so a branch on a runtime value needs no jump out of it
                    body, orelse = _then(stmt.body, rest), _then(stmt.orelse, rest)
                    self.at_tail = outer_tail
                    self.visit(ast.copy_location(ast.If(test=stmt.test, body=body, orelse=orelse), stmt))
                    break
                self.visit(stmt)
        finally:
            self.at_tail = outer_tail

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        self.visit_statements(node.body)
        return self.return_value

    def visit_Return(self, node: ast.Return) -> None:
        if self.in_loop:
            raise self.unsupported(node, "`return` inside a loop on a runtime value")
        if self.is_kernel and node.value is not None:
            raise self.error(node, "a kernel cannot return a value; write results with tl.store")
        self.return_value = None if node.value is None else self.visit(node.value)
        self.returned = True
        self.return_node = node

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # docstring
        if isinstance(node.value, ast.Call):  # a helper marked @must_use_result called for nothing
            fn = _unwrap(self.visit(node.value.func))
            message = getattr(fn, "unused_result_message", None)
            if isinstance(message, str):
                raise self.error(node, f"The result of {fn.__name__} is not being used. {message}".rstrip())
        self.visit(node.value)

    def assign(self, target: ast.expr, value: Any, keep_numbers: bool = False) -> None:
        """Bind `target` to `value`. A Python number becomes a scalar tile (Triton's rule: `x = 0` is an
        int32 scalar, `x = 1.5` fp32), unless `keep_numbers` (`x: tl.constexpr = 0`, static loop indices)."""
        if isinstance(target, ast.Name):
            if isinstance(_unwrap(value), (int, float, bool)):
                value = constexpr(_unwrap(value)) if keep_numbers else self.semantic.to_tensor(value)
            self.scope[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            values = _unwrap(value)
            if not isinstance(values, (tuple, list)) or len(values) != len(target.elts):
                raise self.error(target, f"cannot unpack {values!r} into {len(target.elts)} names")
            for t, v in zip(target.elts, values):
                self.assign(t, v, keep_numbers)
            return
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            # `t[i] = v` on a tuple: the name is bound to a new tuple with that element replaced (Triton's rule)
            container = _unwrap(self.visit(target.value))
            index = _unwrap(self.visit(target.slice))
            if isinstance(container, tuple) and isinstance(index, int):
                if isinstance(_unwrap(value), (int, float, bool)) and not keep_numbers:
                    value = self.semantic.to_tensor(value)
                items = list(container)
                items[index] = value
                self.scope[target.value.id] = type(container)(*items) if hasattr(container, "_fields") else tuple(items)
                return
        raise self.unsupported(target, "assignment to something other than a name, a tuple of names or an "
                                       "element of a tuple")

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self.assign(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is None:
            return None
        value = self.visit(node.value)
        annotation = self.visit(node.annotation)
        if annotation is constexpr and _is_tile(value):
            raise self.error(node, "a value computed at run time cannot be annotated tl.constexpr")
        self.assign(node.target, value, keep_numbers=annotation is constexpr)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            raise self.unsupported(node, "augmented assignment to something other than a name")
        current = self.visit(ast.Name(id=node.target.id, ctx=ast.Load()))
        value = _BINARY_OPERATORS[type(node.op)](current, self.visit(node.value))
        self.assign(node.target, value)

    def visit_Assert(self, node: ast.Assert) -> None:
        test = self.visit(node.test)
        if _is_tile(test):  # Triton's rule: a runtime `assert` is tl.device_assert (checked in debug mode only)
            message = "" if node.msg is None else str(_unwrap(self.visit(node.msg)))
            self.semantic.device_assert(test, message or ast.unparse(node.test), None)
            return
        if not _unwrap(test):
            message = "" if node.msg is None else f": {_unwrap(self.visit(node.msg))}"
            raise self.error(node, f"assertion failed{message}", kind=CompileTimeAssertionFailure)

    # ===--------------------------------------------------------------------===
    # Control flow
    # ===--------------------------------------------------------------------===
    def visit_If(self, node: ast.If) -> None:
        cond = self.visit(node.test)
        if _is_tile(cond) and _constant_of(cond) is not None and not _has_return(node):
            cond = constexpr(_constant_of(cond))  # `a = False` ... `if a:` picks its branch now
        # (with a `return` inside, it stays a branch on a runtime value, as in Triton: the paths that
        # return nothing then give an undefined value of the returned type)
        if not _is_tile(cond):
            self.visit_statements(node.body if _unwrap(cond) else node.orelse)
            return
        if cond.type.is_block() and cond.type.numel == 1:  # a block of one element is its element
            cond = self.semantic.reduce(self.semantic.reshape(cond, (1,)), 0, "max")
        if cond.type.is_block():
            raise self.error(node.test, f"`if` needs a scalar condition, got a block {cond.type}; use tl.where")
        self.dynamic_if(node, self.semantic.cast(cond, T.int1))

    def dynamic_if(self, node: ast.If, cond: tensor) -> None:
        before = dict(self.scope)
        saved_ip = self.builder.insertion_point
        at_tail = self.at_tail
        branches, outcomes, return_nodes = [], [], []
        for body in (node.body, node.orelse):
            block = self.builder.new_block([])
            self.builder.insertion_point = InsertPoint.at_end(block)
            self.scope = dict(before)
            self.loop_depth += 1
            self.returned, self.return_value, self.return_node = False, None, None
            self.at_tail = at_tail
            self.visit_statements(body)
            self.loop_depth -= 1
            outcomes.append((self.returned, self.return_value))
            return_nodes.append(self.return_node if self.returned else None)
            self.returned = False  # a `return` in a branch ends only the branch (see visit_statements)
            branches.append((block, self.scope))
        self.at_tail = at_tail
        if any(returned and value is not None for returned, value in outcomes):
            return self.dynamic_if_returning(node, cond, branches, outcomes, at_tail, saved_ip, before, return_nodes)
        names = [n for n in assigned_names(node.body + node.orelse)
                 if all(n in scope for _, scope in branches)
                 and not all(scope[n] is before.get(n) for _, scope in branches)]
        then_values = self.yield_values(node, branches[0], names, None)
        else_values = self.yield_values(node, branches[1], names, [v.type for v in then_values])
        self.builder.insertion_point = saved_ip
        results = self.builder.insert_if(cond.handle, branches[0][0], branches[1][0], [v.type for v in then_values])
        self.scope = before
        results = [tensor(result, value.type) for result, value in zip(results, then_values)]
        for name in names:
            count = len(self.flatten_value(node, branches[0][1][name], name))
            self.scope[name] = self.rebuild_value(branches[0][1][name], results[:count])
            results = results[count:]
        if all(returned for returned, _ in outcomes):  # `return` (no value) on both paths
            self.returned, self.return_value = True, None

    def yield_values(self, node: ast.AST, branch: tuple[Any, dict], names: list[str], types: list | None) -> list[tensor]:
        block, scope = branch
        self.builder.insertion_point = InsertPoint.at_end(block)
        values, value_names = [], []
        for n in names:
            parts = self.flatten_value(node, scope[n], n)
            values += parts
            value_names += [n] * len(parts)
        if types is not None:
            if len(types) != len(values):
                raise self.error(node, "a variable holds different kinds of values in the `if` and `else` branches")
            for name, value, ty in zip(value_names, values, types):
                if value.type != ty:
                    raise self.error(node, f"Mismatched type for {name}: {ty} in the `if` branch but {value.type} in "
                                           "the `else` branch; both branches must give it the same type")
        self.builder.create_yield([v.handle for v in values])
        return values

    def flatten_value(self, node: ast.AST, value: Any, name: str) -> list[tensor]:
        """The tensors that carry `value` through a loop or branch (a block pointer: several)."""
        if hasattr(_unwrap(value), "rebuild"):
            return list(_unwrap(value).flatten())
        return [self.as_tile(node, value, name)]

    @staticmethod
    def rebuild_value(template: Any, tensors: list[tensor]) -> Any:
        """`template`'s value made of `tensors` (what `flatten_value` gave, rebuilt)."""
        if hasattr(_unwrap(template), "rebuild"):
            return _unwrap(template).rebuild(tensors)
        return tensors[0]

    def as_tile(self, node: ast.AST, value: Any, name: str) -> tensor:
        if _is_tile(value):
            return value
        if isinstance(_unwrap(value), (int, float, bool)):
            return self.semantic.to_tensor(value)
        raise self.error(node, f"variable '{name}' holds {_unwrap(value)!r}, which cannot change at run time")

    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.unsupported(node, "`for ... else`")
        iterator = self.visit(node.iter)
        if isinstance(iterator, tl_builtins.static_range):
            return self.static_for(node, iterator)
        if not isinstance(iterator, tl_builtins.range):
            raise self.unsupported(node.iter, "loops over anything but range(), tl.range() or tl.static_range()")
        if not isinstance(node.target, ast.Name):
            raise self.unsupported(node.target, "a loop variable that is not a single name")
        self.dynamic_for(node, iterator)

    def static_for(self, node: ast.For, iterator: tl_builtins.static_range) -> None:
        bounds = [_unwrap(v) for v in (iterator.start, iterator.end, iterator.step)]
        if not all(isinstance(b, int) for b in bounds):
            raise self.error(node.iter, "tl.static_range bounds must be compile-time integers")
        at_tail, self.at_tail = self.at_tail, False  # more iterations may follow a path's last statement
        try:
            for i in range(*bounds):
                self.assign(node.target, constexpr(i), keep_numbers=True)
                self.visit_statements(node.body)
        finally:
            self.at_tail = at_tail

    def dynamic_for(self, node: ast.For, iterator: tl_builtins.range) -> None:
        step = _unwrap(iterator.step)
        if isinstance(step, int) and step == 0:
            raise self.error(node.iter, "loop step must not be 0")
        descending = isinstance(step, int) and step < 0  # a compile-time negative step counts down
        lb, ub, step = (self.semantic.to_tensor(v) for v in (iterator.start, iterator.end,
                                                                 -step if descending else iterator.step))
        for bound in (lb, ub, step):
            if bound.type.is_block() or not bound.dtype.is_int():
                raise self.error(node.iter, f"loop bounds must be integer scalars, got {bound.type}")
        index_type = T.int64 if any(b.dtype.int_bitwidth == 64 for b in (lb, ub, step)) else T.int32
        lb, ub, step = (self.semantic.cast(b, index_type) for b in (lb, ub, step))
        index = None  # the loop variable from the counter (None: the counter itself)
        if descending:  # i = first - k * |step| for k in [0, cdiv(first - end, |step|)), none when first <= end
            first, stride = lb, step
            span = self.semantic.sub(lb, ub)
            count = self.semantic.floordiv(self.semantic.add(span, self.semantic.sub(step, 1)), step)
            lb = self.semantic.cast(self.semantic.to_tensor(0), index_type)
            ub = self.semantic.where(self.semantic.gt(span, 0), count, 0)
            step = self.semantic.cast(self.semantic.to_tensor(1), index_type)
            index = lambda k: self.semantic.sub(first, self.semantic.mul(k, stride))  # noqa: E731
        unroll = _unwrap(getattr(iterator, "loop_unroll_factor", None))
        if unroll is not None and (not isinstance(unroll, int) or isinstance(unroll, bool)):
            raise self.error(node.iter, f"loop_unroll_factor must be a compile-time integer, got {unroll!r}")
        if unroll is None or unroll < 2:  # as in Triton, a factor below 2 means no unrolling
            self.for_loop(node, lb, ub, step, index, copies=1)
            return
        # unrolled: a loop running `unroll` copies of the body per iteration over the whole multiples of
        # `unroll` iterations, then a loop over the rest
        trips = self.semantic.floordiv(self.semantic.add(self.semantic.sub(ub, lb), self.semantic.sub(step, 1)), step)
        trips = self.semantic.where(self.semantic.gt(ub, lb), trips, 0)
        whole = self.semantic.mul(self.semantic.floordiv(trips, unroll), unroll)
        middle = self.semantic.add(lb, self.semantic.mul(whole, step))
        self.for_loop(node, lb, middle, step, index, copies=unroll)
        self.for_loop(node, middle, ub, step, index, copies=1)

    def for_loop(self, node: ast.For, lb: tensor, ub: tensor, step: tensor, index: Callable | None,
                 copies: int) -> None:
        """An scf.for from `lb` to `ub` whose body is `copies` copies of the loop's body (the counter
        advancing by `step` between them and by `copies * step` per iteration); `index(counter)` gives the
        loop variable (None: the counter)."""
        index_type = lb.dtype
        before = dict(self.scope)
        carried = [n for n in assigned_names(node.body) if n in before and n != node.target.id]
        parts = {n: self.flatten_value(node, before[n], n) for n in carried}  # a block pointer: several tensors
        inits = [t for n in carried for t in parts[n]]
        init_names = [n for n in carried for _ in parts[n]]
        saved_ip = self.builder.insertion_point
        body = self.builder.new_block([index_type] + [v.type for v in inits])
        self.builder.insertion_point = InsertPoint.at_end(body)
        self.scope = dict(before)
        args = [tensor(arg, init.type) for arg, init in zip(body.args[1:], inits)]
        for name in carried:
            self.scope[name], args = self.rebuild_value(before[name], args[:len(parts[name])]), args[len(parts[name]):]
        counter = tensor(body.args[0], index_type)
        self.loop_depth += 1
        self.in_loop += 1
        for copy in range(copies):
            k = counter if copy == 0 else self.semantic.add(counter, self.semantic.mul(step, copy))
            self.scope[node.target.id] = k if index is None else index(k)
            self.visit_statements(node.body)
        self.in_loop -= 1
        self.loop_depth -= 1
        self.yield_carried(node, carried, init_names, inits)
        self.builder.insertion_point = saved_ip
        stride = step if copies == 1 else self.semantic.mul(step, copies)
        results = self.builder.insert_for(lb.handle, ub.handle, stride.handle, [v.handle for v in inits], body)
        self.scope = before
        results = [tensor(result, init.type) for result, init in zip(results, inits)]
        for name in carried:
            self.scope[name], results = self.rebuild_value(before[name], results[:len(parts[name])]), results[len(parts[name]):]

    def yield_carried(self, node: ast.AST, carried: list[str], init_names: list[str], inits: list[tensor]) -> None:
        """End a loop body: yield the carried names' values, which must keep their types."""
        outs = [t for n in carried for t in self.flatten_value(node, self.scope[n], n)]
        if len(outs) != len(inits):
            raise self.error(node, "a loop-carried variable changes kind in the loop (a block pointer and a tensor)")
        for name, init, value in zip(init_names, inits, outs):
            if value.type != init.type:
                raise self.error(node, f"loop-carried variable '{name}' is {init.type} before the loop but {value.type} "
                                       "after an iteration; give it its final type before the loop "
                                       "(e.g. tl.zeros([...], dtype=tl.float32))")
        self.builder.create_yield([v.handle for v in outs])

    def visit_While(self, node: ast.While) -> None:
        """`while cond:` on runtime values: an scf.while whose "before" region computes the
        condition and whose "after" region is the body; the names the body assigns that live
        before the loop are carried through both regions."""
        if node.orelse:
            raise self.unsupported(node, "`while ... else`")
        before = dict(self.scope)
        carried = [n for n in assigned_names(node.body) if n in before]
        parts = {n: self.flatten_value(node, before[n], n) for n in carried}
        inits = [t for n in carried for t in parts[n]]
        init_names = [n for n in carried for _ in parts[n]]
        types = [v.type for v in inits]
        saved_ip = self.builder.insertion_point

        def enter(block: Any) -> None:  # insert into `block`, the carried names bound to its arguments
            self.builder.insertion_point = InsertPoint.at_end(block)
            self.scope = dict(before)
            args = [tensor(arg, ty) for arg, ty in zip(block.args, types)]
            for name in carried:
                self.scope[name], args = self.rebuild_value(before[name], args[:len(parts[name])]), args[len(parts[name]):]

        cond_block = self.builder.new_block(types)
        enter(cond_block)
        cond = self.while_condition(node.test)
        self.builder.create_condition(cond.handle, list(cond_block.args))

        body = self.builder.new_block(types)
        enter(body)
        self.loop_depth += 1
        self.in_loop += 1
        self.visit_statements(node.body)
        self.in_loop -= 1
        self.loop_depth -= 1
        self.yield_carried(node, carried, init_names, inits)
        self.builder.insertion_point = saved_ip
        results = self.builder.insert_while([v.handle for v in inits], cond_block, body)
        self.scope = before
        results = [tensor(result, ty) for result, ty in zip(results, types)]
        for name in carried:
            self.scope[name], results = self.rebuild_value(before[name], results[:len(parts[name])]), results[len(parts[name]):]

    def while_condition(self, test: ast.expr) -> tensor:
        """A `while` condition as a scalar int1 (a block of one element is its element)."""
        cond = self.visit(test)
        if not _is_tile(cond):
            cond = self.semantic.to_tensor(bool(_unwrap(cond)))
        if cond.type.is_block() and cond.type.numel == 1:
            cond = self.semantic.reduce(self.semantic.reshape(cond, (1,)), 0, "max")
        if cond.type.is_block():
            raise self.error(test, f"`while` needs a scalar condition, got a block {cond.type}; "
                                   "reduce it first (e.g. tl.max(x < y, 0))")
        return self.semantic.cast(cond, T.int1)

    def visit_Break(self, node: ast.Break) -> None:
        raise self.unsupported(node, "`break`")

    def visit_Continue(self, node: ast.Continue) -> None:
        raise self.unsupported(node, "`continue`")

    # ===--------------------------------------------------------------------===
    # Expressions
    # ===--------------------------------------------------------------------===
    def visit_Constant(self, node: ast.Constant) -> Any:
        return constexpr(node.value)

    def visit_Name(self, node: ast.Name) -> Any:
        name = node.id
        if name in self.scope:
            return self.scope[name]
        if name in self.closure:
            return self.closure[name]
        if name in self.globals:
            return self.globals[name]
        if name in _PYTHON_BUILTINS:
            return _PYTHON_BUILTINS[name]
        raise self.error(node, f"name '{name}' is not defined")

    def visit_Tuple(self, node: ast.Tuple) -> tuple:
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node: ast.List) -> list:
        return [self.visit(e) for e in node.elts]

    def visit_Slice(self, node: ast.Slice) -> slice:
        parts = [None if p is None else _unwrap(self.visit(p)) for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> constexpr:
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            else:
                parts.append(format(_unwrap(self.visit(value.value))))
        return constexpr("".join(parts))

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        return self.visit(node.value)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        lhs, rhs = self.visit(node.left), self.visit(node.right)
        op = _BINARY_OPERATORS.get(type(node.op))
        if op is None:
            raise self.unsupported(node, f"the operator {type(node.op).__name__}")
        if op is operator.pow and (_is_tile(lhs) or _is_tile(rhs)):
            raise self.unsupported(node, "`**` on tile values")
        return op(lhs, rhs)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        operand = self.visit(node.operand)
        if isinstance(node.op, ast.Not):
            return self.semantic.logical_not(operand) if _is_tile(operand) else constexpr(not _unwrap(operand))
        return _UNARY_OPERATORS[type(node.op)](operand)

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:
        is_and = isinstance(node.op, ast.And)
        result = self.visit(node.values[0])
        for value_node in node.values[1:]:
            if not _is_tile(result):
                # Python short-circuit on compile-time values
                if bool(_unwrap(result)) != is_and:
                    return result
                result = self.visit(value_node)
                continue
            result = self.semantic.logical("andi" if is_and else "ori", result, self.visit(value_node))
        return result

    def visit_Compare(self, node: ast.Compare) -> Any:
        left = self.visit(node.left)
        result = None
        for op, comparator_node in zip(node.ops, node.comparators):
            right = self.visit(comparator_node)
            fn = _COMPARE_OPERATORS[type(op)]
            if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                identity = isinstance(op, (ast.Is, ast.IsNot))
                if (_is_tile(left) or _is_tile(right)) and not (identity and any(_unwrap(v) is None for v in (left, right))):
                    raise self.unsupported(node, f"`{type(op).__name__}` on tile values")
                value = constexpr(fn(_unwrap(left), _unwrap(right)))
            else:
                value = fn(left, right)
            result = value if result is None else self.semantic.logical("andi", result, value) if (
                _is_tile(result) or _is_tile(value)) else constexpr(_unwrap(result) and _unwrap(value))
            left = right
        return result

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        cond = self.visit(node.test)
        if not _is_tile(cond):
            return self.visit(node.body if _unwrap(cond) else node.orelse)
        if cond.type.is_block() and cond.type.numel != 1:  # a block condition chooses element by element
            then_value, else_value = self.visit(node.body), self.visit(node.orelse)
            self.check_ternary_types(node, then_value, else_value)
            return self.semantic.where(cond, then_value, else_value)
        if cond.type.is_block():  # a block of one element is its element
            cond = self.semantic.reduce(self.semantic.reshape(cond, (1,)), 0, "max")
        return self.dynamic_if_exp(node, self.semantic.cast(cond, T.int1))

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        value = self.visit(node.value)
        if node.attr == "to" and isinstance(value, constexpr) and isinstance(value.value, (bool, int, float)):
            return value.to  # a number (an int argument specialized as 1) converted to a tile dtype
        target = value if _is_tile(value) else _unwrap(value)
        return getattr(target, node.attr)

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        value = self.visit(node.value)
        index = self.visit(node.slice)
        if _is_tile(value):
            return value[index]
        result = _unwrap(value)[_unwrap(index)]
        return constexpr(result) if isinstance(result, (int, float, bool)) else result

    def visit_Call(self, node: ast.Call) -> Any:
        fn = _unwrap(self.visit(node.func))
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                args.extend(_unwrap(self.visit(arg.value)))
            else:
                args.append(self.visit(arg))
        kwargs = {kw.arg: self.visit(kw.value) for kw in node.keywords if kw.arg is not None}
        from ..runtime.jit import JITFunction

        if isinstance(fn, JITFunction):
            return self.call_jit_function(node, fn, args, kwargs)
        if fn is py_builtins.range:
            return tl_builtins.range(*args, **kwargs)  # Python's range loops at run time, as in Triton
        if is_builtin(fn) or isinstance(fn, type) and issubclass(fn, tl_builtins.range):
            return fn(*args, **kwargs)
        if getattr(fn, "__self__", None) is not None and _is_tile(fn.__self__):
            return fn(*args, **kwargs)  # a tensor method: x.to(...), x.reshape(...)
        if isinstance(fn, type) and issubclass(fn, tuple) and hasattr(fn, "_fields"):
            return fn(*args, **kwargs)  # a NamedTuple holding kernel values (Triton allows them as aggregates)
        if fn in (py_builtins.isinstance, py_builtins.hasattr):  # compile-time questions about a value's Python type
            return constexpr(fn(args[0] if _is_tile(args[0]) else _unwrap(args[0]), _unwrap(args[1])))
        if fn is py_builtins.print and any(_is_tile(a) for a in args):  # Triton's rule: tl.device_print
            return kernel_print(*args)
        if fn in _TILE_MIN_MAX and any(_is_tile(a) for a in list(args) + list(kwargs.values())):
            return _TILE_MIN_MAX[fn](*args, **kwargs)  # Python's min/max of tiles: tl.minimum/maximum (Triton's rule)
        if any(_is_tile(a) for a in list(args) + list(kwargs.values())):
            name = getattr(fn, "__name__", repr(fn))
            raise self.error(node, f"`{name}` is neither a tile builtin nor a @jit function, so it cannot take tile "
                                   "values (decorate it with @inductor_tile.jit)")
        result = fn(*[_unwrap(a) for a in args], **{k: _unwrap(v) for k, v in kwargs.items()})
        return constexpr(result) if isinstance(result, (int, float, bool)) else result

    def call_jit_function(self, node: ast.Call, fn: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """Inline a call to another @jit function with a fresh scope."""
        try:
            bound = fn.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise self.error(node, f"bad call to @jit function `{fn.__name__}`: {e}") from None
        bound.apply_defaults()
        scope = {}
        for name, value in bound.arguments.items():
            # a helper's tl.constexpr parameter given a runtime value keeps it (Triton's rule: only a kernel's
            # own parameters are specialized; tutorial 06 passes tiles to its helper's constexpr parameters)
            scope[name] = constexpr(value) if name in fn.constexpr_names and not _is_tile(value) else value
        callee = CodeGenerator(fn, self.semantic, scope)
        try:
            return callee.visit(fn.parse())
        except CompilationError as e:  # raised at this call, with the helper's own error (and position) as the cause
            e.with_traceback(None)  # the compiler's frames
            raise self.error(node, f"in `{fn.__name__}` ({e.filename}:{e.lineno}) called here: {e.message}",
                             kind=type(e)) from e


def generate_ttir(jit_fn: Any, specs: list[ArgSpec], builder: Any, num_warps: int = 4) -> Any:
    """Build the TTIR module of `jit_fn` specialized for `specs` (one per parameter), launched with
    `num_warps` (which `tl.extra.cuda.num_warps()` gives)."""
    from ...language.core import semantic_scope

    semantic = Semantic(builder, num_warps=num_warps)
    semantic.debug = os.environ.get("TILE_DEBUG") == "1" or jit_fn.debug
    runtime = [s for s in specs if s.kind != "constexpr"]
    arg_attrs = [{"tt.divisibility": 16} if s.divisible_by_16 else {} for s in runtime]
    handles = builder.create_function(jit_fn.kernel_name(specs), [s.type for s in runtime], arg_attrs)
    handle_of = dict(zip([s.name for s in runtime], handles))
    values: dict[str, Any] = {}
    for spec in specs:
        if spec.kind == "constexpr":
            values[spec.name] = constexpr(spec.value)
        elif spec.equal_to_1:
            values[spec.name] = constexpr(1)
        else:
            values[spec.name] = tensor(handle_of[spec.name], spec.type)
    with semantic_scope(semantic):
        # host TensorDescriptors and tuples are several specs each: rebuilt here as the kernel sees them
        kernel_values, scope, i = [values[s.name] for s in specs], {}, 0
        for name in jit_fn.arg_names:
            scope[name], i = unflatten(semantic, specs, kernel_values, i)
        generator = CodeGenerator(jit_fn, semantic, scope)
        generator.is_kernel = True
        generator.visit(jit_fn.parse())
    builder.create_return()
    return builder.module
