"""accelerate-matmul: put the dots that tensor cores can compute in the mma layout (NVIDIA sm_80+).

A `tt.dot` of fp16 x fp16 or bf16 x bf16 operands with an fp32 result, 2-D, gets the
`#ttg.nvidia_mma` result layout (mma.sync.m16n8k16) and its operands the dot-operand
layouts of it (`ir/dot_layouts.py`); the result is converted back to its old layout for
its users, and remove-layout-conversions then moves those users (and a loop-carried
accumulator) to the mma layout where that saves conversions. The operands still arrive
through `ttg.convert_layout` (through shared memory). A value defined outside the dot's block is
converted right after its definition, so a loop-invariant operand is converted once, before the
loop; the others right before the dot, the accumulator first, so that a loaded accumulator's
conversion does not keep the operands' tiles from being left in shared memory for the dot (wgmma).

Warps lie along one dimension: along M ([w, 1]) when M has 16 rows for each warp, else
along N ([1, w]) when N has 8 columns for each warp; dots too small for either keep the
FMA path. fp32 dots whose input_precision is "tf32" or "tf32x3" take the same layouts (tf32 instructions,
`to_llvm/dot_tf32.py`); other dots ("ieee" fp32, fp64, int8, fp16 results, batched) keep the FMA path.

With `mma_version` 3 (sm_90 unless TILE_WGMMA=0), dots that one or two warpgroups can compute with
wgmma.m64nNk16 (4 or 8 warps along M, 16 rows per warp and instruction, N a multiple of 8 up to 256) get
`versionMajor = 3`: the same registers, computed by `to_llvm/dot_wgmma.py` from shared memory.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, ModuleOp
from xdsl.ir import Block, BlockArgument, SSAValue
from xdsl.passes import ModulePass

from ..ir import tt
from ..ir.dot_layouts import MMA_K, MMA_PIECE, DotOperand, NvidiaMma
from ..ir.tt_types import element_of, shape_of
from ..ir.ttg import ConvertLayoutOp, convert_to, launch_shape, with_layout
from .layout_constraints import functions, value_layout


def mma_warps(shape: tuple[int, ...], num_warps: int) -> tuple[int, int] | None:
    """warpsPerCTA of the mma layout for a [M, N] result, or None when the dot is too small."""
    m, n = shape
    if m % (MMA_PIECE[0] * num_warps) == 0:
        return (num_warps, 1)
    if n % (MMA_PIECE[1] * num_warps) == 0 and m % MMA_PIECE[0] == 0:
        return (1, num_warps)
    return None


def wgmma_shape(shape: tuple[int, ...], warps: tuple[int, int], num_warps: int) -> bool:
    """Whether one or two warpgroups (along M) compute a [M, N] result with wgmma.m64nNk16 in the
    mma layout `warps`."""
    m, n = shape
    return (num_warps in (4, 8) and warps == (num_warps, 1) and m % (16 * num_warps) == 0 and n % 8 == 0
            and n <= 256)


def tf32_dot(dot: tt.DotOp) -> bool:
    """Whether `dot` multiplies fp32 operands that tensor cores may round to tf32 ("tf32", "tf32x3").

    `TILE_TF32_MMA=0` sends them to the FMA path instead, which rounds "tf32" operands the same way."""
    return (os.environ.get("TILE_TF32_MMA", "1") != "0" and isinstance(element_of(dot.a.type), Float32Type)
            and dot.input_precision.data in ("tf32", "tf32x3"))


def mma_eligible(dot: tt.DotOp) -> bool:
    operand, result = element_of(dot.a.type), element_of(dot.result.type)
    shape_a = shape_of(dot.a.type)
    return ((isinstance(operand, Float16Type | BFloat16Type) or tf32_dot(dot)) and isinstance(result, Float32Type)
            and len(shape_a) == 2 and shape_a[1] % MMA_K == 0)


@dataclass(frozen=True)
class AccelerateMatmulPass(ModulePass):
    """Give tensor-core dots the mma result layout and mma operand layouts."""

    name = "accelerate-matmul"

    mma_version: int = 2
    #: an AMD architecture: MFMA / WMMA layouts instead (accelerate_matmul_amd.py)
    amd_arch: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.amd_arch:
            from .accelerate_matmul_amd import accelerate_amd_matmul

            return accelerate_amd_matmul(op, self.amd_arch)
        num_warps, _ = launch_shape(op)
        for func_op in functions(op):
            for dot in [o for o in func_op.walk() if isinstance(o, tt.DotOp)]:
                shape = shape_of(dot.result.type)
                warps = mma_warps(shape, num_warps) if mma_eligible(dot) else None
                if warps is not None:
                    version = 3 if self.mma_version >= 3 and wgmma_shape(shape, warps, num_warps) else 2
                    _to_mma(dot, NvidiaMma(warps, version))


def _unconverted(value):
    """The value a dot operand was converted from (the conversion is replaced by one to the mma layout)."""
    owner = value.owner
    return owner.src if isinstance(owner, ConvertLayoutOp) else value


def _convert_for_dot(value: SSAValue, layout, dot: tt.DotOp) -> SSAValue:
    """`value` converted to `layout` for `dot`. A value defined in an enclosing block is converted there,
    right after its definition (a block argument: before the op holding the dot), so that an operand
    computed before a loop (attention's q) is converted once, not on every iteration. A value of the dot's
    own block (an operand loaded by this or the previous iteration, see pipeline-loads) is converted just
    before the dot: `_to_mma` converts the accumulator, then a, then b, so that the operand conversions
    come last, next to the dot. A loaded accumulator's conversion goes through shared memory; between an
    operand's conversion and the dot it kept that operand in registers (`to_llvm/dot_operands.deferred_dot`:
    mma.sync instead of wgmma on sm_90), and a converted right after its load had b's loads between."""
    convert = convert_to(value, layout)
    home = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()
    assert isinstance(home, Block)
    if isinstance(value, BlockArgument) or home is dot.parent_block():
        anchor = home.find_ancestor_op_in_block(dot)
        assert anchor is not None
        home.insert_op_before(convert, anchor)
    else:
        home.insert_op_after(convert, value.owner)
    return convert.result


def _to_mma(dot: tt.DotOp, mma: NvidiaMma) -> None:
    block = dot.parent_block()
    assert block is not None
    old_layout = value_layout(dot.result)
    assert old_layout is not None
    acc = _convert_for_dot(_unconverted(dot.c), mma, dot)
    operands = [_convert_for_dot(_unconverted(dot.a), DotOperand(0, mma), dot),
                _convert_for_dot(_unconverted(dot.b), DotOperand(1, mma), dot)]
    new_dot = tt.DotOp(*operands, acc, dot.input_precision.data, with_layout(dot.result.type, mma))
    back = convert_to(new_dot.result, old_layout)
    block.insert_ops_before([new_dot, back], dot)
    dot.result.replace_all_uses_with(back.result)
    dot.detach()
    dot.erase()
