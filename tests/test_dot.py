"""tl.dot on the CPU target and in the interpreter: every operand/result type, edges (masked
loads), transposed operands through strides, accumulation over a K loop, batched dots, a
causal attention kernel, and the typing errors. References are computed in float64 (of tf32-rounded
fp32 operands: the default input_precision)."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile import CompilationError
from model_benchmarks import dot_kernels
from tf32_reference import tf32

MODES = ["interpret", "compiled"]


@pytest.fixture(params=MODES)
def mode(request, monkeypatch):
    if request.param == "interpret":
        monkeypatch.setenv("TILE_INTERPRET", "1")
    else:
        monkeypatch.delenv("TILE_INTERPRET", raising=False)
    return request.param


def random(shape, dtype, gen):
    if not dtype.is_floating_point:
        return torch.randint(-100, 100, shape, generator=gen).to(dtype)
    return torch.randn(shape, generator=gen).to(dtype)


def poisoned(shape, dtype):
    if dtype.is_floating_point:
        return torch.full(shape, float("nan"), dtype=dtype)
    return torch.full(shape, -12345, dtype=dtype)


def product(a, b):
    """The float64 reference of tl.dot(a, b): fp32 operands rounded to tf32 first (the default input_precision)."""
    if a.dtype == torch.float32:
        return tf32(a) @ tf32(b)
    return a.double() @ b.double()


def check(out, ref, dtype):
    """Relative error against a float64 reference, with torch.testing's tolerances for the type."""
    if not dtype.is_floating_point:
        assert torch.equal(out.to(torch.int64), ref.to(torch.int64))
        return
    tol = {torch.float16: 1e-3, torch.bfloat16: 1.6e-2, torch.float32: 1.3e-6, torch.float64: 1e-7}[dtype]
    assert not out.isnan().any()
    error = (out.double() - ref).abs().max() / ref.abs().max()
    assert error <= 4 * tol, f"relative error {error:.3g}"


@inductor_tile.jit
def tile_dot_kernel(a_ptr, b_ptr, acc_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                    PRECISION: tl.constexpr, OUT: tl.constexpr):
    rows, cols, ks = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rows[:, None] * K + ks[None, :])
    b = tl.load(b_ptr + ks[:, None] * N + cols[None, :])
    acc = tl.load(acc_ptr + rows[:, None] * N + cols[None, :])
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], tl.dot(a, b, acc, input_precision=PRECISION, out_dtype=OUT))


# (operand dtype, tl out_dtype, result dtype)
TYPE_CASES = [
    (torch.float16, tl.float32, torch.float32),
    (torch.float16, tl.float16, torch.float16),
    (torch.bfloat16, tl.float32, torch.float32),
    (torch.bfloat16, tl.float16, torch.float32),  # Triton's rule: only fp16 operands give fp16
    (torch.float32, tl.float32, torch.float32),
    (torch.float64, tl.float32, torch.float64),
    (torch.int8, tl.float32, torch.int32),
]


@pytest.mark.parametrize("operand,out_dtype,result", TYPE_CASES, ids=lambda v: str(v).replace("torch.", ""))
def test_operand_and_result_types(operand, out_dtype, result, mode, gen):
    M, N, K = 16, 32, 16
    a, b = random((M, K), operand, gen), random((K, N), operand, gen)
    acc = random((M, N), result, gen)
    out = poisoned((M, N), result)
    tile_dot_kernel[(1,)](a, b, acc, out, M=M, N=N, K=K, PRECISION="ieee", OUT=out_dtype)
    if operand == torch.int8:
        assert out.dtype == torch.int32
    check(out, a.double() @ b.double() + acc.double(), result)


@pytest.mark.parametrize("dtype,blocks,transposed", [(torch.float32, (32, 16, 16), True), (torch.float16, (16, 16, 16), False)],
                         ids=["fp32-bT", "fp16-b"])
def test_matmul_with_edges_and_k_loop(dtype, blocks, transposed, mode, gen):
    M, N, K = 45, 37, 53  # no size is a multiple of a block: every edge is a masked load
    a = random((M, K), dtype, gen)
    b = random((N, K), dtype, gen).t() if transposed else random((K, N), dtype, gen)  # b^T through strides
    c = poisoned((M, N), torch.float32)
    BM, BN, BK = blocks
    dot_kernels.matmul(a, b, c, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=2)
    check(c, product(a, b), dtype)


@inductor_tile.jit
def batched_dot_kernel(a_ptr, b_ptr, out_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    bs, rows, cols, ks = tl.arange(0, B), tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + bs[:, None, None] * M * K + rows[None, :, None] * K + ks[None, None, :])
    b = tl.load(b_ptr + bs[:, None, None] * K * N + ks[None, :, None] * N + cols[None, None, :])
    tl.store(out_ptr + bs[:, None, None] * M * N + rows[None, :, None] * N + cols[None, None, :], tl.dot(a, b))


def test_batched_dot(mode, gen):
    a, b = random((2, 16, 32), torch.float32, gen), random((2, 32, 16), torch.float32, gen)
    out = poisoned((2, 16, 16), torch.float32)
    batched_dot_kernel[(1,)](a, b, out, B=2, M=16, N=16, K=32)
    check(out, product(a, b), torch.float32)


def test_causal_attention(mode, gen):
    heads, seq, dim = 2, 40, 16
    q, k, v = (random((heads, seq, dim), torch.float16, gen) for _ in range(3))
    o = poisoned((heads, seq, dim), torch.float16)
    dot_kernels.attention(q, k, v, dim**-0.5, o, BLOCK_M=16, BLOCK_N=16)
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True,
                                                           scale=dim**-0.5)
    assert not o.isnan().any()
    torch.testing.assert_close(o.double(), ref, atol=2e-3, rtol=2e-3)


# --- errors point at the kernel line ------------------------------------------------------
@inductor_tile.jit
def bad_dot_kernel(a_ptr, b_ptr, out_ptr, M: tl.constexpr, K: tl.constexpr, CASE: tl.constexpr):
    a = tl.load(a_ptr + tl.arange(0, M)[:, None] * K + tl.arange(0, K)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K)[:, None] * 16 + tl.arange(0, 16)[None, :])
    if CASE == "acc":
        c = tl.dot(a, b, tl.zeros((M, 16), tl.float16))
    elif CASE == "precision":
        c = tl.dot(a, b, input_precision="bf16x9")
    else:
        c = tl.dot(a, b)
    tl.store(out_ptr + tl.arange(0, M)[:, None] * 16 + tl.arange(0, 16)[None, :], c)


@pytest.mark.parametrize("a_type,b_type,M,K,case,message", [
    ("*fp16", "*bf16", 16, 16, "", "one element type"),
    ("*fp32", "*fp32", 8, 16, "", "at least 16"),
    ("*fp32", "*fp32", 16, 16, "acc", "acc must be a \\[16, 16\\] block of float32"),
    ("*fp32", "*fp32", 16, 16, "precision", "input_precision must be one of"),
    ("*int16", "*int16", 16, 16, "", "int8 integer operands only"),
])
def test_dot_errors_point_at_the_call(a_type, b_type, M, K, case, message):
    with pytest.raises(CompilationError, match=message) as info:
        inductor_tile.compile(bad_dot_kernel, signature={"a_ptr": a_type, "b_ptr": b_type, "out_ptr": "*fp32"},
                              constexprs={"M": M, "K": K, "CASE": case})
    assert "tl.dot" in info.value.source_line


def test_tutorial_pointer_loops_compute_the_same(monkeypatch, gen):
    """pointer-induction then pipeline-loads (GPU passes) on the CPU target: the tutorial-form matmul,
    whose pointer tiles are advanced around the loop, stays exact at the edges, and its loop no longer
    carries pointers."""
    from inductor_tile.kernel_compiler.passes import pipeline
    from inductor_tile.kernel_compiler.passes.pipeline_loads import PipelineLoadsPass
    from inductor_tile.kernel_compiler.passes.pointer_induction import PointerInductionPass

    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")  # the cache key does not know about the patched pipeline
    original = pipeline.ttgir_pipeline
    monkeypatch.setattr(pipeline, "ttgir_pipeline",
                        lambda *args, **kw: [PointerInductionPass(), PipelineLoadsPass(), *original(*args, **kw)])
    kernel = dot_kernels.matmul_pointers_kernel
    monkeypatch.setattr(kernel, "cache", {})
    monkeypatch.setattr(kernel, "launch_cache", {})
    M, N, K = 37, 21, 50
    a, b = random((M, K), torch.float32, gen), random((K, N), torch.float32, gen)
    c = poisoned((M, N), torch.float32)
    dot_kernels.matmul_pointers(a, b, c, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    check(c, product(a, b), torch.float32)
    ttgir = next(iter(kernel.cache.values())).asm["ttgir"]
    assert "!tt.ptr" not in ttgir.split("scf.for")[1].split("\n")[0]  # no pointer tile carried around the loop
    assert ttgir.count("tt.load") == 4  # a and b before the loop, and for the next step


def test_pipelined_loads_compute_the_same(monkeypatch, gen):
    """pipeline-loads (on GPUs before convert-to-ttgir) run on the CPU target: the matmul and
    attention kernels, whose loop loads are prefetched one iteration ahead, stay exact at the edges."""
    from inductor_tile.kernel_compiler.passes import pipeline
    from inductor_tile.kernel_compiler.passes.pipeline_loads import PipelineLoadsPass

    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")  # the cache key does not know about the patched pipeline
    original = pipeline.ttgir_pipeline
    monkeypatch.setattr(pipeline, "ttgir_pipeline", lambda *args, **kw: [PipelineLoadsPass(), *original(*args, **kw)])
    for kernel in (dot_kernels.matmul_kernel, dot_kernels.attention_fwd_kernel):
        kernel.cache.clear()
        kernel.launch_cache.clear()
    try:
        a, b = random((37, 50), torch.float32, gen), random((50, 21), torch.float32, gen)
        c = poisoned((37, 21), torch.float32)
        dot_kernels.matmul(a, b, c, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, GROUP_M=2)
        check(c, product(a, b), torch.float32)
        q, k, v = (random((1, 37, 16), torch.float32, gen) for _ in range(3))
        o = poisoned((1, 37, 16), torch.float32)
        dot_kernels.attention(q, k, v, 0.25, o, BLOCK_M=16, BLOCK_N=16)
        ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True,
                                                               scale=0.25)
        torch.testing.assert_close(o.double(), ref, atol=2e-3, rtol=2e-3)  # q k^T and p v in tf32
        ttgir = next(iter(dot_kernels.matmul_kernel.cache.values())).asm["ttgir"]
        assert ttgir.count("tt.load") == 4  # a and b before the loop, and for the next iteration in it
    finally:
        for kernel in (dot_kernels.matmul_kernel, dot_kernels.attention_fwd_kernel):
            kernel.cache.clear()
            kernel.launch_cache.clear()
