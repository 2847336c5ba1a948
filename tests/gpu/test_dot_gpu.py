"""tl.dot on an NVIDIA GPU: the matmul and causal attention kernels of dot_kernels.py (tensor
cores for fp16/bf16 and tf32 (fp32's default input_precision), FMAs for "ieee" fp32 and small tiles),
random inputs, NaN-poisoned outputs, float64 references (of tf32-rounded inputs for tf32). Also every
operand/result type of tile_dot_kernel (tests/test_dot.py) and each fp32 input_precision
(tests/test_dot_tf32.py), checked against the interpreter too.

    pytest -q -m gpu tests/gpu/test_dot_gpu.py
"""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from model_benchmarks import dot_kernels
from model_benchmarks.dot_kernels import triton_cdiv
from test_dot import TYPE_CASES, tile_dot_kernel
from test_dot_tf32 import fp32_dot_kernel, fp32_dot_no_acc_kernel
from tf32_reference import tf32, tf32_truncated

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def compiled(monkeypatch):
    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    monkeypatch.setenv("TILE_PIPELINE", "1")  # the cp.async rings are opt-in until these pass on a GPU


def _random(shape, dtype, gen):
    if not dtype.is_floating_point:
        return torch.randint(-100, 100, shape, generator=gen).to(dtype).cuda()
    return torch.randn(shape, generator=gen).to(dtype).cuda()


def _relative_error(out, ref):
    assert not out.isnan().any(), "NaN left in the output: an element was not written"
    return float((out.double() - ref).abs().max() / ref.abs().max())


# tolerance of the relative error by operand type (fp32: against a product of the operands as the dot rounds them)
TOLERANCE = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 1e-5, torch.float64: 1e-12}


def _product(a, b, ptx: list[str] = ()):
    """float64 reference of tl.dot(a, b) at the default input_precision (tf32 for fp32 operands): operands
    rounded to tf32 (cvt.rna: mma.sync, and wgmma reading the tiles its conversions stored), or truncated
    where the `ptx` that ran has wgmma reading raw fp32 from cp.async ring slots (to_llvm/dot_async.py)."""
    if a.dtype != torch.float32:
        return a.double() @ b.double()
    cut = tf32_truncated if any("k8.f32.tf32.tf32" in text and "cp.async" in text for text in ptx) else tf32
    return cut(a) @ cut(b)


def _compiled_ptx(jit_fn, run) -> list[str]:
    """Run `run` (launches of `jit_fn`) with empty in-memory caches: the PTX of what it compiled."""
    saved = jit_fn.cache, jit_fn.launch_cache
    jit_fn.cache, jit_fn.launch_cache = {}, {}
    try:
        run()
        return [k.asm["ptx"] for k in jit_fn.cache.values() if "ptx" in getattr(k, "asm", {})]
    finally:
        jit_fn.cache, jit_fn.launch_cache = saved


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("blocks", [(128, 128, 32, 4), (64, 64, 32, 4), (64, 128, 64, 8), (16, 64, 16, 4),
                                    (32, 32, 16, 4)], ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("shape", [(512, 256, 384), (333, 271, 145)], ids=["aligned", "edges"])
def test_matmul(dtype, blocks, shape):
    check_matmul(dtype, blocks, shape)


def check_matmul(dtype, blocks, shape, seed: int = 0, **launch) -> list[str]:
    """dot_kernels.matmul of random (M x K) @ (K x N) operands into a NaN-poisoned output, against
    float64 (tests/gpu/test_dot_mma_sync_gpu.py runs it too); the PTX of the kernels it compiled."""
    gen = torch.Generator().manual_seed(seed)
    M, N, K = shape
    a, b = _random((M, K), dtype, gen), _random((K, N), dtype, gen)
    c = torch.full((M, N), float("nan"), device="cuda")
    bm, bn, bk, warps = blocks
    ptx = _compiled_ptx(dot_kernels.matmul_kernel, lambda: dot_kernels.matmul(
        a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=4, num_warps=warps, **launch))
    assert _relative_error(c, _product(a, b, ptx)) <= TOLERANCE[dtype]
    return ptx


@pytest.mark.parametrize("num_stages", [1, 2, 3, 4])
@pytest.mark.parametrize("blocks", [(128, 128, 32, 4), (64, 64, 32, 4), (128, 256, 64, 8)],
                         ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("shape", [(512, 512, 512), (333, 271, 145), (200, 136, 16)],
                         ids=["aligned", "edges", "one-step"])
def test_matmul_num_stages(num_stages, blocks, shape):
    """cp.async rings of 1..4 slots (passes/pipeline_async_copies.py): masked edges, loops shorter than
    the ring (one-step: K below BLOCK_K), and wgmma groups in flight across iterations (sm_90)."""
    gen = torch.Generator().manual_seed(6)
    M, N, K = shape
    dtype = torch.float16  # bf16 goes the same way (test_matmul: the default num_stages)
    a, b = _random((M, K), dtype, gen), _random((K, N), dtype, gen)
    c = torch.full((M, N), float("nan"), device="cuda")
    bm, bn, bk, warps = blocks
    dot_kernels.matmul(a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=4, num_warps=warps,
                       num_stages=num_stages)
    assert _relative_error(c, a.double() @ b.double()) <= TOLERANCE[dtype]


@pytest.mark.parametrize("num_stages", [2, 3, 4])
@pytest.mark.parametrize("blocks", [(128, 128, 32, 4), (64, 64, 32, 4), (128, 128, 32, 8), (128, 64, 32, 4)],
                         ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("shape", [(512, 512, 512), (333, 271, 145), (200, 136, 16)],
                         ids=["aligned", "edges", "one-step"])
def test_fp32_tf32_rings_on_mma_sync(num_stages, blocks, shape, monkeypatch):
    """fp32 "tf32" dots with both operands in cp.async rings of K-major tf32 tiles (mma.sync: sm_80, or sm_90
    with TILE_WGMMA=0), rounded per fragment after ldmatrix: against a float64 product of tf32-rounded operands."""
    monkeypatch.setenv("TILE_WGMMA", "0")
    monkeypatch.setattr(dot_kernels.matmul_kernel, "cache", {})  # the in-memory caches ignore the switches
    monkeypatch.setattr(dot_kernels.matmul_kernel, "launch_cache", {})
    gen = torch.Generator().manual_seed(7)
    M, N, K = shape
    a, b = _random((M, K), torch.float32, gen), _random((K, N), torch.float32, gen)
    c = torch.full((M, N), float("nan"), device="cuda")
    bm, bn, bk, warps = blocks
    dot_kernels.matmul(a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=4, num_warps=warps,
                       num_stages=num_stages)
    assert _relative_error(c, _product(a, b)) <= TOLERANCE[torch.float32]
    ptx = [k.asm["ptx"] for k in dot_kernels.matmul_kernel.cache.values() if "ptx" in getattr(k, "asm", {})]
    assert ptx and all("cp.async" in text and "tf32.tf32" in text for text in ptx)


@pytest.mark.parametrize("num_stages", [2, 4])
@pytest.mark.parametrize("transposed", ["a", "b", "both"])
def test_matmul_num_stages_transposed_operands(num_stages, transposed):
    """Operands loaded column by column go to their slots transposed (and runs along M/N)."""
    gen = torch.Generator().manual_seed(7)
    M, N, K = 200, 136, 96
    a = _random((K, M), torch.float16, gen).t() if transposed in ("a", "both") else _random((M, K), torch.float16, gen)
    b = _random((N, K), torch.float16, gen).t() if transposed in ("b", "both") else _random((K, N), torch.float16, gen)
    c = torch.full((M, N), float("nan"), device="cuda")
    dot_kernels.matmul(a, b, c, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_stages=num_stages)
    assert _relative_error(c, a.double() @ b.double()) <= TOLERANCE[torch.float16]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", [(512, 256, 384), (333, 271, 145)], ids=["aligned", "edges"])
def test_tutorial_form_matmul(dtype, shape):
    """Pointer tiles advanced around the loop (pointer-induction rebuilds them from the index)."""
    gen = torch.Generator().manual_seed(5)
    M, N, K = shape
    a, b = _random((M, K), dtype, gen), _random((K, N), dtype, gen)
    c = torch.full((M, N), float("nan"), device="cuda")
    dot_kernels.matmul_pointers(a, b, c, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32)
    assert _relative_error(c, a.double() @ b.double()) <= TOLERANCE[dtype]


@pytest.mark.parametrize("pipeline", ["1", "nofence", "padded"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("blocks", [(128, 128, 32, 4), (128, 256, 64, 8)], ids=lambda b: "x".join(map(str, b)))
def test_matmul_half_result_with_groups_in_flight(blocks, dtype, pipeline, monkeypatch):
    """The benchmark's form: fp16/bf16 operands and result, wgmma groups in flight across iterations
    (sm_90), the accumulator rounded two elements per cvt; with and without the proxy fence, in
    swizzled slots and in padded ones."""
    monkeypatch.setenv("TILE_PIPELINE", pipeline)
    monkeypatch.setattr(dot_kernels.matmul_kernel, "cache", {})  # the in-memory caches ignore TILE_PIPELINE
    monkeypatch.setattr(dot_kernels.matmul_kernel, "launch_cache", {})
    gen = torch.Generator().manual_seed(8)
    M, N, K = 333, 520, 392
    a, b = _random((M, K), dtype, gen), _random((K, N), dtype, gen)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    bm, bn, bk, warps = blocks
    dot_kernels.matmul(a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=4, num_warps=warps, num_stages=3)
    assert _relative_error(c, a.double() @ b.double()) <= TOLERANCE[dtype] + 1e-3


@inductor_tile.jit
def round_to_half_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)  # rounds on the store


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_packed_rounding_matches_torch_bit_for_bit(dtype):
    """fp32 -> fp16/bf16 two elements per cvt.rn.{f16,bf16}x2.f32: each element lands in its own lane
    (the first of a pair in the low half), ties round to even, overflow gives inf, NaN stays NaN."""
    gen = torch.Generator().manual_seed(9)
    n = 5000
    scale = torch.tensor([1e-8, 1e-3, 1.0, 3e4, 7e4, 1e38])[torch.randint(0, 6, (n,), generator=gen)]
    x = torch.randn(n, generator=gen) * scale
    ulp = 2.0**-10 if dtype == torch.float16 else 2.0**-7
    x[:64] = 1 + ulp * (torch.arange(64) / 2)  # halfway cases: ties to even
    x[64:68] = torch.tensor([float("inf"), -float("inf"), float("nan"), -0.0])
    x = x.cuda()
    y = torch.full((n,), float("nan"), device="cuda", dtype=dtype)
    round_to_half_kernel[(triton_cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    ref = x.to(dtype)
    assert torch.equal(y.isnan(), ref.isnan())
    keep = ~ref.isnan()
    assert torch.equal(y[keep].view(torch.int16), ref[keep].view(torch.int16))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_matmul_transposed_operands(dtype):
    gen = torch.Generator().manual_seed(1)
    M, N, K = 200, 136, 96
    a = _random((K, M), dtype, gen).t()  # a^T and b^T through strides
    b = _random((N, K), dtype, gen).t()
    c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    dot_kernels.matmul(a, b, c, BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
    assert _relative_error(c, a.double() @ b.double()) <= TOLERANCE[dtype] + 1e-3


@pytest.mark.parametrize("operand,out_dtype,result", TYPE_CASES, ids=lambda v: str(v).replace("torch.", ""))
@pytest.mark.parametrize("shape", [(16, 32, 16), (64, 64, 32)])
def test_operand_and_result_types(operand, out_dtype, result, shape):
    gen = torch.Generator().manual_seed(2)
    M, N, K = shape
    a, b, acc = _random((M, K), operand, gen), _random((K, N), operand, gen), _random((M, N), result, gen)
    out = torch.full((M, N), -1, device="cuda", dtype=result) if result == torch.int32 else \
        torch.full((M, N), float("nan"), device="cuda", dtype=result)
    tile_dot_kernel[(1,)](a, b, acc, out, M=M, N=N, K=K, PRECISION="ieee", OUT=out_dtype)
    ref = a.double() @ b.double() + acc.double()
    if result == torch.int32:
        assert torch.equal(out.long(), ref.long())
    else:
        assert _relative_error(out, ref) <= max(TOLERANCE[operand], 1e-3 if result == torch.float16 else 0)


def _fp32_dot(kernel, shape, precision: str, seed: int):
    """Random fp32 a [M, K], b [K, N], acc [M, N] on the GPU, `kernel`'s NaN-poisoned output of a @ b + acc,
    and its float64 references: exact, and of tf32-rounded operands."""
    gen = torch.Generator().manual_seed(seed)
    M, N, K = shape
    a, b, acc = (_random(s, torch.float32, gen) for s in ((M, K), (K, N), (M, N)))
    out = torch.full((M, N), float("nan"), device="cuda")
    kernel[(1,)](a, b, acc, out, M=M, N=N, K=K, PRECISION=precision)
    return a, b, acc, out, a.double() @ b.double() + acc.double(), tf32(a) @ tf32(b) + acc.double()


@pytest.mark.parametrize("precision", ["tf32", "default", "tf32x3", "ieee", "no-tf32"])
@pytest.mark.parametrize("shape", [(16, 32, 16), (64, 64, 32), (128, 128, 64), (128, 64, 128)],
                         ids=lambda s: "x".join(map(str, s)))
def test_fp32_input_precisions(precision, shape, monkeypatch):
    """fp32 dots on tf32 tensor cores (mma.sync m16n8k8, or wgmma on sm_90) or FMAs (16 x 32: too small,
    "ieee"): tf32 matches a product of tf32-rounded inputs (and the interpreter, which rounds the same way)
    and not the exact one; tf32x3 and ieee are fp32-accurate."""
    M, N, K = shape
    a, b, acc, out, exact, rounded = _fp32_dot(fp32_dot_kernel, shape, precision, seed=10)
    if precision in ("tf32", "default"):
        assert _relative_error(out, rounded) <= 1e-5
        assert _relative_error(out, exact) >= 1e-5
    else:
        assert _relative_error(out, exact) <= 1e-5
        assert _relative_error(out, rounded) >= 1e-5
    monkeypatch.setenv("TILE_INTERPRET", "1")
    interpreted = torch.full((M, N), float("nan"))
    fp32_dot_kernel[(1,)](a.cpu(), b.cpu(), acc.cpu(), interpreted, M=M, N=N, K=K, PRECISION=precision)
    assert _relative_error(out.cpu(), interpreted.double()) <= 1e-5


@pytest.mark.parametrize("precision", ["tf32", "tf32x3"])
@pytest.mark.parametrize("shape", [(16, 32, 16), (64, 64, 32), (128, 128, 64), (128, 64, 128)],
                         ids=lambda s: "x".join(map(str, s)))
def test_fp32_dot_with_b_stored_for_it(precision, shape):
    """`tl.dot(a, b)`: a's and b's tiles stored for the dot (ldmatrix on sm_80, wgmma descriptors on sm_90);
    the accumulator loaded and added afterwards (fp32_dot_kernel: loaded, as the dot's accumulator)."""
    out, exact, rounded = _fp32_dot(fp32_dot_no_acc_kernel, shape, precision, seed=14)[3:]
    assert _relative_error(out, rounded if precision == "tf32" else exact) <= 1e-5
    assert _relative_error(out, exact if precision == "tf32" else rounded) >= 1e-5


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape", [(64, 64, 32), (128, 128, 64)], ids=lambda s: "x".join(map(str, s)))
def test_half_dot_with_the_accumulator_loaded_first(dtype, shape):
    """fp32_dot_kernel's order (accumulator loaded first) with half operands: b's tile was overwritten by the
    accumulator's conversion when that lay between b's and the dot; now it comes first."""
    gen = torch.Generator().manual_seed(15)
    M, N, K = shape
    a, b = (_random(s, dtype, gen) for s in ((M, K), (K, N)))
    acc = _random((M, N), torch.float32, gen)
    out = torch.full((M, N), float("nan"), device="cuda")
    fp32_dot_kernel[(1,)](a, b, acc, out, M=M, N=N, K=K, PRECISION="default")
    assert _relative_error(out, a.double() @ b.double() + acc.double()) <= 1e-4  # a lost tile: ~1


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("name,shape", [("acc", (64, 64, 32, 4)), ("acc", (128, 128, 64, 4)), ("acc", (128, 64, 32, 8)),
                                        ("loop", (128, 128, 64, 4)), ("columns", (64, 128, 32, 4))],
                         ids=lambda v: v if isinstance(v, str) else "x".join(map(str, v)))
def test_dot_with_a_loaded_accumulator(name, shape, dtype, monkeypatch):
    """test_dot_loaded_acc.py's kernels (accumulator loaded, then a and b: `acc`; loaded before a K loop: `loop`;
    a loaded before a loop over column blocks, from registers: `columns`): converted before the operands, the
    accumulator leaves both tiles stored for the dot, wgmma on sm_90. NaN-poisoned output, float64 reference
    (of tf32-rounded operands for fp32)."""
    from test_dot_loaded_acc import KERNELS

    kernel = KERNELS[name]
    monkeypatch.setattr(kernel, "cache", {})  # only this launch's compile below
    monkeypatch.setattr(kernel, "launch_cache", {})
    gen = torch.Generator().manual_seed(16)
    M, N, K, warps = shape
    a, b = (_random(s, dtype, gen) for s in ((M, K), (K, N)))
    acc = _random((M, N), torch.float32, gen)
    out = torch.full((M, N), float("nan"), device="cuda")
    kernel[(1,)](a, b, acc, out, M=M, N=N, K=K, PRECISION="tf32", num_warps=warps)
    ptx = [k.asm["ptx"] for k in kernel.cache.values() if "ptx" in getattr(k, "asm", {})]
    assert _relative_error(out, _product(a, b, ptx) + acc.double()) <= (1e-5 if dtype == torch.float32 else 1e-4)
    if torch.cuda.get_device_capability() == (9, 0):
        assert ptx and all("wgmma.mma_async" in text and "mma.sync" not in text for text in ptx)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("blocks", [(128, 128, 32, 4), (64, 64, 32, 4), (128, 256, 64, 8)],
                         ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("num_stages", [1, 3])
def test_addmm_with_the_bias_as_accumulator(dtype, blocks, num_stages):
    """test_dot_loaded_acc.addmm_kernel: the bias tile loaded as the accumulator of a K loop, edges in M, N
    and K, with and without cp.async rings."""
    from test_dot_loaded_acc import addmm_kernel

    gen = torch.Generator().manual_seed(17)
    M, N, K = 333, 271, 145
    a, b = (_random(s, dtype, gen) for s in ((M, K), (K, N)))
    bias = _random((M, N), torch.float32, gen)
    out = torch.full((M, N), float("nan"), device="cuda")
    bm, bn, bk, warps = blocks
    grid = (triton_cdiv(M, bm), triton_cdiv(N, bn))
    ptx = _compiled_ptx(addmm_kernel, lambda: addmm_kernel[grid](
        a, b, bias, out, M, N, K, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=warps, num_stages=num_stages))
    assert _relative_error(out, _product(a, b, ptx) + bias.double()) <= (1e-5 if dtype == torch.float32 else 1e-4)


@pytest.mark.parametrize("blocks", [(128, 128, 32, 4), (64, 64, 32, 4), (128, 256, 32, 8)],
                         ids=lambda b: "x".join(map(str, b)))
def test_fp32_matmul_on_tensor_cores(blocks):
    """The matmul kernel with fp32 operands (tf32, its default precision) at edges, K looped; the PTX has the
    tf32 instructions (sm_90: wgmma from cp.async rings, truncating the operands as Triton's dots do)."""
    gen = torch.Generator().manual_seed(11)
    M, N, K = 333, 271, 145
    a, b = _random((M, K), torch.float32, gen), _random((K, N), torch.float32, gen)
    c = torch.full((M, N), float("nan"), device="cuda")
    bm, bn, bk, warps = blocks
    ptx = _compiled_ptx(dot_kernels.matmul_kernel, lambda: dot_kernels.matmul(
        a, b, c, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=4, num_warps=warps))
    assert ptx and all(".tf32.tf32" in text for text in ptx)
    assert _relative_error(c, _product(a, b, ptx)) <= TOLERANCE[torch.float32]
    if torch.cuda.get_device_capability() == (9, 0):  # truncated, measurably not rounded
        assert all("k8.f32.tf32.tf32" in text and "cp.async" in text for text in ptx)
        assert _relative_error(c, tf32(a) @ tf32(b)) >= 1e-4
    else:
        assert _relative_error(c, a.double() @ b.double()) >= 1e-5


@pytest.mark.parametrize("transposed", ["a", "b", "both"])
def test_fp32_matmul_transposed_operands(transposed):
    """tf32 tiles are stored K-major whatever the load's layout (wgmma takes no transpose for tf32): operands
    loaded column by column store element by element."""
    gen = torch.Generator().manual_seed(12)
    M, N, K = 200, 136, 96
    a = _random((K, M), torch.float32, gen).t() if transposed in ("a", "both") else _random((M, K), torch.float32, gen)
    b = _random((N, K), torch.float32, gen).t() if transposed in ("b", "both") else _random((K, N), torch.float32, gen)
    c = torch.full((M, N), float("nan"), device="cuda")
    ptx = _compiled_ptx(dot_kernels.matmul_kernel, lambda: dot_kernels.matmul(a, b, c, BLOCK_M=64, BLOCK_N=64,
                                                                               BLOCK_K=32))
    assert _relative_error(c, _product(a, b, ptx)) <= TOLERANCE[torch.float32]


@pytest.mark.parametrize("head_dim", [64, 128])
def test_fp32_causal_attention(head_dim):
    """fp32 q, k, v: q k^T and p v on tf32 tensor cores (a from registers: q loaded once, p computed)."""
    gen = torch.Generator().manual_seed(13)
    q, k, v = (_random((4, 333, head_dim), torch.float32, gen) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    dot_kernels.attention(q, k, v, head_dim**-0.5, o, BLOCK_M=64, BLOCK_N=64, num_warps=4)
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True,
                                                           scale=head_dim**-0.5)
    assert not o.isnan().any()
    torch.testing.assert_close(o.double(), ref, atol=5e-3, rtol=5e-3)  # the interpreter (tf32 too): 1e-3 off


@pytest.mark.parametrize("num_stages", [1, 2, 3, 4])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("blocks", [(64, 64, 4), (128, 64, 8)], ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("seq", [1024, 333])
def test_causal_attention(head_dim, blocks, seq, num_stages):
    gen = torch.Generator().manual_seed(3)
    heads = 6
    q, k, v = (_random((heads, seq, head_dim), torch.float16, gen) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    bm, bn, warps = blocks
    dot_kernels.attention(q, k, v, head_dim**-0.5, o, BLOCK_M=bm, BLOCK_N=bn, num_warps=warps, num_stages=num_stages)
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True,
                                                           scale=head_dim**-0.5)
    assert not o.isnan().any()
    torch.testing.assert_close(o.double(), ref, atol=2e-3, rtol=2e-3)


@pytest.mark.parametrize("pipeline", ["resident", "resident,nofence", "nofence"])
@pytest.mark.parametrize("head_dim", [64, 128])
@pytest.mark.parametrize("blocks", [(64, 64, 4), (128, 64, 8)], ids=lambda b: "x".join(map(str, b)))
@pytest.mark.parametrize("seq", [1024, 333])
def test_causal_attention_pipeline_variants(head_dim, blocks, seq, pipeline, monkeypatch):
    """TILE_PIPELINE's attention variants (q in a one-slot ring read by descriptors; no proxy fence):
    correct results, and the launched kernel has what the word asks for."""
    monkeypatch.setenv("TILE_PIPELINE", pipeline)
    gen = torch.Generator().manual_seed(5)
    heads = 6
    q, k, v = (_random((heads, seq, head_dim), torch.float16, gen) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    bm, bn, warps = blocks
    ptx = _compiled_ptx(dot_kernels.attention_fwd_kernel, lambda: dot_kernels.attention(
        q, k, v, head_dim**-0.5, o, BLOCK_M=bm, BLOCK_N=bn, num_warps=warps))
    ref = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True,
                                                           scale=head_dim**-0.5)
    assert not o.isnan().any()
    torch.testing.assert_close(o.double(), ref, atol=2e-3, rtol=2e-3)
    assert ptx
    if torch.cuda.get_device_capability() == (9, 0):  # wgmma: q's descriptors; the fence unless nofence
        assert all(("fence.proxy.async" in text) == ("nofence" not in pipeline) for text in ptx)
        register_a = [sum("wgmma.mma_async" in line and "}, {%r" in line for line in text.splitlines()) for text in ptx]
        assert register_a == [bn // 16 + (0 if "resident" in pipeline else head_dim // 16)] * len(ptx)


def test_ptx_of_a_launched_matmul_copies_with_cp_async():
    """The launched kernel took the cp.async rings (and on sm_90 kept its wgmma groups in flight)."""
    gen = torch.Generator().manual_seed(9)
    a, b = _random((256, 256), torch.float16, gen), _random((256, 256), torch.float16, gen)
    c = torch.full((256, 256), float("nan"), device="cuda")
    dot_kernels.matmul(a, b, c, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, num_stages=3)
    assert _relative_error(c, a.double() @ b.double()) <= TOLERANCE[torch.float16]
    ptx = [k.asm["ptx"] for k in dot_kernels.matmul_kernel.cache.values() if "ptx" in getattr(k, "asm", {})
           and "cp.async.cg.shared.global" in k.asm["ptx"]]
    assert ptx
    if torch.cuda.get_device_capability() == (9, 0):
        assert any("wgmma.wait_group.sync.aligned 1;" in text for text in ptx)


def test_ptx_of_a_launched_matmul_uses_tensor_cores():
    """wgmma on sm_90, mma.sync m16n8k16 on sm_80-89: the launched kernel's PTX, and a correct result."""
    gen = torch.Generator().manual_seed(4)
    a, b = _random((128, 64), torch.float16, gen), _random((64, 128), torch.float16, gen)
    c = torch.full((128, 128), float("nan"), device="cuda")
    dot_kernels.matmul(a, b, c, BLOCK_M=128, BLOCK_N=128, BLOCK_K=32)
    assert _relative_error(c, a.double() @ b.double()) <= TOLERANCE[torch.float16]
    ptx = [k.asm["ptx"] for k in dot_kernels.matmul_kernel.cache.values() if "ptx" in k.asm]
    expected = "wgmma.mma_async.sync.aligned" if torch.cuda.get_device_capability() == (9, 0) \
        else "mma.sync.aligned.m16n8k16"
    assert any(expected in text for text in ptx)
