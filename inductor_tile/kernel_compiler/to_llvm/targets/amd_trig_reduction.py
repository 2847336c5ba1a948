"""Reduction of huge float64 arguments of sin/cos/tan by pi/2 with the bits of 2/pi (Payne and Hanek's method),
for amd_math64.py: below 2^28 three-part Cody-Waite with FMAs is exact enough; above it, the product of
x's 53-bit integer mantissa with a 192-bit window of 2/pi gives x 2/pi modulo 4 to 128 fraction bits.

|x| = M 2^e with M a 53-bit integer. The bits b_1 b_2 ... of 2/pi (after the binary point) contribute
M b_i 2^(e - i); those with e - i >= 2 are multiples of 4 and drop out, so the window starts at bit
p = max(0, e - 2) (0-based). M * window (245 bits, four 64-bit limbs) holds the quadrant in its bits [S, S + 2)
and the fraction below S, with S = 192 + p - e. The fraction's top 128 bits, read as a signed i128, are the reduced
argument in turns of pi/2 in [-1/2, 1/2) (a fraction of 1/2 or more carries one into the quadrant); times pi/2
(a double-double) it is r, accurate to ~2^-120 absolutely: x is never closer than ~2^-61 to a multiple of pi/2.
The table of 2/pi is computed here with integers (Machin's formula for pi), never typed in.
"""

from __future__ import annotations

from llvmlite import ir

from .amd_tables import constant_table, load_entry
from .scalar_code import F64, Condition, ScalarFunction, Value

I32, I64, I128 = ir.IntType(32), ir.IntType(64), ir.IntType(128)
#: below this |x| the Cody-Waite reduction is used
LARGE = 2.0 ** 28
_WORDS = 20  # 1280 bits of 2/pi: windows start up to bit 969 (x < 2^1024) and span 256 bits


def _arctan_inverse(n: int, scale: int) -> int:
    """atan(1/n) * 2^scale, truncated (the series' terms alternate and shrink by n^2)."""
    total, power, k = 0, (1 << scale) // n, 0
    while power:
        term = power // (2 * k + 1)
        total += -term if k % 2 else term
        power //= n * n
        k += 1
    return total


def _two_over_pi_words() -> list[int]:
    bits = 64 * _WORDS
    guard = bits + 64
    pi = 16 * _arctan_inverse(5, guard) - 4 * _arctan_inverse(239, guard)  # pi 2^guard
    fraction = (1 << (2 * guard + 1)) // pi >> (guard - bits)  # 2/pi 2^bits (2/pi < 1: bits fraction bits)
    return [(fraction >> (bits - 64 * (k + 1))) & ((1 << 64) - 1) for k in range(_WORDS)]


_TABLE = _two_over_pi_words()


def reduce_large(f: ScalarFunction, x: Value, pio2_hi: float, pio2_lo: float) -> tuple[Value, ir.Value]:
    """(r, q mod 4) with |x| = q pi/2 + r, |r| <= pi/4, for finite |x| >= 2^28 (other x give garbage)."""
    b = f.b
    bits = b.and_(b.bitcast(x.value, I64), ir.Constant(I64, (1 << 63) - 1))
    exponent = b.sub(b.trunc(b.lshr(bits, ir.Constant(I64, 52)), I32), ir.Constant(I32, 1075))
    mantissa = b.or_(b.and_(bits, ir.Constant(I64, (1 << 52) - 1)), ir.Constant(I64, 1 << 52))
    start = b.sub(exponent, ir.Constant(I32, 2))
    start = b.select(b.icmp_signed("<", start, ir.Constant(I32, 0)), ir.Constant(I32, 0), start)
    start = b.select(b.icmp_signed(">", start, ir.Constant(I32, 64 * (_WORDS - 4))),
                     ir.Constant(I32, 64 * (_WORDS - 4)), start)  # (only for inf/NaN)
    word, shift = b.lshr(start, ir.Constant(I32, 6)), b.zext(b.and_(start, ir.Constant(I32, 63)), I64)
    table = constant_table(f.module, "__tile_two_over_pi", I64, _TABLE)
    words = [load_entry(b, table, b.add(word, ir.Constant(I32, k))) for k in range(4)]
    funnel = f.module.globals.get("llvm.fshl.i64") or ir.Function(
        f.module, ir.FunctionType(I64, [I64, I64, I64]), "llvm.fshl.i64")
    window = [b.call(funnel, [words[k], words[k + 1], shift]) for k in range(3)]  # most significant first
    limbs = _times(b, mantissa, window[::-1])  # M * window, 64-bit limbs from the least significant
    # the fraction is bits [T, T + 128) of the product and the quadrant bits [T + 128, T + 130), T in [62, 88]
    low_bit = b.sub(b.add(start, ir.Constant(I32, 64)), exponent)
    upper = b.icmp_unsigned(">=", low_bit, ir.Constant(I32, 64))
    a, c0, c1, d = (b.select(upper, limbs[i + 1] if i < 3 else ir.Constant(I64, 0), limbs[i]) for i in range(4))
    amount = b.zext(b.and_(low_bit, ir.Constant(I32, 63)), I64)
    right = f.module.globals.get("llvm.fshr.i64") or ir.Function(
        f.module, ir.FunctionType(I64, [I64, I64, I64]), "llvm.fshr.i64")
    fraction_low = b.call(right, [c0, a, amount])
    fraction_high = b.call(right, [c1, c0, amount])
    quadrant = b.trunc(b.call(right, [d, c1, amount]), I32)
    carry = b.trunc(b.lshr(fraction_high, ir.Constant(I64, 63)), I32)  # fraction >= 1/2: one more quadrant
    quadrant = b.and_(b.add(quadrant, carry), ir.Constant(I32, 3))
    # the signed fraction (the carry subtracted) in turns: top 53 bits, next 11, low 64 (exact conversions
    # but the last, which is below 2^-117)
    top = b.ashr(fraction_high, ir.Constant(I64, 11))
    middle = b.and_(fraction_high, ir.Constant(I64, 2047))
    low = fraction_low
    turns_hi = Value(f, b.sitofp(top, F64)) * 2.0 ** -53
    turns_lo = (Value(f, b.uitofp(middle, F64)) + Value(f, b.uitofp(low, F64)) * 2.0 ** -64) * 2.0 ** -64
    r = f.call("fma", turns_hi, pio2_hi, f.call("fma", turns_hi, pio2_lo, turns_lo * pio2_hi))
    negative = Condition(f, b.icmp_signed("<", b.bitcast(x.value, I64), ir.Constant(I64, 0)))
    r = f.select(negative, -r, r)
    quadrant = b.select(negative.value, b.and_(b.sub(ir.Constant(I32, 4), quadrant), ir.Constant(I32, 3)), quadrant)
    return r, quadrant


def _times(b: ir.IRBuilder, m: ir.Value, words: list[ir.Value]) -> list[ir.Value]:
    """The 64-bit limbs (least significant first) of m * sum words[k] 2^(64 k), for m < 2^53 and three words
    (i128 partial products and carries: no wide shifts, which LLVM would lower through scratch memory)."""
    m128 = b.zext(m, I128)
    limbs, carry = [], ir.Constant(I128, 0)
    for word in words:
        partial = b.add(b.mul(m128, b.zext(word, I128)), carry)
        limbs.append(b.trunc(partial, I64))
        carry = b.lshr(partial, ir.Constant(I128, 64))
    return limbs + [b.trunc(carry, I64)]


def branch(f: ScalarFunction, condition: Condition, then, otherwise: tuple[Value, ir.Value]) -> tuple[Value, ir.Value]:
    """(r, q) = then() if condition else otherwise, computing then() only where needed (a branch)."""
    b = f.b
    before = b.block
    inside, after = f.fn.append_basic_block("large"), f.fn.append_basic_block("reduced")
    b.cbranch(condition.value, inside, after)
    b.position_at_end(inside)
    r_large, q_large = then()
    inside_end = b.block
    b.branch(after)
    b.position_at_end(after)
    r = b.phi(F64)
    r.add_incoming(otherwise[0].value, before)
    r.add_incoming(r_large.value, inside_end)
    q = b.phi(I32)
    q.add_incoming(otherwise[1], before)
    q.add_incoming(q_large, inside_end)
    return Value(f, r), q
