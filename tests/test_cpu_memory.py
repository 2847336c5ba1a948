"""CPU target: masked accesses the host has no instruction for, and library math on wide vectors,
become element loops (to_llvm/targets/cpu_memory.py) instead of one inlined copy per element.

FileCheck confirms the shape of the LLVM IR (after O3, without unrolling); numeric tests check
full tiles (the plain-vector fast path), partial tiles (the loop) and gathers/scatters against
torch, outputs poisoned first."""

from __future__ import annotations

import pytest
import torch
from filecheck_tool import filecheck

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.to_llvm.targets import cpu_memory
from suite import poison


@inductor_tile.jit
def scale_rows(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, x * 3.0 - 1.0, mask=mask)


@inductor_tile.jit
def transpose_tile(x_ptr, out_ptr, M, N, BLOCK: tl.constexpr):
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rn = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(out_ptr + rn[None, :] * M + rm[:, None], tile, mask=mask)


@inductor_tile.jit
def sin_erf(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.5)
    tl.store(out_ptr + offsets, tl.sin(x) + tl.erf(x), mask=mask)


def llir(fn, signature, constexprs) -> str:
    return inductor_tile.compile(fn, signature, constexprs, target="cpu").asm["llir"]


def test_fp16_row_loads_and_stores_loop_where_the_host_has_no_masked_access(tmp_path):
    text = llir(scale_rows, {"x_ptr": "*fp16", "out_ptr": "*fp16", "n_cols": "i32"}, {"BLOCK": 256})
    if cpu_memory.native("load", torch_ir_half()):
        pytest.skip("this host has masked 16-bit loads (AVX-512BW): LLVM's intrinsics stay")
    filecheck(text, """
CHECK-NOT: llvm.masked
CHECK: element_loop
CHECK: load <256 x i16>
CHECK: store <256 x i16>
CHECK: element_loop
CHECK-NOT: llvm.masked
""", tmp_path)


def test_fp32_row_loads_keep_native_masked_loads(tmp_path):
    import llvmlite.ir as ir

    text = llir(scale_rows, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n_cols": "i32"}, {"BLOCK": 256})
    if not cpu_memory.native("load", ir.FloatType()):
        pytest.skip("this host has no masked 32-bit loads")
    filecheck(text, """
CHECK: llvm.masked.load.v{{[0-9]+}}f32
CHECK-NOT: element_loop
CHECK: llvm.masked.store.v{{[0-9]+}}f32
""", tmp_path)


def test_library_math_is_one_call_in_a_loop(tmp_path):
    text = llir(sin_erf, {"x_ptr": "*fp64", "out_ptr": "*fp64", "n": "i32"}, {"BLOCK": 128})
    filecheck(text, """
CHECK: element_loop
CHECK-COUNT-1: call double @llvm.sin.f64
CHECK: element_loop
CHECK-COUNT-1: call double @erf
CHECK-NOT: call double @erf
""", tmp_path)


def torch_ir_half():
    import llvmlite.ir as ir

    return ir.IntType(16)


@pytest.mark.parametrize("dtype", [torch.float16, torch.int8, torch.float32])
@pytest.mark.parametrize("n_cols", [256, 200])
def test_row_tiles_full_partial_and_tiny(compiled, dtype, n_cols):
    gen = torch.Generator().manual_seed(5)
    rows = 5
    if dtype == torch.int8:
        x = torch.randint(-40, 40, (rows, n_cols), generator=gen, dtype=torch.int8)
    else:
        x = torch.randn(rows, n_cols, generator=gen, dtype=torch.float64).to(dtype)
    guard = poison(torch.empty(rows * n_cols + 64, dtype=dtype))  # the tail past the last row must stay
    out = guard[:rows * n_cols].view(rows, n_cols)
    scale_rows[(rows,)](x, out, n_cols, BLOCK=256)
    expected = (x.double() * 3.0 - 1.0)
    if dtype == torch.int8:
        torch.testing.assert_close(out, expected.to(torch.int8))
    else:
        torch.testing.assert_close(out.double(), expected, rtol=1e-2, atol=1e-2)
    tail = guard[rows * n_cols:].view(torch.uint8)  # bytes: NaN != NaN
    assert torch.equal(tail, poison(torch.empty(64, dtype=dtype)).view(torch.uint8))


@pytest.mark.parametrize("dtype", [torch.bfloat16])
@pytest.mark.parametrize("shape", [(32, 32), (33, 20)])
def test_transposed_gathers_and_scatters(compiled, dtype, shape):
    M, N = shape
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(M, N, generator=gen, dtype=torch.float64).to(dtype)
    out = poison(torch.empty(N, M, dtype=dtype))
    transpose_tile[(triton_cdiv(M, 16), triton_cdiv(N, 16))](x, out, M, N, BLOCK=16)
    assert torch.equal(out.view(torch.int16), x.t().contiguous().view(torch.int16))


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


@pytest.mark.parametrize("n", [128, 77])
def test_library_math_loop_matches_torch(compiled, n):
    gen = torch.Generator().manual_seed(8)
    x = torch.randn(n, generator=gen, dtype=torch.float64) * 2
    out = poison(torch.empty(n, dtype=torch.float64))
    sin_erf[(1,)](x, out, n, BLOCK=128)
    torch.testing.assert_close(out, torch.sin(x) + torch.erf(x), rtol=1e-12, atol=1e-12)
