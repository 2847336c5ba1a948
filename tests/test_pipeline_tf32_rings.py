"""fp32 operands of "tf32" mma.sync dots in cp.async rings (TILE_PIPELINE=1 on sm_80): pipeline-async-copies
puts both operands in rings of K-major tf32 tiles (to_llvm/dot_async.py), ldmatrix reads them and the dot
rounds each fragment to tf32 (dot_tf32.py). FileCheck on the TTGIR, the PTX run by the PTX interpreter
(dot_ptx_sim.py, cp.async included) against float64, and ptxas's registers."""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from dot_ptx_sim import Machine
from filecheck_tool import filecheck
from model_benchmarks import dot_kernels
from test_dot_tf32_ptx_sim import _simulate, fp32_loop_dot_kernel
from test_pipeline_async_copies import SM80_SHARED, SM90_SHARED, _matmul_specs, _ptx, _ttgir
from tf32_reference import tf32, tf32_truncated

needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@pytest.fixture(autouse=True)
def rings_on(monkeypatch):
    monkeypatch.setenv("TILE_PIPELINE", "1")
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    monkeypatch.delenv("TILE_TF32_MMA", raising=False)
    monkeypatch.delenv("TILE_WGMMA", raising=False)


def test_tf32_operands_go_through_rings_on_mma_sync(tmp_path):
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(64, 64, 32, operands="fp32"), mma_version=2,
                  num_stages=3, shared=SM80_SHARED)
    filecheck(text, """
CHECK: %[[A:.*]] = ttg.ring_alloc : !ttg.ring<3x64x32xf32>
CHECK: %[[B:.*]] = ttg.ring_alloc : !ttg.ring<3x32x64xf32>
CHECK-COUNT-2: ttg.async_commit_group
CHECK: scf.for
CHECK-NEXT: ttg.async_wait {pending = 1 : i32}
CHECK-NOT: tt.load
CHECK: %[[X:.*]] = ttg.ring_read %[[A]], {{.*}} -> tensor<64x32xf32, #ttg.dot_op<{opIdx = 0
CHECK: %[[Y:.*]] = ttg.ring_read %[[B]], {{.*}} -> tensor<32x64xf32, #ttg.dot_op<{opIdx = 1
CHECK: tt.dot %[[X]], %[[Y]], {{.*}} {input_precision = "tf32"}
CHECK: ttg.async_wait {pending = 0 : i32}
""", tmp_path)


@pytest.mark.parametrize("mma_version,shared", [(2, SM80_SHARED), (3, SM90_SHARED)], ids=["mma.sync", "wgmma"])
def test_tf32x3_keeps_its_operands_out_of_rings(mma_version, shared):
    """tf32x3 splits each operand in registers (big and small parts): no ring, on either instruction."""
    from xdsl.dialects.builtin import StringAttr

    from inductor_tile.kernel_compiler.frontend.code_generator import generate_ttir
    from inductor_tile.kernel_compiler.ir.context import print_ir
    from inductor_tile.kernel_compiler.ir_builder import TTIRBuilder
    from inductor_tile.kernel_compiler.passes.pipeline import make_ttgir, optimize_ttir

    module = optimize_ttir(generate_ttir(dot_kernels.matmul_kernel, _matmul_specs(64, 64, 32, operands="fp32"),
                                         TTIRBuilder()))
    for op in module.walk():
        if op.name == "tt.dot":
            op.properties["input_precision"] = StringAttr("tf32x3")
    text = print_ir(make_ttgir(module, 4, 32, mma_version=mma_version, num_stages=3, shared_limit=shared))
    assert "!ttg.ring<3x64x32xf32>" not in text and "ttg.async_copy" not in text


def test_tf32_wgmma_operands_go_through_rings(tmp_path):
    """sm_90: both fp32 operands of a "tf32" wgmma dot in rings, the dot left in flight as a 16-bit one."""
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32, operands="fp32"), mma_version=3,
                  num_stages=3, shared=SM90_SHARED)
    filecheck(text, """
CHECK: %[[A:.*]] = ttg.ring_alloc : !ttg.ring<3x128x32xf32>
CHECK: %[[B:.*]] = ttg.ring_alloc : !ttg.ring<3x32x128xf32>
CHECK: scf.for
CHECK-NEXT: ttg.async_wait {pending = 1 : i32}
CHECK: %[[X:.*]] = ttg.ring_read %[[A]], {{.*}} -> tensor<128x32xf32, #ttg.dot_op<{opIdx = 0, parent = {{.*}}versionMajor = 3
CHECK: %[[Y:.*]] = ttg.ring_read %[[B]], {{.*}} -> tensor<32x128xf32, #ttg.dot_op<{opIdx = 1
CHECK: %[[D:.*]] = tt.dot %[[X]], %[[Y]], {{.*}} {input_precision = "tf32"}
CHECK-NEXT: ttg.dot_wait %[[D]] {pending = 1 : i32}
CHECK: ttg.dot_wait %{{.*}} {pending = 0 : i32}
CHECK-NEXT: ttg.async_wait {pending = 0 : i32}
""", tmp_path)


@needs_ptxas
@pytest.mark.parametrize("M,N,K,num_warps", [(64, 64, 64, 4), (128, 64, 32, 8)])
def test_wgmma_ring_ptx_computes_the_truncated_tf32_product(M, N, K, num_warps):
    """sm_90a: wgmma reads the raw fp32 slots, and the tensor core keeps the top 19 bits of each operand
    (the interpreter's model of the hardware, on which Triton's tf32 wgmma dots rely too): the product of
    truncated operands, measurably not that of rounded ones (mma.sync's cvt.rna, and the conversions')."""
    ptx, to_truncated, to_exact = _simulate(fp32_loop_dot_kernel, "tf32", 90, M, N, K, num_warps,
                                            reference=tf32_truncated)
    loop = ptx.split("cp.async.wait_group 1;")[1].split("cp.async.wait_group 0;")[0]
    assert "cp.async" in loop and "ld.global" not in loop and "st.shared" not in loop  # straight into the slots
    assert "m64n" in loop and "k8.f32.tf32.tf32" in loop and "wgmma.wait_group.sync.aligned 1;" in loop
    assert "cvt.rna.tf32.f32" not in ptx
    assert to_truncated <= 1e-5, to_truncated
    _, to_rounded, _ = _simulate(fp32_loop_dot_kernel, "tf32", 90, M, N, K, num_warps)
    assert to_rounded >= 1e-4 and to_exact >= 1e-4  # truncation: not rounded, not fp32


@needs_ptxas
@pytest.mark.parametrize("blocks,num_warps", [((128, 128, 32), 4), ((128, 256, 32), 8)])
def test_wgmma_ring_ptx_keeps_groups_in_flight(blocks, num_warps):
    """The benchmark's fp32 configs on sm_90a: ptxas keeps the wgmma groups asynchronous, no spills."""
    ptx, report, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(*blocks, operands="fp32"), 90, 3,
                          num_warps=num_warps)
    assert "wgmma.wait_group.sync.aligned 1;" in ptx and "cp.async.cg.shared.global" in ptx
    assert "serialized" not in report and " 0 bytes spill stores" in report, report


@needs_ptxas
@pytest.mark.parametrize("M,N,K,num_warps", [(64, 64, 64, 4), (128, 64, 32, 4), (64, 128, 32, 8)])
def test_ring_ptx_computes_the_tf32_product(M, N, K, num_warps):
    ptx, to_rounded, to_exact = _simulate(fp32_loop_dot_kernel, "tf32", 80, M, N, K, num_warps)
    loop = ptx.split("cp.async.wait_group 1;")[1].split("cp.async.wait_group 0;")[0]
    assert "cp.async.ca.shared.global" in loop and "ld.global" not in loop  # the operands arrive by cp.async
    assert "cvt.rna.tf32.f32" in ptx  # the slots hold raw fp32: each fragment is rounded after ldmatrix
    assert to_rounded <= 1e-5, to_rounded
    assert to_exact >= 1e-5  # tf32, not fp32


@needs_ptxas
@pytest.mark.parametrize("blocks,num_warps,most", [((128, 128, 32), 8, 200), ((64, 64, 32), 4, 150)])
def test_ring_registers_without_spills_on_sm80(blocks, num_warps, most):
    """ptxas -v for sm_80: fp32 128x128x32 at 8 warps 198 registers with rings (190 without the prefetch,
    255 and 24 B of spills with it), 64x64x32 at 4 warps 140 (164 with the prefetch)."""
    ptx, report, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(*blocks, operands="fp32"), 80, 3,
                          num_warps=num_warps)
    # a's runs of 4 k: one 16-byte copy each; b's runs go along N, across the K-major tile: 4 bytes each
    assert "cp.async.cg.shared.global" in ptx
    assert re.search(r"cp\.async\.ca\.shared\.global .*, 4, ", ptx)
    registers = int(re.search(r"Used (\d+) registers", report).group(1))
    assert " 0 bytes spill stores" in report and registers <= most, report


@inductor_tile.jit
def masked_loop_kernel(a_ptr, b_ptr, out_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A matmul of one block (M, N <= BM, BN) whose loads are masked at the edges."""
    rows, cols, ks = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        k = k0 + ks
        a = tl.load(a_ptr + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None] * N + cols[None, :], mask=(k[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("shape,num_stages", [((60, 50, 45), 3), ((50, 40, 16), 4)], ids=["edges", "one-step"])
def test_masked_ring_copies_fill_zeros(shape, num_stages, arch):
    """Masked-off elements arrive as zeros (cp.async's source size 0), and copies past the last iteration
    are masked off: the block's product against float64 of tf32-rounded operands (sm_80, mma.sync) or
    truncated ones (sm_90, wgmma reading the raw slots)."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

    M, N, K = shape
    signature = {"a_ptr": "*fp32", "b_ptr": "*fp32", "out_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
    blocks = {"BM": 64, "BN": 64, "BK": 32}
    specs = [spec_from_signature(n, signature[n]) if n in signature else spec_from_signature(n, "constexpr", blocks[n])
             for n in masked_loop_kernel.arg_names]
    ptx = compile_specialized(masked_loop_kernel, specs, target=f"cuda:{arch}", num_warps=4, native=False,
                              num_stages=num_stages).asm["ptx"]
    assert "cp.async.ca.shared.global" in ptx and ("k8.f32.tf32.tf32" in ptx) == (arch == 90)
    gen = torch.Generator().manual_seed(3)
    a, b = torch.randn(M, K, generator=gen), torch.randn(K, N, generator=gen)
    out = np.full((M, N), np.nan, dtype=np.float32)
    machine = Machine(ptx, 128, [a.numpy(), b.numpy(), out], {"3": M, "4": N, "5": K})
    machine.run(max_steps=2000000)
    got = torch.from_numpy(machine.buffer(2, out)).double()
    cut = tf32 if arch == 80 else tf32_truncated
    rounded = cut(a) @ cut(b)
    assert not got.isnan().any()
    assert (got - rounded).abs().max() / rounded.abs().max() <= 1e-5


def test_wgmma_ring_copy_sizes_select_once_per_row():
    """sm_90, fp32 128x128x32 on 4 warps (the benchmark's): each copy's byte count is one select on its own
    row's bound of a count selected once for the bounds all of the thread's copies share (the k step's, the
    loop's guard): a select per row, not a chain of three per copy (a: 8 rows of 16-byte copies; b: 8 k rows of
    four 4-byte copies, its tile being K-major; `k < K`, K a multiple of 16, is one bit for 4 of those rows,
    so 2 selects)."""
    ptx, _, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32, operands="fp32"), 90, 3)
    loop = ptx[ptx.index("cp.async.wait_group 1;"):ptx.index("cp.async.wait_group 0;")]
    copies = re.findall(r"cp\.async\.(?:ca|cg)\.shared\.global \[%r\d+ \+ \d+\], \[%rd\d+\], (\d+), (%r\d+);", loop)
    assert sorted({width for width, _ in copies}) == ["16", "4"] and len(copies) == 8 + 32
    selects = dict(re.findall(r"selp\.b32\s+(%r\d+), (%r\d+|\d+), 0, %p\d+;", loop))
    for width, rows in (("16", 8), ("4", 2)):
        sizes = {size for w, size in copies if w == width}
        assert len(sizes) == rows  # one per row (per 16 rows of k)
        shared = {selects[size] for size in sizes}
        assert len(shared) == 1 and shared.pop() in selects  # one count, itself selected, for all of them
