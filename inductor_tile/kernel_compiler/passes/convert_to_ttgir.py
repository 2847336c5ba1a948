"""convert-to-ttgir: give every tensor a layout (TTIR -> TTGIR).

Every tensor value gets `default_blocked(shape, num_warps, threads_per_warp)` (one
element per thread, row-major), except:
- a tt.reduce result, which gets the operand's layout sliced at the reduced axis, so
  that the reduction itself moves no data between layouts;
- a tt.dot result, which gets `fma_result_layout` (its operands the dot-operand layouts of it);
- the block arguments and results of an scf.for, which take the layout of their init
  value (a loop-carried value has one layout all around the loop);
- the results of a tt.elementwise_inline_asm with packed_element p > 1, which get a layout whose
  threads hold p consecutive elements per run (`packed_asm_layouts.packed_layout`).

Then a `ttg.convert_layout` goes in front of every operand that an op needs in another
layout (see `layout_constraints`): elementwise operands to the result's layout,
broadcast operands to the result's, expand_dims operands to a slice of the result's,
yielded values to the layout of the loop or if result. The module gets the attributes
`ttg.num-warps` and `ttg.threads-per-warp`. Coalescing and remove-layout-conversions
then choose better layouts and drop the conversions that are not needed.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from ..ir import tt
from ..ir.tt_combine import GenericReduceOp
from ..ir.dot_layouts import fma_result_layout
from ..ir.layouts import Slice, default_blocked
from ..ir.ttg import convert_to, set_launch_shape
from .layout_constraints import functions, is_tensor, required_operand_layouts, retype, value_layout
from .matchers import materialize
from .packed_asm_layouts import asm_pack, packed_layout


@dataclass(frozen=True)
class ConvertToTTGIRPass(ModulePass):
    """Assign default layouts to all tensors and insert the conversions ops need."""

    name = "convert-to-ttgir"

    num_warps: int = 4
    threads_per_warp: int = 32

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        set_launch_shape(op, self.num_warps, self.threads_per_warp)
        for func_op in functions(op):
            _split_dense_splats(func_op.body.block)
            self._assign_block(func_op.body.block)
            for inner in list(func_op.walk()):
                _insert_conversions(inner)

    def _assign_block(self, block: Block) -> None:
        """Give the results (and loop block arguments) of `block`'s ops their layouts, in program order."""
        for op in block.ops:
            if isinstance(op, scf.ForOp):
                body = op.body.block
                for index, init in enumerate(op.iter_args):
                    layout = value_layout(init)
                    if layout is not None:
                        retype(body.args[index + 1], layout)
                        retype(op.results[index], layout)
            elif isinstance(op, scf.WhileOp):  # both regions' arguments and the results: the init's layout
                for index, init in enumerate(op.arguments):
                    layout = value_layout(init)
                    if layout is not None:
                        for value in (op.before_region.block.args[index], op.after_region.block.args[index],
                                      op.results[index]):
                            retype(value, layout)
            elif isinstance(op, tt.DotOp):
                shape = tuple(op.result.type.get_shape())
                retype(op.result, fma_result_layout(shape, self.num_warps, self.threads_per_warp))
            elif isinstance(op, tt.ReduceOp) and is_tensor(op.result):
                parent = value_layout(op.src)
                assert parent is not None
                retype(op.result, Slice(op.axis.value.data, parent))
            elif asm_pack(op) > 1:  # whose executions take `pack` consecutive elements of a thread
                layout = packed_layout(tuple(op.results[0].type.get_shape()), asm_pack(op), self.num_warps,
                                       self.threads_per_warp)
                for result in op.results:
                    retype(result, layout)
            elif isinstance(op, GenericReduceOp):  # every result: the first operand's layout, sliced
                parent = value_layout(op.srcs[0])
                for result in op.results:
                    if is_tensor(result) and parent is not None:
                        retype(result, Slice(op.axis.value.data, parent))
            for region in op.regions:
                for inner in region.blocks:
                    self._assign_block(inner)
            for result in op.results:
                if isinstance(result.type, TensorType) and value_layout(result) is None:
                    shape = tuple(result.type.get_shape())
                    retype(result, default_blocked(shape, self.num_warps, self.threads_per_warp))


def _insert_conversions(op: Operation) -> None:
    """Convert each tensor operand of `op` that is not in the layout `op` needs it in."""
    for index, wanted in enumerate(required_operand_layouts(op)):
        operand = op.operands[index]
        if wanted is None or not is_tensor(operand) or value_layout(operand) == wanted:
            continue
        convert = convert_to(operand, wanted)
        assert op.parent_block() is not None
        op.parent_block().insert_op_before(convert, op)  # type: ignore[union-attr]
        op.operands[index] = convert.result


def _split_dense_splats(block: Block) -> None:
    """Rewrite `arith.constant dense<c> : tensor<...>` as a scalar constant and a splat, so
    that the tensor's type can take a layout (a dense attribute has its own type)."""
    for op in list(block.walk()):
        if not (isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr)):
            continue
        if not op.value.is_splat():
            continue
        scalar = op.value.get_attrs()[0]
        new_ops = materialize(scalar, op.result.type)
        assert op.parent_block() is not None
        op.parent_block().insert_ops_before(new_ops, op)  # type: ignore[union-attr]
        op.result.replace_all_uses_with(new_ops[-1].results[0])
        op.detach()
        op.erase()
