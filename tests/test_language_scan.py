"""tl.reduce with a @jit combine function, tl.associative_scan, tl.cumsum, tl.cumprod.

Interpreter and CPU target against torch in float64 (integers: exact, wrapping); a
non-commutative combine (a linear recurrence x -> a*x + b) checks that scans keep the
order of their operands. NVIDIA: ptxas accepts the kernels (scans and reductions across
lanes and warps); GPU numerics in tests/gpu/test_language_gpu.py.
"""

from __future__ import annotations

import platform

import pytest
import torch
from filecheck_tool import filecheck

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

M, N = 8, 32


@inductor_tile.jit
def add_combine(a, b):
    return a + b


@inductor_tile.jit
def argmax_combine(v1, i1, v2, i2):
    """Larger value, first index on ties."""
    take_first = (v1 > v2) | ((v1 == v2) & (i1 < i2))
    return tl.where(take_first, v1, v2), tl.where(take_first, i1, i2)


@inductor_tile.jit
def affine_combine(a1, b1, a2, b2):
    """x -> a1*x + b1 followed by x -> a2*x + b2 (associative, not commutative)."""
    return a1 * a2, b1 * a2 + b2


@inductor_tile.jit
def combine_kernel(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr, AXIS: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rm * N + rn)
    y = tl.load(y_ptr + rm * N + rn)
    if OP == "reduce_sum":
        r = tl.reduce(x, AXIS, add_combine, keep_dims=True)
        tl.store(out_ptr + rm * N + rn, tl.broadcast_to(r, (M, N)))
    elif OP == "reduce_all":
        tl.store(out_ptr, tl.reduce(x, None, add_combine))
    elif OP == "reduce_argmax":
        index = tl.broadcast_to(rn if AXIS == 1 else rm, (M, N))
        v, i = tl.reduce((x, index), AXIS, argmax_combine)
        if AXIS == 1:
            tl.store(out_ptr + tl.arange(0, M), v)
            tl.store(out_ptr + M + tl.arange(0, M), i.to(x.dtype))
        else:
            tl.store(out_ptr + tl.arange(0, N), v)
            tl.store(out_ptr + N + tl.arange(0, N), i.to(x.dtype))
    elif OP == "cumsum":
        tl.store(out_ptr + rm * N + rn, tl.cumsum(x, AXIS))
    elif OP == "cumsum_reverse":
        tl.store(out_ptr + rm * N + rn, x.cumsum(AXIS, reverse=True))
    elif OP == "cumprod":
        tl.store(out_ptr + rm * N + rn, tl.cumprod(x, AXIS))
    elif OP == "affine":
        a, b = tl.associative_scan((x, y), AXIS, affine_combine)
        tl.store(out_ptr + rm * N + rn, b)
    elif OP == "affine_reverse":
        a, b = tl.associative_scan((x, y), AXIS, affine_combine, reverse=True)
        tl.store(out_ptr + rm * N + rn, b)


def affine_reference(x: torch.Tensor, y: torch.Tensor, axis: int, reverse: bool) -> torch.Tensor:
    x, y = x.movedim(axis, 0), y.movedim(axis, 0)
    out = torch.empty_like(y)
    acc = None
    for i in (range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])):
        acc = y[i].clone() if acc is None else acc * x[i] + y[i]
        out[i] = acc
    return out.movedim(0, axis)


def reference(op: str, x: torch.Tensor, y: torch.Tensor, axis: int) -> torch.Tensor:
    if op == "reduce_sum":
        return x.sum(axis, keepdim=True).expand_as(x)
    if op == "reduce_all":
        return x.sum().reshape(1)
    if op == "reduce_argmax":
        values, indices = x.max(axis)
        return torch.cat([values, indices.to(x.dtype)])
    if op == "cumsum":
        return x.cumsum(axis)
    if op == "cumsum_reverse":
        return x.flip(axis).cumsum(axis).flip(axis)
    if op == "cumprod":
        return x.cumprod(axis)
    return affine_reference(x, y, axis, op == "affine_reverse")


def run(op: str, x: torch.Tensor, y: torch.Tensor, axis: int, out_dtype: torch.dtype | None = None, **launch):
    want_numel = reference(op, x.double(), y.double(), axis).numel()
    out = torch.full((want_numel,), float("nan"), dtype=out_dtype or x.dtype, device=x.device)
    combine_kernel[(1,)](x, y, out, M=x.shape[0], N=x.shape[1], OP=op, AXIS=axis, **launch)
    return out


OPS = ["reduce_sum", "reduce_all", "reduce_argmax", "cumsum", "cumsum_reverse", "cumprod", "affine", "affine_reverse"]


def random_inputs(gen: torch.Generator, shape=(M, N)) -> tuple[torch.Tensor, torch.Tensor]:
    x = 0.5 + torch.rand(*shape, generator=gen, dtype=torch.float64)  # products and recurrences stay finite
    y = torch.randn(*shape, generator=gen, dtype=torch.float64)
    return x, y


CASES = [("interpret", op, axis) for op in OPS for axis in (0, 1)] + [("compiled", op, 1) for op in OPS] + [
    ("compiled", op, 0) for op in ("reduce_argmax", "cumsum_reverse", "affine")]


@pytest.mark.parametrize("mode, op, axis", CASES)
def test_combine_ops_match_torch_in_float64(mode, op, axis, request, gen):
    request.getfixturevalue(mode)
    x, y = random_inputs(gen)
    got = run(op, x, y, axis)
    want = reference(op, x, y, axis).reshape(-1)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("op", ["cumsum", "affine"])
def test_float32_scans(mode, op, request, gen):
    request.getfixturevalue(mode)
    x, y = random_inputs(gen)
    got = run(op, x.float(), y.float(), 1)
    want = reference(op, x, y, 1).reshape(-1)
    torch.testing.assert_close(got.double(), want, rtol=1e-5, atol=1e-5)


@inductor_tile.jit
def cumsum_dtype_kernel(x_ptr, out_ptr, N: tl.constexpr, REVERSE: tl.constexpr):
    offs = tl.arange(0, N)
    s = tl.cumsum(tl.load(x_ptr + offs), 0, reverse=REVERSE)
    tl.store(out_ptr + offs, s)
    tl.store(out_ptr + N + offs, tl.cumprod(tl.load(x_ptr + offs), 0).to(s.dtype))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype, wide", [(torch.int8, torch.int32), (torch.uint8, torch.int64), (torch.int16, torch.int32),
                                         (torch.int64, torch.int64), (torch.bool, torch.int32)], ids=str)
def test_integer_cumsum_accumulates_in_int32_and_wraps(mode, dtype, wide, request, gen):
    """int8/int16/bool cumsums are int32 (uint8: uint32, stored here into int64 to read it back), as in Triton."""
    request.getfixturevalue(mode)
    n = 64
    if dtype == torch.bool:
        x = torch.rand(n, generator=gen) < 0.5
    else:
        info = torch.iinfo(dtype)
        x = torch.randint(max(info.min, -(2**40)), min(info.max, 2**40), (n,), generator=gen, dtype=torch.int64).to(dtype)
    out = torch.full((2 * n,), 0x5A, dtype=wide)
    cumsum_dtype_kernel[(1,)](x, out, N=n, REVERSE=False)
    values = [int(v) for v in x.tolist()]
    sums, prods, s, p = [], [], 0, 1
    bits = 64 if dtype == torch.int64 else 32
    for v in values:
        s, p = s + v, p * v
        sums.append(s)
        prods.append(p)

    def wrap(v: int) -> int:
        v &= (1 << bits) - 1
        return v - (1 << bits) if (v >> (bits - 1)) and (dtype != torch.uint8) else v

    assert [int(v) for v in out[:n].tolist()] == [wrap(v) for v in sums]
    assert [int(v) for v in out[n:].tolist()] == [wrap(v) for v in prods]


def test_bf16_cumsum_is_float32(interpret):
    @inductor_tile.jit
    def bf16_kernel(x_ptr, out_ptr):
        s = tl.cumsum(tl.load(x_ptr + tl.arange(0, 16)))
        tl.static_assert(s.dtype == tl.float32)
        tl.store(out_ptr + tl.arange(0, 16), s)

    x = torch.randn(16).to(torch.bfloat16)
    out = torch.full((16,), float("nan"))
    bf16_kernel[(1,)](x, out)
    torch.testing.assert_close(out.double(), x.double().cumsum(0), rtol=1e-6, atol=1e-6)


def test_combine_function_returning_the_wrong_count_is_an_error(compiled):
    @inductor_tile.jit
    def pair(a, b):
        return a, b

    @inductor_tile.jit
    def bad_reduce(x_ptr):
        tl.store(x_ptr, tl.reduce(tl.load(x_ptr + tl.arange(0, 16)), 0, pair))

    with pytest.raises(CompilationError, match="returned 2 value"):
        bad_reduce[(1,)](torch.randn(16))


def _specs(op: str, axis: int, rows: int, cols: int) -> list:
    return [spec_from_signature(n, "*fp32", divisible_by_16=True) for n in ("x_ptr", "y_ptr", "out_ptr")] + [
        spec_from_signature("M", "constexpr", rows), spec_from_signature("N", "constexpr", cols),
        spec_from_signature("OP", "constexpr", op), spec_from_signature("AXIS", "constexpr", axis)]


def test_scan_and_generic_reduce_in_ttir_and_ttgir(tmp_path):
    kernel = compile_specialized(combine_kernel, _specs("affine", 1, M, N), target="cpu", native=False)
    filecheck(kernel.asm["ttir"], """
CHECK:      "tt.scan"(%{{.*}}, %{{.*}}) <{axis = 1 : i32, reverse = false}> ({
CHECK-NEXT: ^{{.*}}(%[[A1:[0-9]+]]: f32, %[[B1:[0-9]+]]: f32, %[[A2:[0-9]+]]: f32, %[[B2:[0-9]+]]: f32):
CHECK-DAG:    arith.mulf %[[A1]], %[[A2]] : f32
CHECK-DAG:    arith.mulf %[[B1]], %[[A2]] : f32
CHECK:        "tt.combine.return"
""", tmp_path)
    kernel = compile_specialized(combine_kernel, _specs("reduce_argmax", 1, M, N), target="cuda:90", native=False)
    filecheck(kernel.asm["ttgir"], """
CHECK:      "tt.generic_reduce"(%{{.*}}, %{{.*}}) <{axis = 1 : i32}>
CHECK:      "tt.combine.return"
CHECK:      }) : (tensor<8x32xf32, [[L:#ttg.blocked<.*>]]>, tensor<8x32xi32, [[L]]>) -> (tensor<8xf32, #ttg.slice<{dim = 1, parent = [[L]]}>>, tensor<8xi32, #ttg.slice<{dim = 1, parent = [[L]]}>>)
""", tmp_path)


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
@pytest.mark.parametrize("op, axis", [("reduce_argmax", 1), ("reduce_all", 0), ("cumsum", 1), ("affine_reverse", 0)])
def test_combine_ops_assemble_for_sm90(op, axis):
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    ptx = compile_specialized(combine_kernel, _specs(op, axis, 32, 128), target="cuda:90", num_warps=4,
                              native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", f"combine_kernel[{op}, {axis}]")
