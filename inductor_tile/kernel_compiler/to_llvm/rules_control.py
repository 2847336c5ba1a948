"""Lowering of structured control flow (scf.for, scf.while, scf.if) to LLVM basic blocks and phis."""

from __future__ import annotations

from xdsl.ir import Operation

from .context import LoweringContext, lower_block, lowering


@lowering("scf.for")
def lower_for(ctx: LoweringContext, op: Operation) -> None:
    """header: phi(iv, iter args); iv < ub ? body : exit. body: ...; iv += step; br header."""
    b = ctx.builder
    lb, ub, step = ctx.get(op.lb), ctx.get(op.ub), ctx.get(op.step)
    inits = [ctx.get(v) for v in op.iter_args]
    preheader = b.block
    header = b.append_basic_block("for.header")
    body = b.append_basic_block("for.body")
    exit_block = b.append_basic_block("for.exit")
    b.branch(header)

    b.position_at_end(header)
    iv = b.phi(lb.type, name="iv")
    iv.add_incoming(lb, preheader)
    carried = []
    for init in inits:
        phi = b.phi(init.type)
        phi.add_incoming(init, preheader)
        carried.append(phi)
    b.cbranch(b.icmp_signed("<", iv, ub), body, exit_block)

    b.position_at_end(body)
    block = op.body.block
    ctx.set(block.args[0], iv)
    for arg, phi in zip(block.args[1:], carried):
        ctx.set(arg, phi)
    yielded = lower_block(ctx, block)
    next_iv = b.add(iv, step)
    latch = b.block
    iv.add_incoming(next_iv, latch)
    for phi, value in zip(carried, yielded):
        phi.add_incoming(value, latch)
    b.branch(header)

    b.position_at_end(exit_block)
    for result, phi in zip(op.results, carried):
        ctx.set(result, phi)


@lowering("scf.while")
def lower_while(ctx: LoweringContext, op: Operation) -> None:
    """before: phi(carried); cond ? after : exit (both get the forwarded values).
    after: ...; br before. The forwarded values dominate both successors, so no exit phis."""
    b = ctx.builder
    inits = [ctx.get(v) for v in op.arguments]
    preheader = b.block
    header = b.append_basic_block("while.before")
    body = b.append_basic_block("while.after")
    exit_block = b.append_basic_block("while.exit")
    b.branch(header)

    b.position_at_end(header)
    carried = []
    for init in inits:
        phi = b.phi(init.type)
        phi.add_incoming(init, preheader)
        carried.append(phi)
    for arg, phi in zip(op.before_region.block.args, carried):
        ctx.set(arg, phi)
    cond, *forwarded = lower_block(ctx, op.before_region.block)
    b.cbranch(cond, body, exit_block)

    b.position_at_end(body)
    for arg, value in zip(op.after_region.block.args, forwarded):
        ctx.set(arg, value)
    yielded = lower_block(ctx, op.after_region.block)
    latch = b.block
    for phi, value in zip(carried, yielded):
        phi.add_incoming(value, latch)
    b.branch(header)

    b.position_at_end(exit_block)
    for result, value in zip(op.results, forwarded):
        ctx.set(result, value)


@lowering("scf.if")
def lower_if(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    cond = ctx.get(op.cond)
    then_block = b.append_basic_block("if.then")
    else_block = b.append_basic_block("if.else")
    merge = b.append_basic_block("if.end")
    b.cbranch(cond, then_block, else_block)
    incoming = []
    for llvm_block, region in ((then_block, op.true_region), (else_block, op.false_region)):
        b.position_at_end(llvm_block)
        values = lower_block(ctx, region.block) if region.blocks else []
        incoming.append((values, b.block))
        b.branch(merge)
    b.position_at_end(merge)
    for i, result in enumerate(op.results):
        phi = b.phi(incoming[0][0][i].type)
        for values, block in incoming:
            phi.add_incoming(values[i], block)
        ctx.set(result, phi)


@lowering("func.return")
def lower_return(ctx: LoweringContext, op: Operation) -> None:
    ctx.builder.ret_void()
