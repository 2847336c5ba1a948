"""tl.trans/permute/.T, tl.flip, tl.join/split/interleave, tl.cat, tl.clamp, tl.math, hints and barriers.

Each op runs in the interpreter and on the CPU target against torch (the ops move elements
exactly, so results must be equal bit for bit); NVIDIA: ptxas accepts the kernels, whose
element moves cross threads through shared memory. GPU numerics: tests/gpu/test_language_gpu.py.
"""

from __future__ import annotations

import platform

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

M, N = 8, 16


@inductor_tile.jit
def moves_kernel(x_ptr, y_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, OP: tl.constexpr):
    """out = OP(x, y) for [M, N] blocks x and y, stored row-major."""
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rm * N + rn)
    y = tl.load(y_ptr + rm * N + rn)
    if OP == "trans":
        tl.store(out_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], tl.trans(x))
    elif OP == "T":
        tl.store(out_ptr + tl.arange(0, N)[:, None] * M + tl.arange(0, M)[None, :], x.T)
    elif OP == "permute3":  # [M, N] -> [N // 4, M, 4] via a 3-D permute
        z = tl.permute(tl.reshape(x, (M, N // 4, 4)), (1, 0, 2))
        offs = (tl.arange(0, N // 4)[:, None, None] * M * 4 + tl.arange(0, M)[None, :, None] * 4
                + tl.arange(0, 4)[None, None, :])
        tl.store(out_ptr + offs, z)
    elif OP == "flip":
        tl.store(out_ptr + rm * N + rn, tl.flip(x))
    elif OP == "flip0":
        tl.store(out_ptr + rm * N + rn, x.flip(0))
    elif OP == "join":
        offs = rm[:, :, None] * N * 2 + rn[:, :, None] * 2 + tl.arange(0, 2)[None, None, :]
        tl.store(out_ptr + offs, tl.join(x, y))
    elif OP == "split":
        a, b = tl.split(tl.reshape(x, (M, N // 2, 2)))
        tl.store(out_ptr + tl.arange(0, M)[:, None] * N + tl.arange(0, N // 2)[None, :], a)
        tl.store(out_ptr + tl.arange(0, M)[:, None] * N + N // 2 + tl.arange(0, N // 2)[None, :], b)
    elif OP == "interleave":
        tl.store(out_ptr + rm * 2 * N + tl.arange(0, 2 * N)[None, :], tl.interleave(x, y))
    elif OP == "cat":
        tl.store(out_ptr + tl.arange(0, 2 * M)[:, None] * N + rn, tl.cat(x, y, can_reorder=True))


def _reference(op: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    return {
        "trans": lambda: x.T,
        "T": lambda: x.T,
        "permute3": lambda: x.reshape(M, N // 4, 4).permute(1, 0, 2),
        "flip": lambda: x.flip(1),
        "flip0": lambda: x.flip(0),
        "join": lambda: torch.stack([x, y], -1),
        "split": lambda: torch.cat([x[:, 0::2], x[:, 1::2]], 1),
        "interleave": lambda: torch.stack([x, y], -1).reshape(M, 2 * N),
        "cat": lambda: torch.cat([x, y]),
    }[op]().contiguous()


def _inputs(dtype: torch.dtype, gen: torch.Generator, M: int = M, N: int = N) -> tuple[torch.Tensor, torch.Tensor]:
    if dtype.is_floating_point:
        return tuple(torch.randn(M, N, generator=gen).to(dtype) for _ in range(2))
    if dtype == torch.bool:
        return tuple(torch.rand(M, N, generator=gen) < 0.5 for _ in range(2))
    return tuple(torch.randint(-100, 100, (M, N), generator=gen, dtype=torch.int64).to(dtype) for _ in range(2))


def _poisoned(n: int, dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.full((n,), float("nan"), dtype=dtype)
    return torch.full((n,), 0x5A, dtype=dtype) if dtype != torch.bool else torch.ones(n, dtype=torch.bool)


OPS = ["trans", "T", "permute3", "flip", "flip0", "join", "split", "interleave", "cat"]


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("op", OPS)
def test_moves_match_torch(mode, op, request, gen):
    request.getfixturevalue(mode)
    x, y = _inputs(torch.float32, gen)
    want = _reference(op, x, y)
    out = _poisoned(want.numel(), torch.float32)
    moves_kernel[(1,)](x, y, out, M=M, N=N, OP=op)
    assert torch.equal(out.reshape(want.shape), want)


@pytest.mark.parametrize("dtype", [torch.float16, torch.int8, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("op", ["trans", "join", "split"])
def test_moves_keep_every_dtype(op, dtype, compiled, gen):
    x, y = _inputs(dtype, gen)
    want = _reference(op, x, y)
    out = _poisoned(want.numel(), dtype)
    moves_kernel[(1,)](x, y, out, M=M, N=N, OP=op)
    assert torch.equal(out.reshape(want.shape), want)


@inductor_tile.jit
def scalar_join_kernel(out_ptr, a, b):
    pair = tl.join(a, b)
    tl.store(out_ptr + tl.arange(0, 2), pair)
    lo, hi = tl.split(pair)
    tl.store(out_ptr + 2, hi)
    tl.store(out_ptr + 3, lo)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_join_and_split_of_scalars(mode, request):
    request.getfixturevalue(mode)
    out = _poisoned(4, torch.float32)
    scalar_join_kernel[(1,)](out, 1.5, -2.25)
    assert out.tolist() == [1.5, -2.25, -2.25, 1.5]


@inductor_tile.jit
def elementwise_kernel(x_ptr, lo_ptr, hi_ptr, out_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x, lo, hi = tl.load(x_ptr + offs), tl.load(lo_ptr + offs), tl.load(hi_ptr + offs)
    tl.store(out_ptr + offs, tl.clamp(x, lo, hi))
    tl.store(out_ptr + N + offs, tl.math.exp(x) + tl.math.max(x, lo) - tl.math.min(x, hi))
    tl.store(out_ptr + 2 * N + offs, tl.math.fdiv(x, hi, ieee_rounding=True) + tl.math.sqrt(hi))
    c = tl.max_constancy(tl.full((N,), 3, tl.int32), N)
    tl.debug_barrier()
    tl.store(out_ptr + 3 * N + offs, x * c)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_clamp_math_namespace_and_hints(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(64, generator=gen, dtype=torch.float64)
    lo = -torch.rand(64, generator=gen, dtype=torch.float64)
    hi = torch.rand(64, generator=gen, dtype=torch.float64) + 0.1
    out = _poisoned(4 * 64, torch.float64)
    elementwise_kernel[(1,)](x, lo, hi, out, N=64)
    torch.testing.assert_close(out[:64], torch.clamp(x, lo, hi), rtol=0, atol=0)
    torch.testing.assert_close(out[64:128], x.exp() + torch.maximum(x, lo) - torch.minimum(x, hi), rtol=1e-13, atol=0)
    torch.testing.assert_close(out[128:192], x / hi + hi.sqrt(), rtol=1e-15, atol=0)
    torch.testing.assert_close(out[192:], x * 3, rtol=0, atol=0)


def test_bad_permutation_points_at_the_kernel_line(compiled):
    @inductor_tile.jit
    def bad_permute(x_ptr):
        x = tl.load(x_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :])
        tl.store(x_ptr + tl.arange(0, 16)[:, None] * 16 + tl.arange(0, 16)[None, :], tl.permute(x, (0, 0)))

    with pytest.raises(CompilationError, match=r"test_language_moves.py:\d+(.|\n)*tl.permute\(x, \(0, 0\)\)(.|\n)*not a permutation"):
        bad_permute[(1,)](torch.randn(256))


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
@pytest.mark.parametrize("op", ["trans", "flip", "join", "split", "cat"])
def test_moves_assemble_for_sm90(op, tmp_path):
    from filecheck_tool import filecheck

    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    specs = [spec_from_signature(n, "*fp32", divisible_by_16=True) for n in ("x_ptr", "y_ptr", "out_ptr")] + [
        spec_from_signature("M", "constexpr", 32), spec_from_signature("N", "constexpr", 64),
        spec_from_signature("OP", "constexpr", op)]
    ptx = compile_specialized(moves_kernel, specs, target="cuda:90", num_warps=4, native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", f"moves_kernel[{op}]")
    filecheck(ptx, "CHECK: st.shared\nCHECK: bar.sync\nCHECK: ld.shared\n", tmp_path)
