"""Constant tables of the AMD target's float64 math (amd_math64.py and its helpers): arrays in the module's
constant memory, and functions evaluated by Taylor pieces whose coefficients are such a table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from .scalar_code import F64, ScalarFunction, Value

I32 = ir.IntType(32)


def constant_table(module: ir.Module, name: str, element: ir.Type, values: list) -> ir.GlobalVariable:
    """A constant array of the module, defined once (AMDGPU's constant address space 4: a vector constant
    indexed at run time would be copied to scratch memory first)."""
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    array = ir.ArrayType(element, len(values))
    table = ir.GlobalVariable(module, array, name, addrspace=4 if module.triple.startswith("amdgcn") else 0)
    table.global_constant = True
    table.linkage = "internal"
    table.align = 8
    table.initializer = ir.Constant(array, values)
    return table


def load_entry(b: ir.IRBuilder, table: ir.GlobalVariable, index: ir.Value) -> ir.Value:
    """table[index] (i32 index)."""
    pointer = b.gep(table, [ir.Constant(I32, 0), index], inbounds=True, source_etype=table.value_type)
    return b.load(pointer, typ=table.value_type.element, align=8)


@dataclass(frozen=True)
class TaylorPieces:
    """A function as `count` Taylor polynomials of `terms` coefficients about the centers first_center +
    i width (each used within width / 2 of its center); `coefficients()` gives them, piece after piece."""

    name: str
    first_center: float
    width: float
    count: int
    terms: int
    coefficients: Callable[[], tuple[float, ...]]

    @property
    def end(self) -> float:
        """Where the last piece ends."""
        return self.first_center + self.width * (self.count - 0.5)

    def evaluate(self, f: ScalarFunction, x: Value) -> Value:
        """The function at x (x within the pieces; the caller clamps it)."""
        b = f.b
        index = b.fptosi(f.call("rint", (x - self.first_center) * (1 / self.width)).value, I32)
        index = b.select(b.icmp_signed("<", index, ir.Constant(I32, 0)), ir.Constant(I32, 0), index)
        last = ir.Constant(I32, self.count - 1)
        index = b.select(b.icmp_signed(">", index, last), last, index)
        center = Value(f, b.sitofp(index, F64)) * self.width + self.first_center
        h = x - center
        table = constant_table(f.module, f"__tile_taylor_{self.name}", F64, list(self.coefficients()))
        first = b.mul(index, ir.Constant(I32, self.terms))

        def coefficient(k: int) -> Value:
            return Value(f, load_entry(b, table, b.add(first, ir.Constant(I32, k))))

        total = coefficient(self.terms - 1)
        for k in range(self.terms - 2, -1, -1):
            total = f.call("fma", total, h, coefficient(k))
        return total
