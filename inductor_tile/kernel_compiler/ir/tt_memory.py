"""Global-memory ops of the `tt` dialect: `tt.load`, `tt.store` and the atomics.

Loads, stores and `tt.atomic_rmw` take an optional mask (and the load an optional `other`
value), written with keywords so that the text is unambiguous:

    %v = tt.load %ptrs mask %m other %zero : tensor<128x!tt.ptr<f32>> -> tensor<128xf32>
    tt.store %ptrs, %v mask %m : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
    %old = tt.atomic_rmw fadd, acq_rel, gpu, %ptrs, %v mask %m : tensor<128x!tt.ptr<f32>>, tensor<128xf32>
    %old = tt.atomic_cas acq_rel, gpu, %ptrs, %cmp, %v : tensor<128x!tt.ptr<i32>>, tensor<128xi32>

Loads and stores carry Triton's memory-access hints as attributes: a cache modifier
(`cache`: ca/cg/cs/cv on loads, wb/cg/cs/wt on stores), an eviction policy (`evict`:
evict_first/evict_last) and, on loads, `isVolatile`. The first two are written as Triton
writes them, after the operands; `isVolatile` stays in the attribute dictionary:

    %v = tt.load %ptrs mask %m cacheModifier = cg evictionPolicy = evict_last {isVolatile = true} : ...
    tt.store %ptrs, %v cacheModifier = cs : ...

The mask type is not written: it is i1 with the pointer operand's shape. An atomic's
result (the old values) has the value operand's type. Atomics read and write memory, so
no pass removes, merges or hoists one, even when its result is unused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from xdsl.dialects.builtin import IntegerAttr, StringAttr, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind, MemoryReadEffect, MemoryWriteEffect
from xdsl.utils.exceptions import VerifyException

from .tt_types import PointerType, element_of, expect, like


def pointee_type(ptr_type: Attribute) -> Attribute:
    """What a (tensor of) pointer(s) points at, with the same shape and layout: the loaded type."""
    elem = element_of(ptr_type)
    if not isinstance(elem, PointerType):  # the message prints the type: only when it is needed
        raise VerifyException(f"expected pointer(s), got {ptr_type}")
    return like(ptr_type, elem.pointee)


def mask_type(ptr_type: Attribute) -> Attribute:
    """i1 with the shape (and TTGIR layout) of `ptr_type`."""
    return like(ptr_type, i1)


# ===------------------------------------------------------------------------===
# Memory-access hints (cache modifier, eviction policy, volatile)
# ===------------------------------------------------------------------------===
LOAD_CACHE_MODIFIERS = ("ca", "cg", "cs", "cv")
STORE_CACHE_MODIFIERS = ("wb", "cg", "cs", "wt")
EVICTION_POLICIES = ("evict_first", "evict_last")
_HINT_KEYWORDS = (("cacheModifier", "cache"), ("evictionPolicy", "evict"))


@dataclass(frozen=True)
class AccessHints:
    """How a load or store asks the caches to treat its lines; "" / False: the default. Targets
    without such controls ignore them (the values loaded and stored are the same either way)."""

    cache: str = ""
    evict: str = ""
    volatile: bool = False

    def __bool__(self) -> bool:
        return bool(self.cache or self.evict or self.volatile)

    def attributes(self) -> dict[str, Attribute]:
        """The op attributes that record these hints."""
        out: dict[str, Attribute] = {}
        if self.cache:
            out["cache"] = StringAttr(self.cache)
        if self.evict:
            out["evict"] = StringAttr(self.evict)
        if self.volatile:
            out["isVolatile"] = IntegerAttr.from_bool(True)
        return out


NO_HINTS = AccessHints()


def access_hints(op: IRDLOperation) -> AccessHints:
    """The hints of a tt.load or tt.store (NO_HINTS for other ops)."""
    cache, evict, volatile = op.attributes.get("cache"), op.attributes.get("evict"), op.attributes.get("isVolatile")
    return AccessHints(cache.data if isinstance(cache, StringAttr) else "",
                       evict.data if isinstance(evict, StringAttr) else "",
                       isinstance(volatile, IntegerAttr) and bool(volatile.value.data))


def _verify_hints(op: IRDLOperation, cache_modifiers: tuple[str, ...], volatile_allowed: bool) -> None:
    for key in ("cache", "evict"):
        expect(key not in op.attributes or isinstance(op.attributes[key], StringAttr),
               f"{op.name}: the {key} attribute must be a string")
    hints = access_hints(op)
    expect(not hints.cache or hints.cache in cache_modifiers,
           f"{op.name}: unknown cache modifier {hints.cache!r} (expected one of {', '.join(cache_modifiers)})")
    expect(not hints.evict or hints.evict in EVICTION_POLICIES,
           f"{op.name}: unknown eviction policy {hints.evict!r} (expected one of {', '.join(EVICTION_POLICIES)})")
    expect(volatile_allowed or "isVolatile" not in op.attributes, f"{op.name}: only loads can be volatile")


def _parse_hints(parser: Parser) -> dict[str, Attribute]:
    """`[cacheModifier = cg] [evictionPolicy = evict_last]` as attributes."""
    out: dict[str, Attribute] = {}
    for keyword, key in _HINT_KEYWORDS:
        if parser.parse_optional_keyword(keyword) is not None:
            parser.parse_punctuation("=")
            out[key] = StringAttr(parser.parse_identifier())
    return out


def _print_hints_and_attributes(printer: Printer, op: IRDLOperation) -> None:
    """What `_parse_hints` reads, then the other attributes as a dictionary."""
    for keyword, key in _HINT_KEYWORDS:
        value = op.attributes.get(key)
        if isinstance(value, StringAttr):
            printer.print_string(f" {keyword} = {value.data}")
    printer.print_op_attributes({k: v for k, v in op.attributes.items()
                                 if not (k in ("cache", "evict") and isinstance(v, StringAttr))})


def _parse_optional_keyword_operand(parser: Parser, keyword: str) -> UnresolvedOperand | None:
    if parser.parse_optional_keyword(keyword) is None:
        return None
    return parser.parse_unresolved_operand()


def _print_optional_keyword_operand(printer: Printer, keyword: str, value: SSAValue | None) -> None:
    if value is not None:
        printer.print_string(f" {keyword} ")
        printer.print_operand(value)


def _parse_operands(parser: Parser, count: int, op_name: str) -> list[UnresolvedOperand]:
    """`%a, %b, ...`: exactly `count` operands, unresolved."""
    operands = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
    expect(len(operands) == count, f"{op_name} expects {count} operands")
    return operands


def _parse_ptr_value_mask(parser: Parser):
    """`%ptr, %value [, mask = %m] {attrs} : ptr_type, value_type` (tt.store, tt.atomic_rmw):
    resolved (ptr, value, mask or None, attributes)."""
    ptr = parser.parse_unresolved_operand()
    parser.parse_punctuation(",")
    value = parser.parse_unresolved_operand()
    mask = _parse_optional_keyword_operand(parser, "mask")
    attributes = _parse_hints(parser)
    attributes.update(parser.parse_optional_attr_dict())
    parser.parse_punctuation(":")
    ptr_type = parser.parse_type()
    parser.parse_punctuation(",")
    value_type = parser.parse_type()
    return (parser.resolve_operand(ptr, ptr_type), parser.resolve_operand(value, value_type),
            parser.resolve_operand(mask, mask_type(ptr_type)) if mask is not None else None, attributes)


def _print_ptr_value_mask(printer: Printer, op) -> None:
    """The syntax `_parse_ptr_value_mask` reads."""
    printer.print_operand(op.ptr)
    printer.print_string(", ")
    printer.print_operand(op.value)
    _print_optional_keyword_operand(printer, "mask", op.mask)
    _print_hints_and_attributes(printer, op)
    printer.print_string(" : ")
    printer.print_attribute(op.ptr.type)
    printer.print_string(", ")
    printer.print_attribute(op.value.type)


def _verify_access(op: IRDLOperation, accessed: Attribute, accessed_name: str, mask: SSAValue | None) -> None:
    """What every global-memory op checks: its first operand is pointer(s) to elements of the `accessed`
    type (`accessed_name` in the error: its result or value operand) and its mask, if any, is i1 of the
    pointers' shape."""
    ptr_type = op.operands[0].type
    expect(isinstance(element_of(ptr_type), PointerType), f"{op.name}: first operand must be pointer(s)")
    expect(accessed == pointee_type(ptr_type), f"{op.name}: {accessed_name} type must match the pointee type")
    if mask is not None:
        expect(mask.type == mask_type(ptr_type), f"{op.name}: mask must be i1 with the pointer shape")


class LoadEffects(MemoryEffect):
    """A load reads memory; a volatile one counts as writing too, so that no pass deletes, merges or
    hoists it (Triton's rule)."""

    @classmethod
    def get_effects(cls, op: Operation) -> frozenset[EffectInstance]:
        if "isVolatile" in op.attributes:
            return frozenset((EffectInstance(MemoryEffectKind.READ), EffectInstance(MemoryEffectKind.WRITE)))
        return frozenset((EffectInstance(MemoryEffectKind.READ),))


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Load from pointer(s); lanes whose mask is false yield `other` (undefined without it).
    Reads memory but writes nothing, so DCE may delete an unused load while CSE and LICM
    leave loads alone; a volatile load stays even unused (`LoadEffects`)."""

    name = "tt.load"

    ptr = operand_def(AnyAttr())
    mask = opt_operand_def(AnyAttr())
    other = opt_operand_def(AnyAttr())
    result = result_def(AnyAttr())

    traits = traits_def(LoadEffects())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        ptr: SSAValue,
        mask: SSAValue | None = None,
        other: SSAValue | None = None,
        result_type: Attribute | None = None,
        attributes: dict[str, Attribute] | None = None,
    ):
        result_type = result_type or pointee_type(ptr.type)
        operands = [ptr, [mask] if mask is not None else [], [other] if other is not None else []]
        super().__init__(operands=operands, result_types=[result_type], attributes=attributes or {})

    def verify_(self) -> None:
        _verify_access(self, self.result.type, "result", self.mask)
        if self.other is not None:
            expect(self.other.type == self.result.type, "tt.load: other must have the result type")
        _verify_hints(self, LOAD_CACHE_MODIFIERS, volatile_allowed=True)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        ptr = parser.parse_unresolved_operand()
        mask = _parse_optional_keyword_operand(parser, "mask")
        other = _parse_optional_keyword_operand(parser, "other")
        attributes = _parse_hints(parser)
        attributes.update(parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        ptr_type = parser.parse_type()
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        return cls(
            parser.resolve_operand(ptr, ptr_type),
            parser.resolve_operand(mask, mask_type(ptr_type)) if mask is not None else None,
            parser.resolve_operand(other, result_type) if other is not None else None,
            result_type,
            attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.ptr)
        _print_optional_keyword_operand(printer, "mask", self.mask)
        _print_optional_keyword_operand(printer, "other", self.other)
        _print_hints_and_attributes(printer, self)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Store `value` at pointer(s), only in lanes whose mask is true."""

    name = "tt.store"

    ptr = operand_def(AnyAttr())
    value = operand_def(AnyAttr())
    mask = opt_operand_def(AnyAttr())

    traits = traits_def(MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        ptr: SSAValue,
        value: SSAValue,
        mask: SSAValue | None = None,
        attributes: dict[str, Attribute] | None = None,
    ):
        super().__init__(operands=[ptr, value, [mask] if mask is not None else []], attributes=attributes or {})

    def verify_(self) -> None:
        _verify_access(self, self.value.type, "value", self.mask)
        _verify_hints(self, STORE_CACHE_MODIFIERS, volatile_allowed=False)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        ptr, value, mask, attributes = _parse_ptr_value_mask(parser)
        return cls(ptr, value, mask, attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        _print_ptr_value_mask(printer, self)



# read-modify-write kinds (as in `language.builder.ATOMIC_RMW_KINDS`), memory orderings and scopes
ATOMIC_RMW_KINDS = ("add", "fadd", "max", "min", "umax", "umin", "fmax", "fmin", "and", "or", "xor", "xchg")
ATOMIC_SEMS = ("relaxed", "acquire", "release", "acq_rel")
ATOMIC_SCOPES = ("cta", "gpu", "sys")


def _verify_order(op: IRDLOperation, sem: StringAttr, scope: StringAttr) -> None:
    expect(sem.data in ATOMIC_SEMS, f"{op.name}: unknown memory ordering {sem.data!r}")
    expect(scope.data in ATOMIC_SCOPES, f"{op.name}: unknown scope {scope.data!r}")


def _parse_keywords(parser: Parser, count: int) -> list[str]:
    """`a, b, c,`: `count` identifiers, each followed by a comma."""
    words = []
    for _ in range(count):
        words.append(parser.parse_identifier())
        parser.parse_punctuation(",")
    return words


@irdl_op_definition
class AtomicRMWOp(IRDLOperation):
    """Atomically replace each pointed-to element by `kind(element, value)` where the mask is
    true; the result holds the old elements (zero where the mask is false)."""

    name = "tt.atomic_rmw"

    ptr = operand_def(AnyAttr())
    value = operand_def(AnyAttr())
    mask = opt_operand_def(AnyAttr())
    result = result_def(AnyAttr())
    kind = prop_def(StringAttr)
    sem = prop_def(StringAttr)
    scope = prop_def(StringAttr)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        kind: str,
        ptr: SSAValue,
        value: SSAValue,
        mask: SSAValue | None = None,
        sem: str = "acq_rel",
        scope: str = "gpu",
        attributes: dict[str, Attribute] | None = None,
    ):
        props = {"kind": StringAttr(kind), "sem": StringAttr(sem), "scope": StringAttr(scope)}
        super().__init__(operands=[ptr, value, [mask] if mask is not None else []], result_types=[value.type],
                         properties=props, attributes=attributes or {})

    def verify_(self) -> None:
        expect(self.kind.data in ATOMIC_RMW_KINDS, f"tt.atomic_rmw: unknown kind {self.kind.data!r}")
        _verify_order(self, self.sem, self.scope)
        _verify_access(self, self.value.type, "value", self.mask)
        expect(self.result.type == self.value.type, "tt.atomic_rmw: result type must be the value type")

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        kind, sem, scope = _parse_keywords(parser, 3)
        ptr, value, mask, attributes = _parse_ptr_value_mask(parser)
        return cls(kind, ptr, value, mask, sem, scope, attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data}, {self.sem.data}, {self.scope.data}, ")
        _print_ptr_value_mask(printer, self)


@irdl_op_definition
class AtomicCASOp(IRDLOperation):
    """Atomically, per pointer: where the element equals `cmp` bit for bit, replace it by
    `value`. The result holds the old elements."""

    name = "tt.atomic_cas"

    ptr = operand_def(AnyAttr())
    cmp = operand_def(AnyAttr())
    value = operand_def(AnyAttr())
    result = result_def(AnyAttr())
    sem = prop_def(StringAttr)
    scope = prop_def(StringAttr)

    traits = traits_def(MemoryReadEffect(), MemoryWriteEffect())

    def __init__(
        self,
        ptr: SSAValue,
        cmp: SSAValue,
        value: SSAValue,
        sem: str = "acq_rel",
        scope: str = "gpu",
        attributes: dict[str, Attribute] | None = None,
    ):
        props = {"sem": StringAttr(sem), "scope": StringAttr(scope)}
        super().__init__(operands=[ptr, cmp, value], result_types=[value.type], properties=props,
                         attributes=attributes or {})

    def verify_(self) -> None:
        _verify_order(self, self.sem, self.scope)
        _verify_access(self, self.value.type, "value", None)
        expect(self.cmp.type == self.value.type, "tt.atomic_cas: compare and new value must have one type")
        expect(self.result.type == self.value.type, "tt.atomic_cas: result type must be the value type")

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        sem, scope = _parse_keywords(parser, 2)
        ptr, cmp, value = _parse_operands(parser, 3, "tt.atomic_cas")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ptr_type = parser.parse_type()
        parser.parse_punctuation(",")
        value_type = parser.parse_type()
        return cls(
            parser.resolve_operand(ptr, ptr_type),
            parser.resolve_operand(cmp, value_type),
            parser.resolve_operand(value, value_type),
            sem,
            scope,
            attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.sem.data}, {self.scope.data}, ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)
        printer.print_string(", ")
        printer.print_attribute(self.value.type)


#: the ops that access global memory through (tensors of) pointers: coalescing chooses their layout
MEMORY_OPS = (LoadOp, StoreOp, AtomicRMWOp, AtomicCASOp)
