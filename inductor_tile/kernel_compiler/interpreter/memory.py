"""Byte-addressed memory of one interpreted launch.

Kernels see pointers as int64 byte addresses (`tensor.data_ptr()`). `Memory` keeps the
storages of the launch's tensors and turns tiles of addresses into vectorized torch
gathers/scatters on uint8 views of those storages, so any address inside any registered
storage can be read or written with any element dtype.

Rules:
- masked-off lanes are never looked at (their address may be garbage);
- an active lane whose access is not fully inside one registered storage, or whose address
  is not a multiple of the element size, raises `IndexError` naming the first bad lane (in
  row-major order), its address and the nearest registered buffer; nothing is written
  by a store that raises;
- when several active lanes of one store hit the same address, the last lane in
  row-major order wins (deterministic, unlike a GPU where the winner is unspecified);
- an atomic read-modify-write updates the active lanes one at a time in row-major order,
  so lanes hitting one address see each other's updates (a GPU picks some order);
- `bool` (int1) values take one byte; loads turn any nonzero byte into True.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch


@dataclass(frozen=True)
class _Buffer:
    base: int
    nbytes: int
    data: torch.Tensor  # uint8 view of the whole storage (keeps it alive)


class Memory:
    """Registry of the torch storages that a launch's pointers may point into."""

    def __init__(self) -> None:
        self._buffers: list[_Buffer] = []  # sorted by base
        self._bases = torch.empty(0, dtype=torch.int64)
        self._ends = torch.empty(0, dtype=torch.int64)

    # --- registration ---------------------------------------------------------
    def register(self, t: torch.Tensor) -> int:
        """Remember t's whole storage; return the address of t's first element."""
        if t.device.type != "cpu":
            raise ValueError(f"the interpreter runs on CPU; got a tensor on {t.device}")
        storage = t.untyped_storage()
        base, nbytes = storage.data_ptr(), storage.nbytes()
        if nbytes > 0 and all(b.base != base for b in self._buffers):
            data = torch.empty(0, dtype=torch.uint8).set_(storage)
            self._buffers.append(_Buffer(base, nbytes, data))
            self._buffers.sort(key=lambda b: b.base)
            self._bases = torch.tensor([b.base for b in self._buffers], dtype=torch.int64)
            self._ends = torch.tensor([b.base + b.nbytes for b in self._buffers], dtype=torch.int64)
        return t.data_ptr()

    # --- access ---------------------------------------------------------------
    def load(self, addrs: torch.Tensor, mask: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor:
        """Elements of `dtype` at `addrs` (shape of addrs); masked-off lanes are 0."""
        flat, active = _active_lanes(addrs, mask)
        bits = _SAME_WIDTH_SIGNED.get(dtype, dtype)  # torch cannot index_put uint16/32/64: fill their bits
        out = torch.zeros(flat.numel(), dtype=bits)
        k = _itemsize(dtype)
        where = active.nonzero().squeeze(1)
        a = flat[where]
        buf = self._locate(a, k, "load", dtype, where, addrs.shape)
        for b in buf.unique().tolist():
            sel = (buf == b).nonzero().squeeze(1)
            buffer = self._buffers[b]
            bytes_ = buffer.data[_byte_index(a[sel] - buffer.base, k)]
            out[where[sel]] = _from_bytes(bytes_, bits)
        return out.view(dtype).reshape(addrs.shape)

    def store(self, addrs: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None) -> None:
        """Write `values` (broadcast to addrs' shape) at the active lanes of `addrs`."""
        flat, active = _active_lanes(addrs, mask)
        vals = torch.broadcast_to(values, addrs.shape).reshape(-1)
        k = _itemsize(values.dtype)
        where = active.nonzero().squeeze(1)
        where = where[_last_writers(flat[where])]
        a = flat[where]
        buf = self._locate(a, k, "store", values.dtype, where, addrs.shape)
        bytes_ = _to_bytes(vals[where], k)
        for b in buf.unique().tolist():
            sel = (buf == b).nonzero().squeeze(1)
            buffer = self._buffers[b]
            buffer.data[_byte_index(a[sel] - buffer.base, k)] = bytes_[sel]

    def atomic_update(self, addrs: torch.Tensor, mask: torch.Tensor | None, dtype: torch.dtype,
                      update: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> torch.Tensor:
        """Read-modify-write the elements of `dtype` at the active lanes of `addrs`, lane by lane in
        row-major order: `update(old, lanes)` gives the new values of the flat lane numbers `lanes`
        from their old values. Returns the old values (0 in masked-off lanes), shaped like addrs.

        Lanes are processed in rounds: round r updates every address's r-th lane, so each round
        touches distinct addresses and is one vectorized load and store."""
        flat, active = _active_lanes(addrs, mask)
        out = torch.zeros(flat.numel(), dtype=dtype)
        where = active.nonzero().squeeze(1)
        ranks = _occurrence_ranks(flat[where])
        rounds = int(ranks.max()) + 1 if ranks.numel() else 0
        for r in range(rounds):
            lanes = where[ranks == r]
            in_round = torch.zeros(flat.numel(), dtype=torch.bool)
            in_round[lanes] = True
            in_round = in_round.reshape(addrs.shape)
            old = self.load(addrs, in_round, dtype).reshape(-1)[lanes]
            out[lanes] = old
            new = torch.zeros(flat.numel(), dtype=dtype)
            new[lanes] = update(old, lanes).to(dtype)
            self.store(addrs, new.reshape(addrs.shape), in_round)
        return out.reshape(addrs.shape)

    # --- checking -------------------------------------------------------------
    def _locate(self, a: torch.Tensor, k: int, op: str, dtype: torch.dtype,
                lanes: torch.Tensor, shape: torch.Size) -> torch.Tensor:
        """Index of the buffer holding each access [a, a + k); raise IndexError if any is bad."""
        idx = torch.searchsorted(self._bases, a, right=True) - 1
        safe = idx.clamp(min=0)
        if self._buffers:  # `a <= end - k`, not `a + k <= end`: garbage addresses may overflow
            inside = (idx >= 0) & (a <= self._ends[safe] - k)
        else:
            inside = torch.zeros_like(a, dtype=torch.bool)
        aligned = (a & (k - 1)) == 0
        bad = ~(inside & aligned)
        if bool(bad.any()):
            first = int(bad.nonzero()[0, 0])
            lane = _unravel(int(lanes[first]), shape)
            raise IndexError(self._explain(op, dtype, k, int(a[first]), lane, int(bad.sum()), a.numel(),
                                           aligned=bool(aligned[first])))
        return safe

    def _explain(self, op: str, dtype: torch.dtype, k: int, addr: int, lane: tuple[int, ...],
                 nbad: int, nactive: int, aligned: bool) -> str:
        head = f"{op} of {dtype} at address {addr:#x} (lane {lane}; {nbad} of {nactive} active lanes are bad)"
        if addr == 0:
            head += ": null pointer"
        if not self._buffers:
            return f"{head}: no buffer is registered"
        nearest = min(self._buffers, key=lambda b: _distance(addr, k, b))
        buf = f"nearest buffer: base={nearest.base:#x}, size={nearest.nbytes} bytes"
        off = addr - nearest.base
        if not aligned:
            return f"{head}: misaligned for {dtype} (needs {k}-byte alignment); {buf}, byte offset {off}"
        if addr < nearest.base:
            return f"{head}: out of bounds, {nearest.base - addr} bytes before the start of the {buf}"
        past = addr + k - (nearest.base + nearest.nbytes)
        return (f"{head}: out of bounds, {past} bytes past the end of the {buf} "
                f"(element {off // k} of {nearest.nbytes // k})")


_SAME_WIDTH_SIGNED = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}


def _itemsize(dtype: torch.dtype) -> int:
    return torch.empty(0, dtype=dtype).element_size()


def _active_lanes(addrs: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Flattened addresses (int64) and flattened active-lane mask."""
    if addrs.dtype != torch.int64:
        raise TypeError(f"addresses must be int64, got {addrs.dtype}")
    flat = addrs.reshape(-1)
    if mask is None:
        return flat, torch.ones(flat.numel(), dtype=torch.bool)
    return flat, torch.broadcast_to(mask.to(torch.bool), addrs.shape).reshape(-1)


def _byte_index(offsets: torch.Tensor, k: int) -> torch.Tensor:
    """(n, k) byte indices of n accesses of k bytes at `offsets`."""
    return offsets.unsqueeze(1) + torch.arange(k, dtype=torch.int64)


def _from_bytes(b: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """(n, k) uint8 -> n elements of dtype (any nonzero byte is True for bool)."""
    if dtype == torch.bool:
        return b.squeeze(1) != 0
    return b.contiguous().view(dtype).squeeze(1)


def _to_bytes(v: torch.Tensor, k: int) -> torch.Tensor:
    """n elements -> (n, k) uint8 in memory order."""
    return v.contiguous().view(torch.uint8).reshape(-1, k)


def _last_writers(a: torch.Tensor) -> torch.Tensor:
    """Positions in `a` that are the last occurrence of their value (sorted by position)."""
    order = torch.argsort(a, stable=True)
    s = a[order]
    last = torch.ones_like(s, dtype=torch.bool)
    last[:-1] = s[:-1] != s[1:]
    return order[last].sort().values


def _occurrence_ranks(a: torch.Tensor) -> torch.Tensor:
    """For each position of `a`, how many earlier positions hold the same value."""
    order = torch.argsort(a, stable=True)
    s = a[order]
    positions = torch.arange(s.numel())
    starts_group = torch.ones_like(s, dtype=torch.bool)
    starts_group[1:] = s[1:] != s[:-1]
    group_start = torch.cummax(torch.where(starts_group, positions, 0), dim=0).values
    ranks = torch.empty_like(positions)
    ranks[order] = positions - group_start
    return ranks


def _distance(addr: int, k: int, b: _Buffer) -> int:
    if addr < b.base:
        return b.base - addr
    return max(0, addr + k - (b.base + b.nbytes))


def _unravel(pos: int, shape: torch.Size) -> tuple[int, ...]:
    out = []
    for n in reversed(shape):
        out.append(pos % n)
        pos //= n
    return tuple(reversed(out))
