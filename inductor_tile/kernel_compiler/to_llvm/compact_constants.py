"""Vector constants that llvmlite makes and prints in time independent of their length.

llvmlite's `ir.Constant` of a vector type wraps every element in a Constant of its own when made and
prints them one by one (`<float 0x0, float 0x0, ...>`): a 256-slot tile's splat of 0.0 is 13 KB of
text, and on the suite's kernels such constants were 78% of the LLVM IR text, their making and
printing the largest part of lowering (2026-11-27). Here:

- `SplatConstant`: every element the same, printed `splat (float 1.5)` (LLVM >= 19's syntax);
- `IntVectorConstant`: integers from Python ints (shuffle masks, slot index tables), printed by one join;
- `compact_module(module)`: swaps every plain vector constant operand of a module's instructions for
  one of these before the module is printed, whichever rule made it.

Both keep `.constant` (the list of element Constants) for rules that read it.
"""

from __future__ import annotations

import struct

from llvmlite import ir


class SplatConstant(ir.Constant):
    """A vector constant whose elements are all `value` (a Python number or a scalar ir.Constant)."""

    def __init__(self, typ: ir.VectorType, value):  # no super().__init__: that wraps every element
        self.type = typ
        self.element = value if isinstance(value, ir.Constant) else ir.Constant(typ.element, value)

    @property
    def constant(self) -> list[ir.Constant]:
        return [self.element] * self.type.count

    def _get_reference(self) -> str:
        return f"splat ({self.element.type} {self.element.get_reference()})"


class IntVectorConstant(ir.Constant):
    """A vector constant of integers given as Python ints (or bools)."""

    def __init__(self, typ: ir.VectorType, values: list[int]):
        self.type = typ
        self.values = list(values)

    @property
    def constant(self) -> list[ir.Constant]:
        return [ir.Constant(self.type.element, v) for v in self.values]

    def _get_reference(self) -> str:
        prefix = f"{self.type.element} "
        return "<" + ", ".join(prefix + (("true" if v else "false") if isinstance(v, bool) else str(v))
                               for v in self.values) + ">"


def vector_constant(typ: ir.VectorType, values: list) -> ir.Constant:
    """The compact constant of vector type `typ` holding `values` (Python numbers or scalar Constants)."""
    first = values[0] if values else None
    if values and isinstance(_raw(first), (int, float)) and all(v is first for v in values):
        return SplatConstant(typ, first)
    raw = [_raw(v) for v in values]
    if not raw or not all(isinstance(v, (int, float)) for v in raw):  # undef, constant expressions: as llvmlite
        return ir.Constant(typ, values)
    key = _exact(raw[0])
    if all(_exact(v) == key for v in raw):
        return SplatConstant(typ, raw[0])
    if isinstance(typ.element, ir.IntType) and all(isinstance(v, int) for v in raw):
        return IntVectorConstant(typ, raw)
    return ir.Constant(typ, values)


def compact(value: ir.Value) -> ir.Value:
    """`value`, or its compact form if it is a plain vector ir.Constant with a list of elements."""
    if type(value) is ir.Constant and isinstance(value.type, ir.VectorType) and isinstance(value.constant, list):
        return vector_constant(value.type, value.constant)
    return value


def compact_module(module: ir.Module) -> None:
    """Replace the plain vector constants among the operands of `module`'s instructions by compact ones."""
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                operands = instruction.operands
                swapped = [compact(op) for op in operands]
                if any(new is not old for new, old in zip(swapped, operands)):
                    instruction.operands = swapped if isinstance(operands, list) else type(operands)(swapped)
                if isinstance(instruction, ir.PhiInstr):
                    instruction.incomings = [(compact(v), b) for v, b in instruction.incomings]
                instruction._clear_string_cache()  # (llvmlite caches the text of a value once printed)
            block._clear_string_cache()
        function._clear_string_cache()


def _raw(v):
    return v.constant if isinstance(v, ir.Constant) else v


def _exact(v: int | float) -> tuple:
    """A key equal for equal elements only: 0.0 and -0.0 differ, True and 1 differ, NaNs by their bits."""
    if isinstance(v, float):
        return (float, struct.pack("<d", v))
    return (type(v), v)
