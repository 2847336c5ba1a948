"""pipeline-loads' register budget (passes/pipeline_loads.py): the next iteration's operands are prefetched
through registers only while they fit beside the loop's dots. FileCheck on the TTGIR of the benchmark's
matmul for mma.sync (sm_80, no cp.async rings), and ptxas's report where the prefetch used to spill."""

from __future__ import annotations

import platform
import re

import pytest

from filecheck_tool import filecheck
from inductor_tile.kernel_compiler.passes import pipeline_loads
from inductor_tile.kernel_compiler.passes.pipeline_loads import dot_registers
from inductor_tile.kernel_compiler.ir import tt
from test_pipeline_async_copies import SM80_SHARED, _matmul_specs, _ptx, _ttgir
from model_benchmarks import dot_kernels

needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")

PREFETCHED = """
CHECK: tt.load
CHECK: tt.load
CHECK: scf.for
CHECK: tt.load
CHECK: tt.load
CHECK: tt.dot
CHECK: scf.yield
"""

NOT_PREFETCHED = """
CHECK-NOT: tt.load
CHECK: scf.for
CHECK: tt.load
CHECK: tt.load
CHECK: tt.dot
"""


@pytest.fixture(autouse=True)
def no_rings(monkeypatch):
    monkeypatch.delenv("TILE_PIPELINE", raising=False)  # mma.sync: every operand goes through registers


def _sm80_ttgir(blocks, num_warps: int, operands: str) -> str:
    return _ttgir(dot_kernels.matmul_kernel, _matmul_specs(*blocks, operands=operands), mma_version=2, num_stages=3,
                  num_warps=num_warps, shared=SM80_SHARED)


@pytest.mark.parametrize("blocks,num_warps,operands,checks", [
    ((64, 64, 32), 4, "fp32", PREFETCHED),
    ((128, 128, 32), 4, "fp16", PREFETCHED),
    ((128, 128, 32), 4, "fp32", NOT_PREFETCHED),  # 128 accumulator registers, b's 32 x 128 in every warp
    ((128, 128, 32), 8, "fp32", NOT_PREFETCHED),
    ((128, 256, 64), 8, "fp16", NOT_PREFETCHED),
], ids=["fp32-64x64-w4", "fp16-128x128-w4", "fp32-128x128-w4", "fp32-128x128-w8", "fp16-128x256x64-w8"])
def test_prefetch_within_the_register_budget(blocks, num_warps, operands, checks, tmp_path):
    filecheck(_sm80_ttgir(blocks, num_warps, operands), checks, tmp_path)


def test_loads_are_kept_in_body_order_while_they_fit(monkeypatch, tmp_path):
    """A budget with room for a's tile alone (16 registers at 64 x 32 fp32, 4 warps) prefetches a, not b."""
    monkeypatch.setattr(pipeline_loads, "PREFETCH_REGISTER_BUDGET", _dot_cost((64, 64, 32), 4, "fp32") + 16)
    text = _sm80_ttgir((64, 64, 32), 4, "fp32")
    filecheck(text, """
CHECK: tt.load {{.*}} -> tensor<64x32xf32
CHECK-NOT: tt.load
CHECK: scf.for
CHECK: tt.load {{.*}} -> tensor<64x32xf32
CHECK: tt.load {{.*}} -> tensor<32x64xf32
CHECK: tt.dot
""", tmp_path)


def _dot_cost(blocks, num_warps: int, operands: str) -> int:
    from inductor_tile.kernel_compiler.frontend.code_generator import generate_ttir
    from inductor_tile.kernel_compiler.ir_builder import TTIRBuilder
    from inductor_tile.kernel_compiler.passes.pipeline import optimize_ttir

    module = optimize_ttir(generate_ttir(dot_kernels.matmul_kernel, _matmul_specs(*blocks, operands=operands),
                                         TTIRBuilder()))
    dot = next(op for op in module.walk() if isinstance(op, tt.DotOp))
    return dot_registers(dot, num_warps)


def test_dot_registers_counts_replicated_operands():
    # 64 x 64 fp32 at 4 warps (mma warps 4 x 1): accumulator 32, a 2 x 16, b (in every warp) 2 x 64
    assert _dot_cost((64, 64, 32), 4, "fp32") == 32 + 32 + 128
    # 128 x 128 fp16 at 4 warps: accumulator 128, a 16, b 64
    assert _dot_cost((128, 128, 32), 4, "fp16") == 128 + 16 + 64


@needs_ptxas
def test_fp32_128x128_at_8_warps_does_not_spill_on_sm80():
    """With both operands prefetched ptxas used 255 registers and spilled 24 B; without, 190 and none."""
    _, report, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32, operands="fp32"), 80, 3, num_warps=8)
    assert re.search(r" 0 bytes spill stores", report), report
