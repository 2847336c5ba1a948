"""Dots with a loaded accumulator (`acc = tl.load(c_ptrs); acc = tl.dot(a, b, acc)`, Inductor's addmm with
its bias as the accumulator) on tensor cores, checked without a GPU.

accelerate-matmul converts the accumulator first and the operands right before the dot, so that the
accumulator's conversion (through shared memory) never lies between an operand's and the dot: both
operands are stored for the dot, wgmma reads them through descriptors on sm_90 (it took mma.sync with
b in registers before) and ldmatrix on sm_80. An operand defined before a loop is still converted once,
there (a from registers then). The PTX is run by the interpreter of dot_ptx_sim.py (16-bit wgmma:
dot_ptx_sim_wgmma.py) for one block, on random inputs with a NaN-poisoned output, against float64 (of
tf32-rounded operands for fp32).
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
from test_dot import mode  # noqa: F401 - the fixture: each kernel test interpreted and compiled
from test_dot_tf32 import fp32_dot_kernel
from test_dot_tf32_ptx_sim import fp32_loop_dot_kernel
from tf32_reference import tf32

needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@pytest.fixture(autouse=True)
def _tensor_cores(monkeypatch):
    monkeypatch.delenv("TILE_TF32_MMA", raising=False)
    monkeypatch.delenv("TILE_WGMMA", raising=False)


@inductor_tile.jit
def column_blocks_kernel(a_ptr, b_ptr, acc_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                         PRECISION: tl.constexpr):
    """a loaded once, then for each 32 columns: the accumulator's and b's tiles loaded and a @ b + acc stored.
    a's conversion stays before the loop (a from registers), b is stored for the dot."""
    rows, ks, cols = tl.arange(0, M), tl.arange(0, K), tl.arange(0, 32)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :])
    for first in range(0, N, 32):
        c = first + cols
        acc = tl.load(acc_ptr + rows[:, None] * N + c[None, :])
        b = tl.load(b_ptr + ks[:, None] * N + c[None, :])
        d = tl.dot(a, b, acc, input_precision=PRECISION)  # "tf32": no effect on fp16 and bf16 operands
        tl.store(out_ptr + rows[:, None] * N + c[None, :], d)


@inductor_tile.jit
def addmm_kernel(a_ptr, b_ptr, bias_ptr, out_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_K: tl.constexpr):
    """out = a @ b + bias ([M, N] bias, contiguous operands) with the bias tile as the dot's accumulator, as an
    addmm template may: one BLOCK_M x BLOCK_N tile per program, K in BLOCK_K steps, masked edges."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    acc = tl.load(bias_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=0.0)
    for first in range(0, K, BLOCK_K):
        k = first + ks
        a = tl.load(a_ptr + rows[:, None] * K + k[None, :], mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)
        b = tl.load(b_ptr + k[:, None] * N + cols[None, :], mask=(k[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], acc, mask=inside)


KERNELS = {"acc": fp32_dot_kernel, "loop": fp32_loop_dot_kernel, "columns": column_blocks_kernel}
A_STORED = {"acc": True, "loop": True, "columns": False}  # a read through a descriptor on sm_90
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def compile_ptx(name: str, dtype: str, arch: int, M: int, N: int, K: int, num_warps: int) -> tuple[str, str]:
    """TTGIR and PTX (checked by ptxas) of kernel `name` at input_precision "tf32", one stage (the interpreter
    knows no cp.async)."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    kernel = KERNELS[name]
    signature = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "acc_ptr": "*fp32", "out_ptr": "*fp32"}
    constexprs = {"M": M, "N": N, "K": K, "PRECISION": "tf32"}
    specs = [spec_from_signature(n, signature[n]) if n in signature
             else spec_from_signature(n, "constexpr", constexprs[n]) for n in kernel.arg_names]
    asm = compile_specialized(kernel, specs, target=f"cuda:{arch}", num_warps=num_warps, native=False,
                              num_stages=1).asm
    check_ptx(asm["ptx"], "sm_90a" if arch == 90 else f"sm_{arch}", kernel.__name__)
    return asm["ttgir"], asm["ptx"]


def _bits(x: torch.Tensor) -> np.ndarray:
    return (x.view(torch.int16) if x.element_size() == 2 else x).numpy()


CASES = [(80, 64, 64, 32, 4), (90, 64, 64, 32, 4), (90, 128, 64, 32, 8), (90, 64, 128, 16, 4)]


@needs_ptxas
@pytest.mark.parametrize("arch,M,N,K,num_warps", CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("name", list(KERNELS))
def test_loaded_accumulator_ptx_computes_the_product(name, dtype, arch, M, N, K, num_warps):
    _, ptx = compile_ptx(name, dtype, arch, M, N, K, num_warps)
    kind = {"fp16": "f16", "bf16": "bf16", "fp32": "tf32"}[dtype]
    if arch == 90:
        operands = re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n\d+k\d+\.f32\.{kind}\.{kind} \{{[^}}]*\}}, (\S+)",
                              ptx)
        assert operands and "mma.sync" not in ptx
        assert all(a.startswith("%rd") == A_STORED[name] for a in operands)  # a: a descriptor, or {registers}
    else:
        assert f"mma.sync.aligned.m16n8k{8 if dtype == 'fp32' else 16}.row.col.f32.{kind}.{kind}.f32" in ptx
        assert "ldmatrix" in ptx
    gen = torch.Generator().manual_seed(M + N + K + arch)
    a, b = (torch.randn(shape, generator=gen).to(DTYPES[dtype]) for shape in ((M, K), (K, N)))
    acc = torch.randn((M, N), generator=gen)
    out = np.full((M, N), np.nan, dtype=np.float32)
    machine = Machine(ptx, 32 * num_warps, [_bits(a), _bits(b), acc.numpy(), out])
    machine.run(max_steps=400000)
    got = torch.from_numpy(machine.buffer(3, out)).double()
    assert not got.isnan().any()
    exact = a.double() @ b.double() + acc.double()
    expected = tf32(a) @ tf32(b) + acc.double() if dtype == "fp32" else exact
    scale = exact.abs().max()
    assert (got - expected).abs().max() / scale <= 1e-5
    if dtype == "fp32":
        assert (got - exact).abs().max() / scale >= 1e-5  # tf32, not fp32


def _dot_of(ttgir: str):
    from inductor_tile.kernel_compiler.ir.context import make_context, parse_ttir

    module = parse_ttir(ttgir, make_context(), "<ttgir>")
    return module, next(op for op in module.walk() if op.name == "tt.dot")


@needs_ptxas
@pytest.mark.parametrize("arch", [80, 90])
def test_operand_conversions_follow_the_accumulators(arch):
    """TTGIR of fp32_dot_kernel (accumulator loaded first): the accumulator's conversion, then a's and b's
    right before the dot, both stored for it (`deferred_dot`). Put the accumulator's conversion back
    between b's and the dot, as before the fix, and b may no longer be stored."""
    from inductor_tile.kernel_compiler.to_llvm.dot_operands import deferred_dot

    module, dot = _dot_of(compile_ptx("acc", "fp16", arch, 64, 64, 32, 4)[0])
    a_conversion, b_conversion, acc_conversion = (v.owner for v in dot.operands)
    assert dot.prev_op is b_conversion and b_conversion.prev_op is a_conversion
    assert acc_conversion.name == "ttg.convert_layout" and acc_conversion.is_before_in_block(a_conversion)
    assert deferred_dot(a_conversion) is dot and deferred_dot(b_conversion) is dot
    acc_conversion.detach()
    dot.parent_block().insert_op_before(acc_conversion, dot)
    assert deferred_dot(b_conversion) is None and deferred_dot(a_conversion) is None


@needs_ptxas
def test_an_operand_converted_from_a_dot_result_is_never_stored_for_the_dot():
    """Attention's p (a dot's result, converted in registers) right before v's conversion: p stores no tile,
    so v's conversion keeps its own barriers (`_stored_with_partner`) and a wgmma dot reads p from registers."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from dot_kernel_specs import attention_specs
    from inductor_tile.kernel_compiler.to_llvm.dot_operands import _stored_with_partner, deferred_dot
    from inductor_tile.kernel_compiler.to_llvm.dot_wgmma import a_in_shared_memory
    from model_benchmarks import dot_kernels

    kernel = dot_kernels.attention_fwd_kernel
    specs = attention_specs(64, block_m=64, block_n=32)
    for arch in (80, 90):
        ttgir = compile_specialized(kernel, specs, target=f"cuda:{arch}", num_warps=4, native=False,
                                    num_stages=1).asm["ttgir"]
        module, _ = _dot_of(ttgir)
        pv = [op for op in module.walk() if op.name == "tt.dot"][1]
        p_conversion, v_conversion = (v.owner for v in pv.operands[:2])
        assert p_conversion.next_op is v_conversion and "nvidia_mma" in str(p_conversion.operands[0].type)
        assert deferred_dot(p_conversion) is None and not a_in_shared_memory(pv)
        assert deferred_dot(v_conversion) is pv and not _stored_with_partner(v_conversion, p_conversion, pv)


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_addmm_with_the_bias_as_accumulator(dtype, mode):
    """Interpreter and CPU target (test_dot.py's `mode`): edges in M, N and K, random inputs, NaN-poisoned
    output, float64 reference (of tf32-rounded operands for fp32, as both round them)."""
    gen = torch.Generator().manual_seed(21)
    M, N, K = 40, 72, 48
    a, b = (torch.randn(shape, generator=gen).to(DTYPES[dtype]) for shape in ((M, K), (K, N)))
    bias = torch.randn((M, N), generator=gen)
    out = torch.full((M, N), float("nan"))
    addmm_kernel[(2, 3)](a, b, bias, out, M, N, K, BLOCK_M=32, BLOCK_N=32, BLOCK_K=16)
    product = tf32(a) @ tf32(b) if dtype == "fp32" else a.double() @ b.double()
    expected = product + bias.double()
    assert not out.isnan().any()
    assert (out.double() - expected).abs().max() / expected.abs().max() <= 1e-5


@needs_ptxas
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_addmm_ptx_takes_the_tensor_cores(dtype):
    """The addmm kernel at the benchmark's tile (128 x 128 x 32, 4 warps, the default stages): wgmma on sm_90,
    mma.sync on sm_80."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    signature = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "bias_ptr": "*fp32", "out_ptr": "*fp32",
                 "M": "i32", "N": "i32", "K": "i32"}
    constexprs = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}
    specs = [spec_from_signature(n, signature[n], divisible_by_16=True) if n in signature
             else spec_from_signature(n, "constexpr", constexprs[n]) for n in addmm_kernel.arg_names]
    kind = {"fp16": "f16", "bf16": "bf16", "fp32": "tf32"}[dtype]
    for arch in (90, 80):
        ptx = compile_specialized(addmm_kernel, specs, target=f"cuda:{arch}", num_warps=4, native=False).asm["ptx"]
        check_ptx(ptx, "sm_90a" if arch == 90 else "sm_80", "addmm_kernel")
        if arch == 90:
            assert f"wgmma.mma_async.sync.aligned.m64n128k{8 if dtype == 'fp32' else 16}.f32.{kind}.{kind}" in ptx
            assert "mma.sync" not in ptx
        else:
            assert f".row.col.f32.{kind}.{kind}.f32" in ptx
