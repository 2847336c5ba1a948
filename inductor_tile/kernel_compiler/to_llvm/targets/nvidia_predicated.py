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
"""

from __future__ import annotations

from llvmlite import ir

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


def predicated_load(builder: ir.IRBuilder, address: ir.Value, mask: ir.Value, other: ir.Value) -> ir.Value:
    """The value of `other`'s type at the i64 global `address` where the i1 `mask` holds, else `other`,
    as one `@mask ld.global`; the address must be aligned to the value's size."""
    bits, count = _words(other.type)
    word = ir.IntType(bits)
    text = f"@${count + 1} ld.global{_shape(count)}.b{bits} {_registers(range(count))}, [${count}];"
    register = _REGISTER[bits]
    constraints = ",".join([f"={register}"] * count + ["l", "b"] + [str(i) for i in range(count)])
    result = word if count == 1 else ir.LiteralStructType([word] * count)
    asm = ir.InlineAsm(ir.FunctionType(result, [I64, I1] + [word] * count), text, constraints)
    loaded = builder.call(asm, [address, mask] + _as_words(builder, other, bits, count))
    words = [loaded] if count == 1 else [builder.extract_value(loaded, i) for i in range(count)]
    return _from_words(builder, words, other.type)


def predicated_store(builder: ir.IRBuilder, address: ir.Value, value: ir.Value, mask: ir.Value) -> None:
    """`value` to the i64 global `address` where the i1 `mask` holds, as one `@mask st.global`."""
    bits, count = _words(value.type)
    text = f"@$1 st.global{_shape(count)}.b{bits} [$0], {_registers(range(2, 2 + count))};"
    constraints = ",".join(["l", "b"] + [_REGISTER[bits]] * count)
    asm = ir.InlineAsm(ir.FunctionType(ir.VoidType(), [I64, I1] + [ir.IntType(bits)] * count), text, constraints,
                       side_effect=True)
    builder.call(asm, [address, mask] + _as_words(builder, value, bits, count))


def fits_one_access(ty: ir.Type, alignment: int) -> bool:
    """Whether a value of `ty` at an address aligned to `alignment` bytes is one predicated access."""
    element = ty.element if isinstance(ty, ir.VectorType) else ty
    total = byte_size(element) * (ty.count if isinstance(ty, ir.VectorType) else 1)
    return total <= 16 and alignment >= total and (total < 4 or total % max(4, byte_size(element)) == 0)
