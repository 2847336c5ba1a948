"""How TTGIR ops constrain the layouts of their tensor operands and results.

Shared by the layout passes (convert-to-ttgir, coalesce, remove-layout-conversions):

- elementwise ops (arith, math, tt.addptr/bitcast/int_to_ptr/mulhiui, tt.elementwise_inline_asm, tt.load,
  tt.store, atomics): every tensor operand and result has one layout (a store's is its pointer's);
- tt.broadcast: operand and result have the same layout;
- tt.expand_dims: the operand's layout is the result's, sliced at `axis`;
- tt.reduce: the result's layout is the operand's, sliced at `axis`;
- scf.for: init value, block argument, yielded value and result of each loop-carried
  value share a layout; scf.if: each yielded value has its result's layout; scf.while: like scf.for, and
  scf.condition forwards values in the results' layouts;
- tt.dot: a and b have the dot-operand layouts of the result's layout, acc the result's;
- tt.reshape, tt.splat, tt.make_range, constants: any layout.
"""

from __future__ import annotations

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from ..ir import tt
from ..ir.dot_layouts import DotOperand
from ..ir.layouts import Layout, Slice
from ..ir.tt_inline_asm import ElementwiseInlineAsmOp
from ..ir.tt_memory import AtomicCASOp, AtomicRMWOp, LoadOp, StoreOp
from ..ir.tt_sanitize import PtrToIntOp, SanitizerReportOp
from ..ir.ttg import layout_of, with_layout

_ELEMENTWISE_TT = (tt.AddPtrOp, tt.BitcastOp, tt.IntToPtrOp, tt.MulhiUIOp, LoadOp, StoreOp, AtomicRMWOp, AtomicCASOp,
                   PtrToIntOp, SanitizerReportOp, ElementwiseInlineAsmOp)


def is_elementwise(op: Operation) -> bool:
    """True for ops whose tensor operands and results all share one layout."""
    if isinstance(op, _ELEMENTWISE_TT):
        return True
    return (op.name.startswith("arith.") and op.name != "arith.constant") or op.name.startswith("math.")


def is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType)


def value_layout(value: SSAValue) -> Layout | None:
    """The layout of a TTGIR tensor value (None for scalars)."""
    return layout_of(value.type)


def retype(value: SSAValue, layout: Layout) -> SSAValue:
    """Give the tensor `value` a new layout in place; returns the value that replaces it."""
    assert isinstance(value.type, TensorType)
    if layout_of(value.type) == layout:
        return value
    return Rewriter.replace_value_with_new_type(value, with_layout(value.type, layout))


def elementwise_layout(op: Operation) -> Layout | None:
    """The one layout of an elementwise op: its first tensor result's, or for a store its pointer's."""
    for value in (*op.results, *op.operands):
        if is_tensor(value):
            return value_layout(value)
    return None


def parent_results(yield_op: Operation) -> list[SSAValue]:
    """The results an scf.yield produces (those of the enclosing scf.for / scf.if)."""
    parent = yield_op.parent_op()
    return list(parent.results) if isinstance(parent, scf.ForOp | scf.IfOp | scf.WhileOp) else []


def required_operand_layouts(op: Operation) -> list[Layout | None]:
    """For each operand, the layout `op` needs it in given its result layouts (None: any)."""
    count = len(op.operands)
    if is_elementwise(op):
        layout = elementwise_layout(op)
        return [layout if is_tensor(v) else None for v in op.operands]
    if isinstance(op, tt.BroadcastOp):
        return [value_layout(op.result)]
    if isinstance(op, tt.ExpandDimsOp):
        parent = value_layout(op.result)
        return [Slice(op.axis.value.data, parent) if parent is not None else None]
    if isinstance(op, tt.DotOp):  # a and b in the dot-operand layouts of the result's, acc in the result's
        result = value_layout(op.result)
        return [None, None, None] if result is None else [DotOperand(0, result), DotOperand(1, result), result]
    if isinstance(op, scf.YieldOp):
        results = parent_results(op)
        return [value_layout(r) for r in results] if len(results) == count else [None] * count
    if isinstance(op, scf.ConditionOp):  # the forwarded values: the loop's layouts, as its results
        results = parent_results(op)
        return [None] + [value_layout(r) for r in results] if len(results) == count - 1 else [None] * count
    return [None] * count


def functions(module: Operation) -> list[func.FuncOp]:
    """The functions of a module, in order."""
    return [op for op in module.walk() if isinstance(op, func.FuncOp)]
