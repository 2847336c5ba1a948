"""Atomics on NVIDIA as one predicated PTX instruction per element instead of a branch around it.

`@p atom.acq_rel.gpu.global.add.f32 d, [a], v;` with `d` tied to an input holding zero, so a lane whose
mask bit is false (or that does not own the element) does nothing and reads 0, as the language
promises; `@p atom...cas.b32 d, [a], cmp, v;` likewise. Where the old values are not used and the
ordering is relaxed or release (what `red` allows), `@p red.relaxed.gpu.global.add.f32 [a], v;` needs no
result register at all. Float adds of consecutive elements go several per instruction: pairs of halves
as `add.noftz.f16x2`, and on sm_90 up to four floats as `.v4.f32.add`. LLVM's `atomicrmw` comes out of NVPTX as a `@!p bra` around the atom per element
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


def _words(builder: ir.IRBuilder, value: ir.Value) -> list[ir.Value]:
    """`value` as the integer words its registers hold: one per scalar or per 32-bit vector element, one
    32-bit word for a pair of halves."""
    if isinstance(value.type, ir.VectorType):
        if isinstance(value.type.element, ir.HalfType):
            return [builder.bitcast(value, I32)]
        words = builder.bitcast(value, ir.VectorType(I32, value.type.count))
        return [builder.extract_element(words, ir.Constant(I32, i)) for i in range(value.type.count)]
    word = ir.IntType(_bits(value.type))
    return [value if value.type == word else builder.bitcast(value, word)]


def _word_types(ty: ir.Type) -> list[ir.IntType]:
    """The types of the words `_words` makes of a value of type `ty`."""
    if isinstance(ty, ir.VectorType):
        return [I32] if isinstance(ty.element, ir.HalfType) else [I32] * ty.count
    return [ir.IntType(_bits(ty))]


def _from_words(builder: ir.IRBuilder, words: list[ir.Value], ty: ir.Type) -> ir.Value:
    if len(words) == 1:
        return words[0] if words[0].type == ty else builder.bitcast(words[0], ty)
    vector: ir.Value = ir.Constant(ir.VectorType(words[0].type, len(words)), None)
    for i, word in enumerate(words):
        vector = builder.insert_element(vector, word, ir.Constant(I32, i))
    return builder.bitcast(vector, ty)


def _registers(places: list[str]) -> str:
    return places[0] if len(places) == 1 else "{" + ", ".join(places) + "}"


def _call(builder: ir.IRBuilder, text: str, address: ir.Value, mask: ir.Value | None, operands: list[ir.Value],
          result: ir.Type | None) -> ir.Value | None:
    """Inline asm `text` (with `{p}` for the predicate, `{d}` the result's registers, `{a}` the address and
    `{v}` the operands' registers) returning a value of type `result` (0 where the predicate is false) or
    nothing."""
    word_types = [] if result is None else _word_types(result)
    outputs = [f"={_REGISTER[w.width]}" for w in word_types]
    base = len(outputs)
    inputs, constraints = [address], ["l"]
    predicate = ""
    if mask is not None:
        predicate = f"@${base + len(inputs)} "
        inputs, constraints = inputs + [mask], constraints + ["b"]
    groups = []
    for operand in operands:
        words = _words(builder, operand)
        groups.append(_registers([f"${base + len(inputs) + i}" for i in range(len(words))]))
        inputs += words
        constraints += [_REGISTER[w.type.width] for w in words]
    if result is not None and mask is not None:  # where the predicate is false the result stays 0
        for i, word_type in enumerate(word_types):
            inputs.append(ir.Constant(word_type, 0))
            constraints.append(str(i))
    returned = (ir.VoidType() if not word_types else word_types[0] if len(word_types) == 1
                else ir.LiteralStructType(word_types))
    asm = ir.InlineAsm(ir.FunctionType(returned, [v.type for v in inputs]),
                       text.format(p=predicate, d=_registers([f"${i}" for i in range(base)]), a=f"${base}",
                                   v=", ".join(groups)),
                       ",".join(outputs + constraints), side_effect=True)
    out = builder.call(asm, inputs)
    if result is None:
        return None
    words = [out] if len(word_types) == 1 else [builder.extract_value(out, i) for i in range(len(word_types))]
    return _from_words(builder, words, result)


def vector_width(capability: int, kind: str, element: ir.Type) -> int:
    """The most consecutive elements one instruction updates: a pair of halves (`add.noftz.f16x2`), four
    floats on sm_90 (`.v4.f32.add`); 1 for the others."""
    if kind != "fadd":
        return 1
    if isinstance(element, ir.HalfType):
        return 2
    return 4 if isinstance(element, ir.FloatType) and capability >= 90 else 1


def _vector_type(kind: str, ty: ir.VectorType, capability: int) -> str | None:
    """The instruction's type and operation for a vector `ty` of consecutive elements, or None."""
    if kind != "fadd" or ty.count < 2 or ty.count > vector_width(capability, kind, ty.element):
        return None
    if isinstance(ty.element, ir.HalfType):
        return "add.noftz.f16x2"
    return f"v{ty.count}.f32.add"


def atomic_rmw(builder: ir.IRBuilder, capability: int, kind: str, sem: str, scope: str, address: ir.Value,
               value: ir.Value, mask: ir.Value | None, used: bool) -> ir.Value | None:
    """One `@mask atom` (or, for an unused result, `red`) of rmw `kind` at the i64 global `address`;
    the old value (0 where `mask` is false), or None where no single instruction does it. A vector `value`
    (at most `vector_width` consecutive elements, aligned to its size) is updated by one instruction."""
    if isinstance(value.type, ir.VectorType):
        operation = _vector_type(kind, value.type, capability)
    else:
        ptx_type = _ptx_type(kind, value.type, capability)
        operation = None if ptx_type is None else f"{_OPERATIONS[kind][0]}.{ptx_type}"
    if operation is None:
        return None
    if not used and kind != "xchg" and sem in _RED_SEMS:
        _call(builder, f"{{p}}red{_prefix(sem, scope)}.global.{operation} [{{a}}], {{v}};", address, mask, [value],
              None)
        return ir.Constant(value.type, None)
    return _call(builder, f"{{p}}atom{_prefix(sem, scope)}.global.{operation} {{d}}, [{{a}}], {{v}};", address,
                 mask, [value], value.type)


def atomic_cas(builder: ir.IRBuilder, capability: int, sem: str, scope: str, address: ir.Value, expected: ir.Value,
               value: ir.Value, mask: ir.Value | None) -> ir.Value | None:
    """One `@mask atom.cas.bN` at the i64 global `address`: the old value (0 where `mask` is false)."""
    bits = _bits(value.type)
    if bits not in (16, 32, 64) or (bits == 16 and capability < 70):
        return None
    return _call(builder, f"{{p}}atom{_prefix(sem, scope)}.global.cas.b{bits} {{d}}, [{{a}}], {{v}};", address,
                 mask, [expected, value], value.type)
