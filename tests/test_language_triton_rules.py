"""Typing rules taken from Triton that its conformance tests exposed: `>>` shifts arithmetically when
the shifted tile is signed, whatever the promoted type (int32 >> uint32 is uint32 holding the bits of
an arithmetic shift); `/`, `//` and `%` refuse a signed and an unsigned operand; a store's value
cannot gain leading dimensions from its pointers. Interpreter and CPU target; random inputs,
outputs poisoned first, references with Python integers."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.language.semantic import TileTypeError, TileValueError

MODES = ["interpret", "compiled"]
N = 32
WIDTH = {torch.int8: 8, torch.int16: 16, torch.int32: 32, torch.int64: 64,
         torch.uint8: 8, torch.uint16: 16, torch.uint32: 32, torch.uint64: 64}
SIGNED = {torch.int8, torch.int16, torch.int32, torch.int64}


@inductor_tile.jit
def shift_right_kernel(z_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) >> tl.load(y_ptr + offsets))


def _random_ints(dtype, low, high, gen):
    values = torch.randint(low, high, (N,), generator=gen, dtype=torch.int64)
    return values.to(dtype)


def _as_python(t: torch.Tensor) -> list[int]:
    width = WIDTH[t.dtype]
    bits = t.view({8: torch.int8, 16: torch.int16, 32: torch.int32, 64: torch.int64}[width]).tolist()
    return [b if t.dtype in SIGNED else b % (1 << width) for b in bits]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("x_dtype, y_dtype, z_dtype", [
    (torch.int32, torch.uint32, torch.uint32), (torch.int8, torch.uint32, torch.uint32),
    (torch.int64, torch.uint64, torch.uint64), (torch.uint16, torch.int32, torch.int32),
    (torch.uint32, torch.uint8, torch.uint32), (torch.int16, torch.int16, torch.int16),
])
def test_shift_right_follows_the_shifted_tiles_signedness(mode, x_dtype, y_dtype, z_dtype, request, gen):
    request.getfixturevalue(mode)
    x_width, z_width = WIDTH[x_dtype], WIDTH[z_dtype]
    low, high = (-(1 << (x_width - 1)), (1 << (x_width - 1)) - 1) if x_dtype in SIGNED else (0, (1 << min(x_width, 63)) - 1)
    x = _random_ints(x_dtype, low, high, gen)
    y = _random_ints(y_dtype, 0, z_width, gen)
    z = torch.full((N,), 0x5A, dtype=torch.int64).to(z_dtype)
    shift_right_kernel[(1,)](z, x, y, N=N)
    expected = [(xi >> yi) % (1 << z_width) for xi, yi in zip(_as_python(x), _as_python(y))]  # Python: arithmetic
    got = [zi % (1 << z_width) for zi in _as_python(z)]
    assert got == expected


@inductor_tile.jit
def divide_kernel(z_ptr, x_ptr, y_ptr, N: tl.constexpr):
    offsets = tl.arange(0, N)
    tl.store(z_ptr + offsets, tl.load(x_ptr + offsets) // tl.load(y_ptr + offsets))


@pytest.mark.parametrize("mode", MODES)
def test_division_of_signed_by_unsigned_is_refused(mode, request, gen):
    request.getfixturevalue(mode)
    x = _random_ints(torch.int8, -100, 100, gen)
    y = _random_ints(torch.uint8, 1, 100, gen)
    z = torch.zeros(N, dtype=torch.int32)
    error = CompilationError if mode == "compiled" else TileTypeError
    with pytest.raises(error, match="different signedness"):
        divide_kernel[(1,)](z, x, y, N=N)


@inductor_tile.jit
def store_lower_rank_kernel(z_ptr, x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    rows = tl.arange(0, N)[:, None, None] * N * N
    tl.store(z_ptr + rows + tl.arange(0, N)[None, :, None] * N + tl.arange(0, N)[None, None, :], x[None, :])


@pytest.mark.parametrize("mode", MODES)
def test_store_value_must_have_the_pointers_rank(mode, request):
    request.getfixturevalue(mode)
    error = CompilationError if mode == "compiled" else TileValueError
    with pytest.raises(error, match=r"ranks differ"):
        store_lower_rank_kernel[(1,)](torch.empty(N * N * N, dtype=torch.int32), torch.ones(N, dtype=torch.int32), N=N)


@inductor_tile.jit
def expand_dims_kernel(out_ptr, CASE: tl.constexpr):
    offsets = tl.arange(0, 16)
    if CASE == "below":
        offsets = tl.expand_dims(offsets, -3)
    elif CASE == "scalar":
        offsets = tl.expand_dims(tl.program_id(0), 1)
    else:
        offsets = tl.expand_dims(offsets, (0, -3))
    tl.store(out_ptr + offsets, offsets)


@pytest.mark.parametrize("case, message", [("below", "invalid axis -3"), ("scalar", "invalid axis 1"),
                                           ("duplicate", r"duplicate axes, normalized axes = \[0, 0\]")])
def test_expand_dims_names_the_axis_given(case, message):
    with pytest.raises(CompilationError, match=message) as info:
        inductor_tile.compile(expand_dims_kernel, signature={"out_ptr": "*i32"}, constexprs={"CASE": case}, target="cpu")
    assert info.value.__cause__ is not None and message.split(" ")[0] in str(info.value.__cause__)
