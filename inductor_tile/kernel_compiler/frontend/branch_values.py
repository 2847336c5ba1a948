"""Values out of branches on runtime values, as Triton makes them (mixed into the front end's CodeGenerator).

- A helper may `return` a value from a branch on a runtime value: the value is the `scf.if`'s results.
  Every `return` must give one type ("Inconsistent return types"); a path falling off the end of the
  function gives an undefined value of that type (`ub.poison`).
- `a if c else b` on a runtime scalar is an `scf.if` that runs only the chosen side (its stores and
  atomics too); numbers and tiles of different types meet in the type an operator would give them;
  pointers must be of one type (a const pointer never meets a plain one).
"""

from __future__ import annotations

import ast
from typing import Any

from xdsl.rewriter import InsertPoint

from ...language import dtypes as T
from ...language.core import _unwrap, tensor
from ...language.semantic import _is_literal


def _is_tile(x: Any) -> bool:
    return isinstance(x, tensor)


class BranchValues:
    """The CodeGenerator's rules for values leaving branches on runtime values (see the module docstring).
    Uses the generator's builder, semantic, error/unsupported and flatten_value/rebuild_value."""

    def dynamic_if_returning(self, node: ast.If, cond: tensor, branches: list, outcomes: list, at_tail: bool,
                             saved_ip: Any, before: dict, return_nodes: list | None = None) -> None:
        """A branch on a runtime value that returns a value on at least one path: the returned value is
        the `scf.if`'s results. A path that falls off the end of the function gives an undefined value
        (`ub.poison`) of the same type, as in Triton; paths returning different types are an error."""
        values = [value for returned, value in outcomes if returned]
        returns = [at for (returned, _), at in zip(outcomes, return_nodes or [None] * len(outcomes)) if returned]
        if not all(returned for returned, _ in outcomes) and not at_tail:
            raise self.unsupported(node, "a value returned on some paths of a branch on a runtime value while the "
                                         "others go on to more statements (return on every path, or move them)")
        kinds = [self.return_type(node, value) for value in values]
        if any(kind != kinds[0] for kind in kinds):
            other = next(i for i, kind in enumerate(kinds) if kind != kinds[0])  # the error points at its `return`
            raise self.error(returns[other] or node, f"Inconsistent return types: {kinds[0]} and {kinds[other]} "
                                                     "(every `return` of a function must give the same type)")
        template = values[0]
        parts = self.flatten_return(node, template)
        for (block, _), (returned, value) in zip(branches, outcomes):
            self.builder.insertion_point = InsertPoint.at_end(block)
            if returned:
                handles = [t.handle for t in self.flatten_return(node, value)]
            else:
                handles = [self.poison(t.type) for t in parts]
            self.builder.create_yield(handles)
        self.builder.insertion_point = saved_ip
        results = self.builder.insert_if(cond.handle, branches[0][0], branches[1][0], [t.type for t in parts])
        self.scope = before
        self.returned = True
        self.return_value = self.rebuild_return(template, [tensor(r, t.type) for r, t in zip(results, parts)])

    def poison(self, ty: Any) -> Any:
        """An undefined value of type `ty` (a block: the undefined scalar, splat)."""
        scalar = self.builder.create_poison(ty.scalar)
        return self.builder.create_splat(scalar, ty) if ty.is_block() else scalar

    def return_type(self, node: ast.AST, value: Any) -> str:
        """How a returned value's type is shown and compared ("void" for no value)."""
        if value is None:
            return "void"
        if isinstance(_unwrap(value), (tuple, list)):
            return "(" + ", ".join(self.return_type(node, v) for v in _unwrap(value)) + ")"
        return ", ".join(str(t.type) for t in self.flatten_value(node, value, "the returned value"))

    def flatten_return(self, node: ast.AST, value: Any) -> list[tensor]:
        if isinstance(_unwrap(value), (tuple, list)):
            return [t for v in _unwrap(value) for t in self.flatten_return(node, v)]
        return self.flatten_value(node, value, "the returned value")

    def rebuild_return(self, template: Any, tensors: list[tensor]) -> Any:
        if isinstance(_unwrap(template), (tuple, list)):
            parts = []
            for v in _unwrap(template):
                count = len(self.flatten_return(None, v))
                parts.append(self.rebuild_return(v, tensors[:count]))
                tensors = tensors[count:]
            return tuple(parts)
        return self.rebuild_value(template, tensors)

    def dynamic_if_exp(self, node: ast.IfExp, cond: tensor) -> Any:
        """`a if c else b` on a runtime scalar `c`: an `scf.if`, so only the chosen side runs (its stores and
        atomics too). Numbers and tiles of different types meet in the type an operator would give them."""
        saved_ip = self.builder.insertion_point
        blocks, values = [], []
        for arm in (node.body, node.orelse):
            blocks.append(self.builder.new_block([]))
            self.builder.insertion_point = InsertPoint.at_end(blocks[-1])
            values.append(self.visit(arm))
        if all(_unwrap(v) is None for v in values):  # for the side effects only
            for block in blocks:
                self.builder.insertion_point = InsertPoint.at_end(block)
                self.builder.create_yield([])
            self.builder.insertion_point = saved_ip
            self.builder.insert_if(cond.handle, blocks[0], blocks[1], [])
            return None
        self.check_ternary_types(node, *values)
        literal = [_is_literal(v) for v in values]
        types = [self.semantic.literal_dtype(v) if lit else v.dtype for v, lit in zip(values, literal)]
        ty = types[0] if types[0].is_ptr() else self.semantic.computation_type(types[0], literal[0], types[1],
                                                                                literal[1], False)
        shapes = [tuple(v.type.shape) for v in values if _is_tile(v) and v.type.is_block()]
        shape = shapes[0] if shapes else ()
        for other in shapes[1:]:
            shape = self.semantic.broadcast_shapes(shape, other)
        for block, value, lit in zip(blocks, values, literal):
            self.builder.insertion_point = InsertPoint.at_end(block)
            value = self.semantic.literal(value, ty) if lit else value if ty.is_ptr() else self.semantic.cast(value, ty)
            if shape:
                value = self.semantic.broadcast_to_shape(value, shape)
            self.builder.create_yield([value.handle])
        self.builder.insertion_point = saved_ip
        result_type = T.block_type(ty, shape) if shape else ty
        (result,) = self.builder.insert_if(cond.handle, blocks[0], blocks[1], [result_type])
        return tensor(result, result_type)

    def check_ternary_types(self, node: ast.IfExp, then_value: Any, else_value: Any) -> None:
        """The two sides of a ternary on a runtime value must be numbers or tiles, and pointers of one type."""
        values = (then_value, else_value)
        pointers = [v.dtype for v in values if _is_tile(v) and v.dtype.is_ptr()]
        mismatch = pointers and (len(pointers) == 1 or pointers[0] != pointers[1])  # pointers are never converted
        if mismatch or not all(_is_tile(v) or _is_literal(v) for v in values):
            then_type, else_type = (v.type if _is_tile(v) else type(_unwrap(v)).__name__ for v in values)
            raise self.error(node, f"Ternary expression with dynamic condition has inconsistent types {then_type} "
                                   f"and {else_type}")
