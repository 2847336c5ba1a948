"""Lowering rules of elementwise ops: arith constants, arithmetic, comparisons, casts, math.

Every rule works the same on scalars and on a thread's slot vector. Semantics match the
interpreter's exactly where LLVM leaves behaviour undefined: integer division by zero
gives -1 (remainder: the dividend), INT_MIN / -1 wraps, shifts by the bit width or more
give 0 (or the sign fill), float-to-int conversions saturate and map NaN to 0. Half
types without native arithmetic are computed in f32 and rounded once per op.
"""

from __future__ import annotations

import struct

from llvmlite import ir
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.ir import Operation

from ..ir import math_ext
from . import half
from .constancy import share_equal_slots, splat_operands
from .context import F32, I1, LoweringContext, constant_like, float_kind, intrinsic_suffix, lowering


def _set(ctx: LoweringContext, op: Operation, value: ir.Value) -> None:
    """Record an element-wise result; slots axis info proves equal read one computed slot (constancy.py)."""
    ctx.set(op.results[0], share_equal_slots(ctx, op.results[0], value))


def _operands(ctx: LoweringContext, op: Operation) -> list[ir.Value]:
    return [ctx.get(v) for v in op.operands]


def _half_bits(value: float, kind: str) -> int:
    if kind == "f16":
        return struct.unpack("<H", struct.pack("<e", value))[0]
    bits = struct.unpack("<I", struct.pack("<f", value))[0]  # value is already bf16-exact after rounding
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded & 0xFFFF


# ===------------------------------------------------------------------------===
# Constants
# ===------------------------------------------------------------------------===
@lowering("arith.constant")
def lower_constant(ctx: LoweringContext, op: Operation) -> None:
    attr = op.value
    ty = ctx.llvm_type(op.results[0].type)
    kind = float_kind(op.results[0].type)
    if isinstance(attr, IntegerAttr):
        _set(ctx, op, ir.Constant(ty, attr.value.data))
    elif isinstance(attr, FloatAttr):
        value = attr.value.data
        if ctx.soft_half(kind):
            _set(ctx, op, ir.Constant(ty, _half_bits(value, kind)))
        else:
            _set(ctx, op, ir.Constant(ty, value))
    else:
        raise NotImplementedError(f"arith.constant with value {attr}")


@lowering("ub.poison")
def lower_poison(ctx: LoweringContext, op: Operation) -> None:
    """An undefined scalar: LLVM's `poison` (what a function path returning nothing gives). Given by an
    instruction (`select true, poison, poison`, which LLVM folds), so that rules folding constants
    (splats) treat it as any other value."""
    poison = ir.FormattedConstant(ctx.llvm_type(op.results[0].type), "poison")
    _set(ctx, op, ctx.builder.select(ir.Constant(I1, 1), poison, poison))


# ===------------------------------------------------------------------------===
# Integer arithmetic
# ===------------------------------------------------------------------------===
_INT_SIMPLE = {"arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.andi": "and_",
               "arith.ori": "or_", "arith.xori": "xor"}


@lowering(*_INT_SIMPLE)
def lower_int_simple(ctx: LoweringContext, op: Operation) -> None:
    a, b = _operands(ctx, op)
    _set(ctx, op, getattr(ctx.builder, _INT_SIMPLE[op.name])(a, b))


@lowering("arith.divsi", "arith.remsi", "arith.divui", "arith.remui")
def lower_int_division(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    x, y = _operands(ctx, op)
    zero, one, minus_one = (constant_like(x.type, v) for v in (0, 1, -1))
    is_zero = b.icmp_unsigned("==", y, zero)
    signed = op.name.endswith("si")
    if signed:
        is_minus_one = b.icmp_signed("==", y, minus_one)
        safe = b.select(b.or_(is_zero, is_minus_one), one, y)
        if op.name == "arith.divsi":
            result = b.select(is_minus_one, b.sub(zero, x), b.sdiv(x, safe))
            result = b.select(is_zero, minus_one, result)
        else:
            result = b.select(is_minus_one, zero, b.srem(x, safe))
            result = b.select(is_zero, x, result)
    else:
        safe = b.select(is_zero, one, y)
        if op.name == "arith.divui":
            result = b.select(is_zero, minus_one, b.udiv(x, safe))
        else:
            result = b.select(is_zero, x, b.urem(x, safe))
    _set(ctx, op, result)


@lowering("arith.shli", "arith.shrsi", "arith.shrui")
def lower_shift(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    x, amount = _operands(ctx, op)
    width = (x.type.element if isinstance(x.type, ir.VectorType) else x.type).width
    too_far = b.icmp_unsigned(">=", amount, constant_like(x.type, width))
    safe = b.select(too_far, constant_like(x.type, 0), amount)
    if op.name == "arith.shli":
        result = b.select(too_far, constant_like(x.type, 0), b.shl(x, safe))
    elif op.name == "arith.shrui":
        result = b.select(too_far, constant_like(x.type, 0), b.lshr(x, safe))
    else:
        result = b.select(too_far, b.ashr(x, constant_like(x.type, width - 1)), b.ashr(x, safe))
    _set(ctx, op, result)


@lowering("tt.mulhiui")
def lower_mulhiui(ctx: LoweringContext, op: Operation) -> None:
    """zext both to twice the width, multiply, keep the high half (NVPTX selects mul.hi.u32/u64)."""
    b = ctx.builder
    x, y = _operands(ctx, op)
    width = (x.type.element if isinstance(x.type, ir.VectorType) else x.type).width
    wide = _vector_like(x, ir.IntType(2 * width))
    product = b.mul(b.zext(x, wide), b.zext(y, wide))
    _set(ctx, op, b.trunc(b.lshr(product, constant_like(wide, width)), x.type))


_INT_MINMAX = {"arith.maxsi": ("smax", True), "arith.minsi": ("smin", True), "arith.maxui": ("umax", False),
               "arith.minui": ("umin", False)}


@lowering(*_INT_MINMAX)
def lower_int_minmax(ctx: LoweringContext, op: Operation) -> None:
    name, _ = _INT_MINMAX[op.name]
    a, b = _operands(ctx, op)
    fn = ctx.intrinsic(f"llvm.{name}.{intrinsic_suffix(a.type)}", a.type, [a.type, a.type])
    _set(ctx, op, ctx.builder.call(fn, [a, b]))


# ===------------------------------------------------------------------------===
# Float arithmetic (half types through f32 where the target has no native half)
# ===------------------------------------------------------------------------===
def _float_op(ctx: LoweringContext, op: Operation, compute) -> None:
    kind = float_kind(op.results[0].type)
    values = _operands(ctx, op)
    if ctx.soft_half(kind):
        wide = [half.half_to_f32(ctx.builder, v, kind) for v in values]
        _set(ctx, op, half.f32_to_half(ctx.builder, compute(*wide), kind))
    else:
        _set(ctx, op, compute(*values))


_FLOAT_SIMPLE = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul", "arith.divf": "fdiv",
                 "arith.remf": "frem"}
_CONTRACTIBLE = ("arith.addf", "arith.subf", "arith.mulf")  # may fuse into FMAs where the target allows


@lowering(*_FLOAT_SIMPLE)
def lower_float_simple(ctx: LoweringContext, op: Operation) -> None:
    method = getattr(ctx.builder, _FLOAT_SIMPLE[op.name])
    if op.name == "arith.divf" and not op.attributes.get("tt.rounding"):
        def divide(a: ir.Value, b: ir.Value) -> ir.Value:
            special = ctx.target.emit_divf(ctx.builder, a, b)
            return special if special is not None else method(a, b)

        _float_op(ctx, op, divide)
        return
    # a half op computed in f32 (soft half) rounds right after: its f32 arithmetic stays unfused too
    contractible = op.name in _CONTRACTIBLE and not ctx.soft_half(float_kind(op.results[0].type))
    _float_op(ctx, op, lambda a, b: method(a, b, flags=ctx.contract_flags(a) if contractible else ()))


@lowering("arith.negf")
def lower_negf(ctx: LoweringContext, op: Operation) -> None:
    _float_op(ctx, op, lambda a: ctx.builder.fneg(a))


_MINMAX = {"arith.maximumf": "maximum", "arith.minimumf": "minimum", "arith.maxnumf": "maxnum", "arith.minnumf": "minnum"}


@lowering(*_MINMAX)
def lower_float_minmax(ctx: LoweringContext, op: Operation) -> None:
    """maximum/minimum propagate NaN; maxnum/minnum give the other operand where one is NaN."""
    name = _MINMAX[op.name]

    def compute(a: ir.Value, b: ir.Value) -> ir.Value:
        fn = ctx.intrinsic(f"llvm.{name}.{intrinsic_suffix(a.type)}", a.type, [a.type, a.type])
        return ctx.builder.call(fn, [a, b])

    _float_op(ctx, op, compute)


# ===------------------------------------------------------------------------===
# Comparisons and select
# ===------------------------------------------------------------------------===
_INT_PREDICATES = {"eq": ("==", True), "ne": ("!=", True), "slt": ("<", True), "sle": ("<=", True),
                   "sgt": (">", True), "sge": (">=", True), "ult": ("<", False), "ule": ("<=", False),
                   "ugt": (">", False), "uge": (">=", False)}
_FLOAT_PREDICATES = {"oeq": ("==", True), "une": ("!=", False), "olt": ("<", True), "ole": ("<=", True),
                     "ogt": (">", True), "oge": (">=", True)}


def _set_compare(ctx: LoweringContext, op: Operation, compare) -> None:
    """A compare's result; where a thread's slots share it, from operands broadcast from the first slot
    (constancy.splat_operands), else shared like any element-wise result."""
    operands = _operands(ctx, op)
    splat = splat_operands(ctx, op.results[0], operands)
    if splat is None:
        _set(ctx, op, compare(*operands))
    else:
        ctx.set(op.results[0], compare(*splat))


@lowering("arith.cmpi")
def lower_cmpi(ctx: LoweringContext, op: Operation) -> None:
    symbol, signed = _INT_PREDICATES[op.predicate_name]
    compare = ctx.builder.icmp_signed if signed else ctx.builder.icmp_unsigned
    _set_compare(ctx, op, lambda a, b: compare(symbol, a, b))


@lowering("arith.cmpf")
def lower_cmpf(ctx: LoweringContext, op: Operation) -> None:
    symbol, ordered = _FLOAT_PREDICATES[op.predicate_name]
    kind = float_kind(op.operands[0].type)
    compare = ctx.builder.fcmp_ordered if ordered else ctx.builder.fcmp_unordered

    def compute(a: ir.Value, b: ir.Value) -> ir.Value:
        if ctx.soft_half(kind):
            a, b = half.half_to_f32(ctx.builder, a, kind), half.half_to_f32(ctx.builder, b, kind)
        return compare(symbol, a, b)

    _set_compare(ctx, op, compute)


@lowering("arith.select")
def lower_select(ctx: LoweringContext, op: Operation) -> None:
    cond, a, b = _operands(ctx, op)
    _set(ctx, op, ctx.builder.select(cond, a, b))


# ===------------------------------------------------------------------------===
# Casts
# ===------------------------------------------------------------------------===
def _result_float(ctx: LoweringContext, op: Operation) -> str | None:
    return float_kind(op.results[0].type)


def _source_float(op: Operation) -> str | None:
    return float_kind(op.operands[0].type)


_FLOAT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


@lowering("arith.extf", "arith.truncf")
def lower_float_cast(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    (x,) = _operands(ctx, op)
    src, dst = _source_float(op), _result_float(ctx, op)
    if ctx.soft_half(src):
        x, src = half.half_to_f32(b, x, src), "f32"
    if src == "f32" and dst in ("f16", "bf16"):
        packed = ctx.target.emit_truncf(b, x, dst, ctx.llvm_type(op.results[0].type))
        if packed is not None:
            _set(ctx, op, packed)
            return
    if ctx.soft_half(dst):
        if src == "f64":
            _set(ctx, op, half.f64_to_half(b, x, dst))
            return
        if src != "f32":  # a native half type
            x = b.fpext(x, _vector_like(x, F32))
        _set(ctx, op, half.f32_to_half(b, x, dst))
        return
    ty = ctx.llvm_type(op.results[0].type)
    if src == dst:
        _set(ctx, op, x)
    elif _FLOAT_BITS[dst] > _FLOAT_BITS[src]:
        _set(ctx, op, b.fpext(x, ty))
    else:
        _set(ctx, op, b.fptrunc(x, ty))


@lowering("arith.extsi", "arith.extui", "arith.trunci")
def lower_int_cast(ctx: LoweringContext, op: Operation) -> None:
    (x,) = _operands(ctx, op)
    ty = ctx.llvm_type(op.results[0].type)
    method = {"arith.extsi": ctx.builder.sext, "arith.extui": ctx.builder.zext, "arith.trunci": ctx.builder.trunc}
    _set(ctx, op, method[op.name](x, ty))


@lowering("arith.sitofp", "arith.uitofp")
def lower_int_to_float(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    (x,) = _operands(ctx, op)
    dst = _result_float(ctx, op)
    convert = b.sitofp if op.name == "arith.sitofp" else b.uitofp
    if ctx.soft_half(dst):
        wide = convert(x, _vector_like(x, ir.DoubleType()))  # exact for ints up to 53 bits
        _set(ctx, op, half.f64_to_half(b, wide, dst))
        return
    _set(ctx, op, convert(x, ctx.llvm_type(op.results[0].type)))


@lowering("arith.fptosi", "arith.fptoui")
def lower_float_to_int(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    (x,) = _operands(ctx, op)
    src = _source_float(op)
    if ctx.soft_half(src):
        x = half.half_to_f32(b, x, src)
    ty = ctx.llvm_type(op.results[0].type)
    name = "fptosi" if op.name == "arith.fptosi" else "fptoui"
    if ty.element == I1 if isinstance(ty, ir.VectorType) else ty == I1:
        raise NotImplementedError("float -> i1 casts are comparisons with zero")
    fn = ctx.intrinsic(f"llvm.{name}.sat.{intrinsic_suffix(ty)}.{intrinsic_suffix(x.type)}", ty, [x.type])
    _set(ctx, op, b.call(fn, [x]))


@lowering("arith.bitcast")
def lower_bitcast(ctx: LoweringContext, op: Operation) -> None:
    (x,) = _operands(ctx, op)
    ty = ctx.llvm_type(op.results[0].type)
    _set(ctx, op, x if x.type == ty else ctx.builder.bitcast(x, ty))


def _vector_like(value: ir.Value, element: ir.Type) -> ir.Type:
    t = value.type
    return ir.VectorType(element, t.count) if isinstance(t, ir.VectorType) else element


# ===------------------------------------------------------------------------===
# Math
# ===------------------------------------------------------------------------===
_MATH_OPS = {"math.exp": "exp", "math.exp2": "exp2", "math.log": "log", "math.log2": "log2", "math.sqrt": "sqrt",
             "math.sin": "sin", "math.cos": "cos", "math.erf": "erf", "math.floor": "floor", "math.ceil": "ceil",
             "math.absf": "absf", "math.tanh": "tanh", "math.log1p": "log1p", "math.expm1": "expm1",
             "math.log10": "log10", "math.tan": "tan", "math.sinh": "sinh", "math.cosh": "cosh", "math.asin": "asin",
             "math.acos": "acos", "math.atan": "atan", "math.asinh": "asinh", "math.acosh": "acosh",
             "math.atanh": "atanh", "math.trunc": "trunc", "math.roundeven": "roundeven", "math.round": "round",
             "math.erfc": "erfc", "math.lgamma": "lgamma", "math.digamma": "digamma", "math.erfinv": "erfinv",
             "math.j0": "j0", "math.j1": "j1", "math.y0": "y0", "math.y1": "y1", "math.cyl_bessel_i0": "cyl_bessel_i0",
             "math.cyl_bessel_i1": "cyl_bessel_i1", "math.i0e": "i0e", "math.i1e": "i1e"}
_MATH_OPS |= {f"math.{name}": name for name in math_ext.SPECIAL_UNARY}
_MATH_BINARY_OPS = {"math.powf": "pow", "math.atan2": "atan2", "math.copysign": "copysign", "math.hypot": "hypot",
                    "math.nextafter": "nextafter", **{f"math.{name}": name for name in math_ext.SPECIAL_BINARY}}


def call_math(ctx: LoweringContext, name: str, x: ir.Value) -> ir.Value:
    """Apply math function `name` elementwise through the target's table (scalarized for library calls)."""
    b = ctx.builder
    special = ctx.target.emit_math(b, name, x)
    if special is not None:
        return special
    element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
    type_name = "f32" if element == F32 else "f64"
    entry = ctx.target.math(name, type_name)
    if entry.is_intrinsic:
        fn = ctx.intrinsic(f"{entry.symbol}.{intrinsic_suffix(x.type)}", x.type, [x.type])
        return b.call(fn, [x])
    fn = ctx.intrinsic(entry.symbol, element, [element])
    return ctx.map_elements(x, lambda value: b.call(fn, [value]))


@lowering(*_MATH_OPS)
def lower_math(ctx: LoweringContext, op: Operation) -> None:
    if op.name in _SINCOS_PARTNER:
        _float_op(ctx, op, lambda x: _sin_or_cos(ctx, op, x))
        return
    _float_op(ctx, op, lambda x: call_math(ctx, _MATH_OPS[op.name], x))


_SINCOS_PARTNER = {"math.sin": "math.cos", "math.cos": "math.sin"}
_SINCOS_SLOTS = (20, 21)  # stack_array slots of sincos's two results (stored and read back at once)


def _sincos_partner(op: Operation) -> Operation | None:
    """The cos of this sin's operand (or the sin of this cos's) in the same block, if there is one."""
    wanted = _SINCOS_PARTNER[op.name]
    for use in op.operands[0].uses:
        if use.operation.name == wanted and use.operation.parent_block() is op.parent_block():
            return use.operation
    return None


def _sin_or_cos(ctx: LoweringContext, op: Operation, x: ir.Value) -> ir.Value:
    """sin or cos of `x`; where the target has a sincos function and the partner op exists, one call
    computes both and the partner's result waits in `ctx.paired_results` until it is lowered."""
    ready = ctx.paired_results.pop(op, None)
    if ready is not None:
        return ready
    element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
    symbol = ctx.target.sincos_functions.get("f32" if element == F32 else "f64")
    partner = _sincos_partner(op) if symbol is not None else None
    if partner is None:
        return call_math(ctx, _MATH_OPS[op.name], x)
    b = ctx.builder
    fn = ctx.intrinsic(symbol, ir.VoidType(), [element, element.as_pointer(), element.as_pointer()])
    zero = ir.Constant(ir.IntType(32), 0)
    sin_slot, cos_slot = (b.gep(ctx.stack_array(element, 1, slot), [zero, zero], inbounds=True)
                          for slot in _SINCOS_SLOTS)

    def both(value: ir.Value) -> tuple[ir.Value, ir.Value]:
        b.call(fn, [value, sin_slot, cos_slot])
        return b.load(sin_slot), b.load(cos_slot)

    if isinstance(x.type, ir.VectorType):
        sines = cosines = x
        for i in range(x.type.count):
            index = ir.Constant(ir.IntType(32), i)
            sine, cosine = both(b.extract_element(x, index))
            sines, cosines = b.insert_element(sines, sine, index), b.insert_element(cosines, cosine, index)
    else:
        sines, cosines = both(x)
    mine, theirs = (sines, cosines) if op.name == "math.sin" else (cosines, sines)
    ctx.paired_results[partner] = theirs
    return mine


def call_math_binary(ctx: LoweringContext, name: str, x: ir.Value, y: ir.Value) -> ir.Value:
    """Apply math function `name` of two floats elementwise (scalarized for library calls)."""
    b = ctx.builder
    special = ctx.target.emit_math_binary(b, name, x, y)
    if special is not None:
        return special
    element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
    entry = ctx.target.math(name, "f32" if element == F32 else "f64")
    if entry.is_intrinsic:
        fn = ctx.intrinsic(f"{entry.symbol}.{intrinsic_suffix(x.type)}", x.type, [x.type, x.type])
        return b.call(fn, [x, y])
    fn = ctx.intrinsic(entry.symbol, element, [element, element])
    if not isinstance(x.type, ir.VectorType):
        return b.call(fn, [x, y])
    out = ir.Constant(x.type, None)
    for i in range(x.type.count):
        index = ir.Constant(ir.IntType(32), i)
        out = b.insert_element(out, b.call(fn, [b.extract_element(x, index), b.extract_element(y, index)]), index)
    return out


@lowering(*_MATH_BINARY_OPS)
def lower_math_binary(ctx: LoweringContext, op: Operation) -> None:
    _float_op(ctx, op, lambda x, y: call_math_binary(ctx, _MATH_BINARY_OPS[op.name], x, y))


@lowering("math.rsqrt")
def lower_rsqrt(ctx: LoweringContext, op: Operation) -> None:
    def rsqrt(x: ir.Value) -> ir.Value:
        special = ctx.target.emit_rsqrt(ctx.builder, x)
        return special if special is not None else ctx.builder.fdiv(constant_like(x.type, 1.0), call_math(ctx, "sqrt", x))

    _float_op(ctx, op, rsqrt)


@lowering("math.absi")
def lower_absi(ctx: LoweringContext, op: Operation) -> None:
    (x,) = _operands(ctx, op)
    fn = ctx.intrinsic(f"llvm.abs.{intrinsic_suffix(x.type)}", x.type, [x.type, I1])
    _set(ctx, op, ctx.builder.call(fn, [x, ir.Constant(I1, 0)]))


@lowering("math.fma")
def lower_fma(ctx: LoweringContext, op: Operation) -> None:
    def compute(a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        fn = ctx.intrinsic(f"llvm.fma.{intrinsic_suffix(a.type)}", a.type, [a.type, a.type, a.type])
        return ctx.builder.call(fn, [a, b, c])

    _float_op(ctx, op, compute)
