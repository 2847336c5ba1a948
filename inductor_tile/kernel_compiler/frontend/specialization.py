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

_torch_to_tile: dict | None = None


def torch_to_tile() -> dict:
    """torch dtype -> tile dtype (``TORCH_TO_TILE``), made on first use: a compile worker, which sees no
    tensor, imports no torch (tests/test_cold_start.py)."""
    global _torch_to_tile
    if _torch_to_tile is None:
        try:
            import torch
        except ImportError:  # pragma: no cover - torch is a dependency, this keeps the language importable
            _torch_to_tile = {}
        else:
            _torch_to_tile = {
                torch.bool: T.int1, torch.int8: T.int8, torch.int16: T.int16, torch.int32: T.int32,
                torch.int64: T.int64, torch.uint8: T.uint8, torch.uint16: T.uint16, torch.uint32: T.uint32,
                torch.uint64: T.uint64, torch.float16: T.float16, torch.bfloat16: T.bfloat16,
                torch.float32: T.float32, torch.float64: T.float64,
            }
    return _torch_to_tile


def __getattr__(name: str) -> Any:
    if name == "TORCH_TO_TILE":
        return torch_to_tile()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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


#: the element types a scalar parameter may be annotated with (`n: tl.int64`): those every launcher passes
ANNOTATED_SCALAR_TYPES = ("int1", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "fp32",
                          "fp64")


def annotated_scalar_type(annotation: Any) -> dtype | None:
    """The type a scalar parameter's annotation gives it (`v: tl.uint8`, also as the string "tl.uint8"), or
    None (no annotation, `int`, `torch.Tensor`, ...: the type follows the value)."""
    if isinstance(annotation, str):
        annotation = getattr(T, annotation.strip("'\"").split(".")[-1], None)
    if isinstance(annotation, dtype) and not annotation.is_ptr() and annotation.name in ANNOTATED_SCALAR_TYPES:
        return annotation
    return None


def _annotated(name: str, value: Any, annotated: dtype) -> ArgSpec:
    """A Python bool, int or float given for a parameter annotated with a scalar type: passed as that type."""
    if annotated.is_floating():
        if not isinstance(value, (bool, int, float)):
            raise TypeError(f"argument '{name}' (annotated {annotated}): expected a number, got {type(value).__name__}")
        return ArgSpec(name, "scalar", annotated)
    if not isinstance(value, (bool, int)):
        raise TypeError(f"argument '{name}' (annotated {annotated}): expected an integer, got {type(value).__name__}")
    bits = annotated.int_bitwidth
    low, high = (0, 2**bits) if annotated.is_int_unsigned() or bits == 1 else (-2**(bits - 1), 2**(bits - 1))
    if not low <= int(value) < high:
        raise OverflowError(f"argument '{name}' (annotated {annotated}): {value} is out of its range [{low}, {high})")
    return ArgSpec(name, "scalar", annotated, divisible_by_16=bits > 1 and int(value) % 16 == 0)


def specialize(name: str, value: Any, is_constexpr: bool, specialize_ints: bool = True,
               is_const: bool = False, annotated: dtype | None = None) -> ArgSpec:
    """The ArgSpec of one launch argument (raises TypeError for values a kernel cannot take).
    `is_const`: the parameter is annotated `tl.const` (a tensor becomes a const pointer); `annotated`: the
    scalar type it is annotated with (`n: tl.int64`), which a number given for it gets."""
    if is_constexpr or value is None:
        return ArgSpec(name, "constexpr", value=value)
    if annotated is not None and not hasattr(value, "data_ptr"):
        return _annotated(name, value, annotated)
    if hasattr(value, "data_ptr") and hasattr(value, "dtype"):
        element = torch_to_tile().get(value.dtype)
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
