"""tl.inline_asm_elementwise on NVIDIA, without a GPU: the kernels compile for sm_90, ptxas accepts the
PTX, the user's instructions appear in it once per execution, and the PTX interpreter of the dot tests
(`dot_ptx_sim.py`) runs them on random inputs into poisoned outputs, against torch in int64.
On a GPU: tests/gpu/test_inline_asm_gpu.py (same kernels).
"""

from __future__ import annotations

import platform

import numpy as np
import pytest
import torch
from dot_ptx_sim import Machine
from filecheck_tool import filecheck

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                reason="ptxas and libdevice wheels exist for Linux x86-64 only")

BLOCK, WARPS = 512, 4


@inductor_tile.jit
def mad_kernel(x_ptr, y_ptr, out_ptr, k, BLOCK: tl.constexpr):
    """out = x * y + k (k a scalar argument, broadcast to the block)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.inline_asm_elementwise("mad.lo.s32 $0, $1, $2, $3;", "=r,r,r,r", [x, y, k],
                                                       dtype=tl.int32, is_pure=True, pack=1))


@inductor_tile.jit
def sum_difference_kernel(x_ptr, y_ptr, sum_ptr, diff_ptr, BLOCK: tl.constexpr):
    """Two results of one execution: x + y and x - y."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    s, d = tl.inline_asm_elementwise("{ add.s32 $0, $2, $3; sub.s32 $1, $2, $3; }", "=r,=r,r,r", [x, y],
                                     dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    tl.store(sum_ptr + offs, s)
    tl.store(diff_ptr + offs, d)


@inductor_tile.jit
def byte_reverse_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    """Four int8 per execution, in one 32-bit register: reversed by one prmt."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.inline_asm_elementwise("prmt.b32 $0, $1, 0, 0x0123;", "=r,r", [x], dtype=tl.int8,
                                                       is_pure=True, pack=4))


@inductor_tile.jit
def half_pair_add_kernel(x_ptr, y_ptr, out_ptr, BLOCK: tl.constexpr):
    """Two fp16 per execution, in one 32-bit register each: added by one add.rn.f16x2."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x, y = tl.load(x_ptr + offs), tl.load(y_ptr + offs)
    tl.store(out_ptr + offs, tl.inline_asm_elementwise("add.rn.f16x2 $0, $1, $2;", "=r,r,r", [x, y],
                                                       dtype=tl.float16, is_pure=True, pack=2))


SIGNATURES = {
    "mad": (mad_kernel, {"x_ptr": "*i32", "y_ptr": "*i32", "out_ptr": "*i32", "k": "i32"}),
    "sum_difference": (sum_difference_kernel, {"x_ptr": "*i32", "y_ptr": "*i32", "sum_ptr": "*i32",
                                               "diff_ptr": "*i32"}),
    "byte_reverse": (byte_reverse_kernel, {"x_ptr": "*i8", "out_ptr": "*i8"}),
    "half_pair_add": (half_pair_add_kernel, {"x_ptr": "*fp16", "y_ptr": "*fp16", "out_ptr": "*fp16"}),
}
SIMULATED = ["mad", "sum_difference", "byte_reverse"]  # the PTX interpreter has no add.rn.f16x2 (GPU only)


def ptx_of(name: str, num_warps: int = WARPS) -> str:
    kernel, signature = SIGNATURES[name]
    pointers = [arg for arg, ty in signature.items() if ty.startswith("*")]
    compiled = inductor_tile.compile(kernel, signature, constexprs={"BLOCK": BLOCK}, target="cuda:90",
                                     num_warps=num_warps, divisible_by_16=pointers)
    ptx = compiled.asm["ptx"]
    check_ptx(ptx, "sm_90", kernel.__name__)
    return ptx


def inputs(name: str, gen: torch.Generator) -> tuple[list[torch.Tensor], list[torch.Tensor], dict]:
    """(inputs, poisoned outputs, scalar arguments) of one block, and the torch reference of each output."""
    ints = lambda dtype, low, high: torch.randint(low, high, (BLOCK,), generator=gen, dtype=torch.int64).to(dtype)  # noqa: E731
    poison = lambda dtype: torch.full((BLOCK,), 0x5A, dtype=dtype)  # noqa: E731
    if name == "mad":
        x, y = ints(torch.int32, -3000, 3000), ints(torch.int32, -3000, 3000)
        return [x, y], [poison(torch.int32)], {"k": -77}
    if name == "sum_difference":
        return [ints(torch.int32, -2**30, 2**30), ints(torch.int32, -2**30, 2**30)], [poison(torch.int32)] * 2, {}
    if name == "byte_reverse":
        return [ints(torch.int8, -128, 128)], [poison(torch.int8)], {}
    x, y = (torch.randn(BLOCK, generator=gen).to(torch.float16) for _ in range(2))
    return [x, y], [torch.full((BLOCK,), float("nan"), dtype=torch.float16)], {}


def reference(name: str, ins: list[torch.Tensor], scalars: dict) -> list[torch.Tensor]:
    if name == "mad":
        return [(ins[0].long() * ins[1].long() + scalars["k"]).to(torch.int32)]
    if name == "sum_difference":
        return [(ins[0].long() + ins[1].long()).to(torch.int32), (ins[0].long() - ins[1].long()).to(torch.int32)]
    if name == "byte_reverse":
        return [ins[0].reshape(-1, 4).flip(1).reshape(-1)]
    return [(ins[0].double() + ins[1].double()).to(torch.float16)]  # one rounding of the exact sum


@pytest.mark.parametrize("name, executions_per_thread", [("mad", 4), ("sum_difference", 4), ("byte_reverse", 1),
                                                         ("half_pair_add", 2)])
def test_ptx_carries_the_asm_once_per_execution(name, executions_per_thread, tmp_path):
    ptx = ptx_of(name)
    instruction = {"mad": "mad.lo.s32", "sum_difference": "sub.s32", "byte_reverse": "prmt.b32",
                   "half_pair_add": "add.rn.f16x2"}[name]
    assert ptx.count("// begin inline asm") == executions_per_thread, ptx
    filecheck(ptx, f"CHECK: // begin inline asm\nCHECK-NEXT: {instruction} %r{{{{[0-9]+}}}}\n"
                   "CHECK-NEXT: // end inline asm\n", tmp_path)


# byte_reverse (pack=4) at 8 warps: 512 int8 are 2 per thread, so the layout passes must give each thread 4
# consecutive ones (warps 4-7 holding copies) instead of padding each execution with 2 zero bytes
@pytest.mark.parametrize("name, num_warps", [(name, WARPS) for name in SIMULATED]
                         + [("byte_reverse", 1), ("byte_reverse", 8)])
def test_ptx_interpreter_runs_the_asm(name, num_warps):
    gen = torch.Generator().manual_seed(5)
    ins, outs, scalars = inputs(name, gen)
    ptx = ptx_of(name, num_warps)
    buffers = [t.numpy() for t in (*ins, *outs)]
    scalar_params = {len(ins) + len(outs) + i: v & 0xFFFFFFFF for i, v in enumerate(scalars.values())}  # i32 bits
    machine = Machine(ptx, 32 * num_warps, buffers, scalar_params or None)
    machine.run()
    got = [torch.from_numpy(np.array(machine.buffer(len(ins) + i, buffers[len(ins) + i]))) for i in range(len(outs))]
    for g, w in zip(got, reference(name, ins, scalars)):
        assert torch.equal(g, w)


PADDED_TTGIR = """
#two = #ttg.blocked<{sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
builtin.module attributes {"ttg.num-warps" = 8 : i32, "ttg.threads-per-warp" = 32 : i32} {
  func.func public @padded(%p: !tt.ptr<i8> {tt.divisibility = 16 : i32}) {
    %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32, #two>
    %ps = tt.splat %p : !tt.ptr<i8> -> tensor<512x!tt.ptr<i8>, #two>
    %pp = tt.addptr %ps, %r : tensor<512x!tt.ptr<i8>, #two>, tensor<512xi32, #two>
    %x = tt.load %pp : tensor<512x!tt.ptr<i8>, #two> -> tensor<512xi8, #two>
    %y = tt.elementwise_inline_asm "prmt.b32 $0, $1, 0, 0x0123;" {constraints = "=r,r", packed_element = 4 : i32,
      pure = true} %x : tensor<512xi8, #two> -> tensor<512xi8, #two>
    tt.store %pp, %y : tensor<512x!tt.ptr<i8>, #two>, tensor<512xi8, #two>
    func.return
  }
}
"""


def test_lowering_refuses_a_layout_that_would_pad_the_executions():
    """The layout of the failure this guards against (issue 20: a thread's 2 int8 and 2 zero bytes in the
    register, the output zeros) is refused; the layout passes never give it (filecheck/ttgir/packed-inline-asm-
    layouts.mlir), and the same module with 4 elements per thread lowers."""
    from inductor_tile.kernel_compiler.ir.context import parse_ttir
    from inductor_tile.kernel_compiler.to_llvm.context import LoweringError
    from inductor_tile.kernel_compiler.to_llvm.lowering import lower_to_llvm
    from inductor_tile.kernel_compiler.to_llvm.targets import get_target

    module = parse_ttir(PADDED_TTGIR)
    with pytest.raises(LoweringError, match=r"pack=4: the layout .* does not give each execution 4 consecutive "
                                            r"elements of the \[512\] tensor"):
        lower_to_llvm(module, get_target("cuda:90"), num_warps=8)
    fixed = parse_ttir(PADDED_TTGIR.replace("sizePerThread = [2]", "sizePerThread = [4]"))
    assert "prmt.b32" in lower_to_llvm(fixed, get_target("cuda:90"), num_warps=8).llvm_ir
