"""The tf32 tensor-core lowerings, run without a GPU: the PTX the compiler emits for sm_80 (mma.sync
m16n8k8, ldmatrix) and sm_90a (wgmma m64nNk8) executed by a small interpreter written from the PTX ISA
(`dot_ptx_sim.py`: fragment tables, ldmatrix, descriptors), on random inputs with a NaN-poisoned output,
against a float64 product of tf32-rounded inputs.

This catches what the fragment-level simulations (test_dot_tf32*.py) cannot: the H100's wrong products
(relative error ~1.5) came from the accumulator's layout conversion, lowered through shared memory between
b's tile store and the dot, overwriting b's tile before the dot read it (`dot_operands.deferred_dot`).
"""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from dot_ptx_sim import Machine
from test_dot_tf32 import fp32_dot_kernel, fp32_dot_no_acc_kernel
from tf32_reference import tf32

needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@pytest.fixture(autouse=True)
def _tf32_tensor_cores(monkeypatch):
    """The default: tf32 tensor cores (TILE_TF32_MMA=0 would send fp32 dots to FMAs). No cp.async rings: the
    loop's conversions store rounded tiles here (the rings, whose wgmma dots truncate instead, are
    test_pipeline_tf32_rings.py's)."""
    monkeypatch.delenv("TILE_TF32_MMA", raising=False)
    monkeypatch.setenv("TILE_PIPELINE", "0")


@inductor_tile.jit
def fp32_loop_dot_kernel(a_ptr, b_ptr, acc_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                         PRECISION: tl.constexpr):
    """A K loop of BLOCK_K = 16 (prefetched a loop iteration ahead): both conversions right before the dot,
    both tiles stored (ldmatrix for a and b on sm_80, two descriptors on sm_90)."""
    rows, cols, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, 16)
    acc = tl.load(acc_ptr + rows[:, None] * N + cols[None, :])
    for k_start in range(0, K, 16):
        k = k_start + ks
        a = tl.load(a_ptr + rows[:, None] * K + k[None, :])
        b = tl.load(b_ptr + k[:, None] * N + cols[None, :])
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc)


def _ptx(kernel, precision: str, arch: int, M: int, N: int, K: int, num_warps: int) -> str:
    from test_dot_tf32 import _ptx as compiled_ptx

    return compiled_ptx(precision, arch, M, N, K, num_warps, kernel=kernel)


def _simulate(kernel, precision: str, arch: int, M: int, N: int, K: int, num_warps: int, seed: int = 0,
              reference=tf32):
    """The PTX, and the largest error (relative to the largest element) of its result against a float64 product
    of operands passed through `reference` (tf32 rounding: "rounded"), and against the exact product."""
    ptx = _ptx(kernel, precision, arch, M, N, K, num_warps)
    gen = torch.Generator().manual_seed(seed)
    a, b, acc = (torch.randn(shape, generator=gen) for shape in ((M, K), (K, N), (M, N)))
    out = np.full((M, N), np.nan, dtype=np.float32)
    machine = Machine(ptx, 32 * num_warps, [a.numpy(), b.numpy(), acc.numpy(), out])
    machine.run()
    got = torch.from_numpy(machine.buffer(3, out)).double()
    assert not got.isnan().any()
    exact = a.double() @ b.double() + acc.double()
    rounded = reference(a) @ reference(b) + acc.double()
    scale = exact.abs().max()
    return ptx, (got - rounded).abs().max() / scale, (got - exact).abs().max() / scale


CASES = [(80, 16, 32, 16, 4), (80, 64, 64, 64, 4), (90, 64, 64, 64, 4), (90, 128, 64, 32, 8), (90, 128, 32, 32, 4)]
KERNELS = [fp32_dot_kernel, fp32_dot_no_acc_kernel, fp32_loop_dot_kernel]


@needs_ptxas
@pytest.mark.parametrize("arch,M,N,K,num_warps", CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("kernel", KERNELS, ids=["acc", "no_acc", "loop"])
def test_tf32_dot_ptx_computes_the_product(kernel, arch, M, N, K, num_warps):
    ptx, to_rounded, to_exact = _simulate(kernel, "tf32", arch, M, N, K, num_warps)
    assert "tf32.tf32" in ptx
    assert to_rounded <= 1e-5, to_rounded
    assert to_exact >= 1e-5  # tf32, not fp32


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("kernel", KERNELS[1:], ids=["no_acc", "loop"])
def test_tf32x3_ptx_is_fp32_accurate(kernel, arch):
    _, to_rounded, to_exact = _simulate(kernel, "tf32x3", arch, 64, 64, 32, 4, seed=1)
    assert to_exact <= 1e-5 and to_rounded >= 1e-5


@needs_ptxas
@pytest.mark.parametrize("kernel", KERNELS, ids=["acc", "no_acc", "loop"])
def test_stored_tiles_are_read_by_the_tensor_cores(kernel):
    """The kernels above take the shared-memory paths: a's and b's tiles read by ldmatrix on sm_80 and through
    descriptors on sm_90 (a from registers: test_dot_loaded_acc.py's column_blocks_kernel)."""
    sm80 = _ptx(kernel, "tf32", 80, 64, 64, 32, 4)
    sm90 = _ptx(kernel, "tf32", 90, 64, 64, 32, 4)
    ldmatrix = "ldmatrix.sync.aligned.m8n8.x4.shared.b16"
    assert sm80.count(ldmatrix) >= 8  # per k step of 16: b's 4 n blocks / 2, a's 4 row pairs
    wgmma = re.findall(r"wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 \{[^}]*\}, (\S+)", sm90)
    assert wgmma and all(a.startswith("%rd") for a in wgmma)  # a: a descriptor, not {registers}


@needs_ptxas
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_half_dot_ptx_with_a_loaded_accumulator(dtype):
    """The same hazard on the 16-bit mma.sync path: fp32_dot_kernel with half operands (m16n8k16, ldmatrix
    and ldmatrix.trans); before the fix the accumulator's conversion overwrote b's stored tile there too."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

    M, N, K = 64, 64, 32
    signature = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "acc_ptr": "*fp32", "out_ptr": "*fp32"}
    constexprs = {"M": M, "N": N, "K": K, "PRECISION": "default"}
    specs = [spec_from_signature(name, signature[name]) if name in signature
             else spec_from_signature(name, "constexpr", constexprs[name]) for name in fp32_dot_kernel.arg_names]
    ptx = compile_specialized(fp32_dot_kernel, specs, target="cuda:80", num_warps=4, native=False).asm["ptx"]
    kind = {"fp16": "f16", "bf16": "bf16"}[dtype]
    assert f"m16n8k16.row.col.f32.{kind}.{kind}.f32" in ptx and "ldmatrix" in ptx
    gen = torch.Generator().manual_seed(2)
    half = torch.float16 if dtype == "fp16" else torch.bfloat16
    a, b = (torch.randn(shape, generator=gen).to(half) for shape in ((M, K), (K, N)))
    acc = torch.randn((M, N), generator=gen)
    out = np.full((M, N), np.nan, dtype=np.float32)
    machine = Machine(ptx, 128, [a.view(torch.int16).numpy(), b.view(torch.int16).numpy(), acc.numpy(), out])
    machine.run()
    got = torch.from_numpy(machine.buffer(3, out)).double()
    exact = a.double() @ b.double() + acc.double()
    assert not got.isnan().any() and (got - exact).abs().max() / exact.abs().max() <= 1e-5


def test_interpreter_is_not_fooled_by_missing_instructions():
    """An instruction the interpreter does not know fails loudly."""
    from dot_ptx_sim import PtxError

    ptx = ".visible .entry k(\n.param .u64 k_param_0\n)\n{\n\tfoo.bar.b32 %r1, %r2;\n\tret;\n}\n"
    with pytest.raises(PtxError):
        Machine(ptx, 32, [np.zeros(4, dtype=np.float32)]).run()
