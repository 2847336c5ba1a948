"""Types of the tile language: scalar dtypes, pointers and blocks (tiles).

Names and spellings follow Triton so that kernels port by changing imports:
`tl.float32`, `tl.pointer_type(tl.float16)`, signature strings `*fp16`, `i32`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce


#: the module path dtype reprs start with: where the language is imported from (the Triton import shim,
#: tools/triton_shim.py, makes it `triton.language`)
LANGUAGE_MODULE = "inductor_tile.language"


class dtype:
    """A scalar element type. Instances are interned: compare with `==` or `is`."""

    SINT_NAMES = ("int8", "int16", "int32", "int64")
    UINT_NAMES = ("int1", "uint8", "uint16", "uint32", "uint64")
    FP_NAMES = ("fp16", "bf16", "fp32", "fp64")
    # Triton's names for the same lists (Triton's tests build their parametrizations from them)
    SINT_TYPES, UINT_TYPES, STANDARD_FP_TYPES = list(SINT_NAMES), list(UINT_NAMES), list(FP_NAMES)

    def __init__(self, name: str):
        self.name = name
        if name in self.SINT_NAMES or name in self.UINT_NAMES:
            self.int_bitwidth = 1 if name == "int1" else int(name.lstrip("uint"))
            self.primitive_bitwidth = self.int_bitwidth
            self.int_signedness = "signed" if name in self.SINT_NAMES else "unsigned"
        elif name in self.FP_NAMES:
            self.primitive_bitwidth = int(name[-2:])
        elif name == "void":
            self.primitive_bitwidth = 0

    @property
    def exponent_bias(self) -> int:
        """The exponent bias of a float type (Triton's name)."""
        return {"fp16": 15, "bf16": 127, "fp32": 127, "fp64": 1023}[self.name]

    @property
    def fp_mantissa_width(self) -> int:
        """Explicit mantissa bits of a float type (Triton's name)."""
        return {"fp16": 10, "bf16": 7, "fp32": 23, "fp64": 52}[self.name]

    # --- classification -------------------------------------------------------
    def is_int(self) -> bool:
        return self.name in self.SINT_NAMES or self.name in self.UINT_NAMES

    def is_int1(self) -> bool:
        return self.name == "int1"

    def is_bool(self) -> bool:
        return self.is_int1()

    def is_int_signed(self) -> bool:
        return self.name in self.SINT_NAMES

    def is_int_unsigned(self) -> bool:
        return self.name in self.UINT_NAMES

    def is_floating(self) -> bool:
        return self.name in self.FP_NAMES

    def is_fp16(self) -> bool:
        return self.name == "fp16"

    def is_bf16(self) -> bool:
        return self.name == "bf16"

    def is_fp32(self) -> bool:
        return self.name == "fp32"

    def is_fp64(self) -> bool:
        return self.name == "fp64"

    def is_ptr(self) -> bool:
        return False

    def is_const(self) -> bool:
        return False

    def is_block(self) -> bool:
        return False

    def is_void(self) -> bool:
        return self.name == "void"

    @property
    def scalar(self) -> "dtype":
        return self

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    @property
    def itemsize(self) -> int:
        return max(self.primitive_bitwidth, 8) // 8

    def kind(self) -> int:
        """Promotion kind used for Python scalars, as in PyTorch: bool < integer < float."""
        if self.is_int1():
            return 0
        if self.is_int():
            return 1
        return 2

    def to_ir_string(self) -> str:
        """Signature spelling, Triton style: fp32, i32, u8, i1."""
        return _SIGNATURE_OF[self.name]

    def __repr__(self) -> str:
        """An expression that evaluates to this dtype (Triton's rule), e.g. `inductor_tile.language.float32`."""
        return f"{LANGUAGE_MODULE}.{_PUBLIC_NAME[self.name]}"

    def __str__(self) -> str:
        return _PUBLIC_NAME[self.name]

    def __eq__(self, other: object) -> bool:
        other = getattr(other, "value", other) if type(other).__name__ == "constexpr" else other  # tl.constexpr(dt)
        return isinstance(other, dtype) and self.to_ir_string() == other.to_ir_string()

    def __hash__(self) -> int:
        return hash(self.to_ir_string())

    def __reduce__(self):
        return (_lookup_dtype, (self.name,))


class pointer_type(dtype):
    """Pointer to `element_ty` in global memory: `tl.pointer_type(tl.float32)` is `*fp32`.

    `const=True` (a parameter annotated `tl.const`) points to data the kernel only reads: `*kfp32`.
    Constness is part of the type: a store through it is an error, and a variable cannot be a const
    pointer on one path and a plain one on another."""

    _cache: dict[tuple[str, bool], "pointer_type"] = {}

    def __new__(cls, element_ty: dtype, address_space: int = 1, const: bool = False):
        if address_space != 1:
            raise ValueError(f"pointer_type: only global memory (address_space=1) is supported, got {address_space}")
        key = (element_ty.to_ir_string(), bool(const))
        if key not in cls._cache:
            obj = object.__new__(cls)
            obj.name = "ptr"
            obj.element_ty = element_ty
            obj.primitive_bitwidth = 64
            obj.const = bool(const)
            obj.address_space = 1
            cls._cache[key] = obj
        return cls._cache[key]

    def __init__(self, element_ty: dtype, address_space: int = 1, const: bool = False):
        pass

    def is_ptr(self) -> bool:
        return True

    def is_const(self) -> bool:
        return self.const

    def is_int(self) -> bool:
        return False

    def is_floating(self) -> bool:
        return False

    def to_ir_string(self) -> str:
        return ("*k" if self.const else "*") + self.element_ty.to_ir_string()

    def __repr__(self) -> str:
        const = ", const=True" if self.const else ""
        return f"{LANGUAGE_MODULE}.pointer_type({self.element_ty!r}{const})"

    def __str__(self) -> str:
        return f"{'const ' if self.const else ''}pointer<{self.element_ty}>"

    def __reduce__(self):
        return (pointer_type, (self.element_ty, 1, self.const))


@dataclass(frozen=True)
class block_type:
    """The type of a tile: an element dtype and a static shape of powers of two."""

    element_ty: dtype
    shape: tuple[int, ...]

    def __post_init__(self):
        assert len(self.shape) > 0, "a block has at least one dimension"

    @property
    def scalar(self) -> dtype:
        return self.element_ty

    @property
    def numel(self) -> int:
        return reduce(lambda a, b: a * b, self.shape, 1)

    def is_block(self) -> bool:
        return True

    def is_ptr(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"<{list(self.shape)}, {self.element_ty}>"


void = dtype("void")
int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")

ALL_DTYPES = (int1, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32, float64)
_BY_NAME = {d.name: d for d in ALL_DTYPES} | {"void": void}
_PUBLIC_NAME = {
    "void": "void", "int1": "int1", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
}
_SIGNATURE_OF = {
    "void": "void", "int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "fp16": "fp16", "bf16": "bf16", "fp32": "fp32", "fp64": "fp64",
}
_FROM_SIGNATURE = {v: _BY_NAME[k] for k, v in _SIGNATURE_OF.items()}


def _lookup_dtype(name: str) -> dtype:
    return _BY_NAME[name]


def dtype_from_signature(text: str) -> dtype:
    """Parse a Triton signature string: `*fp16` -> pointer_type(float16), `i32` -> int32."""
    text = text.strip()
    if text.startswith("*k"):
        return pointer_type(dtype_from_signature(text[2:]), const=True)
    if text.startswith("*"):
        return pointer_type(dtype_from_signature(text[1:]))
    if text in _FROM_SIGNATURE:
        return _FROM_SIGNATURE[text]
    if text in _BY_NAME:
        return _BY_NAME[text]
    raise ValueError(
        f"unknown type string {text!r}; expected one of {sorted(_FROM_SIGNATURE)} or a pointer such as '*fp32'"
    )


def is_power_of_two(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0
