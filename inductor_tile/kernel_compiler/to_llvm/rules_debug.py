"""Lowering of the debugging and synchronization ops: tt.debug_barrier."""

from __future__ import annotations

from xdsl.ir import Operation

from .context import LoweringContext, lowering


@lowering("tt.debug_barrier")
def lower_debug_barrier(ctx: LoweringContext, op: Operation) -> None:
    """A CTA barrier; nothing where one thread runs the program."""
    if not ctx.single_thread:
        ctx.target.barrier(ctx.builder)
