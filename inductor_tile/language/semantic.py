"""Typing rules of the tile language: promotion, broadcasting, casts and checks.

Every rule is written once here and executed through a `Builder` (see builder.py), so
the compiler and the interpreter agree on types by construction. Rules follow Triton's
so that Triton kernels behave the same after changing their imports.
"""

from __future__ import annotations

from typing import Any, Sequence

from . import dtypes as T
from .builder import (ATOMIC_SCOPES, ATOMIC_SEMS, EVICTION_POLICIES, LOAD_CACHE_MODIFIERS,
                      STORE_CACHE_MODIFIERS, Builder)
from .core import constexpr, tensor
from .dtypes import block_type, dtype, is_power_of_two
from .block_pointer import BlockPointerSemantic
from .semantic_inline_asm import InlineAsmSemantic
from .semantic_lang import LanguageSemantic
from .tensor_descriptor import TensorDescriptorSemantic

MAX_TENSOR_NUMEL = 1 << 20
FLOAT32_MAX = (2 - 2**-23) * 2**127


class TileTypeError(TypeError):
    """A typing rule of the language was broken (shown to the user with the source line)."""


class TileValueError(ValueError):
    """A value (shape, axis, bound) is not allowed (shown to the user with the source line)."""


def _unwrap(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


def _is_literal(x: Any) -> bool:
    """Python numbers (and constexprs holding them) are weakly typed, as in Triton."""
    return isinstance(_unwrap(x), (bool, int, float))


def _with_shape(scalar_ty: dtype, like: dtype | block_type) -> dtype | block_type:
    return block_type(scalar_ty, like.shape) if like.is_block() else scalar_ty


def _check_writable(ptr: tensor, what: str) -> None:
    """Stores and atomics refuse pointers to constant data (parameters annotated tl.const)."""
    if ptr.dtype.is_const():
        raise TileValueError(f"{what}: Cannot store to a constant pointer ({ptr.dtype}: the parameter is "
                             "annotated tl.const)")


class Semantic(LanguageSemantic, BlockPointerSemantic, TensorDescriptorSemantic, InlineAsmSemantic):
    """The language's rules, building through `builder`.

    `concrete` is True for the interpreter, whose handles hold values that Python control
    flow (`if x:`, `range(n)`) may read; the compiler's handles have no value yet.
    """

    def __init__(self, builder: Builder, concrete: bool = False, num_warps: int = 4):
        self.builder = builder
        self.concrete = concrete
        self.num_warps = num_warps  # the launch's (tl.extra.cuda.num_warps())

    # ===--------------------------------------------------------------------===
    # Conversions
    # ===--------------------------------------------------------------------===
    def to_tensor(self, x: Any) -> tensor:
        x = _unwrap(x)
        if isinstance(x, tensor):
            return x
        if isinstance(x, (bool, int, float)):
            return self.literal(x, self.literal_dtype(x))
        raise TileTypeError(f"cannot use a value of Python type {type(x).__name__} ({x!r}) as a tile value")

    def to_python(self, x: tensor) -> Any:
        if not self.concrete:
            raise TileTypeError(
                "a tile value's contents are not known at compile time; it cannot be used as a Python "
                "bool or int here (mark the argument tl.constexpr, or use tl.where for data-dependent choices)"
            )
        if x.type.is_block() and x.type.numel != 1:  # a block of one element is its element
            raise TileTypeError(f"the truth value of a block {x.type} is ambiguous; reduce it first")
        return x.handle.item()

    # ===--------------------------------------------------------------------===
    # Type promotion
    # ===--------------------------------------------------------------------===
    @staticmethod
    def integer_promote(a: dtype, b: dtype) -> dtype:
        # 1) same signedness: the wider type
        # 2) different signedness: the unsigned one if it is at least as wide, else the signed one
        if a.is_int1() and b.is_int1():
            return T.int1
        if a.is_int_signed() == b.is_int_signed():
            return a if a.int_bitwidth >= b.int_bitwidth else b
        signed, unsigned = (a, b) if a.is_int_signed() else (b, a)
        return unsigned if unsigned.int_bitwidth >= signed.int_bitwidth else signed

    def computation_type(self, a: dtype, a_literal: bool, b: dtype, b_literal: bool, div_or_mod: bool) -> dtype:
        # 0) a Python literal of a lower or equal kind (bool < uint < int < float) takes the tensor's type
        if a_literal != b_literal:
            lit, ten = (a, b) if a_literal else (b, a)
            if lit.kind() <= ten.kind():
                if div_or_mod and (ten.is_fp16() or ten.is_bf16()):
                    return T.float32
                return ten
        # 1) fp64 wins, then 2) fp32
        if a.is_fp64() or b.is_fp64():
            return T.float64
        if a.is_fp32() or b.is_fp32():
            return T.float32
        # 3) half types stay half, except for / and % (computed in fp32), and fp16 with bf16 (fp32)
        if a.is_fp16() or b.is_fp16() or a.is_bf16() or b.is_bf16():
            if div_or_mod or ((a.is_fp16() or b.is_fp16()) and (a.is_bf16() or b.is_bf16())):
                return T.float32
            return a if a.is_floating() else b
        # 4) both integers; Triton refuses /, // and % between signed and unsigned ones
        if div_or_mod and a.is_int_unsigned() != b.is_int_unsigned() and not (a.is_int1() or b.is_int1()):
            raise TileTypeError(f"Cannot use /, // or % with {a} and {b} because they have different signedness "
                                "(the result would hardly be useful); cast them to the same signedness")
        return self.integer_promote(a, b)

    # ===--------------------------------------------------------------------===
    # Shapes
    # ===--------------------------------------------------------------------===
    def broadcast_to_shape(self, x: tensor, shape: Sequence[int]) -> tensor:
        shape = tuple(int(d) for d in shape)
        if not x.type.is_block():
            return tensor(self.builder.create_splat(x.handle, block_type(x.dtype, shape)), block_type(x.dtype, shape))
        if x.type.shape == shape:
            return x
        src = x.type.shape
        if len(src) > len(shape):
            raise TileValueError(f"cannot broadcast a block of shape {list(src)} to the smaller rank shape {list(shape)}")
        while len(x.type.shape) < len(shape):
            x = self.expand_dims(x, 0)
        for i, (s, d) in enumerate(zip(x.type.shape, shape)):
            if s != d and s != 1:
                raise TileValueError(f"cannot broadcast shape {list(src)} to {list(shape)}: dimension {i} is {s}, not 1 or {d}")
        ty = block_type(x.dtype, shape)
        return tensor(self.builder.create_broadcast(x.handle, ty), ty)

    def broadcast_shapes(self, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
        rank = max(len(a), len(b))
        a = (1,) * (rank - len(a)) + a
        b = (1,) * (rank - len(b)) + b
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise TileValueError(
                    f"incompatible shapes for broadcasting: {list(a)} and {list(b)} (dimension {i}: {x} vs {y})"
                )
            out.append(max(x, y))
        return tuple(out)

    def broadcast_pair(self, a: tensor, b: tensor) -> tuple[tensor, tensor]:
        if not a.type.is_block() and not b.type.is_block():
            return a, b
        shape = self.broadcast_shapes(a.type.shape, b.type.shape)
        return self.broadcast_to_shape(a, shape), self.broadcast_to_shape(b, shape)

    def expand_dims(self, x: tensor, axis: int) -> tensor:
        if not x.type.is_block():
            if axis not in (0, -1):
                raise TileValueError(f"invalid axis {axis}: expand_dims of a scalar needs axis 0 or -1")
            ty = block_type(x.dtype, (1,))
            return tensor(self.builder.create_splat(x.handle, ty), ty)
        rank = len(x.type.shape)
        given = axis
        if axis < 0:
            axis += rank + 1
        if not 0 <= axis <= rank:
            raise TileValueError(f"invalid axis {given}: expand_dims needs an axis in [{-rank - 1}, {rank}] for a block "
                                 f"of rank {rank}")
        shape = x.type.shape[:axis] + (1,) + x.type.shape[axis:]
        ty = block_type(x.dtype, shape)
        return tensor(self.builder.create_expand_dims(x.handle, axis, ty), ty)

    def reshape(self, x: tensor, shape: Sequence[int]) -> tensor:
        shape = tuple(int(_unwrap(d)) for d in shape)
        numel = 1
        for d in shape:
            numel *= d
        if not x.type.is_block():
            if not shape:
                return x
            return self.broadcast_to_shape(x, shape) if numel == 1 else self._bad_reshape(x, shape)
        if not shape and x.type.numel == 1:  # a one-element block to its scalar
            return self.reduce(self.reshape(x, (1,)) if len(x.type.shape) != 1 else x, 0, "max")
        if numel != x.type.numel:
            self._bad_reshape(x, shape)
        ty = block_type(x.dtype, shape)
        if ty == x.type:
            return x
        return tensor(self.builder.create_reshape(x.handle, ty), ty)

    def _bad_reshape(self, x: tensor, shape: tuple[int, ...]):
        raise TileValueError(f"cannot reshape {list(x.type.shape)} ({x.numel.value} elements) to {list(shape)}")

    def getitem(self, x: tensor, slices: Any) -> tensor:
        if not isinstance(slices, tuple):
            slices = (slices,)
        dim = 0
        for s in slices:
            s = _unwrap(s)
            if s is None:
                x = self.expand_dims(x, dim)
                dim += 1
            elif isinstance(s, slice) and s == slice(None, None, None):
                dim += 1
            else:
                raise TileTypeError(f"unsupported tensor index {s!r}: tile indexing supports only None and ':'; "
                                    "use tl.load for element access")
        return x

    def validate_shape(self, shape: Sequence[int], what: str) -> tuple[int, ...]:
        shape = tuple(int(_unwrap(d)) for d in shape)
        numel = 1
        for d in shape:
            if not is_power_of_two(d):
                raise TileValueError(f"{what}: every dimension must be a power of two, got shape {list(shape)}")
            numel *= d
        if numel > MAX_TENSOR_NUMEL:
            raise TileValueError(f"{what}: {numel} elements exceed the maximum of {MAX_TENSOR_NUMEL} per block")
        return shape

    # ===--------------------------------------------------------------------===
    # Casts
    # ===--------------------------------------------------------------------===
    def cast(self, x: Any, dst: dtype, bitcast: bool = False) -> tensor:
        x = self.to_tensor(x)
        if not isinstance(dst, dtype):
            raise TileTypeError(f"expected a tile dtype such as tl.float32, got {dst!r}")
        src = x.dtype
        if src == dst:
            return x
        ty = _with_shape(dst, x.type)
        if bitcast:
            if src.primitive_bitwidth != dst.primitive_bitwidth:
                raise TileTypeError(f"cannot bitcast {src} ({src.primitive_bitwidth} bits) to {dst} ({dst.primitive_bitwidth} bits)")
            return tensor(self.builder.create_cast("bitcast", x.handle, ty), ty)
        if dst.is_int1() and not src.is_ptr():
            return self.not_equal_zero(x)
        if src.is_floating() and dst.is_floating() and src.primitive_bitwidth == dst.primitive_bitwidth:
            return self.cast(self.cast(x, T.float32), dst)  # fp16 <-> bf16 goes through fp32
        return tensor(self.builder.create_cast(self.cast_op(src, dst), x.handle, ty), ty)

    @staticmethod
    def cast_op(src: dtype, dst: dtype) -> str:
        """The single arith cast that converts `src` to `dst` (int1 destinations are handled by != 0)."""
        if src.is_ptr() or dst.is_ptr():
            if src.is_ptr() and dst.is_ptr():
                return "bitcast"
            raise TileTypeError(f"cannot cast {src} to {dst}: pointers only cast to other pointers")
        if src.is_floating() and dst.is_floating():
            if src.primitive_bitwidth == dst.primitive_bitwidth:
                raise AssertionError("fp16 <-> bf16 goes through fp32")
            return "extf" if dst.primitive_bitwidth > src.primitive_bitwidth else "truncf"
        if src.is_int() and dst.is_int():
            if dst.int_bitwidth == src.int_bitwidth:
                return "bitcast"
            if dst.int_bitwidth < src.int_bitwidth:
                return "trunci"
            return "extsi" if src.is_int_signed() else "extui"
        if src.is_floating():
            return "fptosi" if dst.is_int_signed() else "fptoui"
        return "sitofp" if src.is_int_signed() else "uitofp"

    def not_equal_zero(self, x: tensor) -> tensor:
        zero = self.cast(0, x.dtype) if not x.dtype.is_floating() else self.cast(0.0, x.dtype)
        return self.compare("ne", x, zero)

    # ===--------------------------------------------------------------------===
    # Binary operators
    # ===--------------------------------------------------------------------===
    def binary_operands(self, a: Any, b: Any, div_or_mod: bool = False, allow_ptr: bool = False) -> tuple[tensor, tensor]:
        """Convert, broadcast and promote the operands of an arithmetic operator.

        A Python literal is materialized directly in the computation type, so `x_fp64 * 0.1`
        uses the double nearest 0.1, not a float32 rounding of it.
        """
        a_lit, b_lit = _is_literal(a), _is_literal(b)
        a_ty = self.literal_dtype(a) if a_lit else self.to_tensor(a).dtype
        b_ty = self.literal_dtype(b) if b_lit else self.to_tensor(b).dtype
        if a_ty.is_ptr() or b_ty.is_ptr():
            if not allow_ptr:
                raise TileTypeError(f"this operator does not accept pointers (operands are {a_ty} and {b_ty})")
            return self.broadcast_pair(self.to_tensor(a), self.to_tensor(b))
        ty = self.computation_type(a_ty, a_lit, b_ty, b_lit, div_or_mod)
        a_t = self.literal(a, ty) if a_lit else self.cast(a, ty)
        b_t = self.literal(b, ty) if b_lit else self.cast(b, ty)
        return self.broadcast_pair(a_t, b_t)

    @staticmethod
    def literal_dtype(x: Any) -> dtype:
        """The type a Python number gets on its own: bool -> int1, int -> int32/int64/uint64, float -> fp32."""
        x = _unwrap(x)
        if isinstance(x, bool):
            return T.int1
        if isinstance(x, int):
            if -(2**31) <= x < 2**31:
                return T.int32
            if -(2**63) <= x < 2**63:
                return T.int64
            if 0 <= x < 2**64:
                return T.uint64
            raise TileValueError(f"integer constant {x} does not fit in 64 bits")
        if x != 0.0 and abs(x) != float("inf") and x == x and not 2.0**-126 <= abs(x) <= FLOAT32_MAX:
            return T.float64  # as in Triton: a float fp32 cannot hold (nor as a normal number) is fp64
        return T.float32

    def literal(self, value: Any, ty: dtype) -> tensor:
        """A Python number as a constant of type `ty` (floats truncate toward zero into integers)."""
        value = _unwrap(value)
        if ty.is_int1():
            value = bool(value)
        elif ty.is_int():
            value = int(value)
            width = ty.int_bitwidth
            if not -(1 << (width - 1)) <= value < (1 << width):  # fits neither the signed nor the unsigned range
                raise TileValueError(f"integer constant {value} is out of range for {ty}")
        else:
            value = float(value)
        return tensor(self.builder.get_constant(value, ty), ty)

    def _arith(self, int_op: str, float_op: str | None, a: tensor, b: tensor) -> tensor:
        if a.dtype.is_floating():
            if float_op is None:
                raise TileTypeError(f"this operator needs integer operands, got {a.dtype}")
            return tensor(self.builder.create_binary(float_op, a.handle, b.handle, a.type), a.type)
        return tensor(self.builder.create_binary(int_op, a.handle, b.handle, a.type), a.type)

    def add(self, a: Any, b: Any) -> tensor:
        a, b = self.binary_operands(a, b, allow_ptr=True)
        if b.dtype.is_ptr() and not a.dtype.is_ptr():
            a, b = b, a
        if a.dtype.is_ptr():
            return self.addptr(a, b)
        return self._arith("addi", "addf", a, b)

    def sub(self, a: Any, b: Any) -> tensor:
        a, b = self.binary_operands(a, b, allow_ptr=True)
        if a.dtype.is_ptr():
            return self.addptr(a, self.minus(b))
        if b.dtype.is_ptr():
            raise TileTypeError("cannot subtract a pointer from a non-pointer")
        return self._arith("subi", "subf", a, b)

    def addptr(self, ptr: tensor, offset: tensor) -> tensor:
        if offset.dtype.is_ptr():
            raise TileTypeError("cannot add two pointers")
        if not offset.dtype.is_int():
            raise TileTypeError(f"pointer offsets must be integers, got {offset.dtype}")
        if offset.dtype.is_int1() or offset.dtype.int_bitwidth < 32:
            offset = self.cast(offset, T.int32)
        return tensor(self.builder.create_addptr(ptr.handle, offset.handle, ptr.type), ptr.type)

    def mul(self, a: Any, b: Any) -> tensor:
        return self._arith("muli", "mulf", *self.binary_operands(a, b))

    def truediv(self, a: Any, b: Any, rounding: str = "") -> tensor:
        a_lit, b_lit = _is_literal(a), _is_literal(b)
        a, b = self.binary_operands(a, b, div_or_mod=True)
        if a.dtype.is_int():
            # int / int is computed in fp32 (fp64 if either side is 64-bit), as in Triton
            wide = a.dtype.int_bitwidth > 32 and not (a_lit and b_lit)
            target = T.float64 if wide else T.float32
            a, b = self.cast(a, target), self.cast(b, target)
        return self._arith("", "divf_rn" if rounding == "rn" else "divf", a, b)

    def floordiv(self, a: Any, b: Any) -> tensor:
        a, b = self.binary_operands(a, b, div_or_mod=True)
        if not a.dtype.is_int():
            raise TileTypeError(f"'//' is only defined for integers (got {a.dtype}); use '/' and tl.floor")
        return self._arith("divsi" if a.dtype.is_int_signed() else "divui", None, a, b)

    def mod(self, a: Any, b: Any) -> tensor:
        a, b = self.binary_operands(a, b, div_or_mod=True)
        return self._arith("remsi" if a.dtype.is_int_signed() else "remui", "remf", a, b)

    def _bitwise(self, op: str, a: Any, b: Any) -> tensor:
        a, b = self.binary_operands(a, b)
        if not a.dtype.is_int():
            raise TileTypeError(f"bitwise operators need integer operands, got {a.dtype}")
        return self._arith(op, None, a, b)

    def and_(self, a: Any, b: Any) -> tensor:
        return self._bitwise("andi", a, b)

    def or_(self, a: Any, b: Any) -> tensor:
        return self._bitwise("ori", a, b)

    def xor_(self, a: Any, b: Any) -> tensor:
        return self._bitwise("xori", a, b)

    def shl(self, a: Any, b: Any) -> tensor:
        return self._bitwise("shli", a, b)

    def shr(self, a: Any, b: Any) -> tensor:
        # Triton's rule: the shifted tile's own signedness (the left one's; the right one's when the left is a
        # Python number) picks an arithmetic or a logical shift, before both are promoted (int32 >> uint32
        # shifts arithmetically, giving uint32 bits)
        own = a if isinstance(a, tensor) else b
        a, b = self.binary_operands(a, b)
        if not a.dtype.is_int():
            raise TileTypeError(f"'>>' needs integer operands, got {a.dtype}")
        signed = (own if isinstance(own, tensor) else a).dtype.is_int_signed()
        return self._arith("shrsi" if signed else "shrui", None, a, b)

    def minimum(self, a: Any, b: Any, propagate_nan: bool = True) -> tensor:
        """Floats: NaN if either is NaN, or with propagate_nan=False only if both are."""
        a, b = self.binary_operands(a, b)
        return self._arith("minsi" if a.dtype.is_int_signed() else "minui", "minimumf" if propagate_nan else "minnumf",
                           a, b)

    def maximum(self, a: Any, b: Any, propagate_nan: bool = True) -> tensor:
        a, b = self.binary_operands(a, b)
        return self._arith("maxsi" if a.dtype.is_int_signed() else "maxui", "maximumf" if propagate_nan else "maxnumf",
                           a, b)

    def umulhi(self, a: Any, b: Any) -> tensor:
        """The high half of the double-width product of a and b read as unsigned (any integer width)."""
        a, b = self.binary_operands(a, b)
        if not a.dtype.is_int() or a.dtype.is_int1():
            raise TileTypeError(f"tl.umulhi needs integer operands, got {a.dtype}")
        return tensor(self.builder.create_binary("mulhiui", a.handle, b.handle, a.type), a.type)

    # ===--------------------------------------------------------------------===
    # Comparisons
    # ===--------------------------------------------------------------------===
    _FLOAT_PREDICATE = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
    _SIGNED_PREDICATE = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
    _UNSIGNED_PREDICATE = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}

    def compare(self, op: str, a: Any, b: Any) -> tensor:
        a, b = self.binary_operands(a, b)
        if a.dtype.is_floating():
            predicate = self._FLOAT_PREDICATE[op]
        elif a.dtype.is_int_signed():
            predicate = self._SIGNED_PREDICATE[op]
        else:
            predicate = self._UNSIGNED_PREDICATE[op]
        ty = _with_shape(T.int1, a.type)
        return tensor(self.builder.create_cmp(predicate, a.handle, b.handle, ty), ty)

    def eq(self, a: Any, b: Any) -> tensor:
        return self.compare("eq", a, b)

    def ne(self, a: Any, b: Any) -> tensor:
        return self.compare("ne", a, b)

    def lt(self, a: Any, b: Any) -> tensor:
        return self.compare("lt", a, b)

    def le(self, a: Any, b: Any) -> tensor:
        return self.compare("le", a, b)

    def gt(self, a: Any, b: Any) -> tensor:
        return self.compare("gt", a, b)

    def ge(self, a: Any, b: Any) -> tensor:
        return self.compare("ge", a, b)

    def logical(self, op: str, a: Any, b: Any) -> tensor:
        """`and` / `or` between tile values: both sides become int1 first."""
        a, b = self.cast(a, T.int1), self.cast(b, T.int1)
        a, b = self.broadcast_pair(a, b)
        return tensor(self.builder.create_binary(op, a.handle, b.handle, a.type), a.type)

    def logical_not(self, x: Any) -> tensor:
        return self.compare("eq", self.cast(x, T.int1), False)

    # ===--------------------------------------------------------------------===
    # Unary operators
    # ===--------------------------------------------------------------------===
    def minus(self, x: Any) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.is_ptr():
            raise TileTypeError("cannot negate a pointer")
        if x.dtype.is_floating():
            return tensor(self.builder.create_unary("negf", x.handle, x.type), x.type)
        return self.sub(self.cast(0, x.dtype), x)

    def invert(self, x: Any) -> tensor:
        x = self.to_tensor(x)
        if not x.dtype.is_int():
            raise TileTypeError(f"'~' needs an integer operand, got {x.dtype}")
        ones = self.cast(True if x.dtype.is_int1() else -1, x.dtype)
        return self.xor_(x, ones)

    def abs(self, x: Any) -> tensor:
        x = self.to_tensor(x)
        if x.dtype.is_floating():
            return tensor(self.builder.create_unary("absf", x.handle, x.type), x.type)
        if x.dtype.is_int_signed():
            return tensor(self.builder.create_unary("absi", x.handle, x.type), x.type)
        if x.dtype.is_int():
            return x
        raise TileTypeError(f"abs is not defined for {x.dtype}")

    def float_math(self, op: str, x: Any, name: str) -> tensor:
        """exp, log, sqrt, ...: floats only; fp16/bf16 are computed in fp32 and rounded back."""
        x = self.to_tensor(x)
        if not x.dtype.is_floating():
            raise TileTypeError(f"tl.{name} expects a floating-point argument, got {x.dtype}; convert it with .to(tl.float32)")
        if x.dtype.is_fp16() or x.dtype.is_bf16():
            wide = self.cast(x, T.float32)
            return self.cast(tensor(self.builder.create_unary(op, wide.handle, wide.type), wide.type), x.dtype)
        return tensor(self.builder.create_unary(op, x.handle, x.type), x.type)

    def float_math_binary(self, op: str, a: Any, b: Any, name: str) -> tensor:
        """pow, atan2, copysign, hypot, nextafter: floats after promotion; fp16/bf16 are computed in fp32 and
        rounded back (nextafter refuses them)."""
        a, b = self.binary_operands(a, b)
        if not a.dtype.is_floating():
            raise TileTypeError(f"{name} expects floating-point arguments, got {a.dtype}; convert them with .to(tl.float32)")
        if (a.dtype.is_fp16() or a.dtype.is_bf16()) and op == "nextafter":
            raise TileTypeError(f"{name} on {a.dtype} is not supported (its step would round away in float32)")
        if a.dtype.is_fp16() or a.dtype.is_bf16():
            wa, wb = self.cast(a, T.float32), self.cast(b, T.float32)
            return self.cast(tensor(self.builder.create_binary(op, wa.handle, wb.handle, wa.type), wa.type), a.dtype)
        return tensor(self.builder.create_binary(op, a.handle, b.handle, a.type), a.type)

    def fma(self, a: Any, b: Any, c: Any) -> tensor:
        a, b = self.binary_operands(a, b)
        a, c = self.binary_operands(a, c)
        a, b = self.binary_operands(a, b)
        if not a.dtype.is_floating():
            raise TileTypeError(f"tl.fma expects floating-point arguments, got {a.dtype}")
        return tensor(self.builder.create_fma(a.handle, b.handle, c.handle, a.type), a.type)

    def where(self, cond: Any, a: Any, b: Any) -> tensor:
        if isinstance(cond, tensor) and cond.dtype != T.int1:
            self.warn(f"tl.where's condition is {cond.dtype}, not a boolean: it is compared with zero "
                      "(write the comparison, e.g. `x != 0`, to say so)")
        cond = self.cast(cond, T.int1)
        a, b = self.binary_operands(a, b, allow_ptr=True)
        if a.dtype != b.dtype:
            raise TileTypeError(f"tl.where branches have different types: {a.dtype} and {b.dtype}")
        shape = self.broadcast_shapes(cond.type.shape, a.type.shape) if (cond.type.is_block() or a.type.is_block()) else None
        if shape is not None:
            cond, a, b = (self.broadcast_to_shape(v, shape) for v in (cond, a, b))
        return tensor(self.builder.create_select(cond.handle, a.handle, b.handle, a.type), a.type)

    # ===--------------------------------------------------------------------===
    # Creation and program ids
    # ===--------------------------------------------------------------------===
    def program_id(self, axis: int) -> tensor:
        if axis not in (0, 1, 2):
            raise TileValueError(f"program_id axis must be 0, 1, or 2 but got {axis}")
        return tensor(self.builder.create_program_id(axis), T.int32)

    def num_programs(self, axis: int) -> tensor:
        if axis not in (0, 1, 2):
            raise TileValueError(f"num_programs axis must be 0, 1 or 2, got {axis}")
        return tensor(self.builder.create_num_programs(axis), T.int32)

    def arange(self, start: Any, end: Any) -> tensor:
        start, end = _unwrap(start), _unwrap(end)
        if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
            raise TileTypeError(
                "tl.arange bounds must be compile-time integers (tl.constexpr or literals), "
                f"got {type(start).__name__} and {type(end).__name__} (a name assigned a number holds a "
                "scalar tile; write `n: tl.constexpr = 16` to keep a compile-time number)"
            )
        if end <= start:
            raise TileValueError(f"tl.arange needs end > start, got arange({start}, {end})")
        if not is_power_of_two(end - start):
            raise TileValueError(f"tl.arange's range must be a power of two, got {end - start} (arange({start}, {end}))")
        ty = block_type(T.int32, (end - start,))
        return tensor(self.builder.create_make_range(start, end, ty), ty)

    def full(self, shape: Sequence[Any], value: Any, dtype_: dtype) -> tensor:
        shape = self.validate_shape(shape, "tl.full/tl.zeros")
        if not isinstance(dtype_, dtype):
            raise TileTypeError(f"expected a tile dtype such as tl.float32, got {dtype_!r}")
        scalar = self.literal(value, dtype_) if _is_literal(value) else self.cast(value, dtype_)
        if not shape:
            return scalar
        return self.broadcast_to_shape(scalar, shape)

    # ===--------------------------------------------------------------------===
    # Memory
    # ===--------------------------------------------------------------------===
    @staticmethod
    def cache_hints(name: str, cache_modifier: Any, eviction_policy: Any, volatile: Any = False) -> dict[str, Any]:
        """`tl.load`/`tl.store`'s hint arguments, checked, as create_load/create_store's keywords
        (Triton's spellings: cache modifiers with a leading dot, "" for the defaults)."""
        allowed = LOAD_CACHE_MODIFIERS if name == "tl.load" else STORE_CACHE_MODIFIERS
        cache, evict = _unwrap(cache_modifier), _unwrap(eviction_policy)
        choices = ", ".join(repr(f".{c}") for c in allowed)
        if cache is None:
            cache = ""
        if not isinstance(cache, str) or (cache and (not cache.startswith(".") or cache[1:] not in allowed)):
            raise TileValueError(f"{name}: cache_modifier {cache!r} is not supported; use '' or one of {choices}")
        if evict is None:
            evict = ""
        if not isinstance(evict, str) or (evict and evict not in EVICTION_POLICIES):
            policies = ", ".join(repr(e) for e in EVICTION_POLICIES)
            raise TileValueError(f"{name}: eviction_policy {evict!r} is not supported; use '' or one of {policies}")
        hints: dict[str, Any] = {"cache": cache[1:], "evict": evict}
        if name == "tl.load":
            volatile = _unwrap(volatile)
            if not isinstance(volatile, bool | int) or volatile not in (0, 1):
                raise TileValueError(f"tl.load: volatile must be a constant True or False, got {volatile!r}")
            hints["volatile"] = bool(volatile)
        return hints

    def load(self, ptr: Any, mask: Any = None, other: Any = None, hints: dict[str, Any] | None = None) -> tensor:
        ptr = self.to_tensor(ptr)
        if not ptr.dtype.is_ptr():
            raise TileTypeError(f"tl.load expects a pointer or a block of pointers, got {ptr.dtype}")
        elt = ptr.dtype.element_ty
        mask_t = None if _unwrap(mask) is None else self.cast(mask, T.int1)
        if mask_t is not None and mask_t.type.is_block():
            shape = self.broadcast_shapes(ptr.type.shape, mask_t.type.shape)
            ptr, mask_t = self.broadcast_to_shape(ptr, shape), self.broadcast_to_shape(mask_t, shape)
        elif mask_t is not None and ptr.type.is_block():
            mask_t = self.broadcast_to_shape(mask_t, ptr.type.shape)
        other_t = None
        if _unwrap(other) is not None:
            if mask_t is None:
                raise TileValueError("tl.load: 'other' is given but 'mask' is not")
            other_t = self.cast(other, elt)
            if ptr.type.is_block():
                other_t = self.broadcast_to_shape(other_t, ptr.type.shape)
        ty = _with_shape(elt, ptr.type)
        handle = self.builder.create_load(
            ptr.handle, None if mask_t is None else mask_t.handle, None if other_t is None else other_t.handle, ty,
            **(hints or {})
        )
        return tensor(handle, ty)

    def store(self, ptr: Any, value: Any, mask: Any = None, hints: dict[str, Any] | None = None) -> None:
        ptr = self.to_tensor(ptr)
        if not ptr.dtype.is_ptr():
            raise TileTypeError(f"tl.store expects a pointer or a block of pointers, got {ptr.dtype}")
        _check_writable(ptr, "tl.store")
        value = self.to_tensor(value)
        if value.type.is_block() and not ptr.type.is_block():
            ptr = self.broadcast_to_shape(ptr, value.type.shape)
        if ptr.type.is_block():
            if value.type.is_block() and len(value.type.shape) != len(ptr.type.shape):  # Triton's rule: no new leading dims
                raise TileValueError(f"tl.store: a value of shape {list(value.type.shape)} cannot be stored through "
                                     f"pointers of shape {list(ptr.type.shape)} (ranks differ)")
            value = self.broadcast_to_shape(value, ptr.type.shape)
        value = self.cast(value, ptr.dtype.element_ty)
        mask_t = None
        if _unwrap(mask) is not None:
            mask_t = self.cast(mask, T.int1)
            if ptr.type.is_block():
                mask_t = self.broadcast_to_shape(mask_t, ptr.type.shape)
            elif mask_t.type.is_block():
                raise TileValueError("tl.store: a block mask needs a block of pointers")
        self.builder.create_store(ptr.handle, value.handle, None if mask_t is None else mask_t.handle, **(hints or {}))

    # ===--------------------------------------------------------------------===
    # Atomics
    # ===--------------------------------------------------------------------===
    # tl.atomic_<op> -> the rmw kind for (float, signed int, unsigned int) elements; None: not allowed
    _ATOMIC_KINDS = {
        "add": ("fadd", "add", "add"),
        "max": ("fmax", "max", "umax"),
        "min": ("fmin", "min", "umin"),
        "and": (None, "and", "and"),
        "or": (None, "or", "or"),
        "xor": (None, "xor", "xor"),
        "xchg": ("xchg", "xchg", "xchg"),
    }

    def atomic_rmw(self, op: str, ptr: Any, value: Any, mask: Any = None, sem: Any = None, scope: Any = None) -> tensor:
        """tl.atomic_add/max/min/and/or/xor/xchg: update each pointed-to element once, atomically, where
        `mask` holds; return the old values (0 where it does not). Pointer, value and mask broadcast
        to one shape; the value is converted to the pointee type."""
        name = f"tl.atomic_{op}"
        ptr = self._atomic_pointer(ptr, name)
        elt = ptr.dtype.element_ty
        kind = self._ATOMIC_KINDS[op][0 if elt.is_floating() else 1 if elt.is_int_signed() else 2]
        if kind is None:
            raise TileTypeError(f"{name} needs integer elements, got pointers to {elt}")
        mask_t = None if _unwrap(mask) is None else self.cast(mask, T.int1)
        ptr, value, mask_t = self._atomic_operands(ptr, value, mask_t)
        sem, scope = self._atomic_order(sem, scope, name)
        mask_handle = None if mask_t is None else mask_t.handle
        handle = self.builder.create_atomic_rmw(kind, ptr.handle, value.handle, mask_handle, sem, scope, value.type)
        return tensor(handle, value.type)

    def atomic_cas(self, ptr: Any, cmp: Any, value: Any, sem: Any = None, scope: Any = None) -> tensor:
        """tl.atomic_cas: where the element equals `cmp` (bit for bit), replace it by `value`; return the old one."""
        ptr = self._atomic_pointer(ptr, "tl.atomic_cas")
        ptr, value, cmp = self._atomic_operands(ptr, value, self.cast(cmp, ptr.dtype.element_ty))
        sem, scope = self._atomic_order(sem, scope, "tl.atomic_cas")
        handle = self.builder.create_atomic_cas(ptr.handle, cmp.handle, value.handle, sem, scope, value.type)
        return tensor(handle, value.type)

    def _atomic_pointer(self, ptr: Any, name: str) -> tensor:
        ptr = self.to_tensor(ptr)
        if not ptr.dtype.is_ptr():
            raise TileTypeError(f"{name} expects a pointer or a block of pointers, got {ptr.dtype}")
        _check_writable(ptr, name)
        elt = ptr.dtype.element_ty
        if elt.is_int() and elt.int_bitwidth not in (32, 64):
            raise TileTypeError(
                f"{name} does not support pointers to {elt}: atomics need 32- or 64-bit integers or "
                "fp16/bf16/fp32/fp64 elements"
            )
        return ptr

    def _atomic_operands(self, ptr: tensor, value: Any, extra: tensor | None) -> tuple[tensor, tensor, tensor | None]:
        """Pointer, value (converted to the pointee type) and `extra` (a mask, or cas's compare value)
        broadcast to one shape."""
        value = self.cast(value, ptr.dtype.element_ty)
        blocks = [t.type.shape for t in (ptr, value, extra) if t is not None and t.type.is_block()]
        if not blocks:
            return ptr, value, extra
        shape = blocks[0]
        for other in blocks[1:]:
            shape = self.broadcast_shapes(shape, other)
        ptr, value = self.broadcast_to_shape(ptr, shape), self.broadcast_to_shape(value, shape)
        return ptr, value, None if extra is None else self.broadcast_to_shape(extra, shape)

    @staticmethod
    def _atomic_order(sem: Any, scope: Any, name: str) -> tuple[str, str]:
        """Triton's defaults: acq_rel ordering, gpu scope."""
        sem, scope = _unwrap(sem) or "acq_rel", _unwrap(scope) or "gpu"
        if sem not in ATOMIC_SEMS:
            raise TileValueError(f"{name}: sem must be one of {', '.join(ATOMIC_SEMS)}, got {sem!r}")
        if scope not in ATOMIC_SCOPES:
            raise TileValueError(f"{name}: scope must be one of {', '.join(ATOMIC_SCOPES)}, got {scope!r}")
        return sem, scope

    # ===--------------------------------------------------------------------===
    # Reductions
    # ===--------------------------------------------------------------------===
    def reduce(self, x: Any, axis: Any, kind: str, keep_dims: bool = False, result_dtype: dtype | None = None) -> tensor:
        x = self.to_tensor(x)
        if not x.type.is_block():
            raise TileValueError(f"tl.{kind} needs a block, got a scalar of type {x.dtype}")
        axis = _unwrap(axis)
        if axis is None:
            if len(x.type.shape) != 1:
                x = self.reshape(x, (x.type.numel,))
            axis = 0
        rank = len(x.type.shape)
        if not isinstance(axis, int) or not -rank <= axis < rank:
            raise TileValueError(f"tl.{kind}: axis {axis!r} is out of range for a block of rank {rank}")
        axis %= rank
        if result_dtype is not None:
            x = self.cast(x, result_dtype)
        if kind == "xor_sum" and not x.dtype.is_int():
            raise TileTypeError(f"tl.xor_sum needs integers, got {x.dtype}")
        out_dtype = T.int32 if kind in ("argmax", "argmin") else x.dtype
        if x.dtype.is_int_unsigned() and kind in ("max", "min", "argmax", "argmin"):  # the order differs
            kind = {"max": "umax", "min": "umin", "argmax": "argumax", "argmin": "argumin"}[kind]
        shape = x.type.shape[:axis] + x.type.shape[axis + 1:]
        ty: dtype | block_type = block_type(out_dtype, shape) if shape else out_dtype
        out = tensor(self.builder.create_reduce(x.handle, axis, kind, ty), ty)
        if keep_dims:
            out = self.expand_dims(out, axis)
        return out

    def sum_dtype(self, x: tensor) -> dtype | None:
        """Sums of small integers accumulate in int32, as in Triton."""
        if x.dtype.is_int() and x.dtype.int_bitwidth < 32:
            return T.int32
        return None

    # ===--------------------------------------------------------------------===
    # Hints
    # ===--------------------------------------------------------------------===
    def hint(self, x: Any, kind: str, values: Any) -> tensor:
        x = self.to_tensor(x)
        values = _unwrap(values)
        values = tuple(int(_unwrap(v)) for v in values) if isinstance(values, (list, tuple)) else (int(values),)
        rank = len(x.type.shape) if x.type.is_block() else 1
        if len(values) != rank:
            raise TileValueError(f"{kind} hint needs {rank} value(s), one per dimension, got {len(values)}")
        return tensor(self.builder.create_hint(x.handle, kind, values), x.type)
