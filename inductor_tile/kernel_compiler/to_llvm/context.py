"""State shared by the lowering rules, and the rule registry.

A tile value lowers to one LLVM vector per thread: its slots (see `ir/layouts.py`). A
scalar lowers to an LLVM scalar. Pointers are i64 addresses. fp16/bf16 are `i16` bit
patterns on targets without native half arithmetic (`half.py` converts them).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

from llvmlite import ir
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, IntegerType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from ..ir.layouts import LayoutMap, layout_of_encoding
from ..ir.tt_types import PointerType
from .compact_constants import IntVectorConstant, SplatConstant, vector_constant
from .target import Target

I1, I8, I16, I32, I64 = (ir.IntType(w) for w in (1, 8, 16, 32, 64))

#: longer element shuffles go through a stack array on the CPU (LoweringContext.shuffle_through_memory)
MAX_REGISTER_SHUFFLE = 4096
F32, F64 = ir.FloatType(), ir.DoubleType()

Rule = Callable[["LoweringContext", Operation], None]
RULES: dict[str, Rule] = {}


def lowering(*op_names: str) -> Callable[[Rule], Rule]:
    """Register the lowering rule of one or more ops (by MLIR op name)."""

    def register(fn: Rule) -> Rule:
        for name in op_names:
            assert name not in RULES, f"two lowering rules for {name}"
            RULES[name] = fn
        return fn

    return register


class LoweringError(Exception):
    """A TTGIR op has no lowering, or its lowering failed; names the op."""


def float_kind(ty: Attribute) -> str | None:
    """'f16' | 'bf16' | 'f32' | 'f64' for float element types, else None."""
    ty = ty.element_type if isinstance(ty, TensorType) else ty
    if isinstance(ty, Float16Type):
        return "f16"
    if isinstance(ty, BFloat16Type):
        return "bf16"
    if isinstance(ty, Float32Type):
        return "f32"
    if isinstance(ty, Float64Type):
        return "f64"
    return None


def element_of(ty: Attribute) -> Attribute:
    return ty.element_type if isinstance(ty, TensorType) else ty


@dataclass
class LoweringContext:
    target: Target
    module: ir.Module
    function: ir.Function
    builder: ir.IRBuilder
    num_warps: int
    axis_info: Any = None  # AxisInfo per SSA value, or None when the analysis did not run
    values: dict[SSAValue, ir.Value] = field(default_factory=dict)
    shared_bytes: int = 0  # dynamic shared memory the kernel needs (the largest exchange)
    scalar_lanes: int = 0  # >0 while a combine region runs on vectors: scalar types lower to this many lanes
    stack_arrays: dict[tuple, ir.Value] = field(default_factory=dict)  # see stack_array
    paired_results: dict[Any, ir.Value] = field(default_factory=dict)  # an op's result computed with another's

    # --- values -----------------------------------------------------------------------
    def get(self, ssa: SSAValue) -> ir.Value:
        try:
            return self.values[ssa]
        except KeyError:
            raise LoweringError(f"value {ssa} used before it was lowered") from None

    def set(self, ssa: SSAValue, value: ir.Value) -> None:
        self.values[ssa] = value

    # --- threads -----------------------------------------------------------------------
    @property
    def single_thread(self) -> bool:
        """True when one thread holds every element (the CPU): layout conversions are in-register."""
        return self.target.warp_size == 1 and self.num_warps == 1

    def contract_flags(self, value: ir.Value) -> tuple[str, ...]:
        """Fast-math flags for an f32/f64 add, subtract or multiply of `value`: `contract` (may fuse
        into an FMA) where the target allows it (Target.float_contract); half types keep one rounding
        per op, as eager's separate ops do."""
        ty = value.type.element if isinstance(value.type, ir.VectorType) else value.type
        return ("contract",) if self.target.float_contract and isinstance(ty, (ir.FloatType, ir.DoubleType)) else ()

    # --- types --------------------------------------------------------------------------
    def scalar_type(self, ty: Attribute) -> ir.Type:
        """The LLVM type of one element."""
        if isinstance(ty, PointerType):
            return I64
        if isinstance(ty, IntegerType):
            return ir.IntType(ty.width.data)
        kind = float_kind(ty)
        if kind == "f32":
            return F32
        if kind == "f64":
            return F64
        if kind in ("f16", "bf16"):
            return I16 if self.soft_half(kind) else ir.HalfType()
        raise LoweringError(f"no LLVM type for {ty}")

    def memory_type(self, ty: Attribute) -> ir.Type:
        """The LLVM type of one element in memory (i1 is stored as a byte)."""
        scalar = self.scalar_type(ty)
        return I8 if scalar == I1 else scalar

    def layout_map(self, ty: TensorType) -> LayoutMap:
        if not isinstance(ty.encoding, Attribute) or ty.encoding == _NO_ENCODING:
            raise LoweringError(f"tensor {ty} has no layout: run the TTGIR passes before lowering")
        return _layout_map(ty.encoding, tuple(ty.get_shape()))

    def llvm_type(self, ty: Attribute) -> ir.Type:
        if isinstance(ty, TensorType):
            return ir.VectorType(self.scalar_type(ty.element_type), self.layout_map(ty).num_slots)
        if self.scalar_lanes:
            return ir.VectorType(self.scalar_type(ty), self.scalar_lanes)
        return self.scalar_type(ty)

    def soft_half(self, kind: str | None) -> bool:
        """True for a half kind the target has no arithmetic for (kept as i16 bits, computed in f32)."""
        return kind in ("f16", "bf16") and kind not in self.target.native_half_kinds

    # --- small helpers used by many rules ------------------------------------------------------
    def splat(self, scalar: ir.Value, n: int) -> ir.Value:
        vec_type = ir.VectorType(scalar.type, n)
        if isinstance(scalar, ir.Constant):
            return vector_constant(vec_type, [scalar] * n)
        one = self.builder.insert_element(SplatConstant(vec_type, ir.Constant(scalar.type, None)), scalar,
                                          ir.Constant(I32, 0))
        return self.builder.shuffle_vector(one, one, SplatConstant(ir.VectorType(I32, n), 0))

    def shuffle(self, vector: ir.Value, indices: list[int]) -> ir.Value:
        """New vector whose element i is vector[indices[i]] (returns `vector` for the identity)."""
        count = vector.type.count
        if indices == list(range(count)):
            return vector
        if isinstance(vector, ir.Constant) and isinstance(vector.constant, list) \
                and all(0 <= i < 2 * count for i in indices):  # folded here (the mask reads `vector` twice)
            elements = vector.constant
            return vector_constant(ir.VectorType(vector.type.element, len(indices)),
                                   [elements[i % count] for i in indices])
        if self.single_thread and len(indices) > MAX_REGISTER_SHUFFLE:
            return self.shuffle_through_memory(vector, indices)
        mask = IntVectorConstant(ir.VectorType(I32, len(indices)), indices)
        return self.builder.shuffle_vector(vector, vector, mask)

    def shuffle_through_memory(self, vector: ir.Value, indices: list[int]) -> ir.Value:
        """`shuffle` for long vectors: store the vector in a stack array, copy element indices[i] to i in a
        loop over a constant index table, load the result. Code size and compile time stay constant;
        LLVM's code generation of a shufflevector grows with its length (a 16384-element one took
        tens of seconds)."""
        b = self.builder
        count = len(indices)
        source = self.vector_to_stack(vector, 0)
        result = self.stack_array(source.type.pointee.element, count, 1)
        table_type = ir.ArrayType(I32, count)
        table = ir.GlobalVariable(self.module, table_type, name=self.module.get_unique_name("shuffle_indices"))
        table.global_constant, table.linkage, table.initializer = True, "private", ir.Constant(table_type, indices)
        zero = ir.Constant(I32, 0)

        def move(i: ir.Value) -> None:
            index = b.load(b.gep(table, [zero, i], inbounds=True))
            b.store(b.load(b.gep(source, [zero, index], inbounds=True)), b.gep(result, [zero, i], inbounds=True))

        self.counted_loop(count, move)
        return self.vector_from_stack(result, vector.type.element)

    def vector_to_stack(self, vector: ir.Value, slot: int) -> ir.Value:
        """A stack array (see stack_array) holding `vector`'s elements; i1 elements as bytes (an i1 vector in
        memory would be bit-packed)."""
        memory = I8 if vector.type.element == I1 else vector.type.element
        if vector.type.element == I1:
            vector = self.builder.zext(vector, ir.VectorType(I8, vector.type.count))
        array = self.stack_array(memory, vector.type.count, slot)
        self.builder.store(vector, self.builder.bitcast(array, vector.type.as_pointer()), align=_align(memory))
        return array

    def vector_from_stack(self, array: ir.Value, element: ir.Type) -> ir.Value:
        """The vector of elements `element` a stack array holds (the inverse of vector_to_stack)."""
        memory, count = array.type.pointee.element, array.type.pointee.count
        out = self.builder.load(self.builder.bitcast(array, ir.VectorType(memory, count).as_pointer()),
                                align=_align(memory))
        return self.builder.trunc(out, ir.VectorType(I1, count)) if element == I1 else out

    def counted_loop(self, count: int, body: Callable[[ir.Value], None]) -> None:
        """Emit `for i in range(count): body(i)` (i an i32) as an LLVM loop; the builder ends after it."""
        b = self.builder
        entry, loop, done = b.block, b.append_basic_block("elements.loop"), b.append_basic_block("elements.done")
        b.branch(loop)
        b.position_at_end(loop)
        i = b.phi(I32)
        i.add_incoming(ir.Constant(I32, 0), entry)
        body(i)
        following = b.add(i, ir.Constant(I32, 1))
        i.add_incoming(following, b.block)
        b.cbranch(b.icmp_unsigned("<", following, ir.Constant(I32, count)), loop, done)
        b.position_at_end(done)

    def stack_array(self, element: ir.Type, count: int, slot: int) -> ir.Value:
        """A stack array of `count` elements allocated once in the entry block and shared by every user of
        the same (element, count, slot): the kernel's stack stays bounded however many use it."""
        key = (str(element), count, slot)
        if key not in self.stack_arrays:
            with self.builder.goto_entry_block():
                self.stack_arrays[key] = self.builder.alloca(ir.ArrayType(element, count))
        return self.stack_arrays[key]

    def map_elements(self, vector: ir.Value, fn) -> ir.Value:
        """Apply a scalar function to every element of a vector (or to a scalar)."""
        return map_elements(self.builder, vector, fn)

    def intrinsic(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        existing = self.module.globals.get(name)
        if existing is not None:
            return existing
        return ir.Function(self.module, ir.FunctionType(ret, args), name)


_NO_ENCODING = TensorType(IntegerType(1), [1]).encoding


def map_elements(builder: ir.IRBuilder, vector: ir.Value, fn) -> ir.Value:
    """Apply a scalar function to every element of a vector (or to a scalar)."""
    if not isinstance(vector.type, ir.VectorType):
        return fn(vector)
    out = vector
    for i in range(vector.type.count):
        index = ir.Constant(I32, i)
        out = builder.insert_element(out, fn(builder.extract_element(vector, index)), index)
    return out


def map_pairs(builder: ir.IRBuilder, x: ir.Value, y: ir.Value, fn) -> ir.Value:
    """Apply a scalar function of two values to every pair of elements of two vectors (or to two scalars)."""
    if not isinstance(x.type, ir.VectorType):
        return fn(x, y)
    out = x
    for i in range(x.type.count):
        index = ir.Constant(I32, i)
        out = builder.insert_element(out, fn(builder.extract_element(x, index), builder.extract_element(y, index)),
                                     index)
    return out


def _align(memory: ir.Type) -> int:
    """The alignment of a stack array of `memory` elements (not the larger one of a vector of them)."""
    return 8 if isinstance(memory, ir.PointerType) else byte_size(memory)


def byte_size(ty: ir.Type) -> int:
    """Bytes one element of LLVM type `ty` occupies in memory (i1 counts as a byte)."""
    if isinstance(ty, ir.IntType):
        return max(1, ty.width // 8)
    return {"float": 4, "double": 8, "half": 2, "bfloat": 2}[str(ty)]


def guarded(builder: ir.IRBuilder, condition: ir.Value | None, make, fallback: ir.Value | None = None):
    """`make()` where `condition` holds (unconditionally if None), else `fallback`, merged by a phi.

    With `fallback` None, `make` is run for its effect only (a masked store) and None is returned.
    """
    if condition is None:
        return make()
    with builder.if_else(condition) as (then, otherwise):
        with then:
            value = make()
            then_block = builder.block
        with otherwise:
            else_block = builder.block
    if fallback is None:
        return None
    phi = builder.phi(fallback.type)
    phi.add_incoming(value, then_block)
    phi.add_incoming(fallback, else_block)
    return phi


def lane_by_lane_gather(builder: ir.IRBuilder, addresses: ir.Value, mask: ir.Value | None, other: ir.Value,
                        pointer_type: ir.PointerType) -> ir.Value:
    """Load each lane of a vector from its own address (`pointer_type`'s address space), masked lanes
    keeping `other`'s value: the GPU targets' gather."""
    out = other
    element = other.type.element
    for i in range(other.type.count):
        index = ir.Constant(ir.IntType(32), i)
        pointer = builder.inttoptr(builder.extract_element(addresses, index), pointer_type)
        lane_mask = builder.extract_element(mask, index) if mask is not None else None
        value = guarded(builder, lane_mask, lambda: builder.load(pointer, typ=element),
                        builder.extract_element(other, index))
        out = builder.insert_element(out, value, index)
    return out


@functools.lru_cache(maxsize=4096)
def _layout_map(encoding: Attribute, shape: tuple[int, ...]) -> LayoutMap:
    """One LayoutMap per layout and shape (its slot indices are computed once, on first use)."""
    return LayoutMap(layout_of_encoding(encoding), shape)


def intrinsic_suffix(ty: ir.Type) -> str:
    """LLVM's overload suffix: f32, v8f32, i64, v4i1."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{intrinsic_suffix(ty.element)}"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    return {"float": "f32", "double": "f64", "half": "f16", "bfloat": "bf16"}[str(ty)]


def constant_like(ty: ir.Type, value: int | float) -> ir.Constant:
    """A scalar or splat-vector constant of type `ty`."""
    if isinstance(ty, ir.VectorType):
        return vector_constant(ty, [ir.Constant(ty.element, value)] * ty.count)
    return ir.Constant(ty, value)


def lower_block(ctx: LoweringContext, block) -> list[ir.Value]:
    """Lower a block's ops in order; return the lowered operands of its terminating scf.yield
    or scf.condition (the condition first), if any."""
    for op in block.ops:
        if op.name in ("scf.yield", "scf.condition"):
            return [ctx.get(v) for v in op.operands]
        rule = RULES.get(op.name)
        if rule is None:
            raise LoweringError(f"no LLVM lowering for `{op.name}`")
        try:
            rule(ctx, op)
        except LoweringError:
            raise
        except Exception as e:
            raise LoweringError(f"lowering `{op.name}` failed: {type(e).__name__}: {e}") from e
    return []
