"""Atomics on NVIDIA as one predicated PTX instruction per element instead of a branch around it.

`@p atom.acq_rel.gpu.global.add.f32 d, [a], v;` with `d` tied to an input holding zero, so a lane whose
mask bit is false (or that does not own the element) does nothing and reads 0, as the language
promises; `@p atom...cas.b32 d, [a], cmp, v;` likewise. Where the old values are not used and the
ordering is relaxed or release (what `red` allows), `@p red.relaxed.gpu.global.add.f32 [a], v;` needs no
result register at all. LLVM's `atomicrmw` comes out of NVPTX as a `@!p bra` around the atom per element
(as the masked loads did, see nvidia_predicated.py).

What has no single instruction returns None and keeps LLVM's lowering: float max/min (NaN-propagating,
a compare-and-swap loop), bf16 and 16-bit exchanges.
"""

from __future__ import annotations

from llvmlite import ir

I1, I16, I32, I64 = ir.IntType(1), ir.IntType(16), ir.IntType(32), ir.IntType(64)
_REGISTER = {16: "h", 32: "r", 64: "l"}
#: rmw kind -> (PTX operation, type class: b(its), u(nsigned), s(igned), f(loat))
_OPERATIONS = {"add": ("add", "u"), "fadd": ("add", "f"), "max": ("max", "s"), "min": ("min", "s"),
               "umax": ("max", "u"), "umin": ("min", "u"), "and": ("and", "b"), "or": ("or", "b"),
               "xor": ("xor", "b"), "xchg": ("exch", "b")}
#: orderings `red` accepts (ptxas: "Illegal modifier '.acq_rel' for instruction 'red'")
_RED_SEMS = ("relaxed", "release")


def _bits(ty: ir.Type) -> int | None:
    if isinstance(ty, ir.IntType):
        return ty.width
    return {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}.get(type(ty))


def _ptx_type(kind: str, ty: ir.Type, capability: int) -> str | None:
    """The type suffix of the instruction for `kind` on values of LLVM type `ty`, or None."""
    if kind not in _OPERATIONS:
        return None
    bits = _bits(ty)
    type_class = _OPERATIONS[kind][1]
    if type_class == "f":
        if isinstance(ty, ir.HalfType):
            return "noftz.f16" if capability >= 70 else None
        return f"f{bits}" if isinstance(ty, ir.FloatType | ir.DoubleType) else None
    if bits not in (32, 64):
        return None
    if type_class != "b" and not isinstance(ty, ir.IntType):
        return None
    return f"{type_class}{bits}"


def _prefix(sem: str, scope: str) -> str:
    """The ordering and scope qualifiers: the language's names (relaxed..acq_rel, cta/gpu/sys) are PTX's."""
    return f".{sem}.{scope}"


def _as_word(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    word = ir.IntType(_bits(value.type))
    return value if value.type == word else builder.bitcast(value, word)


def _call(builder: ir.IRBuilder, text: str, address: ir.Value, mask: ir.Value | None, operands: list[ir.Value],
          result: ir.Type | None) -> ir.Value | None:
    """Inline asm `text` (with `{p}` for the predicate, `{a}` the address and `{v}` the operands' places)
    returning a word of `result`'s size (0 where the predicate is false) or nothing."""
    outputs = [] if result is None else [f"={_REGISTER[_bits(result)]}"]
    base = len(outputs)
    inputs, types, constraints = [address], [I64], ["l"]
    predicate = ""
    if mask is not None:
        predicate = f"@${base + len(inputs)} "
        inputs, types, constraints = inputs + [mask], types + [I1], constraints + ["b"]
    places = []
    for operand in operands:
        word = _as_word(builder, operand)
        places.append(f"${base + len(inputs)}")
        inputs, types, constraints = inputs + [word], types + [word.type], constraints + [_REGISTER[word.type.width]]
    word_type = None if result is None else ir.IntType(_bits(result))
    if result is not None and mask is not None:  # where the predicate is false the result stays 0
        inputs, types, constraints = inputs + [ir.Constant(word_type, 0)], types + [word_type], constraints + ["0"]
    asm = ir.InlineAsm(ir.FunctionType(word_type or ir.VoidType(), types),
                       text.format(p=predicate, a=f"${base}", v=", ".join(places)),
                       ",".join(outputs + constraints), side_effect=True)
    out = builder.call(asm, inputs)
    if result is None:
        return None
    return out if result == word_type else builder.bitcast(out, result)


def atomic_rmw(builder: ir.IRBuilder, capability: int, kind: str, sem: str, scope: str, address: ir.Value,
               value: ir.Value, mask: ir.Value | None, used: bool) -> ir.Value | None:
    """One `@mask atom` (or, for an unused result, `red`) of rmw `kind` at the i64 global `address`;
    the old value (0 where `mask` is false), or None where no single instruction does it."""
    ptx_type = _ptx_type(kind, value.type, capability)
    if ptx_type is None:
        return None
    operation = _OPERATIONS[kind][0]
    if not used and kind != "xchg" and sem in _RED_SEMS:
        _call(builder, f"{{p}}red{_prefix(sem, scope)}.global.{operation}.{ptx_type} [{{a}}], {{v}};", address, mask,
              [value], None)
        return ir.Constant(value.type, 0)
    return _call(builder, f"{{p}}atom{_prefix(sem, scope)}.global.{operation}.{ptx_type} $0, [{{a}}], {{v}};",
                 address, mask, [value], value.type)


def atomic_cas(builder: ir.IRBuilder, capability: int, sem: str, scope: str, address: ir.Value, expected: ir.Value,
               value: ir.Value, mask: ir.Value | None) -> ir.Value | None:
    """One `@mask atom.cas.bN` at the i64 global `address`: the old value (0 where `mask` is false)."""
    bits = _bits(value.type)
    if bits not in (16, 32, 64) or (bits == 16 and capability < 70):
        return None
    return _call(builder, f"{{p}}atom{_prefix(sem, scope)}.global.cas.b{bits} $0, [{{a}}], {{v}};", address, mask,
                 [expected, value], value.type)
