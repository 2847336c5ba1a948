"""Debugging and synchronization ops of the `tt` dialect.

    tt.debug_barrier

`tt.debug_barrier` makes every thread of a program wait for the others (a CTA barrier on
GPUs; nothing on the CPU, where one thread runs a program). It has effects, so no pass
moves or removes it.
"""

from __future__ import annotations

from xdsl.irdl import IRDLOperation, irdl_op_definition


@irdl_op_definition
class DebugBarrierOp(IRDLOperation):
    """All threads of the program reach this point before any goes on."""

    name = "tt.debug_barrier"

    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


DEBUG_OPS = [DebugBarrierOp]
