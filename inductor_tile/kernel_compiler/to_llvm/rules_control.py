"""Lowering of structured control flow (scf.for, scf.while, scf.if) to LLVM basic blocks and phis."""

from __future__ import annotations

from xdsl.ir import Operation

from .context import LoweringContext, lower_block, lowering


def _loop_blocks(b, *names: str):
    """A loop's header, body and exit blocks (`names`), entered from the current block (the preheader,
    returned first) by a branch to the header, where the builder is left."""
    preheader = b.block
    header, body, exit_block = (b.append_basic_block(name) for name in names)
    b.branch(header)
    b.position_at_end(header)
    return preheader, header, body, exit_block


def _carried_phis(b, inits: list, preheader) -> list:
    """One phi per loop-carried value, entering with its initial value from the preheader."""
    carried = []
    for init in inits:
        phi = b.phi(init.type)
        phi.add_incoming(init, preheader)
        carried.append(phi)
    return carried


def _close_loop(b, carried: list, yielded: list, header) -> None:
    """The back edge: the yielded values flow into the carried phis from the current block."""
    latch = b.block
    for phi, value in zip(carried, yielded):
        phi.add_incoming(value, latch)
    b.branch(header)


@lowering("scf.for")
def lower_for(ctx: LoweringContext, op: Operation) -> None:
    """header: phi(iv, iter args); iv < ub ? body : exit. body: ...; iv += step; br header."""
    b = ctx.builder
    lb, ub, step = ctx.get(op.lb), ctx.get(op.ub), ctx.get(op.step)
    inits = [ctx.get(v) for v in op.iter_args]
    preheader, header, body, exit_block = _loop_blocks(b, "for.header", "for.body", "for.exit")
    iv = b.phi(lb.type, name="iv")
    iv.add_incoming(lb, preheader)
    carried = _carried_phis(b, inits, preheader)
    b.cbranch(b.icmp_signed("<", iv, ub), body, exit_block)

    b.position_at_end(body)
    block = op.body.block
    ctx.set(block.args[0], iv)
    for arg, phi in zip(block.args[1:], carried):
        ctx.set(arg, phi)
    yielded = lower_block(ctx, block)
    iv.add_incoming(b.add(iv, step), b.block)
    _close_loop(b, carried, yielded, header)

    b.position_at_end(exit_block)
    for result, phi in zip(op.results, carried):
        ctx.set(result, phi)


@lowering("scf.while")
def lower_while(ctx: LoweringContext, op: Operation) -> None:
    """before: phi(carried); cond ? after : exit (both get the forwarded values).
    after: ...; br before. The forwarded values dominate both successors, so no exit phis."""
    b = ctx.builder
    inits = [ctx.get(v) for v in op.arguments]
    preheader, header, body, exit_block = _loop_blocks(b, "while.before", "while.after", "while.exit")
    carried = _carried_phis(b, inits, preheader)
    for arg, phi in zip(op.before_region.block.args, carried):
        ctx.set(arg, phi)
    cond, *forwarded = lower_block(ctx, op.before_region.block)
    b.cbranch(cond, body, exit_block)

    b.position_at_end(body)
    for arg, value in zip(op.after_region.block.args, forwarded):
        ctx.set(arg, value)
    yielded = lower_block(ctx, op.after_region.block)
    _close_loop(b, carried, yielded, header)

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
