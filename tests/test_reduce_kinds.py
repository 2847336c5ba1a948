"""Reduction kinds prod (tl.extra.reductions.prod, not Triton API) and xor_sum (tl.xor_sum).

Language level: rows, columns and whole tiles in the interpreter and on the CPU target against
torch in float64 (floats) or Python integers (integers wrap); NVIDIA: ptxas accepts the kernels
(reductions across lanes and warps). Backend: torch.prod and prims.xor_sum compiled with
backend="tile" against eager, in float64 with values near 1 so that products stay finite.
"""

from __future__ import annotations

import platform
from functools import reduce
from operator import mul, xor

import pytest
import torch
from filecheck_tool import filecheck

import inductor_tile
import inductor_tile.language as tl
from inductor_tile import metrics
from inductor_tile.backend import tile_backend
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

R, C = 8, 64


@inductor_tile.jit
def reduce_kernel(x_ptr, rows_ptr, cols_ptr, all_ptr, R: tl.constexpr, C: tl.constexpr, KIND: tl.constexpr):
    """rows[i], cols[j] and all[0]: the KIND reduction of row i, column j and the whole [R, C] tile."""
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    if KIND == "prod":
        rows = tl.extra.reductions.prod(x, 1)
        cols = tl.extra.reductions.prod(x, axis=0, keep_dims=True)
        total = tl.extra.reductions.prod(x)
    else:
        rows = tl.xor_sum(x, 1)
        cols = tl.xor_sum(x, axis=0, keep_dims=True)
        total = tl.xor_sum(x)
    tl.store(rows_ptr + tl.arange(0, R), rows)
    tl.store(cols_ptr + tl.arange(0, C)[None, :], cols)
    tl.store(all_ptr, total)


def _poisoned(n: int, dtype: torch.dtype) -> torch.Tensor:
    """An output buffer the kernel must overwrite: NaN for floats, a fixed pattern otherwise."""
    if dtype.is_floating_point:
        return torch.full((n,), float("nan"), dtype=dtype)
    if dtype == torch.bool:
        return torch.ones(n, dtype=torch.bool)
    return torch.full((n,), 0x5A, dtype=dtype)


def _run(kind: str, x: torch.Tensor):
    """The kernel's (rows, cols, all) reductions of x."""
    rows, cols, total = _poisoned(R, x.dtype), _poisoned(C, x.dtype), _poisoned(1, x.dtype)
    reduce_kernel[(1,)](x, rows, cols, total, R=R, C=C, KIND=kind)
    return rows, cols, total


def _near_one(dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    return (1.0 + 0.05 * torch.randn(R, C, generator=gen, dtype=torch.float64)).to(dtype)


def _wrap(value: int, dtype: torch.dtype) -> int:
    """A Python integer wrapped to dtype's width (two's complement for signed types)."""
    if dtype == torch.bool:
        return value & 1
    info = torch.iinfo(dtype)
    value &= (1 << info.bits) - 1
    return value - (1 << info.bits) if dtype.is_signed and value > info.max else value


def _integer_reference(x: torch.Tensor, op) -> tuple[list[int], list[int], int]:
    values = [[int(v) for v in row] for row in x.tolist()]
    columns = list(zip(*values))
    rows = [_wrap(reduce(op, row), x.dtype) for row in values]
    cols = [_wrap(reduce(op, col), x.dtype) for col in columns]
    return rows, cols, _wrap(reduce(op, [v for row in values for v in row]), x.dtype)


FLOAT_TOLERANCE = {torch.float64: 1e-12, torch.float32: 1e-4, torch.float16: 3e-3, torch.bfloat16: 2e-2}


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", list(FLOAT_TOLERANCE), ids=str)
def test_float_prod_matches_torch(mode, dtype, request, gen):
    request.getfixturevalue(mode)
    x = _near_one(dtype, gen)
    rows, cols, total = _run("prod", x)
    wide = x.double()
    tol = FLOAT_TOLERANCE[dtype]
    torch.testing.assert_close(rows.double(), wide.prod(1), rtol=tol, atol=0)
    torch.testing.assert_close(cols.double(), wide.prod(0), rtol=tol, atol=0)
    torch.testing.assert_close(total.double(), wide.prod().reshape(1), rtol=tol, atol=0)


def test_float_prod_propagates_nan_inf_and_zero(interpret, gen):
    x = _near_one(torch.float32, gen)
    x[0, 3], x[1, 5], x[2, 7] = float("nan"), float("inf"), 0.0
    rows, _, _ = _run("prod", x)
    assert rows[0].isnan() and rows[1].isinf() and rows[2] == 0.0
    torch.testing.assert_close(rows[3:].double(), x[3:].double().prod(1), rtol=1e-4, atol=0)


INT_DTYPES = [torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool]


def _random_integers(dtype: torch.dtype, gen: torch.Generator) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.rand(R, C, generator=gen) < 0.9
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, (R, C), generator=gen, dtype=torch.int64).to(dtype)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("kind, op", [("prod", mul), ("xor_sum", xor)])
@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_integer_reductions_wrap_like_python_integers(mode, kind, op, dtype, request, gen):
    request.getfixturevalue(mode)
    x = _random_integers(dtype, gen)
    if kind == "prod" and dtype != torch.bool:
        x[:, ::2] |= 1  # odd factors: a product of 64 random integers is otherwise 0 modulo 2**w
    rows, cols, total = _run(kind, x)
    want_rows, want_cols, want_total = _integer_reference(x, op)
    assert [int(v) for v in rows.tolist()] == want_rows
    assert [int(v) for v in cols.tolist()] == want_cols
    assert int(total.item()) == want_total


def test_xor_sum_rejects_floats(compiled):
    @inductor_tile.jit
    def float_xor_kernel(x_ptr, out_ptr):
        tl.store(out_ptr, tl.xor_sum(tl.load(x_ptr + tl.arange(0, 16))))

    with pytest.raises(CompilationError, match="xor_sum needs integers"):
        float_xor_kernel[(1,)](torch.randn(16), torch.full((1,), float("nan")))


# --- NVIDIA: reductions across lanes and warps assemble -------------------------------------


def _reduce_specs(element: str, kind: str, rows: int, cols: int) -> list:
    return [spec_from_signature(name, f"*{element}", divisible_by_16=True)
            for name in ("x_ptr", "rows_ptr", "cols_ptr", "all_ptr")] + [
        spec_from_signature("R", "constexpr", rows), spec_from_signature("C", "constexpr", cols),
        spec_from_signature("KIND", "constexpr", kind)]


def test_reduce_kinds_in_ttir(tmp_path):
    ttir = compile_specialized(reduce_kernel, _reduce_specs("fp32", "prod", R, C), target="cpu", native=False)
    filecheck(ttir.asm["ttir"], 'CHECK: tt.reduce %{{.*}} {axis = 1 : i32, kind = "prod"}\n', tmp_path)
    ttir = compile_specialized(reduce_kernel, _reduce_specs("i32", "xor_sum", R, C), target="cpu", native=False)
    filecheck(ttir.asm["ttir"], 'CHECK: tt.reduce %{{.*}} {axis = 1 : i32, kind = "xor_sum"}\n', tmp_path)


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
@pytest.mark.parametrize("element, kind, instruction", [
    # fp32 products may contract into FMAs (no `.rn`); half ones round every multiply
    ("fp32", "prod", "mul.f32"), ("fp16", "prod", "mul.rn.f16"), ("i64", "prod", "mul.lo.s64"),
    ("i32", "xor_sum", "xor.b32"),
])
def test_reductions_assemble_for_sm90(element, kind, instruction, tmp_path):
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    # 4 x 1024 over 8 warps: the whole-tile and column reductions cross lanes and warps
    ptx = compile_specialized(reduce_kernel, _reduce_specs(element, kind, 4, 1024), target="cuda:90",
                              num_warps=8, native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", f"reduce_kernel[{element}, {kind}]")
    filecheck(ptx, f"CHECK: {instruction}\nCHECK: shfl.sync.bfly\nCHECK: bar.sync\n", tmp_path)


# --- torch.compile(backend="tile") ---------------------------------------------------------
def _compile(fn):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend)


def _assert_tile_kernel_with(text: str) -> None:
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert any(text in s for s in metrics.kernel_sources.values()), list(metrics.kernel_sources.values())


# (shape, dim): persistent rows, columns, looped rows (longer than a block), whole tensor
PROD_CASES = [((16, 300), 1), ((300, 16), 0), ((8, 3000), 1), ((37, 23), None)]


@pytest.mark.parametrize("shape, dim", PROD_CASES, ids=[f"{s[0]}x{s[1]}-dim{d}" for s, d in PROD_CASES])
def test_torch_prod_matches_eager_in_float64(shape, dim, gen):
    x = 1.0 + 0.01 * torch.randn(*shape, generator=gen, dtype=torch.float64)
    fn = (lambda t: torch.prod(t)) if dim is None else (lambda t: torch.prod(t, dim))
    got = _compile(fn)(x)
    torch.testing.assert_close(got, fn(x), rtol=1e-12, atol=0)
    _assert_tile_kernel_with("tl.extra.reductions.prod(")


def test_torch_prod_backward_matches_eager(gen):
    x = (1.0 + 0.01 * torch.randn(12, 50, generator=gen, dtype=torch.float64)).requires_grad_(True)
    weights = torch.randn(12, generator=gen, dtype=torch.float64)
    run = _compile(lambda t: torch.prod(t, 1))
    (run(x) * weights).sum().backward()
    got = x.grad.clone()
    x.grad = None
    (torch.prod(x, 1) * weights).sum().backward()
    torch.testing.assert_close(got, x.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool], ids=str)
def test_torch_prod_of_integers_and_bools(dtype, gen):
    if dtype == torch.bool:
        x = torch.rand(24, 40, generator=gen) < 0.97
    else:
        x = torch.randint(-3, 4, (24, 40), generator=gen, dtype=dtype)
        x[x == 0] = 1
    got = _compile(lambda t: torch.prod(t, 1))(x)
    expected = torch.prod(x, 1)
    assert got.dtype == expected.dtype == torch.int64 and torch.equal(got, expected)
    _assert_tile_kernel_with("tl.extra.reductions.prod(")


@pytest.mark.parametrize("shape, dim", [((16, 300), 1), ((300, 16), 0), ((4, 5000), 1)])
def test_prims_xor_sum_matches_bitwise_xor(shape, dim, gen):
    x = torch.randint(-(2**62), 2**62, shape, generator=gen, dtype=torch.int64)
    got = _compile(lambda t: torch.ops.prims.xor_sum(t, [dim]))(x)
    assert torch.equal(got, reduce(torch.bitwise_xor, x.unbind(dim)))  # eager has no xor_sum
    _assert_tile_kernel_with("tl.xor_sum(")
