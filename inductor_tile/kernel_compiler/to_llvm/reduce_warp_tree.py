"""A reduction's partial results of several warps combined by a few threads, one partial each.

After the butterfly within warps, each of the W warps holding distinct data along the axis has one partial
per result element (R of them in the block). `rules_reduce._across_warps` has every thread load all W
partials of its own result slots: count * W registers per thread at once (softmax [4, 2048] over 8 warps:
32). Here instead each warp stores its partials in a run (`warp * R + element`: vector stores), thread
t loads the one of element (t mod R*W) / W and warp t mod W, the W consecutive lanes holding one element
combine by xor-shuffles (neighbours first, as the tree of `_across_warps`), and all of them store the
result at `element` of a results area: the combine is commutative to the bit (tt.reduce's kinds: sums,
products, min/max, xor, argmax's pairs with the first index on ties; generic combine regions keep
`_across_warps`' scheme), so they hold the same bits, and threads past R*W repeat the first ones' work; no
branch, no select. After a barrier every thread loads its result slots,
a run. One more barrier than `_across_warps`, and one register in flight per reduced value.
"""

from __future__ import annotations

from llvmlite import ir

from .context import I1, I8, I32, LoweringContext, byte_size
from .shared import load_run, store_run

#: the tree is used where a thread would otherwise hold more than this many partials of one value at once
MAX_PARTIALS_PER_THREAD = 8


def fits(ctx: LoweringContext, vectors: list[ir.Value], elements: int, unique_warps: int) -> bool:
    """Whether the tree applies: R * W partials for as many threads, W within one warp, no i1 values, and
    more partials per thread than MAX_PARTIALS_PER_THREAD the other way."""
    count = vectors[0].type.count
    threads = ctx.num_warps * ctx.target.warp_size
    return (count * unique_warps > MAX_PARTIALS_PER_THREAD and elements * unique_warps <= threads
            and unique_warps <= ctx.target.warp_size and all(v.type.element != I1 for v in vectors))


def _results_bytes(elements: int, element: ir.Type) -> int:
    return -(-elements * byte_size(element) // 16) * 16


def scratch_bytes(elements: int, unique_warps: int, element: ir.Type) -> int:
    """Bytes of one value's scratch: the results, then the partials."""
    partials = elements * unique_warps * byte_size(element)
    return _results_bytes(elements, element) + -(-partials // 16) * 16


def combine_in_a_warp(ctx: LoweringContext, vectors: list[ir.Value], buffers: list[ir.Value], first: ir.Value,
                      own: ir.Value, elements: int, unique_warps: int, combine) -> list[ir.Value]:
    """`vectors` (each thread's partials of its result slots, elements first .. first + count - 1 of the
    block's `elements`) combined over the warps; `own`: this warp's index among the `unique_warps`;
    `buffers`: a scratch of `scratch_bytes` per vector. A barrier must precede (the caller's)."""
    b = ctx.builder
    target = ctx.target
    count = vectors[0].type.count
    results = [b.gep(region, [ir.Constant(I32, 0)], source_etype=v.type.element) for v, region in zip(vectors, buffers)]
    partials = [b.gep(region, [ir.Constant(I32, _results_bytes(elements, v.type.element))], source_etype=I8)
                for v, region in zip(vectors, buffers)]
    for v, region in zip(vectors, partials):  # warp w's partials at w * elements + element: runs of slots
        store_run(ctx, region, v, b.add(b.mul(own, ir.Constant(I32, elements)), first))
    target.barrier(b)
    total = elements * unique_warps
    thread = b.add(b.mul(target.warp_id(b), ir.Constant(I32, target.warp_size)), target.lane_id(b))
    place = b.urem(thread, ir.Constant(I32, total))  # threads past the partials repeat the first ones' work
    element, warp = b.udiv(place, ir.Constant(I32, unique_warps)), b.urem(place, ir.Constant(I32, unique_warps))
    source = b.add(b.mul(warp, ir.Constant(I32, elements)), element)
    partial = [b.insert_element(ir.Constant(ir.VectorType(v.type.element, 1), None),
                                b.load(b.gep(region, [source], source_etype=v.type.element), typ=v.type.element),
                                ir.Constant(I32, 0)) for v, region in zip(vectors, partials)]
    mask = 1
    while mask < unique_warps:
        partners = [ctx.map_elements(p, lambda x, m=mask: target.shuffle_xor(b, x, m)) for p in partial]
        partial = combine(partial, partners)
        mask *= 2
    for p, result in zip(partial, results):  # every lane of a group holds the same result: all store it
        b.store(b.extract_element(p, ir.Constant(I32, 0)), b.gep(result, [element], source_etype=p.type.element))
    target.barrier(b)
    return [load_run(ctx, result, first, v.type.element, count) for v, result in zip(vectors, results)]
