"""test-print-axis-info: annotate each op with the axis info of its result (for FileCheck).

Every op with exactly one result gets a string attribute
`tt.axis_info = "contiguity = [..], divisibility = [..], constancy = [..]"`; nothing else
changes. It exists to test `analysis/axis_info.py` on textual IR.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ..analysis.axis_info import AxisInfo, compute_axis_info, rank_of
from .layout_constraints import functions


@dataclass(frozen=True)
class TestPrintAxisInfoPass(ModulePass):
    """Write the axis info of every single-result op into a `tt.axis_info` attribute."""

    name = "test-print-axis-info"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func_op in functions(op):
            infos = compute_axis_info(func_op)
            for inner in func_op.body.walk():
                if len(inner.results) != 1:
                    continue
                result = inner.results[0]
                info = infos.get(result) or AxisInfo.unknown(rank_of(result))
                inner.attributes["tt.axis_info"] = StringAttr(str(info))
