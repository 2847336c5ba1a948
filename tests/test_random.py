"""Philox random numbers (`tl.randint4x`, `tl.randint`, `tl.rand`, `tl.randn`, the 4x forms) and `tl.umulhi`.

The kernels are checked bit for bit against a NumPy Philox4x32-10 written here from the
algorithm's description (itself checked against the published known-answer vectors), in the
interpreter and on the CPU target; the distributions are checked statistically over 2**20
samples with bounds of about five standard errors; the NVIDIA code is assembled by ptxas.
"""

from __future__ import annotations

import platform

import numpy as np
import pytest
import torch
from filecheck_tool import filecheck

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

MASK32 = 0xFFFFFFFF
BLOCK = 256


# ===------------------------------------------------------------------------===
# Reference: Philox4x32-10 in NumPy (uint64 arrays holding 32-bit words)
# ===------------------------------------------------------------------------===
def philox_reference(counter: list[np.ndarray], key: tuple[int, int], rounds: int = 10) -> list[np.ndarray]:
    """Philox4x32: each round multiplies words 0 and 2 into 64-bit products, swaps and mixes in the key."""
    words = [np.asarray(w, dtype=np.uint64) & np.uint64(MASK32) for w in counter]
    k0, k1 = key
    for _ in range(rounds):
        product_0 = words[0] * np.uint64(0xD2511F53)
        product_2 = words[2] * np.uint64(0xCD9E8D57)
        words = [
            (product_2 >> np.uint64(32)) ^ words[1] ^ np.uint64(k0),
            product_2 & np.uint64(MASK32),
            (product_0 >> np.uint64(32)) ^ words[3] ^ np.uint64(k1),
            product_0 & np.uint64(MASK32),
        ]
        k0, k1 = (k0 + 0x9E3779B9) & MASK32, (k1 + 0xBB67AE85) & MASK32
    return [w.astype(np.uint32) for w in words]


def randint4x_reference(seed: int, offsets: np.ndarray) -> np.ndarray:
    """[4, n] uint32 words for a seed and int offsets: the counter is (low word, high word, 0, 0) of
    the offset's bits (a 32-bit offset has no high word: its bits are zero-extended)."""
    unsigned = np.uint32 if offsets.dtype.itemsize == 4 else np.uint64
    bits = offsets.view(unsigned).astype(np.uint64)
    zeros = np.zeros_like(bits)
    seed &= (1 << 64) - 1
    return np.stack(philox_reference([bits & np.uint64(MASK32), bits >> np.uint64(32), zeros, zeros],
                                     (seed & MASK32, seed >> 32)))


def rand_reference(words: np.ndarray) -> np.ndarray:
    """uint32 words -> [0, 1): read as int32, negatives complemented, times the float32 just below 2**-31."""
    signed = words.astype(np.uint32).view(np.int32)
    folded = np.where(signed < 0, ~signed, signed)
    return folded.astype(np.float32) * np.float32(2.0**-31 * (1.0 - 2.0**-24))


def randn_reference(w0: np.ndarray, w1: np.ndarray) -> np.ndarray:
    u0, u1 = rand_reference(w0).astype(np.float64), rand_reference(w1).astype(np.float64)
    return np.sqrt(-2.0 * np.log(1.0 - u0)) * np.cos(2.0 * np.pi * u1)


# Random123's known-answer vectors for philox4x32_10: (counter, key, expected)
KNOWN_ANSWERS = [
    ([0, 0, 0, 0], (0, 0), [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([MASK32] * 4, (MASK32, MASK32), [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    ([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], (0xA4093822, 0x299F31D0),
     [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]),
]


@pytest.mark.parametrize("counter, key, expected", KNOWN_ANSWERS)
def test_reference_matches_known_answers(counter, key, expected):
    assert [int(w[0]) for w in philox_reference([np.array([c]) for c in counter], key)] == expected


# ===------------------------------------------------------------------------===
# Kernels
# ===------------------------------------------------------------------------===
@inductor_tile.jit
def philox_words_kernel(counter_ptr, key_ptr, out_ptr, N: tl.constexpr):
    """Runs tl.philox_impl on full counters (row i of counter_ptr is counter word i; int32 bits)."""
    i = tl.arange(0, N)
    c0 = tl.load(counter_ptr + i).to(tl.uint32, bitcast=True)
    c1 = tl.load(counter_ptr + N + i).to(tl.uint32, bitcast=True)
    c2 = tl.load(counter_ptr + 2 * N + i).to(tl.uint32, bitcast=True)
    c3 = tl.load(counter_ptr + 3 * N + i).to(tl.uint32, bitcast=True)
    k0 = tl.load(key_ptr).to(tl.uint32, bitcast=True)
    k1 = tl.load(key_ptr + 1).to(tl.uint32, bitcast=True)
    r0, r1, r2, r3 = tl.philox_impl(c0, c1, c2, c3, k0, k1)
    tl.store(out_ptr + i, r0)
    tl.store(out_ptr + N + i, r1)
    tl.store(out_ptr + 2 * N + i, r2)
    tl.store(out_ptr + 3 * N + i, r3)


@inductor_tile.jit
def randint4x_kernel(seed, offset_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    r0, r1, r2, r3 = tl.randint4x(seed, tl.load(offset_ptr + i, mask=mask, other=0))
    tl.store(out_ptr + i, r0, mask=mask)
    tl.store(out_ptr + n + i, r1, mask=mask)
    tl.store(out_ptr + 2 * n + i, r2, mask=mask)
    tl.store(out_ptr + 3 * n + i, r3, mask=mask)


@inductor_tile.jit
def random_kernel(seed, out_ptr, n, KIND: tl.constexpr, BLOCK: tl.constexpr):
    """out[i] = KIND(seed, i) for KIND in randint, rand, randn; rand4x/randn4x write four rows."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    if KIND == "randint":
        tl.store(out_ptr + i, tl.randint(seed, i).to(tl.float64), mask=mask)
    elif KIND == "rand":
        tl.store(out_ptr + i, tl.rand(seed, i), mask=mask)
    elif KIND == "randn":
        tl.store(out_ptr + i, tl.randn(seed, i), mask=mask)
    elif KIND == "rand4x":
        a, b, c, d = tl.rand4x(seed, i)
        tl.store(out_ptr + i, a, mask=mask)
        tl.store(out_ptr + n + i, b, mask=mask)
        tl.store(out_ptr + 2 * n + i, c, mask=mask)
        tl.store(out_ptr + 3 * n + i, d, mask=mask)
    else:
        a, b, c, d = tl.randn4x(seed, i)
        tl.store(out_ptr + i, a, mask=mask)
        tl.store(out_ptr + n + i, b, mask=mask)
        tl.store(out_ptr + 2 * n + i, c, mask=mask)
        tl.store(out_ptr + 3 * n + i, d, mask=mask)


def run_random(kind: str, seed: int, n: int, rows: int = 1) -> torch.Tensor:
    """KIND(seed, 0..n-1) as float64 (rows of n for the 4x kinds); the output starts as NaN."""
    out = torch.full((rows * n,), float("nan"), dtype=torch.float64 if kind == "randint" else torch.float32)
    random_kernel[(triton_cdiv(n, BLOCK),)](seed, out, n, KIND=kind, BLOCK=BLOCK)
    return out.double().reshape(rows, n)


def run_randint4x(seed: int, offsets: torch.Tensor) -> np.ndarray:
    n = offsets.numel()
    out = torch.full((4 * n,), 0x7FC00000, dtype=torch.uint32)  # a NaN's bits: a word never written shows
    randint4x_kernel[(triton_cdiv(n, BLOCK),)](seed, offsets, out, n, BLOCK=BLOCK)
    return out.numpy().reshape(4, n)


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def random_offsets(gen: torch.Generator, n: int, dtype: torch.dtype) -> torch.Tensor:
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, (n,), generator=gen, dtype=torch.int64).to(dtype)


# ===------------------------------------------------------------------------===
# Bit-exact against the reference
# ===------------------------------------------------------------------------===
@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_philox_impl_matches_known_answers(mode, request):
    request.getfixturevalue(mode)
    for counter, key, expected in KNOWN_ANSWERS:
        counters = torch.tensor([[c] * 4 for c in counter], dtype=torch.int64).to(torch.uint32).view(torch.int32)
        keys = torch.tensor(key, dtype=torch.int64).to(torch.uint32).view(torch.int32)
        out = torch.full((16,), 0x7FC00000, dtype=torch.uint32)
        philox_words_kernel[(1,)](counters, keys, out, N=4)
        assert out.reshape(4, 4)[:, 0].tolist() == expected


SEEDS = [0, 12345, -1, 2**40 + 77, -(2**62) + 5]


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("offset_dtype", [torch.int32, torch.int64])
def test_randint4x_matches_reference(mode, offset_dtype, request, gen):
    request.getfixturevalue(mode)
    offsets = random_offsets(gen, 1000, offset_dtype)
    for seed in SEEDS:
        got = run_randint4x(seed, offsets)
        assert np.array_equal(got, randint4x_reference(seed, offsets.numpy())), f"seed {seed}"


def test_offsets_below_2_to_32_give_the_same_words_at_either_width(compiled, gen):
    offsets = torch.randint(0, 2**31 - 1, (700,), generator=gen, dtype=torch.int32)
    assert np.array_equal(run_randint4x(99, offsets), run_randint4x(99, offsets.to(torch.int64)))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_randint_rand_randn_match_reference(mode, request):
    request.getfixturevalue(mode)
    n, seed = 3000, 2024
    words = randint4x_reference(seed, np.arange(n, dtype=np.int32))
    assert np.array_equal(run_random("randint", seed, n)[0].numpy(), words[0].astype(np.float64))
    assert np.array_equal(run_random("rand", seed, n)[0].numpy(), rand_reference(words[0]).astype(np.float64))
    assert np.array_equal(run_random("rand4x", seed, n, rows=4).numpy(), rand_reference(words).astype(np.float64))
    # Box-Muller goes through log/cos of the target's math library: a few ulp
    np.testing.assert_allclose(run_random("randn", seed, n)[0].numpy(), randn_reference(words[0], words[1]),
                               rtol=2e-6, atol=2e-6)
    normals = run_random("randn4x", seed, n, rows=4).numpy()
    np.testing.assert_allclose(normals[0], randn_reference(words[0], words[1]), rtol=2e-6, atol=2e-6)
    u0, u1 = rand_reference(words[0]).astype(np.float64), rand_reference(words[1]).astype(np.float64)
    np.testing.assert_allclose(normals[1], np.sqrt(-2.0 * np.log(1.0 - u0)) * np.sin(2.0 * np.pi * u1),
                               rtol=2e-6, atol=2e-6)


def test_interpreter_and_cpu_target_agree_bit_for_bit(monkeypatch, gen):
    offsets = random_offsets(gen, 2000, torch.int64)
    results = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("TILE_INTERPRET", mode)
        results[mode] = (run_randint4x(31337, offsets), run_random("rand4x", 31337, 2000, rows=4),
                         run_random("randn", 31337, 2000))
    interpreted, compiled = results["1"], results["0"]
    assert np.array_equal(interpreted[0], compiled[0])
    assert torch.equal(interpreted[1], compiled[1])
    # randn calls log/sqrt/cos: torch's in the interpreter, libm on the CPU (within a few ulp)
    torch.testing.assert_close(interpreted[2], compiled[2], rtol=2e-6, atol=2e-6)


@inductor_tile.jit
def rand_2d_kernel(seed_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """The shapes generated reduction kernels use: a [1, 1] seed and [ROWS, COLS] offsets."""
    seed = tl.broadcast_to(tl.load(seed_ptr), [1, 1])
    offsets = tl.arange(0, ROWS)[:, None] * COLS + tl.arange(0, COLS)[None, :]
    tl.store(out_ptr + offsets, tl.rand(seed, offsets))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_rand_on_a_2d_tile_with_a_block_seed(mode, request):
    request.getfixturevalue(mode)
    seed = torch.tensor([2**35 + 9], dtype=torch.int64)
    out = torch.full((16 * 32,), float("nan"))
    rand_2d_kernel[(1,)](seed, out, ROWS=16, COLS=32)
    words = randint4x_reference(2**35 + 9, np.arange(16 * 32, dtype=np.int32))
    assert np.array_equal(out.numpy(), rand_reference(words[0]))


# ===------------------------------------------------------------------------===
# Determinism and independence
# ===------------------------------------------------------------------------===
def test_same_seed_and_offset_give_the_same_numbers(compiled):
    first, second = run_random("rand4x", 5, 5000, rows=4), run_random("rand4x", 5, 5000, rows=4)
    assert torch.equal(first, second)


def test_different_seeds_and_offsets_give_different_numbers(compiled):
    n = 1 << 16
    a, b = run_random("randint", 1, n)[0], run_random("randint", 2, n)[0]
    # 32-bit words of two seeds: equal by chance with probability 2**-32 per element
    assert (a == b).sum().item() <= 2
    # within one seed, offsets give distinct words (collisions have probability ~ n**2 / 2**33)
    assert torch.unique(a).numel() >= n - 2
    # neighbouring offsets are not correlated
    u = run_random("rand", 1, n)[0]
    assert abs(np.corrcoef(u[:-1].numpy(), u[1:].numpy())[0, 1]) < 5 / np.sqrt(n)


# ===------------------------------------------------------------------------===
# Statistics over 2**20 samples (bounds of about five standard errors)
# ===------------------------------------------------------------------------===
N_STATS = 1 << 20


def test_rand_is_uniform_on_0_1(compiled):
    u = run_random("rand4x", 77, N_STATS, rows=4)
    assert u.min().item() >= 0.0 and u.max().item() < 1.0
    for row in u:
        assert abs(row.mean().item() - 0.5) < 5 * np.sqrt(1 / 12 / N_STATS)
        assert abs(row.var().item() - 1 / 12) < 5 * np.sqrt((1 / 80 - 1 / 144) / N_STATS)
        counts = torch.histc(row, bins=16, min=0.0, max=1.0)
        expected = N_STATS / 16
        assert (counts - expected).abs().max().item() < 5 * np.sqrt(expected)
    # the four words of one evaluation are independent of each other
    assert abs(np.corrcoef(u[0].numpy(), u[2].numpy())[0, 1]) < 5 / np.sqrt(N_STATS)


def test_randn_is_standard_normal(compiled):
    z = run_random("randn4x", 4242, N_STATS, rows=4)
    for row in z:
        assert abs(row.mean().item()) < 5 / np.sqrt(N_STATS)
        assert abs(row.var().item() - 1.0) < 5 * np.sqrt(2 / N_STATS)
        inside_one_sigma = (row.abs() < 1.0).double().mean().item()
        assert abs(inside_one_sigma - 0.682689492) < 5 * np.sqrt(0.6827 * 0.3173 / N_STATS)
        assert abs((row**3).mean().item()) < 5 * np.sqrt(15 / N_STATS)  # skewness 0
        assert abs((row**4).mean().item() - 3.0) < 5 * np.sqrt(96 / N_STATS)  # kurtosis 3
    # the cos and sin halves of one Box-Muller pair are uncorrelated
    assert abs(np.corrcoef(z[0].numpy(), z[1].numpy())[0, 1]) < 5 / np.sqrt(N_STATS)


# ===------------------------------------------------------------------------===
# Errors
# ===------------------------------------------------------------------------===
@inductor_tile.jit
def float_seed_kernel(out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.rand(1.5, i))


@inductor_tile.jit
def short_offset_kernel(out_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    tl.store(out_ptr + i, tl.rand(3, i.to(tl.int16)))


def test_bad_seed_and_offset_types_are_clear_errors(compiled):
    out = torch.full((16,), float("nan"))
    with pytest.raises(CompilationError, match="seed must be an integer"):
        float_seed_kernel[(1,)](out, BLOCK=16)
    with pytest.raises(CompilationError, match="32- or 64-bit integers"):
        short_offset_kernel[(1,)](out, BLOCK=16)


# ===------------------------------------------------------------------------===
# tl.umulhi
# ===------------------------------------------------------------------------===
@inductor_tile.jit
def umulhi_kernel(x_ptr, y_ptr, out_ptr, n, DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    """umulhi of DTYPE values, passed in memory as signed integers of the same width (their bits)."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i, mask=mask).to(DTYPE, bitcast=True)
    y = tl.load(y_ptr + i, mask=mask).to(DTYPE, bitcast=True)
    tl.store(out_ptr + i, tl.umulhi(x, y).to(out_ptr.dtype.element_ty, bitcast=True), mask=mask)


# (language dtype, signed storage dtype of the same width)
UMULHI_DTYPES = [(tl.int8, torch.int8), (tl.int16, torch.int16), (tl.int32, torch.int32), (tl.int64, torch.int64),
                 (tl.uint8, torch.int8), (tl.uint16, torch.int16), (tl.uint32, torch.int32), (tl.uint64, torch.int64)]


def _random_bits(gen: torch.Generator, n: int, storage: torch.dtype) -> torch.Tensor:
    """Random bit patterns of a signed integer dtype (all ones, 0, 1 and the sign bit alone included)."""
    bits = torch.randint(-(2**63), 2**63 - 1, (n,), generator=gen, dtype=torch.int64)
    bits[:4] = torch.tensor([-1, 0, 1, -(2**63)])
    width = torch.iinfo(storage).bits
    if width < 64:
        bits = torch.where(bits < 0, bits >> (64 - width), bits & ((1 << (width - 1)) - 1))
    return bits.to(storage)


def _unsigned(t: torch.Tensor) -> list[int]:
    modulus = 1 << torch.iinfo(t.dtype).bits
    return [v % modulus for v in t.tolist()]


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype, storage", UMULHI_DTYPES, ids=[str(d) for d, _ in UMULHI_DTYPES])
def test_umulhi_matches_big_integer_product(mode, dtype, storage, request, gen):
    request.getfixturevalue(mode)
    n = 300
    x, y = _random_bits(gen, n, storage), _random_bits(gen, n, storage)
    out = _random_bits(gen, n, storage)  # garbage the kernel must overwrite (integers have no NaN)
    umulhi_kernel[(triton_cdiv(n, 128),)](x, y, out, n, DTYPE=dtype, BLOCK=128)
    width = torch.iinfo(storage).bits
    expected = [(a * b) >> width for a, b in zip(_unsigned(x), _unsigned(y))]
    assert _unsigned(out) == expected


def test_umulhi_rejects_floats(compiled):
    @inductor_tile.jit
    def float_umulhi_kernel(out_ptr):
        tl.store(out_ptr, tl.umulhi(1.5, 2.0))

    with pytest.raises(CompilationError, match="umulhi needs integer operands"):
        float_umulhi_kernel[(1,)](torch.full((1,), float("nan")))


# ===------------------------------------------------------------------------===
# Generated code: LLVM IR on the CPU, PTX for sm_90 (ptxas)
# ===------------------------------------------------------------------------===


def _umulhi_specs(element: str, dtype) -> list:
    return [spec_from_signature("x_ptr", f"*{element}", divisible_by_16=True),
            spec_from_signature("y_ptr", f"*{element}", divisible_by_16=True),
            spec_from_signature("out_ptr", f"*{element}", divisible_by_16=True),
            spec_from_signature("n", "i32"), spec_from_signature("DTYPE", "constexpr", dtype),
            spec_from_signature("BLOCK", "constexpr", 128)]


def test_umulhi_llvm_ir_is_a_widened_multiply(tmp_path):
    compiled = compile_specialized(umulhi_kernel, _umulhi_specs("i32", tl.uint32), target="cpu", num_warps=1, native=False)
    filecheck(compiled.asm["ttir"], "CHECK: tt.mulhiui {{.*}} : tensor<128xi32>\n", tmp_path)
    filecheck(compiled.asm["llir"], "CHECK: zext <128 x i32> {{.*}} to <128 x i64>\n"
                                    "CHECK: zext <128 x i32> {{.*}} to <128 x i64>\n"
                                    "CHECK: mul {{(nuw )?}}<128 x i64>\n"
                                    "CHECK: lshr <128 x i64> {{.*}}32\n"
                                    "CHECK: trunc {{(nuw )?}}<128 x i64> {{.*}} to <128 x i32>\n", tmp_path)


needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@needs_ptxas
@pytest.mark.parametrize("element, dtype, instruction", [("i32", tl.uint32, "mul.hi.u32"),
                                                         ("i64", tl.int64, "mul.hi.u64")])
def test_umulhi_ptx_uses_mul_hi(element, dtype, instruction, tmp_path):
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    ptx = compile_specialized(umulhi_kernel, _umulhi_specs(element, dtype), target="cuda:90", num_warps=4,
                              native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", "umulhi_kernel")
    filecheck(ptx, f"CHECK: {instruction}\n", tmp_path)


@needs_ptxas
@pytest.mark.parametrize("kind", ["randint", "rand", "randn", "rand4x", "randn4x"])
def test_random_kernels_assemble_for_sm90(kind, tmp_path):
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    specs = [spec_from_signature("seed", "i64"), spec_from_signature("out_ptr", "*fp32", divisible_by_16=True),
             spec_from_signature("n", "i32"), spec_from_signature("KIND", "constexpr", kind),
             spec_from_signature("BLOCK", "constexpr", 1024)]
    if kind == "randint":
        specs[1] = spec_from_signature("out_ptr", "*fp64", divisible_by_16=True)
    ptx = compile_specialized(random_kernel, specs, target="cuda:90", num_warps=4, native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", f"random_kernel[{kind}]")
    filecheck(ptx, "CHECK: mul.hi.u32\n", tmp_path)


# ===------------------------------------------------------------------------===
# uint_to_uniform_float on every 32- and 64-bit integer type (Triton's mapping)
# ===------------------------------------------------------------------------===
@inductor_tile.jit
def to_uniform_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.random.uint_to_uniform_float(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype", [torch.int32, torch.uint32, torch.int64, torch.uint64])
def test_uint_to_uniform_float_folds_the_sign_and_stays_below_one(mode, dtype, request, gen):
    request.getfixturevalue(mode)
    bits = torch.iinfo(dtype).bits
    signed = torch.int32 if bits == 32 else torch.int64
    info = torch.iinfo(signed)
    # random words plus the extremes: the smallest and largest signed values, 0 and -1 (all ones)
    words = torch.randint(info.min, info.max, (64,), generator=gen, dtype=signed)
    words[:4] = torch.tensor([info.min, info.max, 0, -1], dtype=signed)
    x = words.view(dtype)
    out = torch.full((64,), float("nan"))
    to_uniform_kernel[(1,)](x, out, BLOCK=64)
    folded = np.where(words.numpy() < 0, ~words.numpy(), words.numpy())
    scale = np.float32(2.0 ** -(bits - 1) * (1.0 - 2.0 ** -24))
    expected = torch.from_numpy(folded.astype(np.float32) * scale)
    assert torch.equal(out, expected)
    assert out[0] == out[1] and 1.0 - torch.finfo(torch.float32).eps <= out[0] < 1.0  # min and max fold together
    assert out[2] == 0.0 and out[3] == 0.0
    assert (out >= 0).all() and (out < 1).all()
