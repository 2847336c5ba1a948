"""`tl.extra.cuda.globaltimer()` and `smid()`: inline PTX reads of `%globaltimer` and `%smid` on NVIDIA
(checked through ptxas here, run in tests/gpu/test_cuda_registers_gpu.py); other targets refuse them
at the user's line."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
from inductor_tile.kernel_compiler.to_llvm.context import LoweringError
from test_nvidia_ptx import filecheck


@inductor_tile.jit
def timed_loop_kernel(counts_ptr, elapsed_ptr, sm_ptr, steps):
    start = tl.extra.cuda.globaltimer()
    offsets = tl.arange(0, 128)
    for _ in range(steps):
        tl.store(counts_ptr + offsets, tl.load(counts_ptr + offsets) + 1)
    tl.store(elapsed_ptr + tl.program_id(0), tl.extra.cuda.globaltimer() - start)
    tl.store(sm_ptr + tl.program_id(0), tl.extra.cuda.smid())


SIGNATURE = {"counts_ptr": "*i64", "elapsed_ptr": "*i64", "sm_ptr": "*i32", "steps": "i32"}


def test_register_reads_in_the_ptx(tmp_path):
    ptx = inductor_tile.compile(timed_loop_kernel, SIGNATURE, target="cuda:90", num_warps=4).asm["ptx"]
    check_ptx(ptx, "sm_90", "timed_loop")
    assert ptx.count("%globaltimer") == 2 and ptx.count("%smid") == 1, ptx
    filecheck(ptx, "CHECK: mov.u64 {{%rd[0-9]+}}, %globaltimer;\nCHECK: ld.global\n"
                   "CHECK: mov.u64 {{%rd[0-9]+}}, %globaltimer;\nCHECK: mov.u32 {{%r[0-9]+}}, %smid;\n", tmp_path)


def test_the_cpu_target_refuses_them_at_the_call():
    args = (torch.zeros(128, dtype=torch.int64), torch.zeros(1, dtype=torch.int64), torch.zeros(1, dtype=torch.int32), 3)
    with pytest.raises(LoweringError, match=r"test_cuda_registers.py:19: tl.extra.cuda.globaltimer\(\) "
                                                                r"reads an NVIDIA GPU register: the cpu target has none"):
        timed_loop_kernel[(1,)](*args)
