"""In-place outputs: a kernel writes its output into an input buffer that dies with it.

Inductor's scheduler decides, node by node, whether an output may take over the memory of a
buffer the node reads (``SchedulerNode.decide_inplace_update``: the input's only remaining
reader is this node, at the same index it writes, the sizes match, the input is not a graph
input, a view or an alias).  The decision is recorded in the kernel handler active while the
node runs (``V.kernel``), and ``mark_run`` turns it into the wrapper's reuse line
(``buf3 = buf2; del buf2  # reuse``) instead of a fresh allocation.  The kernel's launch then
passes the output's name for both its input and its output pointer: the program that writes an
element has read it first, and the compiler assumes nothing about pointers not aliasing.

Why it matters on the CPU: a fresh buffer of a model's activations is new memory (page faults
and cold caches on its first touch, every forward), while the buffer it replaces is warm. A
T5 ReLU after a matmul ran 8x longer into a new buffer than in place.

Only where our scheduling offers ``BackendFeature.INPLACE_BUFFERS`` (``devices()``: the CPU
target; GPU kernels keep separate outputs until in-place launches are timed and checked there).
"""

from __future__ import annotations

from torch._inductor.virtualized import V


def devices() -> tuple[str, ...]:
    """Device types whose generated kernels may write in place."""
    return ("cpu",)


def mark_run(nodes) -> dict[str, str]:
    """Decide in-place outputs for `nodes` (one kernel's, in order), then mark them run (which
    allocates their outputs or writes the reuse lines). Returns {buffer name: the name the kernel's
    launch passes for it}: an input whose memory an output took over is passed by the output's name."""
    from torch._inductor.codegen.common import Kernel

    handler = Kernel(increase_kernel_count=False)
    with V.set_kernel_handler(handler):
        for snode in nodes:  # every decision first, as Inductor's own kernels make them
            if snode.get_device().type in devices():
                snode.decide_inplace_update()
        for snode in nodes:
            snode.mark_run()
    renames = {}
    for name, buf in handler.args.inplace_buffers.items():
        if hasattr(buf, "other_names"):  # an InplacedBuffer: every name it had is passed as its last
            renames[name] = buf.other_names[-1]
    return renames
