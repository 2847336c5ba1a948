"""Counter-based random numbers: Philox 4x32 with 10 rounds, written in the tile language.

Philox (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
SC 2011) maps a 128-bit counter and a 64-bit key to 128 random bits. Here, as in Triton:

- the key is the seed: a scalar integer (any width; its 64-bit value, sign-extended, gives
  the two key words, low word first);
- the counter is (offset, 0, 0, 0) for an int32/uint32 offset block; a 64-bit offset puts
  its high word in the second counter word, so offsets below 2**32 give the same numbers
  at either width;
- the same seed and offset always give the same numbers, on every target and in the
  interpreter (only integer arithmetic is involved up to `rand`).

`randint4x` returns the four uint32 words, `randint` the first one. `rand` turns a word into a
float32 in [0, 1) as Triton does (`uint_to_uniform_float`; the same bits on every target); `randn` turns the
first two words into one standard normal by Box-Muller. The `4x` versions return four
values from one Philox evaluation.
"""

from __future__ import annotations

from typing import Any

from ..kernel_compiler.runtime.jit import jit
from .builtins import cos, log, sin, sqrt, static_range, umulhi
from .core import builtin, constexpr, current_semantic, tensor
from .dtypes import float32, int32, int64, uint32, uint64
from .semantic import TileTypeError

# Round multipliers and key increments of Philox4x32 (from the paper)
PHILOX_ROUND_A = 0xD2511F53
PHILOX_ROUND_B = 0xCD9E8D57
PHILOX_KEY_A = 0x9E3779B9  # the golden ratio, as a 32-bit fraction
PHILOX_KEY_B = 0xBB67AE85  # sqrt(3) - 1, as a 32-bit fraction
N_ROUNDS_DEFAULT = 10

_TWO_PI = 6.283185307179586


def _c(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


@builtin
def _philox_key(seed: Any) -> tuple[tensor, tensor]:
    """The two uint32 key words (low, high) of an integer seed."""
    semantic = current_semantic()
    seed = semantic.to_tensor(_c(seed))
    if not seed.dtype.is_int() or seed.dtype.is_int1():
        raise TileTypeError(f"a random seed must be an integer, got {seed.dtype}")
    wide = semantic.cast(seed, uint64)
    return semantic.cast(wide, uint32), semantic.cast(semantic.shr(wide, 32), uint32)


@builtin
def _philox_counter(offset: Any) -> tuple[tensor, tensor, tensor, tensor]:
    """The four uint32 counter words of a 32- or 64-bit integer offset: (low bits, high bits, 0, 0)."""
    semantic = current_semantic()
    offset = semantic.to_tensor(_c(offset))
    if not offset.dtype.is_int() or offset.dtype.int_bitwidth not in (32, 64):
        raise TileTypeError(f"a random offset must be a block of 32- or 64-bit integers, got {offset.dtype}")
    zero = semantic.full(offset.type.shape, 0, uint32)
    if offset.dtype.int_bitwidth == 32:
        return semantic.cast(offset, uint32, bitcast=True), zero, zero, zero
    bits = semantic.cast(offset, uint64, bitcast=True)
    return semantic.cast(bits, uint32), semantic.cast(semantic.shr(bits, 32), uint32), zero, zero


@jit
def philox_impl(c0, c1, c2, c3, k0, k1, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """`n_rounds` Philox rounds on uint32 counter words c0..c3 with key words k0, k1."""
    for _ in static_range(n_rounds):
        high_a = umulhi(c0, PHILOX_ROUND_A)
        low_a = c0 * PHILOX_ROUND_A
        high_b = umulhi(c2, PHILOX_ROUND_B)
        low_b = c2 * PHILOX_ROUND_B
        c0, c1, c2, c3 = high_b ^ c1 ^ k0, low_b, high_a ^ c3 ^ k1, low_a
        k0 = k0 + PHILOX_KEY_A
        k1 = k1 + PHILOX_KEY_B
    return c0, c1, c2, c3


@jit
def randint4x(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of random uint32 for `seed` (a scalar integer) and `offset` (an integer block)."""
    k0, k1 = _philox_key(seed)
    c0, c1, c2, c3 = _philox_counter(offset)
    return philox_impl(c0, c1, c2, c3, k0, k1, n_rounds)


@jit
def randint(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """A block of random uint32: the first word of `randint4x`."""
    r0, _r1, _r2, _r3 = randint4x(seed, offset, n_rounds)
    return r0


@builtin
def uint_to_uniform_float(x: Any) -> tensor:
    """32 or 64 random bits (any integer type of that width) -> float32 uniform in [0, 1), as Triton maps them:
    the bits read as a signed integer, negative values folded onto non-negative ones (x -> -x - 1, the bitwise
    complement), then converted to float32 and scaled by the largest float32 below 2**-(bits - 1), so the
    largest integer (whose float32 rounds up to 2**(bits - 1)) still gives a value below 1."""
    semantic = current_semantic()
    x = semantic.to_tensor(_c(x))
    if not x.dtype.is_int() or x.dtype.int_bitwidth not in (32, 64):
        raise TileTypeError(f"uint_to_uniform_float takes 32- or 64-bit integers, got {x.dtype}")
    bits = x.dtype.int_bitwidth
    signed = semantic.cast(x, int32 if bits == 32 else int64, bitcast=True)
    folded = semantic.where(semantic.lt(signed, 0), semantic.invert(signed), signed)
    scale = 2.0 ** -(bits - 1) * (1.0 - 2.0 ** -24)  # exact in float32: 2**-(bits - 1) less one float32 step
    return semantic.mul(semantic.cast(folded, float32), semantic.full((), scale, float32))


@jit
def pair_uniform_to_normal(u1, u2):
    """Box-Muller: two independent uniforms in [0, 1) -> two independent standard normals."""
    radius = sqrt(-2.0 * log(1.0 - u1))  # 1 - u1 is in (0, 1]: the log is finite
    angle = _TWO_PI * u2
    return radius * cos(angle), radius * sin(angle)


@jit
def rand(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """A block of float32 uniform in [0, 1), one per offset."""
    return uint_to_uniform_float(randint(seed, offset, n_rounds))


@jit
def rand4x(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of float32 uniform in [0, 1) from one Philox evaluation."""
    r0, r1, r2, r3 = randint4x(seed, offset, n_rounds)
    return uint_to_uniform_float(r0), uint_to_uniform_float(r1), uint_to_uniform_float(r2), uint_to_uniform_float(r3)


@jit
def randn(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """A block of float32 standard normal, one per offset."""
    r0, r1, _r2, _r3 = randint4x(seed, offset, n_rounds)
    n0, _n1 = pair_uniform_to_normal(uint_to_uniform_float(r0), uint_to_uniform_float(r1))
    return n0


@jit
def randn4x(seed, offset, n_rounds: constexpr = N_ROUNDS_DEFAULT):
    """Four blocks of float32 standard normal from one Philox evaluation."""
    u0, u1, u2, u3 = rand4x(seed, offset, n_rounds)
    n0, n1 = pair_uniform_to_normal(u0, u1)
    n2, n3 = pair_uniform_to_normal(u2, u3)
    return n0, n1, n2, n3


__all__ = [
    "N_ROUNDS_DEFAULT", "pair_uniform_to_normal", "philox_impl", "rand", "rand4x", "randint", "randint4x", "randn",
    "randn4x", "uint_to_uniform_float",
]
