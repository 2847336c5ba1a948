"""TTGIR -> LLVM IR: the shared lowering driver.

The kernel body becomes an internal LLVM function over the user's arguments plus what
the target adds (program ids on the CPU); the target then adds the entry point. Each op
is lowered by its rule (`rules_*.py`, one rule per op, registered by name).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from . import rules_arith, rules_control, rules_memory, rules_reduce, rules_tensor  # noqa: F401 (register rules)
from . import rules_combine, rules_debug, rules_permute  # noqa: F401 (register rules)
from . import rules_dot  # noqa: F401 (register rules)
from . import rules_sanitize  # noqa: F401 (register rules)
from . import rules_inline_asm  # noqa: F401 (register rules)
from .compact_constants import compact_module
from .context import LoweringContext, LoweringError, lower_block
from .dot_async import place_rings  # also registers the ring rules
from .target import Target


def kernel_function(module: ModuleOp) -> FuncOp:
    funcs = [op for op in module.ops if isinstance(op, FuncOp)]
    if len(funcs) != 1:
        raise LoweringError(f"expected one kernel function in the module, found {len(funcs)}")
    return funcs[0]


@dataclass
class LoweredKernel:
    """The LLVM IR text of a kernel (after the target's final edits) and what launching it needs."""

    llvm_ir: str
    entry: str
    shared_bytes: int


def lower_to_llvm(module: ModuleOp, target: Target, num_warps: int, axis_infos: dict | None = None) -> LoweredKernel:
    """Lower a TTGIR module to LLVM IR for `target` (`axis_infos`: axis_info.axis_info_of)."""
    from ..analysis.axis_info import axis_info_of

    func = kernel_function(module)
    llvm_module = ir.Module(name=func.sym_name.data)
    llvm_module.triple = target.triple()
    if target.data_layout():
        llvm_module.data_layout = target.data_layout()
    probe = LoweringContext(target, llvm_module, None, None, num_warps)  # type: ignore[arg-type]
    user_types = [probe.llvm_type(arg.type) for arg in func.args]
    fn_type = ir.FunctionType(ir.VoidType(), user_types + target.kernel_arguments())
    name = func.sym_name.data
    body = ir.Function(llvm_module, fn_type, name=f"{name}_body")
    body.linkage = "internal"
    body.attributes.add("alwaysinline")
    builder = ir.IRBuilder(body.append_basic_block("entry"))
    ctx = LoweringContext(target, llvm_module, body, builder, num_warps, axis_info=axis_info_of(func, axis_infos))
    for arg, value in zip(func.args, body.args):
        ctx.set(arg, value)
    lower_block(ctx, func.body.block)
    place_rings(ctx)  # the cp.async rings go after every other use of shared memory
    entry = target.finish_kernel(llvm_module, body, name, user_types, num_warps)
    compact_module(llvm_module)  # before printing: vector constants element by element were most of the text
    return LoweredKernel(target.finalize_ir(str(llvm_module), entry), entry, ctx.shared_bytes)
