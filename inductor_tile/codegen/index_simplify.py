"""Index expressions simplified with the ranges of a kernel's loop variables.

A node whose loops differ from its kernel's (a rotary embedding after an RMSNorm over the same
rows, a permute fused with a reduction) gets its loop indices decoded from the kernel's
(`TileKernelSource._decoded`): ``h = x0 % 8``, ``s = (x0 // 8) % 512``, ``b = x0 // 4096``.
Its body then addresses ``128*h + 1024*s + 524288*b``, which is ``128*x0`` for every ``x0`` in
range, the same address another node of the kernel spells ``128*x0``.  Inductor's kernels
simplify every index with the ranges of their variables (``SIMDKernel.prepare_indexing``);
this does the same, so that equal addresses print equally and their loads are one
(``TileKernelSource.define`` shares lines by their source text).

A simplified index equals the original for every variable inside its range.  Lanes outside it
(past the end of the last block) may address elsewhere, but every one of them is masked: loads
and stores by ``xmask``/``rmask``, reductions by ``tl.where`` on the same masks.
"""

from __future__ import annotations

import sympy

from .index_equal import split_row_digits


def with_loop_ranges(expr, ranges: dict):
    """`expr` simplified for loop variables ``0 <= sym < ranges[sym]`` (sizes may be symbolic).

    A variable over one element is 0.  The rest is Inductor's ``SizeVarAllocator.simplify_with_ranges``
    (joins the decoded digits of one variable, drops a ``%`` or ``//`` that the range makes
    redundant) and ``combine_modular_indexing_pairs`` (``(x % 64) % 8`` is ``x % 8``); either one
    missing from the installed torch leaves the expression as it is.
    """
    from torch._inductor.virtualized import V

    ranges = {sym: size for sym, size in ranges.items() if sym in expr.free_symbols}
    if not ranges:
        return expr
    ones = {sym: 0 for sym, size in ranges.items() if sympy.sympify(size) == 1}
    if ones:
        expr = expr.xreplace({sym: sympy.Integer(0) for sym in ones})
        ranges = {sym: size for sym, size in ranges.items() if sym not in ones}
    sizevars = getattr(V.graph, "sizevars", None)  # outside a compile V.graph is a null handler
    simplify = getattr(sizevars, "simplify_with_ranges", None)
    if simplify is None or not ranges:
        return expr
    try:
        simple = simplify(expr, ranges)
        combine = getattr(sizevars, "combine_modular_indexing_pairs", None)
        if combine is not None:
            from torch.utils._sympy.functions import ModularIndexing

            if simple.has(ModularIndexing):
                simple = simple.replace(lambda e: isinstance(e, ModularIndexing), combine)
        simple = split_row_digits(simple, ranges)  # (r0 + 49*x0) % 2401 -> r0 + 49*(x0 % 49)
    except Exception:  # noqa: BLE001 - an expression the range analysis cannot take: the original is right too
        return expr
    return simple
