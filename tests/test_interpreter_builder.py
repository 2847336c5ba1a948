"""Handle-level tests of the interpreter builder and memory against Python/numpy references."""

from __future__ import annotations

import inspect
import math
import struct
import sys
import zlib
from fractions import Fraction

import numpy as np
import pytest
import torch

from inductor_tile.kernel_compiler.interpreter import InterpreterBuilder, Memory, torch_dtype
from inductor_tile.language import builder as proto
from inductor_tile.language import dtypes as tl

N = 512
INT_TYPES = [tl.int8, tl.int16, tl.int32, tl.int64, tl.uint8, tl.uint16, tl.uint32, tl.uint64]
FLOAT_TYPES = [tl.float16, tl.bfloat16, tl.float32, tl.float64]
CAST_TYPES = [tl.int1, tl.int8, tl.int16, tl.int32, tl.int64, tl.uint8, tl.float16, tl.bfloat16, tl.float32,
              tl.float64]


def block(t: tl.dtype, *shape: int) -> tl.block_type:
    return tl.block_type(t, shape or (N,))


def make_builder() -> InterpreterBuilder:
    return InterpreterBuilder(Memory())


# --- integer reference helpers -------------------------------------------------
def width(t: tl.dtype) -> int:
    return t.int_bitwidth


def wrap(v: int, t: tl.dtype) -> int:
    """Python int -> the value of type t with the same low bits."""
    w = width(t)
    v &= (1 << w) - 1
    return v - (1 << w) if t.is_int_signed() and v >> (w - 1) else v


def signed(v: int, w: int) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def unsigned(v: int, w: int) -> int:
    return v & ((1 << w) - 1)


def ints(t: torch.Tensor) -> list[int]:
    """Values of an integer tensor as Python ints (uint64 exact)."""
    if t.dtype == torch.uint64:
        return [v & (2**64 - 1) for v in t.view(torch.int64).reshape(-1).tolist()]
    return [int(v) for v in t.reshape(-1).tolist()]


def tensor_of(values: list[int], t: tl.dtype) -> torch.Tensor:
    vals = [wrap(v, t) for v in values]
    if t == tl.uint64:
        return torch.tensor([signed(v, 64) for v in vals], dtype=torch.int64).view(torch.uint64)
    return torch.tensor(vals, dtype=torch_dtype(t))


def random_ints(t: tl.dtype, gen: torch.Generator, n: int = N) -> list[int]:
    """Random values over t's whole range, with the extremes and small values mixed in."""
    w = width(t)
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1))) if t.is_int_signed() else (0, 1 << w)
    raw = torch.randint(-(2**63), 2**63 - 1, (n,), generator=gen, dtype=torch.int64).tolist()
    vals = [lo + (r % (hi - lo)) for r in raw]
    small = torch.randint(-9, 10, (n // 4,), generator=gen).tolist()
    specials = [lo, hi - 1, 0, 1, -1, lo + 1, 7, -7, 2, -2]
    vals[: n // 4] = small
    vals[n // 4: n // 4 + len(specials)] = specials
    return [wrap(v, t) for v in vals]


def c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


INT_REF = {
    "addi": lambda a, b, w: a + b,
    "subi": lambda a, b, w: a - b,
    "muli": lambda a, b, w: a * b,
    "divsi": lambda a, b, w: -1 if signed(b, w) == 0 else c_div(signed(a, w), signed(b, w)),
    "remsi": lambda a, b, w: signed(a, w) if signed(b, w) == 0
    else signed(a, w) - c_div(signed(a, w), signed(b, w)) * signed(b, w),
    "divui": lambda a, b, w: -1 if unsigned(b, w) == 0 else unsigned(a, w) // unsigned(b, w),
    "remui": lambda a, b, w: unsigned(a, w) if unsigned(b, w) == 0 else unsigned(a, w) % unsigned(b, w),
    "andi": lambda a, b, w: a & b,
    "ori": lambda a, b, w: a | b,
    "xori": lambda a, b, w: a ^ b,
    "shli": lambda a, b, w: a << unsigned(b, w) if unsigned(b, w) < w else 0,
    "shrsi": lambda a, b, w: signed(a, w) >> min(unsigned(b, w), w),
    "shrui": lambda a, b, w: unsigned(a, w) >> unsigned(b, w) if unsigned(b, w) < w else 0,
    "maxsi": lambda a, b, w: max(signed(a, w), signed(b, w)),
    "minsi": lambda a, b, w: min(signed(a, w), signed(b, w)),
    "maxui": lambda a, b, w: max(unsigned(a, w), unsigned(b, w)),
    "minui": lambda a, b, w: min(unsigned(a, w), unsigned(b, w)),
    "mulhiui": lambda a, b, w: (unsigned(a, w) * unsigned(b, w)) >> w,
}
assert set(INT_REF) == set(proto.INT_BINARY_OPS)


@pytest.mark.parametrize("t", INT_TYPES, ids=str)
@pytest.mark.parametrize("op", proto.INT_BINARY_OPS)
def test_int_binary(op: str, t: tl.dtype) -> None:
    gen = torch.Generator().manual_seed(zlib.crc32(f"{op}{t}".encode()))
    a = random_ints(t, gen)
    b = random_ints(t, gen)
    if op.startswith("sh"):  # mostly in-range shift amounts, some >= width
        amounts = torch.randint(0, width(t) + 4, (N,), generator=gen).tolist()
        b = [wrap(v, t) for v in amounts[: N // 2]] + b[N // 2:]
    if op.startswith(("div", "rem")):
        b[:3] = [0, wrap(-1, t), 1]
        a[:3] = [5, wrap(-(1 << (width(t) - 1)), t), 3]
        a[3], b[3] = wrap(-(1 << (width(t) - 1)), t), wrap(-1, t)  # INT_MIN / -1
    got = make_builder().create_binary(op, tensor_of(a, t), tensor_of(b, t), block(t))
    assert got.dtype == torch_dtype(t)
    w = width(t)
    want = [wrap(INT_REF[op](x, y, w), t) for x, y in zip(a, b)]
    assert ints(got) == want


def test_c_division_signs() -> None:
    b = make_builder()
    a = torch.tensor([7, -7, 7, -7, 6, -6], dtype=torch.int32)
    d = torch.tensor([2, 2, -2, -2, 4, -4], dtype=torch.int32)
    assert b.create_binary("divsi", a, d, block(tl.int32, 6)).tolist() == [3, -3, -3, 3, 1, 1]
    assert b.create_binary("remsi", a, d, block(tl.int32, 6)).tolist() == [1, -1, 1, -1, 2, -2]


def test_wraparound() -> None:
    b = make_builder()
    i8 = torch.tensor([127, -128, 100], dtype=torch.int8)
    assert b.create_binary("addi", i8, torch.ones(3, dtype=torch.int8), block(tl.int8, 3)).tolist() == [-128, -127, 101]
    assert b.create_binary("muli", i8, i8, block(tl.int8, 3)).tolist() == [1, 0, 16]
    big = torch.tensor([2**63 - 1], dtype=torch.int64)
    assert b.create_binary("addi", big, torch.tensor([1]), block(tl.int64, 1)).tolist() == [-(2**63)]
    u8 = torch.tensor([0, 255], dtype=torch.uint8)
    ones = torch.tensor([1, 1], dtype=torch.uint8)
    assert b.create_binary("subi", u8, ones, block(tl.uint8, 2)).tolist() == [255, 254]
    m = torch.tensor([-(2**31)], dtype=torch.int32)
    assert b.create_unary("absi", m, block(tl.int32, 1)).tolist() == [-(2**31)]
    assert b.create_unary("absi", torch.tensor([-5, 5], dtype=torch.int32), block(tl.int32, 2)).tolist() == [5, 5]


# --- floats ----------------------------------------------------------------------
def random_floats(t: tl.dtype, gen: torch.Generator, n: int = N) -> torch.Tensor:
    x = torch.randn(n, generator=gen, dtype=torch.float64) * 10.0 ** torch.randint(-3, 4, (n,), generator=gen)
    x[:4] = torch.tensor([1.0, -1.0, 0.5, 3.0])
    return round_to(x, t)


def round_to(x: torch.Tensor, t: tl.dtype) -> torch.Tensor:
    """Correctly rounded fp64 -> t (numpy for fp16, fp32 then bf16 elsewhere: exact for our inputs)."""
    if t == tl.float16:
        with np.errstate(over="ignore"):
            return torch.from_numpy(x.numpy().astype(np.float16))
    return x.to(torch.float32 if t != tl.float64 else torch.float64).to(torch_dtype(t))


FLOAT_REF = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide, "divf_rn": np.divide, "remf": np.fmod,
    "maximumf": np.maximum, "minimumf": np.minimum, "maxnumf": np.fmax, "minnumf": np.fmin,
}
assert set(FLOAT_REF) == set(proto.FLOAT_BINARY_OPS)


def same(got: torch.Tensor, want: torch.Tensor) -> None:
    """Bitwise-equal up to NaN payloads (and -0.0 == 0.0 is NOT accepted)."""
    assert got.dtype == want.dtype
    g, w = got.double(), want.double()
    both_nan = torch.isnan(g) & torch.isnan(w)
    ok = both_nan | ((g == w) & (torch.signbit(g) == torch.signbit(w)))
    bad = (~ok).nonzero()
    assert not bad.numel(), f"first mismatch at {bad[0].tolist()}: got {g[tuple(bad[0])]}, want {w[tuple(bad[0])]}"


@pytest.mark.parametrize("t", FLOAT_TYPES, ids=str)
@pytest.mark.parametrize("op", proto.FLOAT_BINARY_OPS)
def test_float_binary(op: str, t: tl.dtype) -> None:
    gen = torch.Generator().manual_seed(zlib.crc32(f"{op}{t}".encode()))
    a, b = random_floats(t, gen, 4096), random_floats(t, gen, 4096)
    a[4:8] = torch.tensor([float("nan"), 1.0, 0.0, -0.0]).to(a.dtype)
    b[4:8] = torch.tensor([2.0, float("nan"), -0.0, 0.0]).to(b.dtype)
    b[8] = 0.0
    with np.errstate(all="ignore"):
        ref = torch.from_numpy(FLOAT_REF[op](a.double().numpy(), b.double().numpy()))
    if op in ("maximumf", "minimumf", "maxnumf", "minnumf"):  # the interpreter orders -0.0 < +0.0
        ref[6:8] = torch.tensor([0.0, 0.0] if op.startswith("max") else [-0.0, -0.0], dtype=torch.float64)
    got = make_builder().create_binary(op, a, b, block(t, 4096))
    same(got, round_to(ref, t))


def test_half_rounds_once_per_op() -> None:
    """fp16 a+b computed in fp32 then rounded equals the correctly rounded fp16 sum."""
    b = make_builder()
    x = torch.tensor([2048.0, 1.0], dtype=torch.float16)
    y = torch.tensor([1.0, 2.0**-11], dtype=torch.float16)
    assert b.create_binary("addf", x, y, block(tl.float16, 2)).tolist() == [2048.0, 1.0]  # ties to even


@pytest.mark.parametrize("t", FLOAT_TYPES, ids=str)
@pytest.mark.parametrize("op", proto.UNARY_OPS)
def test_unary(op: str, t: tl.dtype) -> None:
    b = make_builder()
    gen = torch.Generator().manual_seed(7)
    if op == "absi":
        it = {tl.float16: tl.int16, tl.bfloat16: tl.int8, tl.float32: tl.int32, tl.float64: tl.int64}[t]
        vals = random_ints(it, gen)
        got = b.create_unary(op, tensor_of(vals, it), block(it))
        assert ints(got) == [wrap(abs(v), it) for v in vals]
        return
    x = random_floats(t, gen, 4096)  # large enough for torch's vectorized kernels
    if op in ("log", "log2", "sqrt", "rsqrt"):
        x = x.abs() + torch.finfo(x.dtype).tiny
    ref = {"exp": torch.exp, "exp2": torch.exp2, "log": torch.log, "log2": torch.log2,
           "sqrt": lambda v: torch.from_numpy(np.sqrt(v.numpy())),  # torch's CPU sqrt is not correctly rounded
           "rsqrt": torch.rsqrt, "sin": torch.sin, "cos": torch.cos, "erf": torch.erf, "floor": torch.floor,
           "ceil": torch.ceil, "absf": torch.abs, "negf": torch.neg}[op](x.double())
    got = b.create_unary(op, x, block(t, 4096))
    assert got.dtype == x.dtype
    if op in ("floor", "ceil", "absf", "negf", "sqrt"):
        same(got, round_to(ref, t))
    else:
        rtol = {tl.float16: 1e-3, tl.bfloat16: 8e-3, tl.float32: 1e-6, tl.float64: 1e-14}[t]
        atol = 1e-6 if t == tl.float64 else rtol * 1e-3
        torch.testing.assert_close(got.double(), round_to(ref, t).double(), rtol=rtol, atol=atol, equal_nan=True)


# --- comparisons -------------------------------------------------------------------
FLOAT_CMP_REF = {"oeq": np.equal, "une": np.not_equal, "olt": np.less, "ole": np.less_equal,
                 "ogt": np.greater, "oge": np.greater_equal}
INT_CMP_REF = {
    "eq": lambda a, b, w: a == b, "ne": lambda a, b, w: a != b,
    "slt": lambda a, b, w: signed(a, w) < signed(b, w), "sle": lambda a, b, w: signed(a, w) <= signed(b, w),
    "sgt": lambda a, b, w: signed(a, w) > signed(b, w), "sge": lambda a, b, w: signed(a, w) >= signed(b, w),
    "ult": lambda a, b, w: unsigned(a, w) < unsigned(b, w), "ule": lambda a, b, w: unsigned(a, w) <= unsigned(b, w),
    "ugt": lambda a, b, w: unsigned(a, w) > unsigned(b, w), "uge": lambda a, b, w: unsigned(a, w) >= unsigned(b, w),
}
assert set(FLOAT_CMP_REF) == set(proto.FLOAT_PREDICATES) and set(INT_CMP_REF) == set(proto.INT_PREDICATES)


@pytest.mark.parametrize("t", FLOAT_TYPES, ids=str)
@pytest.mark.parametrize("pred", proto.FLOAT_PREDICATES)
def test_float_cmp_with_nan(pred: str, t: tl.dtype) -> None:
    gen = torch.Generator().manual_seed(3)
    a, b = random_floats(t, gen), random_floats(t, gen)
    b[N // 2:] = a[N // 2:]  # equal pairs
    a[::7] = float("nan")
    b[::5] = float("nan")
    got = make_builder().create_cmp(pred, a, b, block(tl.int1))
    assert got.dtype == torch.bool
    want = FLOAT_CMP_REF[pred](a.double().numpy(), b.double().numpy())
    assert got.numpy().tolist() == want.tolist()


@pytest.mark.parametrize("t", INT_TYPES + [tl.int1], ids=str)
@pytest.mark.parametrize("pred", proto.INT_PREDICATES)
def test_int_cmp(pred: str, t: tl.dtype) -> None:
    gen = torch.Generator().manual_seed(4)
    if t == tl.int1:
        a = torch.randint(0, 2, (N,), generator=gen).tolist()
        b = torch.randint(0, 2, (N,), generator=gen).tolist()
    else:
        a, b = random_ints(t, gen), random_ints(t, gen)
        b[N // 2:] = a[N // 2:]
    got = make_builder().create_cmp(pred, tensor_of(a, t), tensor_of(b, t), block(tl.int1))
    assert got.dtype == torch.bool
    assert got.tolist() == [INT_CMP_REF[pred](x, y, width(t)) for x, y in zip(a, b)]


# --- casts -------------------------------------------------------------------------
def cast_op(src: tl.dtype, dst: tl.dtype) -> str:
    if src.is_floating() and dst.is_floating():
        return "extf" if dst.primitive_bitwidth > src.primitive_bitwidth else "truncf"
    if src.is_floating():
        return "fptosi" if dst.is_int_signed() else "fptoui"
    if dst.is_floating():
        return "sitofp" if src.is_int_signed() else "uitofp"
    if dst.int_bitwidth > src.int_bitwidth:
        return "extsi" if src.is_int_signed() else "extui"
    return "trunci" if dst.int_bitwidth < src.int_bitwidth else "bitcast"


def common_values(src: tl.dtype, dst: tl.dtype) -> list[int]:
    """Integers representable exactly in both types."""
    if tl.int1 in (src, dst):
        return [0, 1]
    lo, hi = -100, 100
    for t in (src, dst):
        if t.is_int_unsigned():
            lo = 0
        if t == tl.bfloat16:
            lo, hi = max(lo, -256), min(hi, 256)
    return list(range(lo, hi + 1))


# every ordered pair with a single arith cast (fp16 <-> bf16 goes through fp32 in the semantic layer)
SINGLE_CAST_PAIRS = [(s, d) for s in CAST_TYPES for d in CAST_TYPES
                     if s != d and {s, d} != {tl.float16, tl.bfloat16}]


@pytest.mark.parametrize("src, dst", SINGLE_CAST_PAIRS, ids=str)
def test_cast_pairs(src: tl.dtype, dst: tl.dtype) -> None:
    vals = common_values(src, dst)
    x = torch.tensor(vals, dtype=torch.float64).to(torch_dtype(src)) if src.is_floating() else tensor_of(vals, src)
    got = make_builder().create_cast(cast_op(src, dst), x, block(dst, len(vals)))
    assert got.dtype == torch_dtype(dst)
    assert [float(v) for v in got.tolist()] == [float(v) for v in vals]


def test_cast_semantics() -> None:
    b = make_builder()
    i8 = torch.tensor([-1, -128, 5], dtype=torch.int8)
    assert b.create_cast("extui", i8, block(tl.int32, 3)).tolist() == [255, 128, 5]
    assert b.create_cast("extsi", i8, block(tl.int32, 3)).tolist() == [-1, -128, 5]
    i32 = torch.tensor([0x1FF, -129], dtype=torch.int32)
    assert b.create_cast("trunci", i32, block(tl.int8, 2)).tolist() == [-1, 127]
    assert b.create_cast("trunci", torch.tensor([2, 3]), block(tl.int1, 2)).tolist() == [False, True]
    bools = torch.tensor([True, False])
    assert b.create_cast("extui", bools, block(tl.int32, 2)).tolist() == [1, 0]
    assert b.create_cast("extsi", bools, block(tl.int32, 2)).tolist() == [-1, 0]
    assert b.create_cast("uitofp", bools, block(tl.float32, 2)).tolist() == [1.0, 0.0]
    f = torch.tensor([-2.7, 2.7, -0.5, 1e10, -1e10, float("nan"), float("inf")])
    assert b.create_cast("fptosi", f, block(tl.int32, 7)).tolist() == [-2, 2, 0, 2**31 - 1, -(2**31), 0, 2**31 - 1]
    assert b.create_cast("fptoui", f, block(tl.uint8, 7)).tolist() == [0, 2, 0, 255, 0, 0, 255]
    big = torch.tensor([2.0**63, 1.5 * 2.0**63, 2.0**64, -1.0], dtype=torch.float64)
    assert ints(b.create_cast("fptoui", big, block(tl.uint64, 4))) == [2**63, 3 * 2**62, 2**64 - 1, 0]
    assert b.create_cast("fptosi", big, block(tl.int64, 4)).tolist() == [2**63 - 1] * 3 + [-1]
    one = torch.tensor([1.0], dtype=torch.float32)
    assert b.create_cast("bitcast", one, block(tl.int32, 1)).tolist() == [0x3F800000]
    assert b.create_cast("bitcast", torch.tensor([-1], dtype=torch.int8), block(tl.uint8, 1)).tolist() == [255]
    u64 = tensor_of([2**64 - 1, 2**63], tl.uint64)
    assert b.create_cast("uitofp", u64, block(tl.float64, 2)).tolist() == [2.0**64, 2.0**63]
    assert b.create_cast("sitofp", u64.view(torch.int64), block(tl.float64, 2)).tolist() == [-1.0, -(2.0**63)]


# correctly rounded reference: Fraction -> nearest-even float with `p` significand bits
FORMATS = {tl.float16: (11, -14, 15), tl.bfloat16: (8, -126, 127), tl.float32: (24, -126, 127),
           tl.float64: (53, -1022, 1023)}


def round_fraction(q: Fraction, t: tl.dtype) -> float:
    p, emin, emax = FORMATS[t]
    if q == 0:
        return 0.0
    sign, q = (-1 if q < 0 else 1), abs(q)
    e = max(math.floor(math.log2(q.numerator) - math.log2(q.denominator)), emin)
    while Fraction(2) ** e > q and e > emin:
        e -= 1
    while Fraction(2) ** (e + 1) <= q:
        e += 1
    ulp = Fraction(2) ** (e - p + 1)
    n, r = divmod(q, ulp)
    if r > ulp / 2 or (r == ulp / 2 and n % 2):
        n += 1
    v = n * ulp
    return sign * (math.inf if v >= Fraction(2) ** (emax + 1) else float(v))


@pytest.mark.parametrize("t", [tl.float16, tl.bfloat16, tl.float32], ids=str)
def test_casts_round_once(t: tl.dtype) -> None:
    """fp64 -> narrow and int64/uint64 -> float round correctly (no double rounding)."""
    b = make_builder()
    gen = torch.Generator().manual_seed(11)
    p = FORMATS[t][0]
    # fp64 values just above a midpoint of t: naive fp64 -> fp32 -> t rounds them down to even.
    base = torch.randint(1, 2 ** (p - 1), (64,), generator=gen).double() + 2 ** (p - 1)
    x = (base * 2 + 1) / 2 ** p + 2.0 ** -(p + 25)  # odd midpoints nudged up by far less than a fp32 ulp
    x = torch.cat([x, -x, torch.randn(64, generator=gen, dtype=torch.float64)])
    got = b.create_cast("truncf", x, block(t, x.numel()))
    assert got.double().tolist() == [round_fraction(Fraction(v), t) for v in x.tolist()]
    i64 = random_ints(tl.int64, gen, 256)
    got = b.create_cast("sitofp", tensor_of(i64, tl.int64), block(t, 256))
    assert got.double().tolist() == [round_fraction(Fraction(v), t) for v in i64]
    u64 = random_ints(tl.uint64, gen, 256)
    got = b.create_cast("uitofp", tensor_of(u64, tl.uint64), block(t, 256))
    assert got.double().tolist() == [round_fraction(Fraction(v), t) for v in u64]


@pytest.mark.parametrize("t", FLOAT_TYPES, ids=str)
def test_fma_single_rounding(t: tl.dtype) -> None:
    gen = torch.Generator().manual_seed(5)
    a, bb, c = (round_to(torch.randn(N, generator=gen, dtype=torch.float64)
                         * 2.0 ** torch.randint(-6, 6, (N,), generator=gen), t) for _ in range(3))
    c[: N // 2] = round_to(-(a[: N // 2].double() * bb[: N // 2].double()), t)  # heavy cancellation
    got = make_builder().create_fma(a, bb, c, block(t))
    assert got.dtype == a.dtype
    want = [round_fraction(Fraction(x) * Fraction(y) + Fraction(z), t)
            for x, y, z in zip(a.double().tolist(), bb.double().tolist(), c.double().tolist())]
    assert got.double().tolist() == want


# --- constants, ids, shapes -----------------------------------------------------------
def test_constants_and_ids() -> None:
    b = make_builder()
    assert b.get_constant(300, tl.int8).item() == 44 and b.get_constant(300, tl.int8).dtype == torch.int8
    assert b.get_constant(-1, tl.uint32).item() == 2**32 - 1
    assert ints(b.get_constant(2**64 - 1, tl.uint64)) == [2**64 - 1]
    assert b.get_constant(True, tl.int1).item() is True and b.get_constant(True, tl.int1).dim() == 0
    assert b.get_constant(0.1, tl.float16).item() == float(np.float16(0.1))
    assert b.get_constant(3, tl.float32).dtype == torch.float32
    null = b.get_null_pointer(tl.pointer_type(tl.float32))
    assert null.dtype == torch.int64 and null.dim() == 0 and null.item() == 0
    b.program_id, b.grid = (3, 1, 0), (8, 2, 1)
    for axis in range(3):
        pid, num = b.create_program_id(axis), b.create_num_programs(axis)
        assert pid.dtype == num.dtype == torch.int32 and pid.dim() == 0
        assert (pid.item(), num.item()) == (b.program_id[axis], b.grid[axis])


def test_shape_ops() -> None:
    b = make_builder()
    r = b.create_make_range(4, 12, block(tl.int32, 8))
    assert r.dtype == torch.int32 and r.tolist() == list(range(4, 12))
    s = b.create_splat(b.get_constant(2.5, tl.bfloat16), block(tl.bfloat16, 4, 2))
    assert s.shape == (4, 2) and s.dtype == torch.bfloat16 and s.is_contiguous() and bool((s == 2.5).all())
    col = b.create_expand_dims(r, 1, block(tl.int32, 8, 1))
    row = b.create_expand_dims(r, 0, block(tl.int32, 1, 8))
    assert col.shape == (8, 1) and row.shape == (1, 8)
    bc = b.create_broadcast(col, block(tl.int32, 8, 8))
    assert bc.shape == (8, 8) and bc[:, 3].tolist() == r.tolist() and bc.is_contiguous()
    rs = b.create_reshape(bc + b.create_broadcast(row, block(tl.int32, 8, 8)), block(tl.int32, 64))
    assert rs.tolist() == [i + j for i in range(4, 12) for j in range(4, 12)]
    cond = r % 2 == 0
    sel = b.create_select(cond, r, -r, block(tl.int32, 8))
    assert sel.dtype == torch.int32 and sel.tolist() == [v if v % 2 == 0 else -v for v in range(4, 12)]
    u = tensor_of([1, 2**32 - 1], tl.uint32)
    v = tensor_of([2**32 - 1, 1], tl.uint32)
    assert ints(b.create_select(torch.tensor([False, True]), u, v, block(tl.uint32, 2))) == [2**32 - 1] * 2
    assert b.create_hint(r, "divisibility", (16,)) is r


# --- reductions ----------------------------------------------------------------------
def test_reduce_sum() -> None:
    b = make_builder()
    gen = torch.Generator().manual_seed(9)
    vals = random_ints(tl.int8, gen, 64)
    x = tensor_of(vals, tl.int8).reshape(8, 8)
    row_sums = [wrap(sum(vals[i * 8:i * 8 + 8]), tl.int8) for i in range(8)]
    assert ints(b.create_reduce(x, 1, "sum", block(tl.int8, 8))) == row_sums
    assert ints(b.create_reduce(x, 0, "sum", block(tl.int32, 8))) == [sum(vals[j::8]) for j in range(8)]
    u = random_ints(tl.uint64, gen, 16)
    assert ints(b.create_reduce(tensor_of(u, tl.uint64), 0, "sum", tl.uint64)) == [sum(u) % 2**64]
    h = (torch.rand(4096, generator=gen) + 0.5).half()
    got = b.create_reduce(h, 0, "sum", tl.float16)
    assert got.dim() == 0 and got.dtype == torch.float16
    assert got.item() == float(np.float16(h.double().sum().item()))  # fp32 accumulation is ~exact here
    f = torch.randn(4, 1000, generator=gen)
    torch.testing.assert_close(b.create_reduce(f, 1, "sum", block(tl.float32, 4)), f.double().sum(1).float())


@pytest.mark.parametrize("t", [tl.int8, tl.uint8, tl.int64, tl.uint64, tl.float16, tl.float32], ids=str)
def test_reduce_max_min_arg(t: tl.dtype) -> None:
    b = make_builder()
    gen = torch.Generator().manual_seed(12)
    if t.is_floating():
        x = torch.randint(-5, 6, (16, 32), generator=gen).to(torch_dtype(t))  # many ties
        rows = x.double().tolist()
    else:
        vals = [v % 11 - 5 if i % 2 else v for i, v in enumerate(random_ints(t, gen, 16 * 32))]
        x = tensor_of(vals, t).reshape(16, 32)
        rows = [[wrap(v, t) for v in vals[i * 32:(i + 1) * 32]] for i in range(16)]
    for kind, fn in (("max", max), ("min", min)):
        got = b.create_reduce(x, 1, kind, block(t, 16))
        assert got.dtype == x.dtype
        ext = [fn(r) for r in rows]
        assert (got.double().tolist() if t.is_floating() else ints(got)) == ext
        arg = b.create_reduce(x, 1, "arg" + kind, block(tl.int32, 16))
        assert arg.dtype == torch.int32 and arg.tolist() == [r.index(e) for r, e in zip(rows, ext)]
    cols = b.create_reduce(x, 0, "argmax", block(tl.int32, 32))
    assert cols.tolist() == [[r[j] for r in rows].index(max(r[j] for r in rows)) for j in range(32)]


def test_reduce_nan_and_scalar_result() -> None:
    b = make_builder()
    nan = float("nan")
    x = torch.tensor([1.0, nan, 5.0, nan, -3.0])
    for kind in ("max", "min"):
        got = b.create_reduce(x, 0, kind, tl.float32)
        assert got.dim() == 0 and math.isnan(got.item())
    assert b.create_reduce(x, 0, "argmax", tl.int32).item() == 1  # first NaN wins
    assert b.create_reduce(x, 0, "argmin", tl.int32).item() == 1
    ties = torch.tensor([2.0, 7.0, 7.0, -1.0, -1.0])
    assert b.create_reduce(ties, 0, "argmax", tl.int32).item() == 1
    assert b.create_reduce(ties, 0, "argmin", tl.int32).item() == 3
    bf = ties.bfloat16()
    assert b.create_reduce(bf, 0, "argmax", tl.int32).item() == 1


# --- memory --------------------------------------------------------------------------
def pointer_block(b: InterpreterBuilder, base: int, elem: tl.dtype, offsets: torch.Tensor) -> torch.Tensor:
    pty = block(tl.pointer_type(elem), *offsets.shape)
    return b.create_addptr(b.create_splat(torch.tensor(base), pty), offsets, pty)


@pytest.mark.parametrize("t", [tl.int1, tl.int8, tl.int16, tl.uint8, tl.int32, tl.int64] + FLOAT_TYPES, ids=str)
def test_masked_scattered_load_store_two_buffers(t: tl.dtype) -> None:
    gen = torch.Generator().manual_seed(21)
    mem = Memory()
    b = InterpreterBuilder(mem)
    dt = torch_dtype(t)
    src_a, src_b = (torch.randint(1, 100, (n,), generator=gen) for n in (300, 200))
    src_a, src_b = ((v % 2 if t == tl.int1 else v).to(dt) for v in (src_a, src_b))
    base_a, base_b = mem.register(src_a), mem.register(src_b)
    # each lane picks a buffer and an in-bounds index; masked-off lanes get garbage addresses
    pick = torch.randint(0, 2, (32, 16), generator=gen).bool()
    idx_a = torch.randint(0, 300, (32, 16), generator=gen)
    idx_b = torch.randint(0, 200, (32, 16), generator=gen)
    ptr = torch.where(pick, pointer_block(b, base_a, t, idx_a), pointer_block(b, base_b, t, idx_b))
    mask = torch.rand(32, 16, generator=gen) < 0.7
    ptr = torch.where(mask, ptr, torch.randint(-(2**62), 2**62, (32, 16), generator=gen))
    other = b.get_constant(-7 if not t.is_int_unsigned() else 7, t)
    got = b.create_load(ptr, mask, other, block(t, 32, 16))
    want = torch.where(pick, src_a[idx_a], src_b[idx_b])
    want = torch.where(mask, want, other)
    assert got.dtype == dt and torch.equal(got, want)
    # store through a different buffer whose contents are poisoned first
    poison = float("nan") if t.is_floating() else 123
    out = torch.full((512,), poison).to(dt)
    mem.register(out)
    lanes = torch.randperm(512, generator=gen)[: 32 * 16].reshape(32, 16)
    b.create_store(pointer_block(b, out.data_ptr(), t, lanes), got, mask)
    expect = torch.full((512,), poison).to(dt)
    expect[lanes[mask]] = got[mask]
    assert torch.equal(out.view(torch.uint8), expect.view(torch.uint8))


def test_scalar_pointer_and_views() -> None:
    mem = Memory()
    b = InterpreterBuilder(mem)
    x = torch.arange(20, dtype=torch.float64).reshape(4, 5)
    p = mem.register(x[1:, 2:])  # a view: the whole storage becomes accessible
    assert p == x[1, 2].data_ptr()
    sp = tl.pointer_type(tl.float64)
    assert b.create_load(torch.tensor(p), None, None, tl.float64).item() == 7.0
    before = b.create_addptr(torch.tensor(p), torch.tensor(-7, dtype=torch.int32), sp)
    assert b.create_load(before, None, None, tl.float64).item() == 0.0
    b.create_store(before, torch.tensor(-1.0, dtype=torch.float64), None)
    b.create_store(torch.tensor(p), torch.tensor(9.0, dtype=torch.float64), torch.tensor(False))
    assert x[0, 0].item() == -1.0 and x[1, 2].item() == 7.0
    # reinterpreting the same bytes with another dtype
    assert b.create_load(torch.tensor(p), None, None, tl.int64).item() == struct.unpack("<q", struct.pack("<d", 7.0))[0]


def test_duplicate_store_last_lane_wins() -> None:
    mem = Memory()
    b = InterpreterBuilder(mem)
    out = torch.zeros(4, dtype=torch.int32)
    base = mem.register(out)
    idx = torch.tensor([[0, 1, 0], [2, 0, 1]])
    vals = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    b.create_store(pointer_block(b, base, tl.int32, idx), vals, torch.tensor([[True, True, True], [True, True, False]]))
    assert out.tolist() == [4, 1, 3, 0]


def test_out_of_bounds_messages() -> None:
    mem = Memory()
    b = InterpreterBuilder(mem)
    with pytest.raises(IndexError, match="no buffer is registered"):
        b.create_load(torch.tensor([64]), None, None, block(tl.float32, 1))
    x = torch.zeros(10, dtype=torch.float32)
    base = mem.register(x)
    offs = torch.arange(16)
    ptr = pointer_block(b, base, tl.float32, offs)
    with pytest.raises(IndexError, match=rf"address {base + 40:#x} \(lane \(10,\); 6 of 16 .*"
                                         rf"4 bytes past the end .*base={base:#x}, size=40 bytes"):
        b.create_load(ptr, None, None, block(tl.float32, 16))
    with pytest.raises(IndexError, match="8 bytes before the start"):
        b.create_store(ptr - 8, torch.zeros(16), offs < 10)
    assert bool((x == 0).all())  # a failing store writes nothing
    with pytest.raises(IndexError, match="misaligned for torch.float32"):
        b.create_load(ptr + 2, offs < 10, None, block(tl.float32, 16))
    with pytest.raises(IndexError, match="null pointer"):
        b.create_load(torch.tensor(0), None, None, tl.float32)
    # a straddling access: an int64 over the last 4 bytes of a 20-byte buffer
    y = torch.zeros(5, dtype=torch.float32)
    with pytest.raises(IndexError, match="4 bytes past the end .*size=20 bytes"):
        b.create_load(torch.tensor(mem.register(y) + 16), None, None, tl.int64)
    # masked-off lanes may hold anything
    ok = b.create_load(ptr + 2**62, torch.zeros(16, dtype=torch.bool), None, block(tl.float32, 16))
    assert ok.tolist() == [0.0] * 16


def test_large_tile_is_vectorized() -> None:
    mem = Memory()
    b = InterpreterBuilder(mem)
    x = torch.randn(1 << 16)
    y = torch.full((1 << 16,), float("nan"))
    px, py = mem.register(x), mem.register(y)
    offs = torch.arange(1 << 16, dtype=torch.int32).flip(0)
    calls = 0

    def count(frame, event, arg):  # Python-level calls: a per-element path makes one or more per element
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        v = b.create_load(pointer_block(b, px, tl.float32, offs), None, None, block(tl.float32, 1 << 16))
        b.create_store(pointer_block(b, py, tl.float32, offs), v, None)
    finally:
        sys.setprofile(None)
    assert calls < 1000, calls  # 65536 elements
    assert torch.equal(y, x)


def test_every_protocol_method_implemented() -> None:
    wanted = {n for n, _ in inspect.getmembers(proto.Builder, inspect.isfunction) if not n.startswith("_")}
    missing = {n for n in wanted if not callable(getattr(InterpreterBuilder, n, None))}
    assert not missing
