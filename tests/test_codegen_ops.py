"""The codegen's ops handler and reductions, end to end through torch.compile(backend="tile").

Each test compiles a function whose nodes must all become tile kernels (no fallback to
Inductor's C++ kernels), then compares every output with eager PyTorch: float64 random
inputs (never zeros) plus the values where semantics differ (NaN, +-inf, -0.0, ties,
negative integers), exactly or within float64 rounding.
"""

import pytest
import torch

from inductor_tile import metrics
from inductor_tile.backend import tile_backend


def _compile(fn):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend)


def _check(fn, *args, rtol=1e-12, atol=1e-12, fallbacks_ok=False):
    """Run fn compiled and eagerly; outputs must match in dtype, shape and value (NaN == NaN)."""
    out = _compile(fn)(*args)
    ref = fn(*args)
    out, ref = (out, ref) if isinstance(ref, tuple) else ((out,), (ref,))
    for i, (o, r) in enumerate(zip(out, ref)):
        assert o.dtype == r.dtype and o.shape == r.shape, (i, o.dtype, r.dtype, o.shape, r.shape)
        torch.testing.assert_close(o, r, rtol=rtol, atol=atol, equal_nan=True, msg=lambda m, i=i: f"output {i}: {m}")
    assert metrics.generated_kernels >= 1
    if not fallbacks_ok:
        assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    return out


def _rand(*shape, dtype=torch.float64, seed=0, low=None, high=None):
    g = torch.Generator().manual_seed(seed + 31 * sum(shape))
    if low is not None:
        return (torch.rand(*shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)
    x = torch.randn(*shape, generator=g, dtype=torch.float64)
    return torch.where(x == 0, 0.5, x).to(dtype)


def _ints(*shape, low=-50, high=50, seed=0, dtype=torch.int64):
    g = torch.Generator().manual_seed(seed + 17 * sum(shape))
    return torch.randint(low, high, shape, generator=g, dtype=dtype)


SPECIALS = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 0.5, -0.5, 1.5, 2.5, -2.5],
                        dtype=torch.float64)


# ===--------------------------------------------------------------------------===
# elementwise math
# ===--------------------------------------------------------------------------===
def test_unary_math_float64():
    x = torch.cat([_rand(200) * 3, SPECIALS])
    u = torch.cat([_rand(200, low=-0.95, high=0.95), SPECIALS])  # inside (-1, 1) for asin/acos/atanh

    def fn(x, u):
        return (torch.tanh(x), torch.log1p(x.abs()), torch.expm1(x), torch.log10(x.abs()), torch.tan(u),
                torch.sinh(x), torch.cosh(x), torch.asin(u), torch.acos(u), torch.atan(x), torch.asinh(x),
                torch.acosh(x.abs() + 1), torch.atanh(u), torch.trunc(x * 3), torch.round(x * 3), torch.sign(x),
                torch.signbit(x), torch.nn.functional.gelu(x, approximate="tanh"), torch.isinf(x), torch.isnan(x))

    _check(fn, x, u)


def test_unary_math_float32_and_float16():
    # (half types compile slowly on the CPU target: a few ops on a short vector)
    x = _rand(300, dtype=torch.float32) * 3
    fn = lambda x: (torch.tanh(x), torch.expm1(x), torch.log1p(x.abs()), torch.atan(x), torch.trunc(x),  # noqa: E731
                    torch.round(x), torch.sign(x), torch.signbit(x))
    _check(fn, x, rtol=2e-6, atol=2e-6)
    h = _rand(40, dtype=torch.float16) * 3
    _check(lambda x: (torch.tanh(x), torch.round(x), torch.signbit(x)), h, rtol=2e-3, atol=2e-3)


def test_binary_math():
    a, b = torch.cat([_rand(100) * 3, SPECIALS]), torch.cat([_rand(100, seed=1) * 2, SPECIALS.flip(0)])
    n = _ints(110, low=-4, high=5)

    def fn(a, b, n):
        return (torch.pow(a.abs(), b), torch.pow(a, n), torch.pow(a, 3.5), torch.pow(2.0, b), torch.atan2(a, b),
                torch.copysign(a, b), torch.fmod(a, b), torch.remainder(a, b), torch.maximum(a, b),
                torch.minimum(a, b))

    _check(fn, a, b, n)


def test_integer_division_follows_python_and_c():
    a = torch.cat([_ints(300, low=-1000, high=1000), torch.tensor([-7, 7, -7, 7, 0, -1])])
    b = torch.cat([_ints(300, low=1, high=30, seed=1) * (torch.randint(0, 2, (300,)) * 2 - 1),
                   torch.tensor([2, -2, -2, 2, 3, 5])])

    def fn(a, b):
        return (a // b, torch.div(a, b, rounding_mode="trunc"), torch.remainder(a, b), torch.fmod(a, b), a % 7,
                -a // 3, torch.maximum(a, b), torch.minimum(a, b), torch.abs(a), torch.sign(a), torch.signbit(a))

    _check(fn, a, b)
    _check(fn, a.to(torch.int32), b.to(torch.int32))


def test_bitwise_shifts_and_bools():
    a, b = _ints(200, low=-2**20, high=2**20), _ints(200, low=-2**20, high=2**20, seed=1)
    s = _ints(200, low=0, high=40, seed=2)
    p, q = _rand(200) > 0, _rand(200, seed=3) > 0.3

    def fn(a, b, s, p, q):
        return (~a, a & b, a | b, a ^ b, a << s, a >> s, p & q, p | q, p ^ q, ~p, torch.logical_xor(a, b),
                torch.logical_and(p, a), torch.logical_not(a), torch.where(p, a, b), p.to(torch.float64) * 2 - q.int(),
                p + q, p * q, torch.maximum(p, q), torch.minimum(p, q))

    _check(fn, a, b, s, p, q)


def test_casts_and_bitcasts():
    x = torch.cat([_rand(200) * 100, torch.tensor([-1.5, 255.0, 300.0, -300.0])])

    def fn(x):
        f = x.float()
        return (x.to(torch.uint8), x.to(torch.int8), x.to(torch.int32), x.to(torch.bool), f.view(torch.int32) & 0xFF,
                (f.view(torch.int32) + 1).view(torch.float32), x.half().float(), x.to(torch.bfloat16) * 2)

    _check(fn, x)


def test_bool_constants_loads_and_stores():
    x = _rand(30, 40)

    def fn(x):
        mask = torch.ones(30, 40, dtype=torch.bool).tril()
        keep = x > 0
        return mask, keep & mask, torch.where(mask, x, -1e9), torch.full_like(keep, True) ^ keep

    _check(fn, x)


# ===--------------------------------------------------------------------------===
# index expressions
# ===--------------------------------------------------------------------------===
def test_index_expressions_with_negative_terms_min_max_abs():
    x = _rand(24, 24)

    def fn(x):
        i = torch.arange(24)
        rel = i[None, :] - i[:, None]  # -x0 + x1: causal and relative-position masks
        bucket = torch.where(rel > 0, 16, 0) + torch.minimum(rel.abs(), torch.tensor(7))  # T5-style buckets
        causal = torch.where(rel <= 0, x, float("-inf")).softmax(-1)
        return rel, bucket, causal, (-torch.minimum(rel, torch.zeros_like(rel))).to(torch.float64) * x

    _check(fn, x)


def test_large_int64_index_expression_is_not_truncated():
    def fn(x):
        return torch.arange(x.numel(), dtype=torch.int64).view(x.shape) * 10**9 + x.long()

    _check(fn, _ints(8, 16, low=0, high=9))


# ===--------------------------------------------------------------------------===
# indirect indexing
# ===--------------------------------------------------------------------------===
def test_embedding_gather_and_index_select():
    w, x = _rand(50, 16), _rand(12, 16, seed=1)
    idx = _ints(4, 9, low=0, high=50)
    neg = _ints(7, low=-12, high=12, seed=1)  # negative indices count from the end
    cols = _ints(12, 5, low=0, high=16, seed=2)

    def fn(w, x, idx, neg, cols):
        return (torch.nn.functional.embedding(idx, w) * 2, x[neg] + 1, torch.gather(x, 1, cols),
                torch.index_select(w, 0, idx.flatten()).sum(-1))

    _check(fn, w, x, idx, neg, cols)
    assert any(">= 0) & (" in source for source in metrics.kernel_sources.values())  # bounds-masked loads


def test_out_of_range_index_reads_zero_instead_of_memory():
    # eager raises; Inductor's GPU kernels assert on the device; tile kernels mask the load
    w = _rand(10, 4)
    idx = torch.tensor([0, 3, 10, 9, 1000])
    out = _compile(lambda w, i: w[i] * 1.0)(w, idx)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    torch.testing.assert_close(out[[0, 1, 3]], w[[0, 3, 9]])
    assert torch.equal(out[[2, 4]], torch.zeros(2, 4, dtype=w.dtype))


def test_stores_through_indirect_indices():
    x, v = _rand(10, 4), _rand(3, 4, seed=1)
    rows = torch.tensor([7, 2, -1])
    cols, src = _ints(10, 2, low=0, high=4), _rand(10, 2, seed=2)

    def fn(x, v, rows, cols, src):
        y = x.clone()
        y[rows] = v * 2
        return y, torch.scatter(x, 1, cols, src), x.index_copy(0, rows.abs(), v)

    _check(fn, x, v, rows, cols, src)


def test_out_of_range_store_writes_nothing():
    x, v = _rand(6, 3), _rand(2, 3, seed=1)

    def fn(x, v, i):
        y = x.clone()
        y[i] = v
        return y

    out = _compile(fn)(x, v, torch.tensor([1, 6]))  # eager raises for row 6
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    torch.testing.assert_close(out, torch.cat([x[:1], v[:1], x[2:]]))


def test_positions_from_arange_need_no_bounds_check():
    # GPT-2's position embeddings: an index Inductor rewrites into a direct one with check_bounds
    wpe, x = _rand(128, 16), _rand(2, 32, 16, seed=1)

    def fn(x, wpe):
        return x + torch.nn.functional.embedding(torch.arange(32), wpe)

    _check(fn, x, wpe)


def test_embedding_backward_adds_atomically():
    emb = torch.nn.Embedding(30, 8).double()
    idx = _ints(5, 6, low=0, high=30)

    def loss(i):
        return (emb(i) * 3).tanh().sum()

    out = _compile(loss)(idx)
    out.backward()
    grad = emb.weight.grad.clone()
    emb.weight.grad = None
    loss(idx).backward()
    torch.testing.assert_close(grad, emb.weight.grad)
    assert not any("atomic_add" in r for r in metrics.fallback_reasons), metrics.fallback_reasons
    assert any("tl.atomic_add(" in source for source in metrics.kernel_sources.values())


# ===--------------------------------------------------------------------------===
# reductions
# ===--------------------------------------------------------------------------===
def _with_specials(x):
    x = x.clone()
    x[1, 3] = float("nan")
    x[2, :] = float("-inf")
    x[3, 5] = x[3, 9] = 100.0  # ties: the first index wins
    x[4, :] = 1.0
    return x


@pytest.mark.parametrize("cols", [40, 3000], ids=["persistent", "looped"])
def test_argmax_argmin_any_all(cols):
    x = _with_specials(_rand(6, cols))
    if cols > 1000:
        x[0, 2500] = 1e6
        x[5, 10] = x[5, 2000] = -1e6

    def fn(x):
        return (x.argmax(-1), x.argmin(-1), (x > 2).any(-1), (x > -10).all(-1), (x > 0).sum(-1),
                x.amax(-1), x.amin(-1))

    _check(fn, x)


def test_argmax_over_columns_and_integers():
    x = _rand(33, 7)
    n = _ints(9, 21)

    def fn(x, n):
        return x.argmax(0), x.argmin(0), n.argmax(-1), n.argmin(-1), n.amax(-1), n.amin(0), n.sum(-1)

    _check(fn, x, n)


def test_looped_welford_with_a_large_mean_float32():
    x = (_rand(5, 3000, dtype=torch.float32) + 1000.0)
    fn = lambda x: (*torch.var_mean(x, -1), torch.nn.functional.layer_norm(x, (3000,)))  # noqa: E731
    out = _check(fn, x, rtol=1e-4, atol=1e-4)
    assert any("for roffset in range" in s for s in metrics.kernel_sources.values())
    torch.testing.assert_close(out[0], x.double().var(-1).float(), rtol=1e-3, atol=1e-4)


def test_split_welford_combine():
    v = _rand(100000, dtype=torch.float32) * 3 + 50
    _check(lambda v: torch.var_mean(v), v, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("cols", [50, 3000], ids=["persistent", "looped"])
def test_online_softmax_reduce(cols):
    # Inductor emits online_softmax_reduce for softmax on CUDA only: call its prim directly
    x = _rand(6, cols)
    x[1, :] = float("-inf")
    x[2, : cols // 2] = float("-inf")
    x[3, 7] = float("inf")
    x[4, cols // 3] = float("nan")
    x[0] = torch.linspace(-5, 5, cols)  # the running max grows at every element
    _check(lambda t: torch.ops.prims.prepare_softmax_online(t, -1), x)


def test_indirect_index_bounded_by_a_dynamic_size():
    fn = lambda x, i: x[i] * 2  # noqa: E731
    torch._dynamo.reset()
    metrics.reset()
    compiled = torch.compile(fn, backend=tile_backend, dynamic=True)
    for rows in (9, 17):
        x, i = _rand(rows, 5, seed=rows), _ints(6, low=-rows, high=rows, seed=rows)
        torch.testing.assert_close(compiled(x, i), fn(x, i))
    assert metrics.generated_kernels >= 1 and metrics.fallback_kernels == 0, metrics.fallback_reasons


def test_looped_layernorm_reads_its_rows_twice():
    """Welford's mean and m2 nodes share one loop and one accumulator set; the normalization
    (which needs both) is a second loop: two passes over the input, not three."""
    x, w, b = _rand(6, 2000), _rand(2000), _rand(2000)  # above two-step variance sizes
    out = _check(lambda x, w, b: torch.nn.functional.layer_norm(x, (2000,), w, b), x, w, b)
    assert out[0].shape == (6, 2000)
    (source,) = [s for s in metrics.kernel_sources.values() if "layer_norm" in s]
    assert source.count("for roffset") == 2, source
    assert source.count("tl.full([XBLOCK, RBLOCK]") == 3, source  # mean, m2, count


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_sums_stay_fp32_inside_the_kernel(dtype):
    """8192 values near 10 sum to ~8e4, beyond fp16's range: the sum stays fp32 until the
    division (as in Inductor's Triton kernels; eager rounds the sum to inf first), so a loss
    summed then divided by its count is finite."""
    x = (_rand(8192, low=9.0, high=11.0)).to(dtype)
    out = _compile(lambda x: x.sum() / 8192)(x)
    assert out.dtype == dtype and metrics.fallback_kernels == 0
    torch.testing.assert_close(out, (x.double().sum() / 8192).to(dtype), rtol=1e-2, atol=1e-2)
    logits = (_rand(2048, 40) * 3).to(dtype)
    labels = _ints(2048, low=0, high=40)
    out = _check(lambda lg, lb: torch.nn.functional.cross_entropy(lg, lb, reduction="sum") / 2048.0, logits, labels,
                 rtol=2e-2, atol=2e-2)
    assert torch.isfinite(out[0])


def test_nodes_over_other_sizes_of_the_same_elements_share_a_kernel():
    """A reduction over [32, 2] rows and a pointwise node over the same 64 elements seen as [64]
    fuse: the pointwise node's index is decoded from the kernel's flat one."""
    x, w = _rand(2, 32, 64), _rand(64)

    def fn(x, w):
        s = x.permute(1, 0, 2).sum(-1)
        return s, s.view(64) * w

    _check(fn, x, w)
    fused = [src for src in metrics.kernel_sources.values() if "tl.sum" in src and "(pointwise)" in src]
    assert fused, list(metrics.kernel_sources.values())


def test_reductions_over_other_splits_of_the_same_rows_share_a_kernel():
    """RMS-normalizing x + b (b broadcast over the batch: rows split [2, 32]) and then a max over
    the normalized rows (merged [64]) is one kernel: the reductions cover the same 64 x 64 elements."""
    x, b = _rand(2, 32, 64), _rand(32, 64)

    def fn(x, b):
        h = x + b
        y = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        return y.amax(-1), y

    _check(fn, x, b)
    assert any("tl.sum" in src and "tl.max" in src for src in metrics.kernel_sources.values()), \
        list(metrics.kernel_sources.values())


def test_flat_pointwise_node_shares_a_kernel_with_its_row_reduction():
    """y = x * 2 + z is one loop over 64 * 48 elements ([3072] after Inductor merges its dims);
    the row sum of y is [64] x [48]. No dim boundary splits [3072], so y's index is decoded
    from the kernel's flat (row, reduced) one: one kernel, not two."""
    x, z = _rand(64, 48), _rand(64, 48, seed=1)
    _check(lambda x, z: ((y := x * 2 + z), y.sum(-1)), x, z)
    assert metrics.generated_kernels == 1, list(metrics.kernel_sources)


def test_flat_pointwise_node_next_to_a_column_reduction_stays_correct():
    """The column sum of y ([48] x [64], reading y at r * 48 + x) covers as many elements as
    y's flat loop, but not in the same order: whatever is fused, the values must match."""
    x, z = _rand(64, 48), _rand(64, 48, seed=1)
    _check(lambda x, z: ((y := x * 2 + z), y.sum(0), (y * 3).sum(0)), x, z)


def test_groups_with_the_same_code_share_one_kernel():
    """Two layers of the same shapes (separated by matmuls, so not fusable) generate the same
    code: the wrapper defines one kernel and launches it twice, compiled once."""
    x, w1, w2 = _rand(16, 40), _rand(40, 40, seed=1), _rand(40, 40, seed=2)

    def layer(h, w):
        return torch.nn.functional.layer_norm(h, (40,)).relu() @ w

    _check(lambda x, w1, w2: layer(layer(x, w1), w2), x, w1, w2, rtol=1e-9, atol=1e-9)
    assert metrics.generated_kernels == 2 and metrics.reused_kernels == 1, list(metrics.kernel_sources)
    assert len(metrics.kernel_sources) == 1, list(metrics.kernel_sources)
