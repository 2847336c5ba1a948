"""Lowering of the sanitizer's ops (ir/tt_sanitize.py), the same on every target.

`tt.ptr_to_int` is free: pointers are i64 addresses in registers. `tt.sanitizer_report`: each
thread checks the slots it holds; where any is bad (a branch that is almost never taken), it
takes the smallest value among its bad slots and claims the error record with a compare-and-swap
of word 0 from 0 to site + 1; the thread that claims it writes the program id and the value
into words 1-4. No thread waits for another, so the check adds no barrier on GPUs.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from .context import I1, I64, LoweringContext, lowering

INT64_MAX = (1 << 63) - 1


@lowering("tt.ptr_to_int")
def lower_ptr_to_int(ctx: LoweringContext, op: Operation) -> None:
    ctx.set(op.results[0], ctx.get(op.operands[0]))


@lowering("tt.sanitizer_report")
def lower_sanitizer_report(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    bad, value = ctx.get(op.bad), ctx.get(op.value)
    if isinstance(bad.type, ir.VectorType):
        n = bad.type.count
        any_bad = b.call(ctx.intrinsic(f"llvm.vector.reduce.or.v{n}i1", I1, [bad.type]), [bad])
    else:
        any_bad = bad
    with b.if_then(any_bad, likely=False):
        if isinstance(bad.type, ir.VectorType):
            candidates = b.select(bad, value, ir.Constant(value.type, [INT64_MAX] * n))
            value = b.call(ctx.intrinsic(f"llvm.vector.reduce.smin.v{n}i64", I64, [value.type]), [candidates])
        words = ctx.builder.inttoptr(ctx.get(op.record), ir.PointerType(addrspace=ctx.target.global_address_space))
        site = ir.Constant(I64, op.site.value.data + 1)
        claimed = b.cmpxchg(words, ir.Constant(I64, 0), site, "monotonic", "monotonic")
        with b.if_then(b.extract_value(claimed, 1)):
            pids = [b.sext(ctx.target.program_id(b, ctx.function, axis), I64) for axis in range(3)]
            for index, word in enumerate([*pids, value], start=1):
                b.store(word, b.gep(words, [ir.Constant(I64, index)], source_etype=I64))
