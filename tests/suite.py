"""The kernel suite: hand-written tile kernels with torch references.

Every case builds random inputs (seeded, never all zeros), poisons its outputs (NaN for
floats, a sentinel for integers), launches a kernel and returns checks comparing the
outputs with a torch reference computed in float64 (or exactly, for integers). The same
cases run under the interpreter and, later, on every compiled target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

import inductor_tile
import inductor_tile.language as tl


@dataclass
class Check:
    name: str
    actual: torch.Tensor
    expected: torch.Tensor
    atol: float = 0.0
    rtol: float = 0.0


def poison(t: torch.Tensor) -> torch.Tensor:
    """Fill an output with values a correct kernel must overwrite."""
    if t.dtype.is_floating_point:
        return t.fill_(float("nan"))
    if t.dtype == torch.bool:
        return t.fill_(True)
    return t.fill_(torch.iinfo(t.dtype).min + 7)


def empty_poisoned(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return poison(torch.empty(*shape, dtype=dtype))


def randn(gen: torch.Generator, *shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


TOL = {torch.float16: (1e-3, 1e-2), torch.bfloat16: (1e-2, 5e-2), torch.float32: (1e-5, 1e-5),
       torch.float64: (1e-12, 1e-12)}


def close(name: str, actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype | None = None) -> Check:
    atol, rtol = TOL[dtype or actual.dtype]
    return Check(name, actual, expected, atol, rtol)


CASES: dict[str, Callable[[torch.Generator], list[Check]]] = {}


def case(fn: Callable[[torch.Generator], list[Check]]) -> Callable[[torch.Generator], list[Check]]:
    CASES[fn.__name__] = fn
    return fn


# ===--------------------------------------------------------------------------===
# 1. vector add with a masked tail
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


@case
def vector_add(gen: torch.Generator) -> list[Check]:
    checks = []
    for n in (1, 127, 1000):
        x, y = randn(gen, n), randn(gen, n)
        out = empty_poisoned(n + 5)  # the extra elements must stay poisoned: nothing writes past n
        add_kernel[lambda meta: (tl.cdiv(meta["n"], meta["BLOCK"]),)](x, y, out, n, BLOCK=128)
        checks.append(close(f"n={n}", out[:n], x.double() + y.double()))
        checks.append(Check(f"tail n={n}", out[n:].isnan(), torch.ones(5, dtype=torch.bool)))
    return checks


# ===--------------------------------------------------------------------------===
# 2. row softmax in fp16 with fp32 math
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def softmax_kernel(out_ptr, in_ptr, in_row_stride, out_row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(in_ptr + row * in_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, (num / den).to(tl.float16), mask=mask)


@case
def softmax_fp16(gen: torch.Generator) -> list[Check]:
    x = randn(gen, 37, 300, dtype=torch.float16)
    out = empty_poisoned(37, 300, dtype=torch.float16)
    softmax_kernel[(37,)](out, x, x.stride(0), out.stride(0), 300, BLOCK=512)
    return [close("softmax", out, torch.softmax(x.double(), dim=1))]


# ===--------------------------------------------------------------------------===
# 3. layernorm with looped reductions
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, mean_ptr, rstd_ptr, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / N
    var_acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        diff = tl.where(cols < N, x - mean, 0.0)
        var_acc += diff * diff
    rstd = 1 / tl.sqrt(tl.sum(var_acc, axis=0) / N + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, N, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(w_ptr + cols, mask=mask)
        b = tl.load(b_ptr + cols, mask=mask)
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * stride + cols, (x - mean) * rstd * w + b, mask=mask)


@case
def layernorm(gen: torch.Generator) -> list[Check]:
    M, N = 9, 1000
    x, w, b = randn(gen, M, N), randn(gen, N), randn(gen, N)
    out, mean, rstd = empty_poisoned(M, N), empty_poisoned(M), empty_poisoned(M)
    layernorm_kernel[(M,)](x, w, b, out, mean, rstd, x.stride(0), N, 1e-5, BLOCK=256)
    xd = x.double()
    ref = torch.nn.functional.layer_norm(xd, (N,), w.double(), b.double(), 1e-5)
    ref_mean = xd.mean(1)
    ref_rstd = 1 / torch.sqrt(xd.var(1, unbiased=False) + 1e-5)
    return [close("out", out, ref), close("mean", mean, ref_mean), close("rstd", rstd, ref_rstd)]


# ===--------------------------------------------------------------------------===
# 4. 2D tiles with strides and broadcasting: out = x (any strides) * row_scale[:, None] + col_bias[None, :]
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def scale_bias_2d_kernel(x_ptr, s_ptr, b_ptr, out_ptr, M, N, sxm, sxn, som, son,
                         BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    x = tl.load(x_ptr + rm[:, None] * sxm + rn[None, :] * sxn, mask=mask)
    s = tl.load(s_ptr + rm, mask=rm < M)
    b = tl.load(b_ptr + rn, mask=rn < N)
    tl.store(out_ptr + rm[:, None] * som + rn[None, :] * son, x * s[:, None] + b[None, :], mask=mask)


@case
def tile_2d_strided(gen: torch.Generator) -> list[Check]:
    M, N = 45, 70
    x = randn(gen, N, M).t()  # non-contiguous view
    s, b = randn(gen, M), randn(gen, N)
    out = empty_poisoned(M, N)
    grid = (tl.cdiv(M, 16), tl.cdiv(N, 32))
    scale_bias_2d_kernel[grid](x, s, b, out, M, N, x.stride(0), x.stride(1), out.stride(0), out.stride(1), BM=16, BN=32)
    return [close("out", out, x.double() * s.double()[:, None] + b.double()[None, :])]


# ===--------------------------------------------------------------------------===
# 5. column sums (reduction along axis 0 of a 2D tile, looped over rows)
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def column_sum_kernel(x_ptr, out_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BN + tl.arange(0, BN)
    acc = tl.zeros([BN], dtype=tl.float32)
    for start in range(0, M, BM):
        rows = start + tl.arange(0, BM)
        mask = (rows[:, None] < M) & (cols[None, :] < N)
        tile = tl.load(x_ptr + rows[:, None] * stride_m + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(tile, axis=0)
    tl.store(out_ptr + cols, acc, mask=cols < N)


@case
def column_sum(gen: torch.Generator) -> list[Check]:
    M, N = 100, 77
    x = randn(gen, M, N)
    out = empty_poisoned(N)
    column_sum_kernel[(tl.cdiv(N, 32),)](x, out, M, N, x.stride(0), BM=16, BN=32)
    return [close("colsum", out, x.double().sum(0))]


# ===--------------------------------------------------------------------------===
# 6. argmax / argmin per row, and max with indices
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def argmax_kernel(x_ptr, idx_ptr, val_ptr, amin_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=-float("inf"))
    value, index = tl.max(x, axis=0, return_indices=True)
    tl.store(idx_ptr + row, index)
    tl.store(val_ptr + row, value)
    y = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=float("inf"))
    tl.store(amin_ptr + row, tl.argmin(y, axis=0))


@case
def argmax(gen: torch.Generator) -> list[Check]:
    M, N = 16, 50
    x = randn(gen, M, N)
    x[3, 10] = x[3, 20] = x[3].max() + 1.0  # ties: the first index wins
    idx, val, amin = empty_poisoned(M, dtype=torch.int32), empty_poisoned(M), empty_poisoned(M, dtype=torch.int32)
    argmax_kernel[(M,)](x, idx, val, amin, N, x.stride(0), BLOCK=64)
    return [Check("argmax", idx.long(), x.argmax(1)), close("max", val, x.double().amax(1)),
            Check("argmin", amin.long(), x.argmin(1))]


# ===--------------------------------------------------------------------------===
# 7. integer arithmetic: C division and remainder, bit operations, shifts
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def int_arith_kernel(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask, other=1)
    tl.store(out_ptr + 0 * n + offs, a // b, mask=mask)
    tl.store(out_ptr + 1 * n + offs, a % b, mask=mask)
    tl.store(out_ptr + 2 * n + offs, (a & b) | (a ^ 7), mask=mask)
    tl.store(out_ptr + 3 * n + offs, (a << 3) >> 2, mask=mask)
    tl.store(out_ptr + 4 * n + offs, -a * 3 + ~b, mask=mask)
    tl.store(out_ptr + 5 * n + offs, tl.where(a > b, a, b) - tl.minimum(a, b) + tl.maximum(a, 5), mask=mask)


def _c_div(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="trunc")


@case
def integer_arithmetic(gen: torch.Generator) -> list[Check]:
    n = 300
    a = torch.randint(-1000, 1000, (n,), generator=gen, dtype=torch.int32)
    b = torch.randint(1, 50, (n,), generator=gen, dtype=torch.int32) * (torch.randint(0, 2, (n,), generator=gen) * 2 - 1).int()
    out = empty_poisoned(6 * n, dtype=torch.int32)
    int_arith_kernel[(tl.cdiv(n, 128),)](a, b, out, n, BLOCK=128)
    A, B = a.long(), b.long()
    expected = [_c_div(A, B), torch.fmod(A, B), (A & B) | (A ^ 7), (A << 3) >> 2, -A * 3 + ~B,
                torch.where(A > B, A, B) - torch.minimum(A, B) + torch.maximum(A, torch.tensor(5))]
    names = ["floordiv", "mod", "bits", "shifts", "neg_invert", "where_min_max"]
    return [Check(name, out[i * n:(i + 1) * n].long(), e) for i, (name, e) in enumerate(zip(names, expected))]


# ===--------------------------------------------------------------------------===
# 8. casts between all dtypes
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def cast_kernel(x_ptr, out_ptr, n, DST: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x.to(DST), mask=mask)


CAST_DTYPES = {
    torch.bool: tl.int1, torch.int8: tl.int8, torch.int16: tl.int16, torch.int32: tl.int32, torch.int64: tl.int64,
    torch.uint8: tl.uint8, torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32,
    torch.float64: tl.float64,
}


def cast_source(gen: torch.Generator, dtype: torch.dtype, n: int) -> torch.Tensor:
    """Values every destination type can hold (0..100 and small negatives where signed)."""
    if dtype == torch.bool:
        return torch.randint(0, 2, (n,), generator=gen).bool()
    if dtype == torch.uint8:
        return torch.randint(0, 100, (n,), generator=gen).to(dtype)
    if dtype.is_floating_point:
        return (torch.rand(n, generator=gen, dtype=torch.float64) * 100).to(dtype)
    return torch.randint(0, 100, (n,), generator=gen).to(dtype)


@case
def casts(gen: torch.Generator) -> list[Check]:
    n = 70
    checks = []
    for src in CAST_DTYPES:
        x = cast_source(gen, src, n)
        for dst, dst_tl in CAST_DTYPES.items():
            out = empty_poisoned(n, dtype=dst)
            cast_kernel[(1,)](x, out, n, DST=dst_tl, BLOCK=128)
            checks.append(Check(f"{src}->{dst}", out, x.to(dst)))
    return checks


# ===--------------------------------------------------------------------------===
# 9. a kernel calling helper @jit functions
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def gelu_tanh(x):
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1 + (2 * tl.sigmoid(2 * inner) - 1))


@inductor_tile.jit
def bias_act(x, b, ACTIVATION: tl.constexpr):
    y = x + b
    if ACTIVATION == "gelu":
        return gelu_tanh(y)
    return tl.maximum(y, 0.0)


@inductor_tile.jit
def bias_act_kernel(x_ptr, b_ptr, out_ptr, n, N, ACTIVATION: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % N, mask=mask)
    tl.store(out_ptr + offs, bias_act(x, b, ACTIVATION), mask=mask)


@case
def helper_functions(gen: torch.Generator) -> list[Check]:
    n, N = 500, 50
    x, b = randn(gen, n), randn(gen, N)
    checks = []
    for activation in ("gelu", "relu"):
        out = empty_poisoned(n)
        bias_act_kernel[(4,)](x, b, out, n, N, ACTIVATION=activation, BLOCK=128)
        y = x.double() + b.double().repeat(n // N)
        ref = torch.nn.functional.gelu(y, approximate="tanh") if activation == "gelu" else torch.relu(y)
        checks.append(close(activation, out, ref))
    return checks


# ===--------------------------------------------------------------------------===
# 10. math functions
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def math_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    a = tl.abs(x) + 0.5
    results = (tl.exp(x), tl.exp2(x), tl.log(a), tl.log2(a), tl.sqrt(a), tl.rsqrt(a), tl.sin(x), tl.cos(x),
               tl.erf(x), tl.floor(x * 3), tl.ceil(x * 3), tl.sigmoid(x), tl.abs(x), tl.fma(x, a, x), -x,
               x % 0.7)
    for i in tl.static_range(16):
        tl.store(out_ptr + i * n + offs, results[i], mask=mask)


@case
def math_functions(gen: torch.Generator) -> list[Check]:
    n = 100
    checks = []
    for dtype in (torch.float32, torch.float16, torch.float64):
        x = randn(gen, n, dtype=dtype)
        out = empty_poisoned(16 * n, dtype=dtype)
        math_kernel[(1,)](x, out, n, BLOCK=128)
        xd = x.double()
        a = xd.abs() + 0.5
        if dtype != torch.float64:
            a = a.to(dtype).double()  # the kernel computes |x| + 0.5 in the input dtype
        refs = [xd.exp(), torch.exp2(xd), a.log(), a.log2(), a.sqrt(), a.rsqrt(), xd.sin(), xd.cos(), torch.erf(xd),
                torch.floor((x * 3).double()), torch.ceil((x * 3).double()), torch.sigmoid(xd), xd.abs(),
                xd * a + xd, -xd, torch.fmod(xd, torch.tensor(0.7, dtype=dtype).double())]
        names = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "erf", "floor", "ceil", "sigmoid",
                 "abs", "fma", "neg", "fmod"]
        for i, (name, ref) in enumerate(zip(names, refs)):
            checks.append(close(f"{name} {dtype}", out[i * n:(i + 1) * n], ref))
    return checks


# ===--------------------------------------------------------------------------===
# 11. scalar control flow: runtime `if` on scalars, loop-carried scalars, static_range
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def control_flow_kernel(x_ptr, out_ptr, n, threshold, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    total = tl.sum(x, axis=0)
    if total > threshold:
        scale = 2.0
    else:
        scale = -1.0
    count = 0
    for i in range(0, pid + 1):
        count += i
    y = x * scale
    for k in tl.static_range(UNROLL):
        y = y + k
    tl.store(out_ptr + offs, y + count, mask=mask)


@case
def control_flow(gen: torch.Generator) -> list[Check]:
    n, BLOCK = 200, 32
    x = randn(gen, n)
    out = empty_poisoned(n)
    control_flow_kernel[(tl.cdiv(n, BLOCK),)](x, out, n, 0.5, BLOCK=BLOCK, UNROLL=3)
    xd = x.double()
    ref = torch.empty(n, dtype=torch.float64)
    for pid in range(tl.cdiv(n, BLOCK)):
        block = xd[pid * BLOCK:(pid + 1) * BLOCK]
        scale = 2.0 if block.float().sum().item() > 0.5 else -1.0
        ref[pid * BLOCK:(pid + 1) * BLOCK] = block * scale + 3 + sum(range(pid + 1))
    return [close("out", out, ref)]


# ===--------------------------------------------------------------------------===
# 12. 2D grid, num_programs, reductions along both axes with keep_dims, reshape
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def reduce_2d_kernel(x_ptr, rowmax_ptr, colmin_ptr, total_ptr, grid_ptr, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    x = tl.load(x_ptr + rows[:, None] * BN + cols[None, :])
    row_max = tl.max(x, axis=1, keep_dims=True)  # [BM, 1]
    tl.store(rowmax_ptr + rows[:, None] + cols[None, :] * 0, row_max + tl.zeros([BM, BN], dtype=tl.float32),
             mask=cols[None, :] == 0)
    tl.store(colmin_ptr + cols, tl.min(x, axis=0))
    flat = tl.reshape(x, [BM * BN])
    tl.store(total_ptr, tl.sum(flat, axis=0) + tl.sum(x))
    pid = tl.program_id(0) + tl.program_id(1) * tl.num_programs(0)
    tl.store(grid_ptr + pid, pid * 10 + tl.num_programs(1))


@case
def reductions_2d(gen: torch.Generator) -> list[Check]:
    BM, BN = 8, 16
    x = randn(gen, BM, BN)
    row_max, col_min, total = empty_poisoned(BM), empty_poisoned(BN), empty_poisoned(1)
    grid_out = empty_poisoned(6, dtype=torch.int32)
    reduce_2d_kernel[(3, 2)](x, row_max, col_min, total, grid_out, BM=BM, BN=BN)
    xd = x.double()
    return [close("rowmax", row_max, xd.amax(1)), close("colmin", col_min, xd.amin(0)),
            close("total", total, (2 * xd.sum()).reshape(1)),
            Check("grid", grid_out.long(), torch.arange(6) * 10 + 2)]


# ===--------------------------------------------------------------------------===
# 13. transpose with 2D tiles (strided loads and stores), in bf16
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def transpose_kernel(x_ptr, out_ptr, M, N, BLOCK: tl.constexpr):
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rn = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=mask)
    tl.store(out_ptr + rn[None, :] * M + rm[:, None], tile, mask=mask)


@case
def transpose_bf16(gen: torch.Generator) -> list[Check]:
    M, N = 33, 20
    x = randn(gen, M, N, dtype=torch.bfloat16)
    out = empty_poisoned(N, M, dtype=torch.bfloat16)
    transpose_kernel[(tl.cdiv(M, 16), tl.cdiv(N, 16))](x, out, M, N, BLOCK=16)
    return [Check("transpose", out.double(), x.t().double())]


# ===--------------------------------------------------------------------------===
# 14. mixed-type promotion: int8/uint8/fp16 operands with Python scalars
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def promotion_kernel(a_ptr, u_ptr, h_ptr, out_i_ptr, out_h_ptr, out_f_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)  # int8
    u = tl.load(u_ptr + offs)  # uint8
    h = tl.load(h_ptr + offs)  # fp16
    tl.store(out_i_ptr + offs, (a + u).to(tl.int32) * 1000 + tl.sum(a, axis=0))  # uint8 wins, sum in int32
    tl.store(out_h_ptr + offs, h * 2.0 + a)  # Python float keeps fp16; int8 promotes to fp16
    tl.store(out_f_ptr + offs, h / 3 + a / u.to(tl.int32))  # fp16 / int -> fp32; int / int -> fp32


@case
def promotion(gen: torch.Generator) -> list[Check]:
    B = 32
    a = torch.randint(-100, 100, (B,), generator=gen, dtype=torch.int8)
    u = torch.randint(1, 200, (B,), generator=gen, dtype=torch.uint8)
    h = randn(gen, B, dtype=torch.float16)
    out_i, out_h, out_f = empty_poisoned(B, dtype=torch.int32), empty_poisoned(B, dtype=torch.float16), empty_poisoned(B)
    promotion_kernel[(1,)](a, u, h, out_i, out_h, out_f, BLOCK=B)
    uint8_sum = ((a.long() + u.long()) % 256) * 1000 + a.long().sum()
    return [Check("int", out_i.long(), uint8_sum), close("fp16", out_h, (h * 2.0 + a.half()).double()),
            close("fp32", out_f, h.double() / 3 + a.double() / u.double(), dtype=torch.float32)]


# ===--------------------------------------------------------------------------===
# 15. integer reductions: uint8 max/argmax compare unsigned, int8 sums accumulate in int32
# ===--------------------------------------------------------------------------===
@inductor_tile.jit
def int_reduce_kernel(u_ptr, i_ptr, out_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    u = tl.load(u_ptr + row * N + cols)
    i = tl.load(i_ptr + row * N + cols)
    tl.store(out_ptr + row * 5 + 0, tl.max(u, axis=0))
    tl.store(out_ptr + row * 5 + 1, tl.argmax(u, axis=0))
    tl.store(out_ptr + row * 5 + 2, tl.sum(i, axis=0))
    tl.store(out_ptr + row * 5 + 3, tl.min(i, axis=0))
    tl.store(out_ptr + row * 5 + 4, tl.argmin(u, axis=0))


@case
def integer_reductions(gen: torch.Generator) -> list[Check]:
    M, N = 4, 64
    u = torch.randint(0, 256, (M, N), generator=gen, dtype=torch.int64).to(torch.uint8)
    i = torch.randint(-128, 128, (M, N), generator=gen, dtype=torch.int64).to(torch.int8)
    out = empty_poisoned(M, 5, dtype=torch.int32)
    int_reduce_kernel[(M,)](u, i, out, N=N)
    U, I = u.long(), i.long()
    expected = torch.stack([U.amax(1), U.argmax(1), I.sum(1), I.amin(1), U.argmin(1)], dim=1)
    return [Check("int reductions", out.long(), expected)]


def assert_checks(checks: list[Check]) -> None:
    """Compare every check in float64 (exactly for integers and booleans); report all failures."""
    assert checks, "a suite case must check something"
    failures = []
    for c in checks:
        actual, expected = c.actual.cpu(), c.expected.cpu()
        if actual.shape != expected.shape:
            failures.append(f"{c.name}: shape {list(actual.shape)} != expected {list(expected.shape)}")
            continue
        if actual.dtype == torch.bool or not (actual.dtype.is_floating_point or expected.dtype.is_floating_point):
            if not torch.equal(actual.long(), expected.long()):
                bad = (actual.long() != expected.long()).nonzero()[0].tolist()
                failures.append(f"{c.name}: mismatch at {bad}: {actual[tuple(bad)]} != {expected[tuple(bad)]}")
            continue
        a, e = actual.double(), expected.double()
        ok = torch.isclose(a, e, atol=c.atol, rtol=c.rtol)
        if not bool(ok.all()):
            bad = (~ok).nonzero()[0].tolist()
            failures.append(f"{c.name}: {int((~ok).sum())} mismatches, first at {bad}: {a[tuple(bad)].item()} vs "
                            f"expected {e[tuple(bad)].item()}")
    assert not failures, "\n".join(failures)
