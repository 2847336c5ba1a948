"""`tt.dot`: a tile matrix product with an accumulator.

    %d = tt.dot %a, %b, %c {input_precision = "tf32"} : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>

`d = a @ b + c` over the last two dimensions (a leading batch dimension is allowed: rank
3 operands multiply batch by batch). `a` is [.., M, K], `b` is [.., K, N], `c` and `d`
are [.., M, N]; `a` and `b` share an element type; `c` has the result's type.
`input_precision` says how fp32 operands may be rounded on tensor cores ("tf32",
"tf32x3" or "ieee"); targets may always compute more precisely. In TTGIR the operands
carry dot-operand layouts of the result's layout (see `dot_layouts.py`).
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def

from .pure_op_bases import PureOpWithProperties
from .tt_types import element_of, expect, shape_of

INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee")


@irdl_op_definition
class DotOp(PureOpWithProperties):
    """`d = a @ b + c` on the last two dimensions of tiles (optionally batched)."""

    name = "tt.dot"

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = operand_def(TensorType)
    input_precision = prop_def(StringAttr)
    result = result_def(TensorType)

    assembly_format = "$a `,` $b `,` $c attr-dict `:` type($a) `,` type($b) `,` type($c) `->` type($result)"

    def __init__(self, a: SSAValue, b: SSAValue, c: SSAValue, input_precision: str, result_type: Attribute | None = None):
        super().__init__(operands=[a, b, c], result_types=[result_type or c.type],
                         properties={"input_precision": StringAttr(input_precision)})

    def verify_(self) -> None:
        a, b, c, d = (shape_of(v.type) for v in (self.a, self.b, self.c, self.result))
        expect(len(a) in (2, 3) and len(a) == len(b) == len(d), "tt.dot: operands must be 2-D (or 3-D batched) of one rank")
        expect(a[-1] == b[-2], f"tt.dot: the inner dimensions differ ({list(a)} @ {list(b)})")
        expect(a[:-2] == b[:-2] == d[:-2], "tt.dot: the batch dimensions differ")
        expect(d[-2:] == (a[-2], b[-1]), f"tt.dot: the result must be {list(a[:-1]) + [b[-1]]}")
        expect(c == d and element_of(self.c.type) == element_of(self.result.type),
               "tt.dot: the accumulator must have the result's type")
        expect(element_of(self.a.type) == element_of(self.b.type), "tt.dot: the operands' element types differ")
        expect(self.input_precision.data in INPUT_PRECISIONS,
               f"tt.dot: input_precision must be one of {', '.join(INPUT_PRECISIONS)}")
