"""Hopper's wgmma path of tl.dot checked without a GPU.

- The bookkeeping, simulated: every thread stores its elements where `dot_wgmma` puts them,
  the tensor core reads each m64nNk16 instruction's operands through the matrix descriptor's
  start, LBO and SBO as the PTX ISA defines the no-swizzle layouts (written out here on their
  own), and the registers each thread gets back (wgmma's accumulator fragment) must be the
  slots of the mma layout that hold a @ b + c.
- The 16-byte stores of the usual load layouts fall in different banks.
- On sm_90 (the default; TILE_WGMMA=0 turns it off) the matmul's TTGIR has `versionMajor = 3`, its PTX
  wgmma instructions, and ptxas accepts it for sm_90a; with TILE_WGMMA=0 it keeps mma.sync.
"""

from __future__ import annotations

import platform
import re

import pytest
import torch

from inductor_tile.kernel_compiler.ir.dot_layouts import NvidiaMma
from inductor_tile.kernel_compiler.ir.layouts import Blocked, LayoutMap
from inductor_tile.kernel_compiler.passes.accelerate_matmul import wgmma_shape
from inductor_tile.kernel_compiler.to_llvm.dot_operands import IntOps, store_run, stored_transposed
from inductor_tile.kernel_compiler.to_llvm.dot_wgmma import choose_padding, store_offset, tile_layout
from wgmma_sim import check_accumulators, instructions, integer_operands


def _hardware_read(smem: dict[int, float], start: int, lbo: int, sbo: int, mn_major: bool, mn: int, k: int) -> float:
    """Element (mn, k) of an instruction's operand as the tensor core finds it (no swizzle, in 16-bit
    elements): 8 x 16-byte core matrices; K-major rows are mn, MN-major rows are k; SBO steps
    from one core matrix to the next along mn, LBO along k."""
    row, col = (k % 8, mn % 8) if mn_major else (mn % 8, k % 8)
    return smem[start + (mn // 8) * sbo + (k // 8) * lbo + row * 8 + col]


def _store(smem: dict[int, float], base: int, tile, op_idx: int, src_map: LayoutMap, values: torch.Tensor,
           num_warps: int) -> None:
    groups = num_warps // 4
    o = IntOps()
    for warp in range(num_warps):
        for lane in range(32):
            for slot in range(src_map.num_slots):
                r, c = src_map.index(slot, lane, warp)
                offset = base + store_offset(o, tile, op_idx, r, c, groups)
                assert smem.get(offset, float(values[r, c])) == float(values[r, c])  # no two elements share a place
                smem[offset] = float(values[r, c])


LOADS = {  # the coalesced layouts of the benchmark's loads: a [M, K] and b [K, N], rows or transposed
    "rows": (lambda m, k, w: Blocked((1, 8), (32 * 8 // k, k // 8), (w, 1), (1, 0)),
             lambda k, n, w: Blocked((1, 8), (32 * 8 // n if n < 256 else 1, min(32, n // 8)), (w, 1), (1, 0))),
    "transposed": (lambda m, k, w: Blocked((8, 1), (min(32, m // 8), 32 * 8 // m if m < 256 else 1), (1, w), (0, 1)),
                   lambda k, n, w: Blocked((8, 1), (k // 8, 32 * 8 // k), (1, w), (0, 1))),
}


@pytest.mark.parametrize("loads", ["rows", "transposed"])
@pytest.mark.parametrize("M,N,K,num_warps", [(128, 128, 32, 4), (64, 256, 16, 4), (64, 8, 32, 4), (256, 64, 16, 8)])
def test_wgmma_instructions_compute_the_product(M, N, K, num_warps, loads):
    mma = NvidiaMma((num_warps, 1), 3)
    groups = num_warps // 4
    assert wgmma_shape((M, N), mma.warps_per_cta, num_warps)
    a, b, c = integer_operands(M, N, K, seed=1)
    a_src = LayoutMap(LOADS[loads][0](M, K, num_warps), (M, K))
    b_src = LayoutMap(LOADS[loads][1](K, N, num_warps), (K, N))
    c_map = LayoutMap(mma, (M, N))
    tiles = []
    for op_idx, src in ((0, a_src), (1, b_src)):
        transposed = stored_transposed(src)
        mn_major = transposed if op_idx == 0 else not transposed
        padding = choose_padding(src, op_idx, mn_major, store_run(src, transposed), groups)
        tiles.append(tile_layout(M if op_idx == 0 else N, K, mn_major, padding))
    a_tile, b_tile = tiles
    b_base = -(-a_tile.elements // 64) * 64
    smem: dict[int, float] = {}
    _store(smem, 0, a_tile, 0, a_src, a, num_warps)
    _store(smem, b_base, b_tile, 1, b_src, b, num_warps)
    assert max(k for k in smem if k < b_base) < a_tile.elements and max(smem) < b_base + b_tile.elements
    expected = a @ b + c
    for group, i in instructions(M, groups):
        # instruction i of warpgroup `group`, k steps accumulating: a's rows from 64 (groups i + group)
        d = torch.zeros(64, N, dtype=torch.float64)
        for q in range(K // 16):
            a_start = 8 * (groups * i + group) * a_tile.sbo + 2 * q * a_tile.lbo
            b_start = b_base + 2 * q * b_tile.lbo
            A = torch.tensor([[_hardware_read(smem, a_start, a_tile.lbo, a_tile.sbo, a_tile.mn_major, r, k)
                               for k in range(16)] for r in range(64)])
            B = torch.tensor([[_hardware_read(smem, b_start, b_tile.lbo, b_tile.sbo, b_tile.mn_major, n, k)
                               for n in range(N)] for k in range(16)])
            d += A @ B
        check_accumulators(d, c_map, c, expected, group, i)


@pytest.mark.parametrize("loads", ["rows", "transposed"])
@pytest.mark.parametrize("M,N,K", [(128, 128, 32), (128, 128, 64), (64, 64, 16)])
def test_operand_stores_avoid_bank_conflicts(M, N, K, loads):
    """Each quarter-warp's 16-byte stores of the first vector of warp 0 reach 8 different bank groups."""
    o = IntOps()
    for op_idx, shape, layout in ((0, (M, K), LOADS[loads][0](M, K, 4)), (1, (K, N), LOADS[loads][1](K, N, 4))):
        src = LayoutMap(layout, shape)
        transposed = stored_transposed(src)
        mn_major = transposed if op_idx == 0 else not transposed
        run = store_run(src, transposed)
        assert run == 8
        tile = tile_layout(shape[0] if op_idx == 0 else shape[1], K, mn_major,
                           choose_padding(src, op_idx, mn_major, run))
        for quarter in range(4):
            groups = {(store_offset(o, tile, op_idx, *src.index(0, lane, 0)) * 2 // 16) % 8
                      for lane in range(8 * quarter, 8 * quarter + 8)}
            assert len(groups) == 8, (op_idx, quarter)


def test_small_or_split_results_keep_mma_sync():
    assert not wgmma_shape((32, 128), (4, 1), 4)  # fewer than 64 rows
    assert not wgmma_shape((128, 512), (4, 1), 4)  # N above 256
    assert not wgmma_shape((64, 128), (1, 8), 8)  # warps along N
    assert wgmma_shape((128, 128), (8, 1), 8)  # two warpgroups along M


needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@needs_ptxas
@pytest.mark.parametrize("wgmma", [True, False], ids=["default", "TILE_WGMMA=0"])
def test_matmul_ptx_uses_wgmma_on_sm90_unless_switched_off(monkeypatch, wgmma):
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from dot_kernel_specs import matmul_specs
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
    from inductor_tile.kernel_compiler.to_llvm.nvptx import ptx_arch
    from model_benchmarks import dot_kernels

    monkeypatch.setenv("TILE_WGMMA", "1" if wgmma else "0")
    kernel = dot_kernels.matmul_kernel
    specs = matmul_specs("fp16", 128, 64, 32)
    asm = compile_specialized(kernel, specs, target="cuda:90", num_warps=4, native=False).asm
    ptx = asm["ptx"]
    check_ptx(ptx, ptx_arch(ptx, 90), kernel.__name__)
    if wgmma:
        assert "versionMajor = 3" in asm["ttgir"] and ".target sm_90a" in ptx
        # 128 x 64 x 32: two m64 instructions per k step of 16, fed by descriptors; no ldmatrix
        assert ptx.count("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") == 2 * 2
        assert "fence.proxy.async.shared::cta" in ptx and "wgmma.wait_group.sync.aligned 0" in ptx
        assert "ldmatrix" not in ptx
    else:
        assert "versionMajor = 2" in asm["ttgir"] and "wgmma" not in ptx and ".target sm_90\n" in ptx


@pytest.mark.parametrize("M,N,K,num_warps", [(64, 64, 32, 4), (128, 32, 16, 8)])
def test_wgmma_with_a_in_registers_computes_the_product(M, N, K, num_warps):
    """a from registers (attention's q and p): each warp gives its mma.sync a fragments of row pair i
    (`mma_steps`' pieces) as its 16 rows of warpgroup instruction i; b from its shared-memory tile."""
    from inductor_tile.kernel_compiler.ir.dot_layouts import DotOperand
    from inductor_tile.kernel_compiler.to_llvm.dot_mma import mma_steps

    mma = NvidiaMma((num_warps, 1), 3)
    groups = num_warps // 4
    a, b, c = integer_operands(M, N, K, seed=2)
    a_map, c_map = LayoutMap(DotOperand(0, mma), (M, K)), LayoutMap(mma, (M, N))
    b_map = LayoutMap(DotOperand(1, mma), (K, N))
    b_src = LayoutMap(LOADS["rows"][1](K, N, num_warps), (K, N))
    b_tile = tile_layout(N, K, True, choose_padding(b_src, 1, True, store_run(b_src, False), groups))
    smem: dict[int, float] = {}
    _store(smem, 0, b_tile, 1, b_src, b, num_warps)
    pieces = {(t.p, t.q): t for t in mma_steps(a_map, b_map, c_map) if t.s == 0}
    expected = a @ b + c
    for group, i in instructions(M, groups):
        d = torch.zeros(64, N, dtype=torch.float64)
        for q in range(K // 16):
            A = torch.full((64, 16), float("nan"), dtype=torch.float64)
            for warp in range(4 * group, 4 * group + 4):
                for lane in range(32):
                    g, t = divmod(lane, 4)
                    values = [float(a[a_map.index(s, lane, warp)]) for pair in pieces[(i, q)].a for s in pair]
                    places = [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1),
                              (g, 2 * t + 8), (g, 2 * t + 9), (g + 8, 2 * t + 8), (g + 8, 2 * t + 9)]
                    for (row, col), value in zip(places, values):
                        A[16 * (warp % 4) + row, col] = value
            B = torch.tensor([[_hardware_read(smem, 2 * q * b_tile.lbo, b_tile.lbo, b_tile.sbo, True, n, k)
                               for n in range(N)] for k in range(16)], dtype=torch.float64)
            d += A @ B
        check_accumulators(d, c_map, c, expected, group, i)


@needs_ptxas
def test_attention_ptx_uses_wgmma_with_a_in_registers(monkeypatch):
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from dot_kernel_specs import attention_specs
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
    from model_benchmarks import dot_kernels

    monkeypatch.setenv("TILE_WGMMA", "1")
    kernel = dot_kernels.attention_fwd_kernel
    specs = attention_specs(64, block_m=64, block_n=32)
    ptx = compile_specialized(kernel, specs, target="cuda:90", num_warps=4, native=False).asm["ptx"]
    check_ptx(ptx, "sm_90a", kernel.__name__)
    # q k^T: 64 x 32 x 64 (4 k steps, n32), then p v: 64 x 64 x 32 (2 k steps, n64); a from registers
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16") == 4
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") == 2
    assert "mma.sync" not in ptx


def _loop_body(ptx: str) -> str:
    """The PTX of the (single) loop: from its header's label to the branch back to it."""
    lines = ptx.splitlines()
    for end, line in enumerate(lines):
        words = line.split()
        if len(words) >= 2 and words[-2] == "bra" and words[0].startswith("@"):
            label = words[-1].rstrip(";") + ":"
            starts = [i for i, text in enumerate(lines[:end]) if text.startswith(label)]
            if starts:
                return "\n".join(lines[starts[0]:end + 1])
    raise AssertionError("no loop in the PTX")


@needs_ptxas
@pytest.mark.parametrize("head_dim", [64, 128])
def test_attention_softmax_stays_in_the_accumulator_registers(head_dim, tmp_path):
    """The causal scores' row max and sum on wgmma's accumulator layout (a row over the four lanes of a quad):
    each thread folds its slots, then two butterfly shuffles (lanes 2 and 1 apart) cross the quad, for its two
    rows; nothing goes through shared memory in the loop but the ring copies (as Triton's loop)."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from dot_kernel_specs import attention_specs
    from filecheck_tool import filecheck
    from model_benchmarks import dot_kernels

    ptx = compile_specialized(dot_kernels.attention_fwd_kernel, attention_specs(head_dim), target="cuda:90",
                              num_warps=4, native=False, num_stages=3).asm["ptx"]
    body = _loop_body(ptx)
    assert not re.search(r"\b(?:ld|st)\.shared", body)
    shuffles = re.findall(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, (\d+), 31, -1;", body)
    assert sorted(shuffles) == ["1"] * 4 + ["2"] * 4  # max and sum, two rows a thread
    filecheck(body, """
CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
CHECK: wgmma.wait_group.sync.aligned 0;
CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
CHECK: ex2.approx
CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
CHECK-COUNT-2: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
CHECK: wgmma.mma_async.sync.aligned.m64n{{64|128}}k16.f32.f16.f16
""".replace("{{64|128}}", str(head_dim)), tmp_path)
