"""sanitize: run-time checks of every memory access and integer division (TILE_SANITIZE=1).

Runs on the front end's TTIR, before optimization, when the kernel is compiled sanitized. The
kernel gets hidden arguments after its own: for each pointer argument the bounds of the tensor's
whole storage in bytes, `lo` and `hi` (i64, [lo, hi)), then one `!tt.ptr<i64>` error record.
Before each access it adds

    bad = (address < lo) | (address > hi - element bytes)      [& mask]
    tt.sanitizer_report bad, element offsets from the argument, record {kind, loc, arg, site}

where lo/hi are those of the pointer argument the access's pointer was derived from, traced
back through addptr, splat, broadcast, expand_dims, reshape, permutes, selects and loop-carried
values. A tile `addptr(splat(p), offsets)` is checked on its offsets instead, against the bounds
turned into element offsets from p once per access (cheaper than i64 addresses). Where the
trace does not end at one argument, the address must lie in some tensor's storage (`arg = -1`;
the report then gives the address). The access then runs under `mask & ~bad`, so a sanitized
kernel reports a bad access instead of making it (and crashing); tt.atomic_cas has no mask and
is only reported. Before each integer division or remainder whose divisor is not a nonzero
constant it adds `bad = divisor == 0`, restricted to lanes where the masked loads the divisor
was computed from were enabled (a masked-off lane holds `other`, often 0, and its quotient is
never used), and to lanes whose quotient is kept when every use of it is a `tl.where` on a condition
computed before it (`tl.where(d != 0, n // d, 0)`). Each report carries the checked op's source location (`loc`, "file:line:col" with a
1-based column, from the location the front end gives every op). runtime/sanitizer.py passes the
hidden arguments and reads the record after the launch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (ArrayAttr, DictionaryAttr, FileLineColLoc, IntegerAttr, IntegerType, ModuleOp, i1,
                                   i32, i64)
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ..analysis.axis_info_rules import element_bytes
from ..ir import arith_ext, tt
from ..ir.tt_memory import AtomicCASOp, AtomicRMWOp, LoadOp, StoreOp
from ..ir.tt_sanitize import PtrToIntOp, SanitizerReportOp
from ..ir.tt_types import PointerType, element_of, like, shape_of, with_shape
from .layout_constraints import functions

ACCESS_OPS = (LoadOp, StoreOp, AtomicRMWOp, AtomicCASOp)
DIVISIONS = {"arith.divsi": "div", "arith.divui": "div", "arith.remsi": "rem", "arith.remui": "rem"}
# ops whose pointer results come from their pointer operands unchanged in address
_POINTER_PASS_THROUGH = {"tt.splat", "tt.broadcast", "tt.expand_dims", "tt.reshape", "tt.bitcast", "tt.trans",
                         "tt.flip", "tt.join", "tt.split", "ttg.convert_layout"}
_PENDING = object()  # a loop-carried value whose trace is under way: neutral in a join


@dataclass(frozen=True)
class SanitizePass(ModulePass):
    """Add bounds checks to loads, stores and atomics and zero checks to integer divisions."""

    name = "sanitize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func_op in functions(op):
            _Instrumenter(func_op).run()


def _join(a: Any, b: Any) -> Any:
    if a is _PENDING:
        return b
    if b is _PENDING or a == b:
        return a
    return None


class _Instrumenter:
    def __init__(self, func_op: func.FuncOp):
        self.func_op = func_op
        block = func_op.body.block
        self.pointer_args = [arg for arg in block.args if isinstance(arg.type, PointerType)]
        self.bounds: list[tuple[SSAValue, SSAValue]] = []
        for _ in self.pointer_args:
            lo = block.insert_arg(i64, len(block.args))
            hi = block.insert_arg(i64, len(block.args))
            self.bounds.append((lo, hi))
        self.record = block.insert_arg(PointerType(i64), len(block.args))
        hidden = 2 * len(self.pointer_args) + 1
        if func_op.arg_attrs is not None:
            func_op.arg_attrs = ArrayAttr(list(func_op.arg_attrs.data) + [DictionaryAttr({})] * hidden)
        func_op.update_function_type()
        self.sites = 0
        self.anchor: Operation | None = None

    def run(self) -> None:
        for op in list(self.func_op.body.walk()):
            location = getattr(op, "location", None)
            loc = (f"{location.filename.data}:{location.line.data}:{location.column.data + 1}"
                   if isinstance(location, FileLineColLoc) else "")
            if isinstance(op, ACCESS_OPS):
                self._check_access(op, loc)
            elif op.name in DIVISIONS and isinstance(element_of(op.results[0].type), IntegerType):
                self._check_division(op, loc)

    # --- emitting ops before the checked op ------------------------------------------
    def _emit(self, op: Operation) -> SSAValue:
        Rewriter.insert_op(op, InsertPoint.before(self.anchor))
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def _constant(self, value: int, ty: Attribute, shape: tuple[int, ...]) -> SSAValue:
        scalar = self._emit(arith.ConstantOp(IntegerAttr(value, ty)))
        return self._splat(scalar, shape)

    def _splat(self, scalar: SSAValue, shape: tuple[int, ...]) -> SSAValue:
        return self._emit(tt.SplatOp(scalar, with_shape(scalar.type, shape))) if shape else scalar

    def _report(self, bad: SSAValue, value: SSAValue, kind: str, loc: str, arg: int) -> None:
        self._emit(SanitizerReportOp(bad, value, self.record, self.sites, kind, loc, arg))
        self.sites += 1

    # --- memory accesses -----------------------------------------------------------------
    def _check_access(self, op: Operation, loc: str) -> None:
        self.anchor = op
        ptr = op.ptr
        shape = shape_of(ptr.type)
        size = element_bytes(element_of(ptr.type).pointee)
        source = self._pointer_source(ptr, set())
        arg = self.pointer_args.index(source) if isinstance(source, BlockArgument) else -1
        offsets = _tile_offsets(ptr) if arg >= 0 else None
        address = self._emit(PtrToIntOp(ptr)) if offsets is None else None
        candidates = [arg] if arg >= 0 else range(len(self.pointer_args))
        bad = None
        for index in candidates:  # outside this tensor's storage (and, with arg -1, every other's)
            lo, hi = self.bounds[index]
            if offsets is not None:
                outside = self._outside_by_offset(offsets, lo, hi, size)
            else:
                limit = self._emit(arith.SubiOp(hi, self._constant(size, i64, ())))
                below = self._emit(arith_ext.CmpiOp(address, self._splat(lo, shape), "slt"))
                above = self._emit(arith_ext.CmpiOp(address, self._splat(limit, shape), "sgt"))
                outside = self._emit(arith.OrIOp(below, above))
            bad = outside if bad is None else self._emit(arith.AndIOp(bad, outside))
        if bad is None:  # no pointer arguments at all: every access is outside
            bad = self._constant(1, i1, shape)
        mask = getattr(op, "mask", None)
        reported = self._emit(arith.AndIOp(bad, mask)) if mask is not None else bad
        value = address if arg < 0 else self._element_offsets(ptr, offsets, address, self.pointer_args[arg], size)
        self._report(reported, value, op.name.split(".")[1], loc, arg)
        if not isinstance(op, AtomicCASOp):  # the access skips the bad lanes, so it cannot crash the kernel
            inside = self._emit(arith.XOrIOp(bad, self._constant(1, i1, shape)))
            _replace_mask(op, self._emit(arith.AndIOp(inside, mask)) if mask is not None else inside)

    def _outside_by_offset(self, tile: tuple[SSAValue, SSAValue], lo: SSAValue, hi: SSAValue, size: int) -> SSAValue:
        """For `ptr = addptr(splat(p), offsets)` (the usual tile of pointers): offsets outside
        [ceil((lo - p) / size), floor((hi - size - p) / size)], compared in the offsets' own
        integer type (cheaper than comparing addresses)."""
        scalar, offsets = tile
        width = element_of(offsets.type)
        shift = self._constant(size.bit_length() - 1, i64, ())
        start = self._emit(PtrToIntOp(scalar))
        first = self._emit(arith.SubiOp(lo, start))  # ceil(x / size) = (x + size - 1) >> log2(size)
        first = self._emit(arith.ShRSIOp(self._emit(arith.AddiOp(first, self._constant(size - 1, i64, ()))), shift))
        last = self._emit(arith.SubiOp(self._emit(arith.SubiOp(hi, self._constant(size, i64, ()))), start))
        last = self._emit(arith.ShRSIOp(last, shift))
        if width == i32:  # bounds beyond the i32 range: every i32 offset is on that side of them
            low, high = self._constant(-(2**31), i64, ()), self._constant(2**31 - 1, i64, ())
            first, last = (self._emit(arith_ext.TruncIOp(self._emit(arith.MinSIOp(self._emit(arith.MaxSIOp(b, low)),
                                                                                   high)), i32))
                           for b in (first, last))
        shape = shape_of(offsets.type)
        below = self._emit(arith_ext.CmpiOp(offsets, self._splat(first, shape), "slt"))
        above = self._emit(arith_ext.CmpiOp(offsets, self._splat(last, shape), "sgt"))
        return self._emit(arith.OrIOp(below, above))

    def _element_offsets(self, ptr: SSAValue, tile: tuple[SSAValue, SSAValue] | None, address: SSAValue | None,
                         arg: SSAValue, size: int) -> SSAValue:
        """i64 of `ptr`'s shape: each pointer's element offset from the argument `arg` (what the
        report shows; used only where a violation is recorded, so LLVM computes it there)."""
        shift = self._constant(size.bit_length() - 1, i64, ())
        origin = self._emit(PtrToIntOp(arg))
        shape = shape_of(ptr.type)
        if tile is None:
            delta = self._emit(arith.SubiOp(address, self._splat(origin, shape)))
            return self._emit(arith.ShRSIOp(delta, self._splat(shift, shape)))
        scalar, offsets = tile
        start = self._emit(arith.ShRSIOp(self._emit(arith.SubiOp(self._emit(PtrToIntOp(scalar)), origin)), shift))
        if element_of(offsets.type) != i64:
            offsets = self._emit(arith_ext.ExtSIOp(offsets, with_shape(i64, shape)))
        return self._emit(arith.AddiOp(offsets, self._splat(start, shape)))

    def _pointer_source(self, value: SSAValue, seen: set[SSAValue]) -> Any:
        """The kernel argument `value`'s pointers were derived from; None if not one argument."""
        if isinstance(value, BlockArgument):
            owner = value.block.parent_op()
            if isinstance(owner, func.FuncOp):
                return value if value in self.pointer_args else None
            if isinstance(owner, scf.ForOp) and value.index > 0:
                return self._loop_carried(owner, value.index - 1, seen)
            return None
        assert isinstance(value, OpResult)
        op = value.op
        if isinstance(op, tt.AddPtrOp):
            return self._pointer_source(op.ptr, seen)
        if op.name in _POINTER_PASS_THROUGH or op.name == "arith.select":
            result: Any = _PENDING
            for operand in op.operands:
                if isinstance(element_of(operand.type), PointerType):
                    result = _join(result, self._pointer_source(operand, seen))
            return None if result is _PENDING else result
        if isinstance(op, scf.ForOp):
            return self._loop_carried(op, value.index, seen)
        if isinstance(op, scf.IfOp):
            result = _PENDING
            for region in op.regions:
                for block in region.blocks:
                    if isinstance(block.last_op, scf.YieldOp):
                        result = _join(result, self._pointer_source(block.last_op.operands[value.index], seen))
            return None if result is _PENDING else result
        return None

    def _loop_carried(self, loop: scf.ForOp, index: int, seen: set[SSAValue]) -> Any:
        carried = loop.body.block.args[index + 1]
        if carried in seen:
            return _PENDING
        seen.add(carried)
        result = self._pointer_source(loop.iter_args[index], seen)
        yielded = loop.body.block.last_op
        if isinstance(yielded, scf.YieldOp):
            result = _join(result, self._pointer_source(yielded.operands[index], seen))
        seen.discard(carried)
        return result

    # --- integer division and remainder ----------------------------------------------------
    def _check_division(self, op: Operation, loc: str) -> None:
        self.anchor = op
        divisor = op.operands[1]
        scalar = divisor.op.src if isinstance(divisor, OpResult) and isinstance(divisor.op, tt.SplatOp) else divisor
        if _nonzero_constant(scalar):
            return
        shape = shape_of(scalar.type)
        bad = self._emit(arith_ext.CmpiOp(scalar, self._constant(0, element_of(scalar.type), shape), "eq"))
        if shape:
            valid = self._valid_lanes(scalar, {})
            if valid is not None:
                bad = self._emit(arith.AndIOp(bad, valid))
            used = self._selected_lanes(op)
            if used is not None:
                bad = self._emit(arith.AndIOp(bad, used))
            index = self._emit(arith_ext.ExtSIOp(self._tile_index(shape), with_shape(i64, shape)))
        else:
            index = self._constant(0, i64, ())
        self._report(bad, index, DIVISIONS[op.name], loc, -1)

    def _selected_lanes(self, op: Operation) -> SSAValue | None:
        """i1 of the quotient's shape: lanes a `tl.where` keeps the quotient in, when every use is such a
        select on a condition computed before the division (`tl.where(d != 0, n // d, 0)`: a zero
        divisor's quotient is thrown away); None: every lane is used."""
        result = op.results[0]
        block, lanes = op.parent_block(), None
        for use in result.uses:
            user, cond = use.operation, use.operation.operands[0]
            if (user.name != "arith.select" or use.index == 0 or shape_of(cond.type) != shape_of(result.type)
                    or not isinstance(cond, OpResult) or cond.op.parent_block() is not block
                    or block.get_operation_index(cond.op) > block.get_operation_index(op)):
                return None
            if use.index == 2:  # the quotient is the false side: kept where the condition is false
                cond = self._emit(arith.XOrIOp(cond, self._constant(1, i1, shape_of(cond.type))))
            lanes = cond if lanes is None else self._emit(arith.OrIOp(lanes, cond))
        return lanes

    def _valid_lanes(self, value: SSAValue, memo: dict[SSAValue, SSAValue | None], depth: int = 0) -> SSAValue | None:
        """i1 of `value`'s shape: lanes computed only from loads whose mask enabled them (None: all)."""
        if value in memo:
            return memo[value]
        result = None
        op = value.op if isinstance(value, OpResult) else None
        mask_type = like(value.type, i1)
        if isinstance(op, LoadOp):
            result = op.mask
        elif op is not None and depth < 32:
            if isinstance(op, tt.BroadcastOp | tt.ExpandDimsOp):
                inner = self._valid_lanes(op.src, memo, depth + 1)
                if inner is not None and isinstance(op, tt.BroadcastOp):
                    result = self._emit(tt.BroadcastOp(inner, mask_type))
                elif inner is not None:
                    result = self._emit(tt.ExpandDimsOp(inner, op.axis.value.data, mask_type))
            elif (op.name.startswith(("arith.", "math.")) and op.name != "arith.constant") or isinstance(op, tt.SplatOp):
                for operand in op.operands:
                    if shape_of(operand.type) != shape_of(value.type):
                        continue
                    inner = self._valid_lanes(operand, memo, depth + 1)
                    if inner is not None:
                        result = inner if result is None else self._emit(arith.AndIOp(result, inner))
        memo[value] = result
        return result

    def _tile_index(self, shape: tuple[int, ...]) -> SSAValue:
        """i32 of `shape`: each element's row-major index in the tile."""
        total = None
        stride = 1
        for axis in reversed(range(len(shape))):
            index = self._emit(tt.MakeRangeOp(0, shape[axis]))
            for other in range(len(shape)):
                if other != axis:
                    expanded = shape_of(index.type)
                    at = other if other < axis else len(expanded)
                    new_shape = expanded[:at] + (1,) + expanded[at:]
                    index = self._emit(tt.ExpandDimsOp(index, at, with_shape(i32, new_shape)))
            if len(shape) > 1:
                index = self._emit(tt.BroadcastOp(index, with_shape(i32, shape)))
            if stride != 1:
                index = self._emit(arith.MuliOp(index, self._constant(stride, i32, shape)))
            total = index if total is None else self._emit(arith.AddiOp(total, index))
            stride *= shape[axis]
        assert total is not None
        return total


def _tile_offsets(ptr: SSAValue) -> tuple[SSAValue, SSAValue] | None:
    """(p, offsets) for a tile of pointers `addptr(splat(p), offsets)` with i32 or i64 offsets, else None."""
    if not (isinstance(ptr, OpResult) and isinstance(ptr.op, tt.AddPtrOp)):
        return None
    base, offsets = ptr.op.ptr, ptr.op.offset
    if isinstance(base, OpResult) and isinstance(base.op, tt.SplatOp) and element_of(offsets.type) in (i32, i64):
        return base.op.src, offsets
    return None


def _replace_mask(op: Operation, mask: SSAValue) -> None:
    """Replace a load, store or atomic_rmw by the same access under `mask`."""
    attributes = dict(op.attributes)
    location = op.location
    if isinstance(op, LoadOp):
        new: Operation = LoadOp(op.ptr, mask, op.other, op.result.type, attributes)
    elif isinstance(op, StoreOp):
        new = StoreOp(op.ptr, op.value, mask, attributes)
    else:
        assert isinstance(op, AtomicRMWOp)
        new = AtomicRMWOp(op.kind.data, op.ptr, op.value, mask, op.sem.data, op.scope.data, attributes)
    new.location = location
    Rewriter.replace_op(op, new)


def _nonzero_constant(value: SSAValue) -> bool:
    if isinstance(value, OpResult) and isinstance(value.op, arith.ConstantOp):
        attr = value.op.value
        return isinstance(attr, IntegerAttr) and attr.value.data != 0
    return False
