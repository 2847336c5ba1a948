"""fp32 tl.dot with input_precision "tf32" (the default), "tf32x3" and "ieee".

- The interpreter and the CPU target round "tf32" operands to tf32 (nearest, ties away, like
  cvt.rna.tf32.f32), so they agree with a GPU's tensor cores: their results match a float64 product
  of tf32-rounded inputs to fp32 accuracy and miss the exact product by the tf32 error; "ieee" (and
  allow_tf32=False) keeps fp32; "tf32x3" is within a few fp32 ulps of exact.
- NVIDIA without a GPU: the mma.sync m16n8k8 tf32 instructions the lowering issues, simulated with the
  PTX ISA's fragment layouts, compute the product; PTX for sm_80 has them (three per piece for
  "tf32x3") and passes ptxas; "ieee" keeps FMAs.
"""

from __future__ import annotations

import platform

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.interpreter.dot_precision import round_to_tf32
from inductor_tile.kernel_compiler.ir.dot_layouts import DotOperand, NvidiaMma
from inductor_tile.kernel_compiler.ir.layouts import LayoutMap
from inductor_tile.kernel_compiler.passes.accelerate_matmul import mma_warps
from inductor_tile.kernel_compiler.to_llvm.dot_mma import mma_steps
from inductor_tile.kernel_compiler.to_llvm.dot_tf32 import k8_a_slots, k8_b_slots
from test_dot import mode  # noqa: F401 - the fixture: each kernel test interpreted and compiled
from tf32_reference import tf32


@pytest.fixture(autouse=True)
def _tf32_tensor_cores(monkeypatch):
    """The default: tf32 tensor cores (TILE_TF32_MMA=0 would send fp32 dots to FMAs)."""
    monkeypatch.delenv("TILE_TF32_MMA", raising=False)


# --- rounding -------------------------------------------------------------------------------
def test_interpreter_rounding_matches_the_float64_reference(gen):
    x = torch.randn(1 << 16, generator=gen) * torch.exp2(torch.randint(-140, 128, (1 << 16,), generator=gen).float())
    ties = torch.tensor([1 + 2**-11, -(1 + 2**-11), 1 + 3 * 2**-11, 2**-149, 3 * 2**-137, 3.4028234e38, -3.4028234e38,
                         float("inf"), -float("inf"), 0.0, -0.0], dtype=torch.float32)
    x = torch.cat([x, ties])
    got = round_to_tf32(x)
    assert torch.equal(got.double(), tf32(x))
    assert got[-11:-6].tolist() == [1 + 2**-10, -(1 + 2**-10), 1 + 2**-9, 0.0, 2**-135]  # ties away from zero
    assert round_to_tf32(torch.tensor([float("nan")])).isnan().all()


# --- kernels: interpreter and CPU (test_dot.py's `mode` fixture) -----------------------------


@inductor_tile.jit
def fp32_dot_kernel(a_ptr, b_ptr, acc_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                    PRECISION: tl.constexpr):
    rows, cols, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    acc = tl.load(acc_ptr + rows[:, None] * N + cols[None, :])
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :])
    b = tl.load(b_ptr + ks[:, None] * N + cols[None, :])  # converted after acc, a: both stored for the dot
    if PRECISION == "default":
        c = tl.dot(a, b, acc)
    elif PRECISION == "no-tf32":
        c = tl.dot(a, b, acc, allow_tf32=False)
    else:
        c = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], c)


@inductor_tile.jit
def fp32_dot_no_acc_kernel(a_ptr, b_ptr, acc_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                           PRECISION: tl.constexpr):
    """`tl.dot(a, b)`, acc added after: a's and b's conversions come right before the dot, after the zero
    accumulator's, so their tiles are stored for the dot (ldmatrix on sm_80, descriptors on sm_90), as in
    fp32_dot_kernel, whose loaded accumulator is converted first too (test_dot_loaded_acc.py)."""
    rows, cols, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :])
    b = tl.load(b_ptr + ks[:, None] * N + cols[None, :])
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], c + tl.load(acc_ptr + rows[:, None] * N + cols[None, :]))


def _run(precision: str, gen, M=32, N=16, K=64):
    a, b, acc = (torch.randn(shape, generator=gen) for shape in ((M, K), (K, N), (M, N)))
    out = torch.full((M, N), float("nan"))
    fp32_dot_kernel[(1,)](a, b, acc, out, M=M, N=N, K=K, PRECISION=precision)
    assert not out.isnan().any()
    exact = a.double() @ b.double() + acc.double()
    rounded = tf32(a) @ tf32(b) + acc.double()
    scale = exact.abs().max()
    return (out.double() - exact).abs().max() / scale, (out.double() - rounded).abs().max() / scale


@pytest.mark.parametrize("precision", ["tf32", "default"])
def test_tf32_rounds_the_operands(precision, mode, gen):
    to_exact, to_rounded = _run(precision, gen)
    assert to_rounded <= 4e-6  # the product of tf32 inputs, summed in fp32
    assert 1e-5 <= to_exact <= 5e-3  # and not the fp32 product: tf32 keeps 11 significant bits


@pytest.mark.parametrize("precision", ["ieee", "no-tf32", "tf32x3"])
def test_ieee_and_tf32x3_are_fp32_accurate(precision, mode, gen):
    to_exact, to_rounded = _run(precision, gen)
    assert to_exact <= 4e-6
    assert to_rounded >= 1e-5


# --- NVIDIA: the instructions, simulated --------------------------------------------------------
def _simulate_k8(a_regs, b_regs, c_regs, step, h):
    """One warp's mma.sync.m16n8k8 tf32 (row.col), fragments as in the PTX ISA (lane = 4 g + t):
    a0..a3 = (g, t), (g+8, t), (g, t+4), (g+8, t+4); b0, b1 = (t, g), (t+4, g); c as m16n8k16."""
    A, B, C = (torch.zeros(shape, dtype=torch.float64) for shape in ((16, 8), (8, 8), (16, 8)))
    c_at = lambda g, t: [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]  # noqa: E731
    for lane in range(32):
        g, t = divmod(lane, 4)
        for value, (row, col) in zip([a_regs[lane][s] for s in k8_a_slots(step, h)],
                                     [(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]):
            A[row, col] = value
        for value, row in zip([b_regs[lane][s] for s in k8_b_slots(step, h)], [t, t + 4]):
            B[row, g] = value
        for slot, (row, col) in zip(step.c, c_at(g, t)):
            C[row, col] = c_regs[lane][slot]
    D = A @ B + C
    for lane in range(32):
        for slot, (row, col) in zip(step.c, c_at(*divmod(lane, 4))):
            c_regs[lane][slot] = float(D[row, col])


@pytest.mark.parametrize("M,N,K,num_warps", [(64, 64, 32, 4), (16, 64, 16, 4), (128, 32, 32, 8)])
def test_k8_instructions_compute_the_product(M, N, K, num_warps):
    mma = NvidiaMma(mma_warps((M, N), num_warps))
    gen = torch.Generator().manual_seed(0)
    a, b, c = (torch.randint(-4, 5, shape, generator=gen).double() for shape in ((M, K), (K, N), (M, N)))
    a_map, b_map = LayoutMap(DotOperand(0, mma), (M, K)), LayoutMap(DotOperand(1, mma), (K, N))
    c_map = LayoutMap(mma, (M, N))
    expected = a @ b + c
    for warp in range(num_warps):
        regs = [[[tile[lmap.index(slot, lane, warp)].item() for slot in range(lmap.num_slots)] for lane in range(32)]
                for lmap, tile in ((a_map, a), (b_map, b), (c_map, c))]
        for step in mma_steps(a_map, b_map, c_map):
            for h in (0, 1):
                _simulate_k8(*regs, step, h)
        for lane in range(32):
            for slot in range(c_map.num_slots):
                assert regs[2][lane][slot] == expected[c_map.index(slot, lane, warp)], (warp, lane, slot)


# --- NVIDIA: PTX ---------------------------------------------------------------------------
needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")
K8 = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"


def _ptx(precision: str, arch: int, M=64, N=64, K=32, num_warps=4, kernel=fp32_dot_kernel) -> str:
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    signature = {"a_ptr": "*fp32", "b_ptr": "*fp32", "acc_ptr": "*fp32", "out_ptr": "*fp32"}
    constexprs = {"M": M, "N": N, "K": K, "PRECISION": precision}
    specs = [spec_from_signature(name, signature[name]) if name in signature
             else spec_from_signature(name, "constexpr", constexprs[name]) for name in kernel.arg_names]
    compiled = compile_specialized(kernel, specs, target=f"cuda:{arch}", num_warps=num_warps, native=False)
    ptx = compiled.asm["ptx"]
    check_ptx(ptx, "sm_90a" if arch == 90 else f"sm_{arch}", kernel.__name__)
    return ptx


@needs_ptxas
@pytest.mark.parametrize("precision,products", [("tf32", 1), ("default", 1), ("tf32x3", 3)])
def test_sm80_ptx_uses_tf32_mma_sync(precision, products, monkeypatch):
    M, N, K, warps = 64, 64, 32, 4
    ptx = _ptx(precision, 80, M, N, K, warps)
    assert ptx.count(K8) == products * M * N * K // (16 * 8 * 8 * warps)
    assert "cvt.rna.tf32.f32" in ptx
    # a and b stored for the dot, after the loaded accumulator's conversion: read with ldmatrix, as with a zero
    # accumulator
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx
    if precision != "default":
        zero_acc = _ptx(precision, 80, M, N, K, warps, kernel=fp32_dot_no_acc_kernel)
        assert zero_acc.count(K8) == ptx.count(K8) and zero_acc.count("ldmatrix") == ptx.count("ldmatrix")
    assert "fma.rn.f32" not in ptx


@needs_ptxas
def test_ieee_keeps_fmas():
    ptx = _ptx("ieee", 80)
    assert "mma.sync" not in ptx and "cvt.rna.tf32" not in ptx
    assert ptx.count("fma.rn.f32") >= 64 * 64 * 32 // 128
