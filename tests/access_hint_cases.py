"""Kernels whose loads and stores carry cache hints (cache_modifier, eviction_policy, volatile), with
torch references: shared by the CPU/interpreter tests (test_access_hints.py), the PTX tests and the
GPU tests. Hints never change a value, so each kernel must give exactly what it gives without them."""

from __future__ import annotations

import torch

import inductor_tile
import inductor_tile.language as tl
from suite import Check, poison

#: (load cache modifier, load eviction policy, volatile, store cache modifier, store eviction policy)
HINTS = [
    (".ca", "", False, ".wb", ""),
    (".cg", "evict_first", False, ".cg", "evict_last"),
    (".cs", "", False, ".cs", "evict_first"),
    (".cv", "evict_last", False, ".wt", ""),
    ("", "evict_last", False, "", "evict_first"),
    ("", "", True, "", ""),
]


@inductor_tile.jit
def hinted_axpy_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, LOAD_CACHE: tl.constexpr,
                       LOAD_EVICT: tl.constexpr, VOLATILE: tl.constexpr, STORE_CACHE: tl.constexpr,
                       STORE_EVICT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    # a masked contiguous load, an unmasked one, a gathered one (every third element) and a scalar
    x = tl.load(x_ptr + offs, mask=inside, other=0.0, cache_modifier=LOAD_CACHE, eviction_policy=LOAD_EVICT,
                volatile=VOLATILE)
    y = tl.load(y_ptr + offs, cache_modifier=LOAD_CACHE, eviction_policy=LOAD_EVICT, volatile=VOLATILE)
    z = tl.load(y_ptr + (offs * 3) % n, mask=inside, other=1.0, cache_modifier=LOAD_CACHE,
                eviction_policy=LOAD_EVICT, volatile=VOLATILE)
    a = tl.load(x_ptr + n, cache_modifier=LOAD_CACHE, eviction_policy=LOAD_EVICT, volatile=VOLATILE)
    tl.store(out_ptr + offs, a * x + y * z, mask=inside, cache_modifier=STORE_CACHE, eviction_policy=STORE_EVICT)
    tl.store(out_ptr + n + tl.program_id(0), a, cache_modifier=STORE_CACHE, eviction_policy=STORE_EVICT)


def hinted_axpy(gen: torch.Generator, device: str, hints: tuple, n: int = 1000, block: int = 256) -> list[Check]:
    """`hinted_axpy_kernel` with `hints` (one row of HINTS) on random inputs; out poisoned with NaN."""
    load_cache, load_evict, volatile, store_cache, store_evict = hints
    programs = (n + block - 1) // block
    x = torch.randn(n + 1, generator=gen, dtype=torch.float64)
    y = torch.randn(programs * block, generator=gen, dtype=torch.float64)
    out = poison(torch.empty(n + programs, dtype=torch.float32, device=device))
    hinted_axpy_kernel[(programs,)](x.float().to(device), y.float().to(device), out, n, BLOCK=block,
                                    LOAD_CACHE=load_cache, LOAD_EVICT=load_evict, VOLATILE=volatile,
                                    STORE_CACHE=store_cache, STORE_EVICT=store_evict)
    xf, yf = x.float().double(), y.float().double()
    offs = torch.arange(n)
    expected = xf[n] * xf[:n] + yf[:n] * yf[(offs * 3) % n]
    return [Check("out", out[:n], expected, 1e-6, 1e-5),
            Check("scalar stores", out[n:], xf[n].repeat(programs))]
