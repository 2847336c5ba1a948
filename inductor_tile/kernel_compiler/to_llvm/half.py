"""fp16 and bf16 conversions in integer arithmetic, for targets without native half types.

Values are i16 bit patterns (scalars or vectors). Conversions round to nearest even,
keep NaN/inf, and handle fp16 subnormals; f64 goes to a half type through f32 with
round-to-odd, so the result is rounded once. No library call is emitted, so the code
runs in any process (LLVM would otherwise call compiler-rt's __truncsfbf2 and friends).
"""

from __future__ import annotations

from llvmlite import ir

from .context import F32, F64, I16, I32, constant_like


def _like(value: ir.Value, element: ir.Type) -> ir.Type:
    t = value.type
    return ir.VectorType(element, t.count) if isinstance(t, ir.VectorType) else element


def _c(value: ir.Value, element: ir.Type, constant: int) -> ir.Constant:
    return constant_like(_like(value, element), constant)


def half_to_f32(b: ir.IRBuilder, bits: ir.Value, kind: str) -> ir.Value:
    """i16 bits of an fp16 ('f16') or bf16 ('bf16') value -> f32, exactly."""
    wide = b.zext(bits, _like(bits, I32))
    if kind == "bf16":
        return b.bitcast(b.shl(wide, _c(wide, I32, 16)), _like(bits, F32))
    sign = b.shl(b.and_(wide, _c(wide, I32, 0x8000)), _c(wide, I32, 16))
    exponent = b.and_(b.lshr(wide, _c(wide, I32, 10)), _c(wide, I32, 0x1F))
    mantissa = b.and_(wide, _c(wide, I32, 0x3FF))
    normal = b.or_(b.shl(b.add(exponent, _c(wide, I32, 112)), _c(wide, I32, 23)), b.shl(mantissa, _c(wide, I32, 13)))
    special = b.or_(_c(wide, I32, 0x7F800000), b.shl(mantissa, _c(wide, I32, 13)))
    # subnormal (exponent 0): mantissa * 2^-24 is exact in f32
    sub = b.fmul(b.uitofp(mantissa, _like(bits, F32)), constant_like(_like(bits, F32), 2.0**-24))
    sub_bits = b.bitcast(sub, _like(bits, I32))
    magnitude = b.select(b.icmp_unsigned("==", exponent, _c(wide, I32, 0x1F)), special, normal)
    magnitude = b.select(b.icmp_unsigned("==", exponent, _c(wide, I32, 0)), sub_bits, magnitude)
    return b.bitcast(b.or_(sign, magnitude), _like(bits, F32))


def f32_to_half(b: ir.IRBuilder, value: ir.Value, kind: str) -> ir.Value:
    """f32 -> i16 bits of fp16/bf16, round to nearest even."""
    bits = b.bitcast(value, _like(value, I32))
    if kind == "bf16":
        is_nan = b.fcmp_unordered("uno", value, value)
        lsb = b.and_(b.lshr(bits, _c(bits, I32, 16)), _c(bits, I32, 1))
        rounded = b.lshr(b.add(bits, b.add(_c(bits, I32, 0x7FFF), lsb)), _c(bits, I32, 16))
        quiet_nan = b.or_(b.lshr(bits, _c(bits, I32, 16)), _c(bits, I32, 0x40))
        return b.trunc(b.select(is_nan, quiet_nan, rounded), _like(value, I16))
    sign = b.and_(b.lshr(bits, _c(bits, I32, 16)), _c(bits, I32, 0x8000))
    exponent = b.and_(b.lshr(bits, _c(bits, I32, 23)), _c(bits, I32, 0xFF))
    mantissa = b.and_(bits, _c(bits, I32, 0x7FFFFF))
    # normal range: rebias, keep 10 mantissa bits, round to nearest even (a carry may reach inf, correctly)
    e = b.sub(exponent, _c(bits, I32, 112))
    base = b.or_(b.shl(e, _c(bits, I32, 10)), b.lshr(mantissa, _c(bits, I32, 13)))
    rest = b.and_(mantissa, _c(bits, I32, 0x1FFF))
    round_up = b.or_(b.icmp_unsigned(">", rest, _c(bits, I32, 0x1000)),
                     b.and_(b.icmp_unsigned("==", rest, _c(bits, I32, 0x1000)),
                            b.icmp_unsigned("!=", b.and_(base, _c(bits, I32, 1)), _c(bits, I32, 0))))
    normal = b.add(base, b.zext(round_up, _like(value, I32)))
    # subnormal results (e <= 0): shift the full mantissa right by 14 - e with the same rounding
    full = b.or_(mantissa, _c(bits, I32, 0x800000))
    shift = b.sub(_c(bits, I32, 126), exponent)  # = 14 - e, in [14, 24] for the cases kept below
    shift_c = b.select(b.icmp_unsigned(">", shift, _c(bits, I32, 31)), _c(bits, I32, 31), shift)
    sub_base = b.lshr(full, shift_c)
    half_bit = b.shl(_c(bits, I32, 1), b.sub(shift_c, _c(bits, I32, 1)))
    sub_rest = b.and_(full, b.sub(b.shl(half_bit, _c(bits, I32, 1)), _c(bits, I32, 1)))
    sub_up = b.or_(b.icmp_unsigned(">", sub_rest, half_bit),
                   b.and_(b.icmp_unsigned("==", sub_rest, half_bit),
                          b.icmp_unsigned("!=", b.and_(sub_base, _c(bits, I32, 1)), _c(bits, I32, 0))))
    subnormal = b.add(sub_base, b.zext(sub_up, _like(value, I32)))
    subnormal = b.select(b.icmp_unsigned(">", shift, _c(bits, I32, 24)), _c(bits, I32, 0), subnormal)
    is_special = b.icmp_unsigned("==", exponent, _c(bits, I32, 0xFF))
    special = b.select(b.icmp_unsigned("!=", mantissa, _c(bits, I32, 0)),
                       b.or_(_c(bits, I32, 0x7E00), b.lshr(mantissa, _c(bits, I32, 13))), _c(bits, I32, 0x7C00))
    overflow = b.icmp_signed(">=", e, _c(bits, I32, 31))
    result = b.select(b.icmp_signed("<=", e, _c(bits, I32, 0)), subnormal, normal)
    result = b.select(overflow, _c(bits, I32, 0x7C00), result)
    result = b.select(is_special, special, result)
    return b.trunc(b.or_(sign, result), _like(value, I16))


def f64_to_f32_round_to_odd(b: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """f64 -> f32 rounding toward zero, then setting the last bit if inexact (for a second rounding)."""
    nearest = b.fptrunc(value, _like(value, F32))
    back = b.fpext(nearest, _like(value, F64))
    bits = b.bitcast(nearest, _like(value, I32))
    too_far = b.fcmp_ordered(">", b.call(_fabs(b, value.type), [back]), b.call(_fabs(b, value.type), [value]))
    toward_zero = b.select(too_far, b.sub(bits, _c(bits, I32, 1)), bits)
    inexact = b.fcmp_ordered("!=", back, value)
    odd = b.select(inexact, b.or_(toward_zero, _c(bits, I32, 1)), toward_zero)
    # infinities and NaN keep the nearest result
    finite = b.fcmp_ordered("<", b.call(_fabs(b, value.type), [value]), constant_like(value.type, float("inf")))
    return b.bitcast(b.select(finite, odd, bits), _like(value, F32))


def _fabs(b: ir.IRBuilder, ty: ir.Type) -> ir.Function:
    from .context import intrinsic_suffix

    name = f"llvm.fabs.{intrinsic_suffix(ty)}"
    module = b.module
    existing = module.globals.get(name)
    return existing if existing is not None else ir.Function(module, ir.FunctionType(ty, [ty]), name)


def f64_to_half(b: ir.IRBuilder, value: ir.Value, kind: str) -> ir.Value:
    return f32_to_half(b, f64_to_f32_round_to_odd(b, value), kind)

