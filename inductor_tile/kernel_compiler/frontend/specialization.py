"""How a launch's arguments specialize a kernel, as Triton does it.

A kernel is compiled once per specialization: the dtype of every tensor and scalar
argument, the values of constexprs, whether integers and pointers are divisible by 16,
and whether integers equal 1 (then the kernel is compiled with the constant 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...language import dtypes as T
from ...language.dtypes import dtype, pointer_type
from ...language.semantic import Semantic

try:
    import torch

    TORCH_TO_TILE = {
        torch.bool: T.int1, torch.int8: T.int8, torch.int16: T.int16, torch.int32: T.int32, torch.int64: T.int64,
        torch.uint8: T.uint8, torch.uint16: T.uint16, torch.uint32: T.uint32, torch.uint64: T.uint64,
        torch.float16: T.float16, torch.bfloat16: T.bfloat16, torch.float32: T.float32, torch.float64: T.float64,
    }
except ImportError:  # pragma: no cover - torch is a dependency, this keeps the language importable
    TORCH_TO_TILE = {}


@dataclass(frozen=True)
class ArgSpec:
    """One kernel parameter as seen by the compiler."""

    name: str
    kind: str  # "constexpr" | "pointer" | "scalar"
    type: dtype | None = None
    value: Any = None  # constexpr value
    divisible_by_16: bool = False
    equal_to_1: bool = False
    # a host TensorDescriptor's base pointer: (block_shape, padding); its shape and strides follow as scalars
    descriptor: tuple | None = None

    def key(self) -> tuple:
        if self.kind == "constexpr":
            source = getattr(self.value, "cache_key", None) if hasattr(self.value, "binder") else None
            if isinstance(source, str):  # a @jit function passed as an argument: its source, not just its name
                return (self.name, "constexpr", repr(self.value), source)
            return (self.name, "constexpr", repr(self.value))
        if self.descriptor is not None:
            return (self.name, self.type.to_ir_string(), self.divisible_by_16, self.equal_to_1, self.descriptor)
        return (self.name, self.type.to_ir_string(), self.divisible_by_16, self.equal_to_1)


def specialize(name: str, value: Any, is_constexpr: bool, specialize_ints: bool = True,
               is_const: bool = False) -> ArgSpec:
    """The ArgSpec of one launch argument (raises TypeError for values a kernel cannot take).
    `is_const`: the parameter is annotated `tl.const` (a tensor becomes a const pointer)."""
    if is_constexpr or value is None:
        return ArgSpec(name, "constexpr", value=value)
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        element = TORCH_TO_TILE.get(value.dtype)
        if element is None:
            raise TypeError(f"argument '{name}': tensors of dtype {value.dtype} are not supported")
        return ArgSpec(name, "pointer", pointer_type(element, const=is_const),
                       divisible_by_16=value.data_ptr() % 16 == 0)
    if isinstance(value, bool):
        return ArgSpec(name, "scalar", T.int1)
    if isinstance(value, int):
        if not -2**63 <= value < 2**64:  # Triton's error type for an int no 64-bit argument holds
            raise OverflowError(f"argument '{name}': the integer {value} does not fit in 64 bits "
                                "(int64 or uint64)")
        ty = Semantic.literal_dtype(value)  # the same rule as an integer literal in a kernel
        if not specialize_ints:
            return ArgSpec(name, "scalar", ty)
        return ArgSpec(name, "scalar", ty, divisible_by_16=value % 16 == 0, equal_to_1=value == 1)
    if isinstance(value, float):
        return ArgSpec(name, "scalar", T.float32)
    raise TypeError(
        f"argument '{name}' has unsupported type {type(value).__name__}: kernels take torch tensors, "
        "Python ints, floats and bools, None, or tl.constexpr values"
    )


def spec_from_signature(name: str, type_string: str, value: Any = None, divisible_by_16: bool = False,
                        equal_to_1: bool = False) -> ArgSpec:
    """An ArgSpec from a Triton-style signature string (`*fp32`, `i32`, `constexpr`)."""
    if type_string == "constexpr":
        return ArgSpec(name, "constexpr", value=value)
    ty = T.dtype_from_signature(type_string)
    return ArgSpec(name, "pointer" if ty.is_ptr() else "scalar", ty, divisible_by_16=divisible_by_16,
                   equal_to_1=equal_to_1)
