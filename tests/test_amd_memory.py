"""AMD memory accesses in the disassembly: scalar loads and stores (one element, no tile) address global
memory (`ptr addrspace(1)`) as tile accesses do, so they become global_* or s_load instructions, never the
flat_* ones that also check for LDS and scratch apertures."""

from __future__ import annotations

import pytest
from filecheck_tool import filecheck
from test_amd_target import _disassembly, needs_lld, needs_objdump

import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def scalar_access_kernel(x_ptr, out_ptr, flag_ptr, n):
    pid = tl.program_id(0)
    tl.store(out_ptr + pid, 1.0)
    v = tl.load(out_ptr + pid + n)  # after a store that may alias it: a vector-memory load, not s_load
    w = tl.load(x_ptr + pid + 1, mask=pid + 1 < n, other=0.0)
    tl.store(out_ptr + pid, v * 2.0 + w)
    tl.store(flag_ptr + pid, v > 0.0, mask=pid < n)


SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32", "flag_ptr": "*i1", "n": "i32"}


@needs_lld
@needs_objdump
@pytest.mark.parametrize("arch, load, store, byte", [("gfx942", "global_load_dword", "global_store_dword",
                                                      "global_store_byte"),
                                                     ("gfx1100", "global_load_b32", "global_store_b32",
                                                      "global_store_b8")])
def test_scalar_loads_and_stores_use_global_instructions(tmp_path, arch, load, store, byte):
    kernel = inductor_tile.compile(scalar_access_kernel, signature=SIGNATURE, constexprs={}, target=f"hip:{arch}",
                                   num_warps=1)
    assert "ptr addrspace(1)" in kernel.asm["llir"]
    text = _disassembly(kernel, arch)
    assert "flat_" not in text
    filecheck(text, f"CHECK: {store} \nCHECK: {load} \nCHECK: {store} \nCHECK: {byte} \n", tmp_path)
