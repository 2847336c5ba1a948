"""Where the tf32 operand tiles of a wgmma dot lie in shared memory (`dot_wgmma_tf32.py`): K-major
core matrices of 8 rows (mn) x 16 bytes (4 consecutive k), and the padding between them that keeps
the operand's stores from hitting the same banks.

Element (mn, k) lies at (16-bit units, as `dot_wgmma.descriptor` counts)
    (mn / 8) * sbo + (k / 4) * lbo + (mn % 8) * 8 + (k % 4) * 2,
sbo = 64 + padding along MN, lbo = (MN / 8) * sbo + padding along K (multiples of 8 units: the
descriptor holds 16-byte units). Without padding, the 16-byte stores of a row's runs of k (a as
loaded) all start lbo apart, a multiple of 128 bytes: one bank group for a whole quarter-warp; and the
4-byte stores of 32 consecutive mn at one k (b as loaded) fall in 2 of the 8 groups. `choose_padding`
simulates warp 0's first stores and keeps the padding with the fewest conflicts.
"""

from __future__ import annotations

from ..ir.layouts import LayoutMap
from .dot_wgmma import WgmmaTile, wgmma_row

CORE_UNITS = 64  # a core matrix: 128 bytes, in 16-bit units


def tf32_tile(mn_size: int, k_size: int, mn_padding: int = 0, k_padding: int = 0) -> WgmmaTile:
    """The K-major tile of mn_size x k_size fp32 elements (strides and paddings in 16-bit units)."""
    sbo = CORE_UNITS + mn_padding
    lbo = (mn_size // 8) * sbo + k_padding
    return WgmmaTile(False, sbo=sbo, lbo=lbo, elements=(k_size // 4) * lbo)


def tf32_offset(o, tile: WgmmaTile, mn, k):
    """Offset (16-bit units) of element (mn, k) in `tile`."""
    core = o.add(o.mul(o.shr(mn, 3), tile.sbo), o.mul(o.shr(k, 2), tile.lbo))
    return o.add(core, o.add(o.mul(o.and_(mn, 7), 8), o.mul(o.and_(k, 3), 2)))


def register_a_k(o, k):
    """Where b's row k is stored when a comes from registers: within each 8, k = 2t + j goes to t + 4j
    (the k a lane's m16n8k8 registers t and t + 4 stand for)."""
    low = o.and_(k, 7)
    return o.add(o.add(o.mul(o.shr(k, 3), 8), o.shr(low, 1)), o.mul(o.and_(low, 1), 4))


def k_run(src_map: LayoutMap, op_idx: int) -> int:
    """Consecutive slots of a thread along K stored as one 16-byte vector (4), else 1."""
    root = src_map.root
    k_dim = 1 if op_idx == 0 else 0
    return 4 if root.order[0] == k_dim and root.size_per_thread[k_dim] % 4 == 0 else 1


def store_place(o, tile: WgmmaTile, op_idx: int, row, col, groups: int, permuted: bool):
    """Offset (16-bit units) where tensor element (row, col) of operand `op_idx` is stored: a's rows in wgmma's
    order for `groups` warpgroups (0: mma.sync, rows as they are), k relabelled when `permuted` (the other
    operand comes from registers)."""
    mn, k = (wgmma_row(o, row, groups) if groups else row, col) if op_idx == 0 else (col, row)
    if permuted:
        k = register_a_k(o, k)
    return tf32_offset(o, tile, mn, k)


def conflicts(src_map: LayoutMap, op_idx: int, tile: WgmmaTile, groups: int, permuted: bool) -> int:
    """Bank conflicts of warp 0's first stores: per phase (a quarter-warp of 16-byte stores, or the
    warp's 4-byte stores), the most distinct addresses in one bank (group), summed."""
    from .dot_operands import IntOps

    o = IntOps()
    run = 1 if permuted else k_run(src_map, op_idx)
    phases = [range(q, q + 8) for q in range(0, 32, 8)] if run == 4 else [range(32)]
    cost = 0
    for first in range(0, min(src_map.num_slots, 4 * run), run):
        for lanes in phases:
            banks: dict[int, set[int]] = {}
            for lane in lanes:
                row, col = src_map.index(first, lane, 0)
                address = 2 * store_place(o, tile, op_idx, row, col, groups, permuted)
                bank = (address // 16) % 8 if run == 4 else (address // 4) % 32
                banks.setdefault(bank, set()).add(address)
            cost += max(len(addresses) for addresses in banks.values())
    return cost


def choose_tile(src_map: LayoutMap, op_idx: int, groups: int, permuted: bool = False) -> WgmmaTile:
    """The padded tile (paddings of 0-48 bytes along MN, 0-112 along K) with the fewest conflicts for the
    stores from `src_map`; the smallest among equals."""
    rows, cols = src_map.shape
    mn_size, k_size = (rows, cols) if op_idx == 0 else (cols, rows)
    best, best_key = None, None
    for mn_padding in range(0, 32, 8):
        for k_padding in range(0, 64, 8):
            tile = tf32_tile(mn_size, k_size, mn_padding, k_padding)
            key = (conflicts(src_map, op_idx, tile, groups, permuted), tile.elements)
            if best_key is None or key < best_key:
                best, best_key = tile, key
    assert best is not None
    return best
