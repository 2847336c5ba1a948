"""Masked global loads and stores on NVIDIA as one predicated PTX instruction each.

A masked load is `@p ld.global[.v2|.v4].bN {d...}, [a]` whose destination registers are tied to
inputs holding `other`: where `p` is false the instruction does nothing and the registers keep
`other`. A masked store is `@p st.global[.vN].bN [a], {v...}`. LLVM has no predicated load that
NVPTX keeps as one: a branch around the access (what `guarded` builds) and `llvm.masked.load` /
`llvm.masked.gather` (LLVM 22, measured) all come out as `@p bra` over the `ld.global`, i.e. a
setp, a branch and a label per element instead of one instruction. So these are inline asm.

An access moves `total` bytes (one element or a contiguous run, a power of two up to 16) as 1, 2
or 4 words: one 8- or 16-bit word below 4 bytes, else words of max(32, element bits) bits (b64 for
float64/int64 elements, b32 otherwise), in the registers NVPTX's inline asm knows for each width.
The load asm has no side effects declared: with no memory attributes LLVM still treats the call as
reading and writing memory, so it is neither moved across stores nor merged with another load.

Cache hints (`tl.load(..., cache_modifier=".cg", eviction_policy="evict_first")`) make an access
inline asm too, masked or not: `ld.global.cg`, `st.global.cs`, `ld.global.L1::evict_first.L2::cache_hint`
with an L2 policy register made by `createpolicy.fractional` (sm_80+), and
`ld.volatile.global`. ptxas rejects a cache operator together with an L1 eviction priority and
`.volatile` together with either, so there the cache operator (resp. `.volatile`) wins.
"""

from __future__ import annotations

from llvmlite import ir

from ...ir.tt_memory import NO_HINTS, AccessHints
from ..context import byte_size

I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
#: NVPTX inline-asm constraint of a register holding a word of this many bits
_REGISTER = {8: "c", 16: "h", 32: "r", 64: "l"}


def _words(ty: ir.Type) -> tuple[int, int]:
    """(bits per word, word count) of an access of a value of type `ty`."""
    element = ty.element if isinstance(ty, ir.VectorType) else ty
    count = ty.count if isinstance(ty, ir.VectorType) else 1
    total_bits = 8 * byte_size(element) * count
    if total_bits < 32:
        return total_bits, 1
    bits = max(32, 8 * byte_size(element))
    if total_bits > 128 or total_bits % bits:
        raise ValueError(f"no single predicated access of {ty} ({total_bits} bits)")
    return bits, total_bits // bits


def _as_words(builder: ir.IRBuilder, value: ir.Value, bits: int, count: int) -> list[ir.Value]:
    word = ir.IntType(bits)
    if count == 1:
        return [builder.bitcast(value, word)]
    as_vector = builder.bitcast(value, ir.VectorType(word, count))
    return [builder.extract_element(as_vector, ir.Constant(I32, i)) for i in range(count)]


def _from_words(builder: ir.IRBuilder, words: list[ir.Value], ty: ir.Type) -> ir.Value:
    if len(words) == 1:
        return builder.bitcast(words[0], ty)
    vector: ir.Value = ir.Constant(ir.VectorType(words[0].type, len(words)), None)
    for i, word in enumerate(words):
        vector = builder.insert_element(vector, word, ir.Constant(I32, i))
    return builder.bitcast(vector, ty)


def _shape(count: int) -> str:
    return f".v{count}" if count > 1 else ""


def _registers(operands: range) -> str:
    """`$0` for one operand, `{$0, $1}` for a vector's."""
    names = [f"${i}" for i in operands]
    return names[0] if len(names) == 1 else "{" + ", ".join(names) + "}"


def access_qualifiers(hints: AccessHints, policy: ir.Value | None) -> tuple[str, str]:
    """(text after `ld`/`st` before `.global`, text between `.global` and the vector shape) for `hints`,
    with `.L2::cache_hint` where an L2 `policy` register is given."""
    if hints.volatile:
        return ".volatile", ""
    cache = f".{hints.cache}" if hints.cache else ""
    level1 = f".L1::{hints.evict}" if hints.evict and not hints.cache else ""
    return "", cache + level1 + (".L2::cache_hint" if policy is not None else "")


def l2_policy(builder: ir.IRBuilder, evict: str) -> ir.Value:
    """The i64 L2 cache policy that gives a whole access the eviction priority `evict`
    (`createpolicy.fractional.L2::evict_first.b64 p, 1.0`). The asm reads no memory (`readnone`), so
    LLVM merges the copies made for each access and hoists them out of loops."""
    asm = ir.InlineAsm(ir.FunctionType(I64, []), f"createpolicy.fractional.L2::{evict}.b64 $0, 1.0;", "=l")
    return builder.call(asm, [], attrs=("readnone", "nounwind"))


def _predicate(mask_operand: int | None) -> str:
    return f"@${mask_operand} " if mask_operand is not None else ""


def predicated_load(builder: ir.IRBuilder, address: ir.Value, mask: ir.Value | None, other: ir.Value,
                    hints: AccessHints = NO_HINTS, policy: ir.Value | None = None) -> ir.Value:
    """The value of `other`'s type at the i64 global `address` where the i1 `mask` holds (always without
    one), else `other`, as one `@mask ld.global` with the qualifiers of `hints` (and the L2 `policy`);
    the address must be aligned to the value's size."""
    bits, count = _words(other.type)
    word = ir.IntType(bits)
    register = _REGISTER[bits]
    before, after = access_qualifiers(hints, policy)
    inputs, types, constraints = [address], [I64], [f"={register}"] * count + ["l"]
    mask_operand = None
    if mask is not None:
        mask_operand = count + len(inputs)
        inputs, types, constraints = inputs + [mask], types + [I1], constraints + ["b"]
    policy_text = ""
    if policy is not None:
        policy_text = f", ${count + len(inputs)}"
        inputs, types, constraints = inputs + [policy], types + [I64], constraints + ["l"]
    if mask is not None:  # where the mask is false the destination registers keep `other`
        inputs += _as_words(builder, other, bits, count)
        types += [word] * count
        constraints += [str(i) for i in range(count)]
    text = (f"{_predicate(mask_operand)}ld{before}.global{after}{_shape(count)}.b{bits} "
            f"{_registers(range(count))}, [${count}]{policy_text};")
    result = word if count == 1 else ir.LiteralStructType([word] * count)
    # side effects: LLVM takes an inline asm without them for one that touches no memory, and would merge
    # two loads of one address across a store to it, or hoist a load out of a loop that stores there
    asm = ir.InlineAsm(ir.FunctionType(result, types), text, ",".join(constraints), side_effect=True)
    loaded = builder.call(asm, inputs)
    words = [loaded] if count == 1 else [builder.extract_value(loaded, i) for i in range(count)]
    return _from_words(builder, words, other.type)


def predicated_store(builder: ir.IRBuilder, address: ir.Value, value: ir.Value, mask: ir.Value | None,
                     hints: AccessHints = NO_HINTS, policy: ir.Value | None = None) -> None:
    """`value` to the i64 global `address` where the i1 `mask` holds (always without one), as one
    `@mask st.global` with the qualifiers of `hints` (and the L2 `policy`)."""
    bits, count = _words(value.type)
    _, after = access_qualifiers(hints, policy)
    inputs, types, constraints = [address], [I64], ["l"]
    mask_operand = None
    if mask is not None:
        mask_operand = len(inputs)
        inputs, types, constraints = inputs + [mask], types + [I1], constraints + ["b"]
    first_value = len(inputs)
    inputs += _as_words(builder, value, bits, count)
    types += [ir.IntType(bits)] * count
    constraints += [_REGISTER[bits]] * count
    policy_text = ""
    if policy is not None:
        policy_text = f", ${len(inputs)}"
        inputs, types, constraints = inputs + [policy], types + [I64], constraints + ["l"]
    text = (f"{_predicate(mask_operand)}st.global{after}{_shape(count)}.b{bits} [$0], "
            f"{_registers(range(first_value, first_value + count))}{policy_text};")
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), types), text, ",".join(constraints), side_effect=True)
    builder.call(asm, inputs)


def fits_one_access(ty: ir.Type, alignment: int) -> bool:
    """Whether a value of `ty` at an address aligned to `alignment` bytes is one predicated access."""
    element = ty.element if isinstance(ty, ir.VectorType) else ty
    total = byte_size(element) * (ty.count if isinstance(ty, ir.VectorType) else 1)
    return total <= 16 and alignment >= total and (total < 4 or total % max(4, byte_size(element)) == 0)
