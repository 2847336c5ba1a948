"""Lowering of the element-moving ops: tt.trans, tt.flip, tt.join, tt.split.

Each op says, for a result element at coordinates `c`, where its value lives in a buffer
that holds the operands one after the other, row-major (`source_of(c)`). The same
function serves both ways of moving data:
- one thread holds the whole tile (the CPU): evaluated on Python ints per result slot, it
  gives one static `shufflevector`;
- GPU targets: evaluated on i32 vectors (this thread's result coordinates, `Lanes`), it
  gives the shared-memory offsets each thread reads after every thread has stored its
  operand slots.
"""

from __future__ import annotations

from typing import Callable

from llvmlite import ir
from xdsl.ir import Operation

from ..ir.layouts import LayoutMap
from ..ir.tt_types import numel as _numel
from .context import I1, I8, I32, LoweringContext, LoweringError, byte_size, lowering
from .rules_tensor import index_vectors


class Lanes:
    """An i32 vector (one entry per slot) with the integer arithmetic `source_of` functions use."""

    def __init__(self, builder: ir.IRBuilder, value: ir.Value):
        self.builder, self.value = builder, value

    def _lift(self, other) -> ir.Value:
        if isinstance(other, Lanes):
            return other.value
        count = self.value.type.count
        return ir.Constant(self.value.type, [int(other)] * count)

    def __add__(self, other) -> "Lanes":
        return Lanes(self.builder, self.builder.add(self.value, self._lift(other)))

    __radd__ = __add__

    def __mul__(self, other) -> "Lanes":
        return Lanes(self.builder, self.builder.mul(self.value, self._lift(other)))

    __rmul__ = __mul__

    def __sub__(self, other) -> "Lanes":
        return Lanes(self.builder, self.builder.sub(self.value, self._lift(other)))

    def __rsub__(self, other) -> "Lanes":
        return Lanes(self.builder, self.builder.sub(self._lift(other), self.value))


def linear(coords, shape: tuple[int, ...]):
    """Row-major linear index of `coords` (ints or Lanes) in `shape`."""
    out = coords[0]
    for c, s in zip(coords[1:], shape[1:]):
        out = out * s + c
    return out


SourceOf = Callable[[list], object]


def move_elements(ctx: LoweringContext, sources: list[tuple[ir.Value, LayoutMap]], dst: LayoutMap,
                  source_of: SourceOf) -> ir.Value:
    """The result slots of layout `dst`: slot with coordinates c takes buffer element `source_of(c)`, where the
    buffer is the sources' elements, source k from offset k * numel(source 0), each row-major."""
    numel = _numel(sources[0][1].shape)
    if ctx.single_thread:
        where: dict[int, int] = {}
        for k, (value, lmap) in enumerate(sources):
            for s in range(lmap.num_slots):
                where.setdefault(k * numel + linear(lmap.index(s), lmap.shape), k * value.type.count + s)
        perm = []
        for s in range(dst.num_slots):
            key = source_of(list(dst.index(s)))
            if key not in where:
                raise LoweringError(f"no slot holds buffer element {key}")
            perm.append(where[key])
        if len(sources) == 1:
            return ctx.shuffle(sources[0][0], perm)
        first, second = sources[0][0], sources[1][0]
        if first.type != second.type:
            raise LoweringError("operands of an element move hold different slot counts")
        mask = ir.Constant(ir.VectorType(I32, len(perm)), perm)
        return ctx.builder.shuffle_vector(first, second, mask)
    return _through_shared_memory(ctx, sources, dst, source_of, numel)


def _through_shared_memory(ctx: LoweringContext, sources, dst: LayoutMap, source_of: SourceOf, numel: int) -> ir.Value:
    from .shared import linear_indices, load_slots, store_slots

    b = ctx.builder
    element = sources[0][0].type.element
    total = numel * len(sources)
    ctx.shared_bytes = max(ctx.shared_bytes, total * byte_size(I8 if element == I1 else element))
    base = ctx.target.shared_memory(ctx.module, b, total)
    ctx.target.barrier(b)
    for k, (value, lmap) in enumerate(sources):
        offsets = linear_indices(ctx, lmap, lmap.shape)
        if k:
            offsets = b.add(offsets, ir.Constant(offsets.type, [k * numel] * offsets.type.count))
        store_slots(ctx, base, value, offsets)
    ctx.target.barrier(b)
    coords = [Lanes(b, v) for v in index_vectors(ctx, dst)]
    offsets = source_of(coords)
    return load_slots(ctx, base, offsets.value, element)


def _operand(ctx: LoweringContext, op: Operation, index: int = 0) -> tuple[ir.Value, LayoutMap]:
    value = op.operands[index]
    return ctx.get(value), ctx.layout_map(value.type)


@lowering("tt.trans")
def lower_trans(ctx: LoweringContext, op: Operation) -> None:
    value, src = _operand(ctx, op)
    order = op.permutation
    inverse = [order.index(d) for d in range(len(order))]  # operand dim d is result dim inverse[d]
    dst = ctx.layout_map(op.results[0].type)
    ctx.set(op.results[0], move_elements(ctx, [(value, src)], dst,
                                         lambda c: linear([c[inverse[d]] for d in range(len(order))], src.shape)))


@lowering("tt.flip")
def lower_flip(ctx: LoweringContext, op: Operation) -> None:
    value, src = _operand(ctx, op)
    axis = op.axis.value.data
    size = src.shape[axis]
    dst = ctx.layout_map(op.results[0].type)

    def source_of(c):
        c = list(c)
        c[axis] = (size - 1) - c[axis]
        return linear(c, src.shape)

    ctx.set(op.results[0], move_elements(ctx, [(value, src)], dst, source_of))


@lowering("tt.join")
def lower_join(ctx: LoweringContext, op: Operation) -> None:
    first, second = _operand(ctx, op, 0), _operand(ctx, op, 1)
    shape = first[1].shape
    dst = ctx.layout_map(op.results[0].type)
    numel = _numel(shape)
    ctx.set(op.results[0], move_elements(ctx, [first, second], dst,
                                         lambda c: c[-1] * numel + linear(c[:-1], shape)))


@lowering("tt.split")
def lower_split(ctx: LoweringContext, op: Operation) -> None:
    value, src = _operand(ctx, op)
    for k, result in enumerate(op.results):
        dst = ctx.layout_map(result.type)
        ctx.set(result, move_elements(ctx, [(value, src)], dst, lambda c, k=k: linear(list(c) + [k], src.shape)))

