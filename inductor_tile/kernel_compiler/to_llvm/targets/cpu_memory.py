"""Masked loads and stores, gathers, scatters and library math of the CPU target, kept small for LLVM.

Where the host has an instruction for a masked access (AVX ``vmaskmov`` for 32/64-bit
elements, AVX2 gathers, AVX-512 for the rest), the target emits LLVM's masked intrinsics.
Where it has none (16-bit halves and 8-bit integers on AVX2, gathers of them, scatters
before AVX-512, other architectures), LLVM scalarizes each intrinsic into one branch and one
basic block per element: a 512-element fp16 row became ~1000 blocks whose instruction
selection took 6-20 s (measured on this 2-core Zen 3, 2026-11-25).  Those accesses are
emitted here instead as

- a plain vector load/store when every mask bit is set (the common case of an interior tile),
- otherwise a loop over the elements through a stack buffer (the vector and its mask are
  stored there, each element whose bit is set is moved on its own, the vector reloaded):
  constant code size whatever the tile width.

Math that has no vector instruction (``sinf``, ``erf``, f64 ``exp``...) is one library call per
element either way; ``map_elements`` makes those calls from a loop instead of n inlined copies.

Vector math written out as polynomials (cpu_math.py ``LOOPED``) on a tile wider than two host registers runs in
``map_chunks``: a loop over register-wide slices through a stack buffer.  Inlined on a 256-element
tile, float32 erf was 16 interleaved copies that spilled (1469 instructions, 293 of them stack moves)
and ran 1.7x torch's time; one register-wide copy in a loop keeps its temporaries in registers and its
code in a few cache lines.

Small vectors (fewer than ``LOOP_MIN_ELEMENTS``) keep the inlined form: it is cheap to compile.
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm
from llvmlite import ir

from ..context import byte_size

I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
#: accesses narrower than this many elements are left to LLVM's scalarization
LOOP_MIN_ELEMENTS = 16


@functools.cache
def host() -> tuple[bool, frozenset[str]]:
    """Whether the host is x86, and the names of its CPU features (``avx2``, ``avx512f``...)."""
    from .. import llvm_tools

    llvm_tools.initialize()
    triple = llvm.get_process_triple()
    features = frozenset(name for name, on in llvm.get_host_cpu_features().items() if on)
    return triple.startswith(("x86_64", "i386", "i686")), features


def _bits(element: ir.Type) -> int:
    return 64 if isinstance(element, ir.PointerType) else 8 * byte_size(element)


def native(kind: str, element: ir.Type) -> bool:
    """Whether the host has an instruction for a masked `kind` (load, store, gather, scatter) of `element`."""
    x86, features = host()
    if not x86:
        return False
    wide = _bits(element) in (32, 64)
    if kind in ("load", "store"):
        return wide and "avx" in features or {"avx512bw", "avx512vl"} <= features
    if kind == "gather":
        return wide and "avx2" in features
    return wide and "avx512f" in features  # scatter


def use_loop(kind: str, vector: ir.VectorType) -> bool:
    return vector.count >= LOOP_MIN_ELEMENTS and not native(kind, vector.element)


def _entry_alloca(builder: ir.IRBuilder, ty: ir.VectorType) -> ir.Value:
    """A stack slot for a vector of type `ty`, made once in the function's entry block (not once
    per loop iteration)."""
    entry = builder.function.entry_basic_block
    if builder.block is entry:  # (a second builder inserting into this block would shift this one's position)
        return builder.alloca(ty)
    at_entry = ir.IRBuilder(entry)
    at_entry.position_at_start(entry)
    return at_entry.alloca(ty)


def _store_vector(builder: ir.IRBuilder, vector: ir.Value, slot: ir.Value, align: int) -> None:
    builder.store(vector, slot, align=align)


def _load_vector(builder: ir.IRBuilder, ty: ir.VectorType, slot: ir.Value) -> ir.Value:
    return builder.load(slot, typ=ty, align=1)


def _all_set(builder: ir.IRBuilder, mask: ir.Value) -> ir.Value:
    n = mask.type.count
    name = f"llvm.vector.reduce.and.v{n}i1"
    fn = builder.module.globals.get(name) or ir.Function(builder.module, ir.FunctionType(ir.IntType(1), [mask.type]),
                                                          name)
    return builder.call(fn, [mask])


def _for_each_set_element(builder: ir.IRBuilder, mask: ir.Value | None, n: int, body) -> None:
    """Emit `for i in range(n): if mask[i]: body(builder, i)` as one loop (i: an i64 value)."""
    mask_slot = None
    if mask is not None:
        mask_slot = _entry_alloca(builder, ir.VectorType(I8, n))
        _store_vector(builder, builder.zext(mask, ir.VectorType(I8, n)), mask_slot, 1)
    before = builder.block
    loop = builder.append_basic_block("element_loop")
    active = builder.append_basic_block("element_active")
    step = builder.append_basic_block("element_next")
    done = builder.append_basic_block("element_done")
    builder.branch(loop)
    builder.position_at_end(loop)
    i = builder.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), before)
    if mask_slot is None:
        builder.branch(active)
    else:
        bit = builder.load(_element_ptr(builder, mask_slot, i, I8), typ=I8)
        builder.cbranch(builder.icmp_unsigned("!=", bit, ir.Constant(I8, 0)), active, step)
    builder.position_at_end(active)
    body(builder, i)
    builder.branch(step)
    builder.position_at_end(step)
    following = builder.add(i, ir.Constant(I64, 1))
    i.add_incoming(following, step)
    builder.cbranch(builder.icmp_unsigned("<", following, ir.Constant(I64, n)), loop, done)
    builder.position_at_end(done)


def _element_ptr(builder: ir.IRBuilder, slot: ir.Value, i: ir.Value, element: ir.Type) -> ir.Value:
    offset = builder.mul(i, ir.Constant(I64, _bits(element) // 8))
    return builder.inttoptr(builder.add(builder.ptrtoint(slot, I64), offset), PTR)


def _through_buffer_load(builder: ir.IRBuilder, mask: ir.Value | None, other: ir.Value, address_of) -> ir.Value:
    """`other` with each element whose mask bit is set loaded from `address_of(builder, i)`."""
    n, element = other.type.count, other.type.element
    slot = _entry_alloca(builder, ir.VectorType(element, n))
    _store_vector(builder, other, slot, 1)

    def move(b: ir.IRBuilder, i: ir.Value) -> None:
        b.store(b.load(address_of(b, i), typ=element, align=1), _element_ptr(b, slot, i, element), align=1)

    _for_each_set_element(builder, mask, n, move)
    return _load_vector(builder, other.type, slot)


def _through_buffer_store(builder: ir.IRBuilder, mask: ir.Value | None, value: ir.Value, address_of) -> None:
    n, element = value.type.count, value.type.element
    slot = _entry_alloca(builder, ir.VectorType(element, n))
    _store_vector(builder, value, slot, 1)

    def move(b: ir.IRBuilder, i: ir.Value) -> None:
        b.store(b.load(_element_ptr(b, slot, i, element), typ=element, align=1), address_of(b, i), align=1)

    _for_each_set_element(builder, mask, n, move)


def _contiguous_address(address: ir.Value, element: ir.Type):
    size = byte_size(element)

    def address_of(b: ir.IRBuilder, i: ir.Value) -> ir.Value:
        return b.inttoptr(b.add(address, b.mul(i, ir.Constant(I64, size))), PTR)

    return address_of


def load_contiguous(builder: ir.IRBuilder, address: ir.Value, mask: ir.Value | None, other: ir.Value,
                    alignment: int) -> ir.Value:
    """A vector load at consecutive addresses from `address` (an i64), `other` where `mask` is clear."""
    whole = lambda: builder.load(builder.inttoptr(address, PTR), typ=other.type, align=alignment)  # noqa: E731
    if mask is None:
        return whole()
    with builder.if_else(_all_set(builder, mask)) as (then, otherwise):
        with then:
            full = whole()
            full_block = builder.block
        with otherwise:
            partial = _through_buffer_load(builder, mask, other, _contiguous_address(address, other.type.element))
            partial_block = builder.block
    merged = builder.phi(other.type)
    merged.add_incoming(full, full_block)
    merged.add_incoming(partial, partial_block)
    return merged


def store_contiguous(builder: ir.IRBuilder, address: ir.Value, value: ir.Value, mask: ir.Value | None,
                     alignment: int) -> None:
    whole = lambda: builder.store(value, builder.inttoptr(address, PTR), align=alignment)  # noqa: E731
    if mask is None:
        whole()
        return
    with builder.if_else(_all_set(builder, mask)) as (then, otherwise):
        with then:
            whole()
        with otherwise:
            _through_buffer_store(builder, mask, value, _contiguous_address(address, value.type.element))


def _vector_address(builder: ir.IRBuilder, addresses: ir.Value):
    """Element i's address, read from a stack copy of the vector of i64 `addresses` (stored once:
    a variable-index extractelement would spill the whole vector in every iteration)."""
    slot = _entry_alloca(builder, addresses.type)
    _store_vector(builder, addresses, slot, 8)

    def address_of(b: ir.IRBuilder, i: ir.Value) -> ir.Value:
        return b.inttoptr(b.load(_element_ptr(b, slot, i, addresses.type.element), typ=addresses.type.element, align=8), PTR)

    return address_of


def gather(builder: ir.IRBuilder, addresses: ir.Value, mask: ir.Value | None, other: ir.Value) -> ir.Value:
    """Elements loaded from the i64 `addresses` where `mask` is set, else `other`."""
    return _through_buffer_load(builder, mask, other, _vector_address(builder, addresses))


def scatter(builder: ir.IRBuilder, addresses: ir.Value, value: ir.Value, mask: ir.Value | None) -> None:
    _through_buffer_store(builder, mask, value, _vector_address(builder, addresses))


def register_elements(element: ir.Type) -> int:
    """Elements of `element` in one vector register of the host (16 bytes where it is not x86)."""
    x86, features = host()
    width = 64 if x86 and "avx512f" in features else 32 if x86 and "avx" in features else 16
    return max(1, width // (_bits(element) // 8))


def map_chunks(builder: ir.IRBuilder, x: ir.Value, vector_fn) -> ir.Value:
    """`vector_fn(builder, chunk)` on register-wide slices of the vector `x`, in a loop through stack
    buffers (the inlined alternative, `vector_fn(builder, x)`, is returned for vectors that are one or two
    registers wide or not a whole number of registers)."""
    n, element = x.type.count, x.type.element
    width = register_elements(element)
    if n <= 2 * width or n % width:
        return vector_fn(builder, x)
    chunk = ir.VectorType(element, width)
    source, result = _entry_alloca(builder, x.type), _entry_alloca(builder, x.type)
    _store_vector(builder, x, source, 1)
    before = builder.block
    loop = builder.append_basic_block("chunk_loop")
    done = builder.append_basic_block("chunk_done")
    builder.branch(loop)
    builder.position_at_end(loop)
    i = builder.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), before)
    value = vector_fn(builder, builder.load(_element_ptr(builder, source, i, element), typ=chunk, align=1))
    builder.store(value, _element_ptr(builder, result, i, element), align=1)
    following = builder.add(i, ir.Constant(I64, width))
    i.add_incoming(following, builder.block)  # vector_fn may have added blocks (a guarded library call)
    builder.cbranch(builder.icmp_unsigned("<", following, ir.Constant(I64, n)), loop, done)
    builder.position_at_end(done)
    return _load_vector(builder, x.type, result)


def map_elements(builder: ir.IRBuilder, x: ir.Value, scalar_fn: ir.Function, *more: ir.Value) -> ir.Value:
    """`scalar_fn` applied to each element of the vector `x` (and the same elements of the vectors `more`,
    its further arguments), in a loop through stack buffers."""
    n, element = x.type.count, x.type.element
    sources, result = [_entry_alloca(builder, x.type) for _ in (x, *more)], _entry_alloca(builder, x.type)
    for vector, source in zip((x, *more), sources):
        _store_vector(builder, vector, source, 1)

    def apply(b: ir.IRBuilder, i: ir.Value) -> None:
        value = b.call(scalar_fn, [b.load(_element_ptr(b, source, i, element), typ=element, align=1)
                                   for source in sources])
        b.store(value, _element_ptr(b, result, i, element), align=1)

    _for_each_set_element(builder, None, n, apply)
    return _load_vector(builder, x.type, result)
