"""A kernel that stores to an address and reads it again sees its own store; a value several threads
hold is stored by one of them.

NVIDIA's predicated loads are inline asm: unless marked as having side effects, LLVM takes them for
code that touches no memory and merges a load after a store with the load before it (Triton's
test_call: the second call of a helper read the input the first call had overwritten) or hoists it out
of a loop that stores there. A scalar or a replicated element stored by every thread races with
threads that load it late (Triton's test_load_store_same_ptr). The kernels run on the CPU here and on
the GPU in tests/gpu/test_memory_order_gpu.py; their sm_90 PTX is checked here.
"""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
from test_nvidia_ptx import filecheck


@inductor_tile.jit
def _scale(ptr, n, factor):
    offsets = tl.program_id(0) * 128 + tl.arange(0, 128)
    mask = offsets < n
    tl.store(ptr + offsets, tl.load(ptr + offsets, mask=mask) * factor, mask=mask)


@inductor_tile.jit
def scale_twice_kernel(ptr, n, first, second):
    _scale(ptr, n, first)
    _scale(ptr, n, second)


@inductor_tile.jit
def count_in_memory_kernel(ptr, steps):
    offsets = tl.program_id(0) * 64 + tl.arange(0, 64)
    for _ in range(steps):
        tl.store(ptr + offsets, tl.load(ptr + offsets) + 1.0)


@inductor_tile.jit
def double_scalar_kernel(ptr):
    pid = tl.program_id(0)
    tl.store(ptr + pid, tl.load(ptr + pid) * 2)


@inductor_tile.jit
def double_small_tile_kernel(ptr):
    offsets = tl.program_id(0) * 16 + tl.arange(0, 16)
    tl.store(ptr + offsets, tl.load(ptr + offsets) * 2)


def run_cases(device: str, num_warps: int = 4) -> None:
    """Each kernel on random data, the expected values computed in float64."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1000, generator=g, dtype=torch.float64)
    y = x.float().to(device)
    scale_twice_kernel[(8,)](y, 1000, 3.0, -5.0, num_warps=num_warps)
    torch.testing.assert_close(y.cpu().double(), x * -15.0, rtol=1e-6, atol=1e-6)

    x = torch.randn(4 * 64, generator=g, dtype=torch.float64)
    y = x.float().to(device)
    count_in_memory_kernel[(4,)](y, 7, num_warps=num_warps)
    torch.testing.assert_close(y.cpu().double(), x + 7.0, rtol=1e-6, atol=1e-5)

    for kernel, width in [(double_scalar_kernel, 1), (double_small_tile_kernel, 16)]:
        x = torch.randn(64 * width, generator=g, dtype=torch.float64)
        for _ in range(20 if device == "cuda" else 1):  # a race shows up in some launches only
            y = x.float().to(device)
            kernel[(64,)](y, num_warps=num_warps)
            torch.testing.assert_close(y.cpu().double(), x * 2.0, rtol=1e-6, atol=1e-6)


def test_cases_on_the_cpu():
    run_cases("cpu")


def _ptx(kernel, signature, num_warps=4) -> str:
    ptx = inductor_tile.compile(kernel, signature, target="cuda:90", num_warps=num_warps).asm["ptx"]
    check_ptx(ptx, "sm_90", kernel.__name__)
    return ptx


def test_a_load_after_a_store_to_its_address_stays(tmp_path):
    ptx = _ptx(scale_twice_kernel, {"ptr": "*fp32", "n": "i32", "first": "fp32", "second": "fp32"})
    filecheck(ptx, "CHECK: ld.global\nCHECK: st.global\nCHECK: ld.global\nCHECK: st.global\n", tmp_path)


def test_a_load_in_a_loop_that_stores_there_stays_in_the_loop(tmp_path):
    ptx = _ptx(count_in_memory_kernel, {"ptr": "*fp32", "steps": "i32"})
    filecheck(ptx, "CHECK: [[LOOP:\\$L__BB[0-9_]+]]:\nCHECK: ld.global\nCHECK: st.global\n"
                   "CHECK: bra{{.*}} [[LOOP]];\n", tmp_path)


@pytest.mark.parametrize("num_warps", [4, 32])
def test_a_scalar_is_stored_by_one_thread(num_warps, tmp_path):
    ptx = _ptx(double_scalar_kernel, {"ptr": "*fp32"}, num_warps)
    assert ptx.count("st.global") == 1, ptx
    filecheck(ptx, "CHECK: %tid.x\nCHECK: @[[FIRST:%p[0-9]+]] st.global\n", tmp_path)


def test_copies_of_an_element_are_stored_by_their_owner(tmp_path):
    ptx = _ptx(double_small_tile_kernel, {"ptr": "*fp32"})  # 16 elements over 128 threads
    filecheck(ptx, "CHECK: %tid.x\nCHECK: setp.{{.*}} [[OWNER:%p[0-9]+]],\nCHECK: @[[OWNER]] st.global\n", tmp_path)
