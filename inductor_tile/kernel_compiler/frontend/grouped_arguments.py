"""Launch arguments that stand for several kernel values: host TensorDescriptors and tuples.

A host `TensorDescriptor` (inductor_tile.tools.tensor_descriptor) specializes as its base pointer
(marked with the block shape and padding the kernel depends on) followed by its shape and its
strides as integers. A tuple (a list, a `torch.Size`, a NamedTuple; nested, holding tensors,
numbers, None, `tl.constexpr` values or descriptors) specializes as a header (a constexpr spec
whose value, `TupleArg`, tells its kind and length) followed by its elements, each specialized
as a parameter of its own would be: so a tuple of ints is integers specialized on 16-divisibility
and equality to 1, and a tuple of `tl.constexpr` is known at compile time.

The flat list of specs is what the compiler and the runners see (one value per spec, in order);
`flatten_launch_values` turns a launch's arguments into that list, `unflatten` rebuilds the
kernel's view (a descriptor, a tuple) from the values of the specs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...language.core import constexpr
from ...tools.tensor_descriptor import TensorDescriptor
from .specialization import ArgSpec, specialize


class TupleArg:
    """The compile-time value of a tuple argument's header spec: the tuple's class and length."""

    def __init__(self, kind: type, size: int):
        self.kind, self.size = kind, size

    def make(self, items: list[Any]) -> Any:
        if hasattr(self.kind, "_fields"):  # a NamedTuple: its fields by position
            return self.kind(*items)
        return tuple(items)

    def __repr__(self) -> str:
        name = self.kind.__name__ if hasattr(self.kind, "_fields") else "tuple"
        return f"{name}[{self.size}]"


def _is_jit_function(value: Any) -> bool:
    from ..runtime.jit import JITFunction

    return isinstance(value, JITFunction)


def _is_tuple(value: Any) -> bool:
    return isinstance(value, (tuple, list))


def _tuple_kind(value: Any) -> type:
    return type(value) if hasattr(type(value), "_fields") else tuple


def specialize_argument(name: str, value: Any, is_constexpr: bool, specialize_ints: bool = True,
                        is_const: bool = False, annotated: Any = None) -> list[ArgSpec]:
    """The ArgSpecs of one launch argument: one, or several for a TensorDescriptor or a tuple."""
    if is_constexpr or value is None:
        return [specialize(name, value, True)]
    if isinstance(value, constexpr):  # tl.constexpr(v) given for a plain parameter: known at compile time
        return [ArgSpec(name, "constexpr", value=value.value)]
    if _is_jit_function(value):  # a @jit function passed to the kernel (e.g. in a tuple): called where it is used
        return [ArgSpec(name, "constexpr", value=value)]
    if value.__class__ is TensorDescriptor:
        return descriptor_specs(name, value, specialize_ints)
    if _is_tuple(value):
        specs = [ArgSpec(name, "constexpr", value=TupleArg(_tuple_kind(value), len(value)))]
        for i, item in enumerate(value):
            specs += specialize_argument(f"{name}[{i}]", item, False, specialize_ints, is_const)
        return specs
    return [specialize(name, value, False, specialize_ints, is_const, annotated)]


def descriptor_specs(name: str, desc: TensorDescriptor, specialize_ints: bool = True) -> list[ArgSpec]:
    """A host TensorDescriptor: its base pointer (marked with the block shape and padding the kernel is
    specialized on), then its shape and its strides as integer scalars."""
    block = tuple(int(b) for b in desc.block_shape)
    if len(block) != len(desc.shape):
        raise ValueError(f"argument '{name}': TensorDescriptor block_shape {list(block)} has not one entry per "
                         f"dimension of its shape {list(desc.shape)}")
    base = replace(specialize(name, desc.base, False), descriptor=(block, desc.padding))
    parts = [specialize(f"{name}.shape[{d}]", int(v), False, specialize_ints) for d, v in enumerate(desc.shape)]
    parts += [specialize(f"{name}.strides[{d}]", int(v), False, specialize_ints) for d, v in enumerate(desc.strides)]
    return [base, *parts]


def is_grouped(spec: ArgSpec) -> bool:
    """Whether `spec` starts a group (a descriptor's or a tuple's specs)."""
    return spec.descriptor is not None or (spec.kind == "constexpr" and isinstance(spec.value, TupleArg))


def unflatten(semantic: Any, specs: list[ArgSpec], values: list[Any], i: int = 0) -> tuple[Any, int]:
    """The kernel's view of the argument whose specs start at `specs[i]` (`values`: the kernel's value of
    each spec, a tensor or a constexpr), and the index of the next argument's first spec."""
    spec = specs[i]
    if spec.descriptor is not None:
        rank = len(spec.descriptor[0])
        return descriptor_from_specs(semantic, specs[i:i + 1 + 2 * rank], values[i:i + 1 + 2 * rank]), i + 1 + 2 * rank
    if spec.kind == "constexpr" and isinstance(spec.value, TupleArg):
        items, i = [], i + 1
        for _ in range(spec.value.size):
            item, i = unflatten(semantic, specs, values, i)
            items.append(item)
        return spec.value.make(items), i
    return values[i], i + 1


def descriptor_from_specs(semantic: Any, specs: list[ArgSpec], values: list[Any]) -> Any:
    """The kernel's view of a host TensorDescriptor: a descriptor of its base, shape and strides."""
    from ...language.semantic import TileTypeError, TileValueError

    block, padding = specs[0].descriptor
    rank = len(block)
    try:
        return semantic.make_tensor_descriptor(values[0], values[1:1 + rank], values[1 + rank:1 + 2 * rank],
                                               list(block), padding)
    except (TileTypeError, TileValueError) as e:
        raise type(e)(f"argument '{specs[0].name}' (a TensorDescriptor): {e}") from None


def flatten_launch_values(specs: list[ArgSpec], values: tuple) -> tuple:
    """One value per spec, from the launch's arguments in parameter order (`values`)."""
    out: list[Any] = []
    i = 0
    for value in values:
        i = _flatten_into(specs, i, value, out)
    return tuple(out)


def _flatten_into(specs: list[ArgSpec], i: int, value: Any, out: list[Any]) -> int:
    spec = specs[i]
    if spec.descriptor is not None:
        parts = value.launch_values()
        out += parts
        return i + len(parts)
    if spec.kind == "constexpr" and isinstance(spec.value, TupleArg):
        out.append(None)
        i += 1
        for item in value:
            i = _flatten_into(specs, i, item, out)
        return i
    out.append(value)
    return i + 1


def leaf_values(value: Any) -> list[Any]:
    """The tensors, numbers, ... inside an argument (a descriptor's base, a tuple's elements)."""
    if value.__class__ is TensorDescriptor:
        return [value.base]
    if _is_tuple(value) and not isinstance(value, str):
        return [leaf for item in value for leaf in leaf_values(item)]
    return [value]
