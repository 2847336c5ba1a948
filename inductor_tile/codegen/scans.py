"""Scans and sorts inside a tile kernel: Inductor's ``ops.scan`` and ``ops.sort``.

Inductor lowers ``cumsum``/``cumprod``/``logcumsumexp``/``cummax``/``cummin`` (and
``associative_scan``) to ``Scan`` nodes and ``sort``/``argsort`` to ``Sort`` nodes, both over
(kept dims, one scanned/sorted dim): the kernel's [XBLOCK, RBLOCK] tile with the scanned dim
along RBLOCK.  The node's loop body calls ``ops.scan(dtypes, combine_fn, values)`` or
``ops.sort(dtypes, values, stable, descending)`` and stores one of the results at every
element (a plain ``ops.store``, not ``store_reduction``).

Scans: ``combine_fn`` is a Python function over ops values; it is traced with the ops handler
into a ``@jit`` helper defined next to the kernel, which ``tl.associative_scan`` calls.
fp16/bf16 scan in fp32 (as Inductor's Triton kernels do; the store rounds once).  A looped
kernel scans each RBLOCK chunk, combines it with the carry (the previous chunks' last
element, per row) and takes the chunk's last element as the next carry.

Sorts: the key and its position along the row are packed into one uint64 whose unsigned order
is torch's (stable: equal keys keep their order; NaN after every number ascending, before
every number descending; -0.0 equals 0.0), sorted with ``tl.sort``; the sorted positions then
gather each value (the key itself too, so NaN payloads and signed zeros survive).  Elements
past the row's end pack as the largest uint64 and sort last.  Keys of up to 32 bits pack this
way; 64-bit keys are left to aten (``supported_sort``).  Sorts are persistent (``sort_launch``).
"""

from __future__ import annotations

import torch

from .common import Unsupported, tl_dtype

# key dtypes a sort packs (with a 32-bit position) into one uint64
_SORT_KEY_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.int8, torch.int16, torch.int32, torch.uint8,
                    torch.bool)
# the longest row a sort takes (Inductor creates Sort nodes up to 512 elements by default)
MAX_SORT_ELEMENTS = 4096


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The type a scan computes in: fp16/bf16 in fp32, the rest as they are."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def supported_scan(dtypes) -> bool:
    """Whether the codegen takes a scan over values of `dtypes` (else Inductor uses aten's)."""
    try:
        for dtype in dtypes:
            tl_dtype(dtype)
    except Unsupported:
        return False
    return True


def supported_sort(dtypes, rnumel) -> bool:
    """Whether the codegen takes a sort (a key of up to 32 bits, a bounded row)."""
    if not dtypes or dtypes[0] not in _SORT_KEY_DTYPES or not supported_scan(dtypes):
        return False
    from .plan import bound

    limit = bound(rnumel)
    return limit is not None and limit <= MAX_SORT_ELEMENTS


def _loops(snode):
    return getattr(getattr(snode, "node", None), "data", None)


def is_sort(snode) -> bool:
    from torch._inductor import ir

    return isinstance(_loops(snode), ir.Sort)


def is_split_scan(snode) -> bool:
    from torch._inductor import ir

    return isinstance(_loops(snode), ir.SplitScan)


# -- scans -------------------------------------------------------------------------
def combine_helper(ops, combine_fn, dtypes) -> str:
    """The name of a ``@jit`` helper computing ``combine_fn`` (defined once per kernel and body)."""
    from torch._inductor.virtualized import V

    k = ops.k
    n = len(dtypes)
    args = [f"a{i}" for i in range(n)] + [f"b{i}" for i in range(n)]
    body = _HelperBody()
    helper_ops = _HelperOps(body)
    for name, dtype in zip(args, list(dtypes) * 2):
        helper_ops.dtypes[name] = dtype
    with V.set_ops_handler(helper_ops):
        results = combine_fn(tuple(args[:n]), tuple(args[n:]))
    results = [helper_ops._src(getattr(r, "value", r)) for r in results]  # OpsValue -> its variable
    if len(results) != n:
        raise Unsupported(f"scan combine function returned {len(results)} values for {n} inputs")
    lines = [f"    {line}" for line in body.lines]
    lines.append(f"    return {', '.join(results)}")
    params = ", ".join(args)
    text = "\n".join([f"def NAME({params}):"] + lines)
    helpers = getattr(k, "helpers", None)
    if helpers is None:
        helpers = k.helpers = {}
    if text not in helpers:
        helpers[text] = f"_combine{len(helpers)}"
    return helpers[text]


def helper_sources(k) -> list[str]:
    """The ``@jit`` helpers the kernel's scans call, as source lines (put before the kernel)."""
    out = []
    for text, name in getattr(k, "helpers", {}).items():
        out += ["", "", "@inductor_tile.jit", text.replace("def NAME(", f"def {name}(", 1)]
    return out


class _HelperBody:
    """What the ops handler needs of a kernel, for tracing a combine function into a helper."""

    scalar_shape = "[]"
    xsyms: list = []
    rsyms: list = []

    def __init__(self):
        self.lines: list[str] = []
        self.cse: dict[str, str] = {}
        self.counter = 0

    def define(self, expr: str) -> str:
        if expr in self.cse:
            return self.cse[expr]
        var = f"t{self.counter}"
        self.counter += 1
        self.lines.append(f"{var} = {expr}")
        self.cse[expr] = var
        return var


def _helper_ops_class():
    from .ops import TileOps

    class HelperOps(TileOps):
        """The ops handler inside a combine helper: elementwise ops only, constants as scalars."""

        def constant(self, value, dtype):
            from .common import literal

            return self._def(f"tl.full([], {literal(value, dtype)}, {tl_dtype(dtype)})", dtype)

        def load(self, name, index):
            raise Unsupported("a scan combine function that loads")

        def index_expr(self, expr, dtype):
            raise Unsupported("a scan combine function that reads an index")

    return HelperOps


def _HelperOps(body):
    return _helper_ops_class()(body)


def scan(ops, dtypes, combine_fn, values):
    """``ops.scan``: the inclusive scan of `values` (one variable each) along the tile's RBLOCK dim."""
    k = ops.k
    if k.plan.kind != "reduction" or k.current is None or k.current.kind != "reduction":
        raise Unsupported("scan outside a scan node")
    if k.tiled:
        raise Unsupported("scan in a tiled kernel")
    if is_split_scan(k.current.snode) and k.current.snode.get_device().type == "cuda":
        # one long row: Inductor's Triton kernel spreads it over many programs, ours would be one
        raise Unsupported("split scan (one long row over many programs)")
    work = tuple(compute_dtype(d) for d in dtypes)
    helper = combine_helper(ops, combine_fn, work)
    tiles = []
    for value, dtype in zip(values, work):
        v = ops._src(value)
        if ops._dtype(value) != dtype:
            v = k.define(f"{v}.to({tl_dtype(dtype)})")
        tiles.append(k.define(f"tl.broadcast_to({v}, [XBLOCK, RBLOCK])"))
    packed = k.define(f"tl.associative_scan(({', '.join(tiles)},), 1, {helper})")
    partial = [ops._def(f"{packed}[{i}]", dtype) for i, dtype in enumerate(work)]
    if k.persistent:
        return tuple(partial)
    return _looped(ops, helper, partial, work, packed)


def _looped(ops, helper, partial, work, packed):
    """The chunk's scan combined with the carry of the chunks before; the carry moves on."""
    k = ops.k
    done = getattr(k, "scan_carries", None)
    if done is None:
        done = k.scan_carries = {}
    if packed in done:
        return done[packed]
    carries = []
    for dtype in work:
        carry = f"carry{k.counter}"
        k.counter += 1
        k.acc_inits.append(f"{carry} = tl.full([XBLOCK, 1], 0, {tl_dtype(dtype)})")
        carries.append(carry)
    last_lane = k.define("tl.arange(0, RBLOCK)[None, :] == RBLOCK - 1")
    lasts = [k.define(f"tl.max(tl.where({last_lane}, {p}, {_lowest(dtype)}), 1)[:, None]")
             for p, dtype in zip(partial, work)]
    n = len(work)
    with_carry = k.define(f"{helper}({', '.join(carries)}, {', '.join(partial)})")
    next_carry = k.define(f"{helper}({', '.join(carries)}, {', '.join(lasts)})")
    results = []
    for i, dtype in enumerate(work):
        combined = f"{with_carry}[{i}]" if n > 1 else with_carry
        results.append(ops._def(f"tl.where(roffset > 0, {combined}, {partial[i]})", dtype))
    for i in range(n):
        moved = f"{next_carry}[{i}]" if n > 1 else next_carry
        k.emit(f"{carries[i]} = tl.where(roffset > 0, {moved}, {lasts[i]})")
    done[packed] = tuple(results)
    return done[packed]


def _lowest(dtype: torch.dtype) -> str:
    """A value no element is below (what a max over one chosen lane fills the others with)."""
    if dtype.is_floating_point:
        return 'float("-inf")'
    if dtype == torch.bool:
        return "False"
    return str(torch.iinfo(dtype).min)


# -- sorts -------------------------------------------------------------------------
def sort_launch(device_type: str, xnumel: int, rbound: int):
    """A persistent launch whose RBLOCK covers the sorted row."""
    from . import heuristics

    rblock = heuristics.next_pow2(rbound)
    if heuristics.is_gpu(device_type):
        xblock = max(1, min(heuristics.next_pow2(xnumel), 4096 // rblock))
        return heuristics.LaunchConfig(xblock, rblock, True, max(1, min(8, xblock * rblock // 256)))
    # the CPU target's gathers and shuffles grow with the tile: one row at a time
    return heuristics.LaunchConfig(1, rblock, True)


def sort(ops, dtypes, values, stable, descending):
    """``ops.sort``: `values` sorted along RBLOCK by the first one (see the module's docstring)."""
    k = ops.k
    if k.plan.kind != "reduction" or k.current is None or k.current.kind != "reduction":
        raise Unsupported("sort outside a sort node")
    if not k.persistent or k.tiled:
        raise Unsupported("sort in a looped kernel")
    if dtypes[0] not in _SORT_KEY_DTYPES:
        raise Unsupported(f"sort by {dtypes[0]} keys")
    tiles = [k.define(f"tl.broadcast_to({ops._src(v)}, [XBLOCK, RBLOCK])") for v in values]
    key = _ordered_key(k, tiles[0], dtypes[0], descending)
    position = k.define("tl.arange(0, RBLOCK)[None, :]")
    packed = k.define(f"({key}.to(tl.uint64) << 32) | {position}.to(tl.uint64)")
    packed = k.define(f"tl.where(rmask, {packed}, 0xFFFFFFFFFFFFFFFF)")
    order = k.define(f"(tl.sort({packed}, 1) & 0xFFFFFFFF).to(tl.int32)")
    return tuple(ops._def(f"tl.gather({tile}, {order}, 1)", dtype) for tile, dtype in zip(tiles, dtypes))


def _ordered_key(k, tile: str, dtype: torch.dtype, descending: bool) -> str:
    """A uint32 whose unsigned order is torch.sort's order of `tile`'s values (ascending)."""
    if dtype.is_floating_point:
        x = tile if dtype == torch.float32 else k.define(f"{tile}.to(tl.float32)")
        x = k.define(f"tl.where({x} == 0.0, 0.0, {x})")  # -0.0 sorts as 0.0
        bits = k.define(f"{x}.to(tl.int32, bitcast=True)")
        # negatives: all bits flipped (larger magnitude first); others: the sign bit set
        flipped = k.define(f"tl.where({bits} < 0, ~{bits}, {bits} | -2147483648)")
        key = k.define(f"tl.where({x} != {x}, -1, {flipped}).to(tl.uint32, bitcast=True)")  # NaN: the largest
    elif dtype in (torch.uint8, torch.bool):
        key = k.define(f"{tile}.to(tl.uint32)")
    else:
        key = k.define(f"({tile}.to(tl.int32) ^ -2147483648).to(tl.uint32, bitcast=True)")
    return k.define(f"~{key}") if descending else key
