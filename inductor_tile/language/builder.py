"""The builder protocol: what `semantic` asks of whoever executes the language.

`semantic.py` owns every typing rule (promotion, broadcasting, checks) and calls a
builder with operands that already have the right types and shapes. Two builders
implement this protocol:

- `kernel_compiler.ir_builder.TTIRBuilder` emits TTIR ops (xdsl) and returns SSA values;
- `kernel_compiler.interpreter.builder.InterpreterBuilder` computes with torch tensors.

A handle is whatever the builder returns (an SSA value, a torch tensor). Types are the
language's own: a scalar `dtype`, a `pointer_type`, or a `block_type`. Op names are the
MLIR op names without the dialect prefix, so both builders read from the same table.
"""

from __future__ import annotations

from typing import Any, Protocol

from .dtypes import block_type, dtype

Handle = Any
Type = dtype | block_type

# arith binary ops, by the name used in `create_binary`.
INT_BINARY_OPS = (
    "addi", "subi", "muli", "divsi", "divui", "remsi", "remui",
    "andi", "ori", "xori", "shli", "shrsi", "shrui",
    "maxsi", "maxui", "minsi", "minui",
    "mulhiui",  # the high half of the unsigned double-width product (tl.umulhi)
)
# divf may be approximated by a target (GPU: within 2 ulp); divf_rn is always correctly rounded
FLOAT_BINARY_OPS = ("addf", "subf", "mulf", "divf", "divf_rn", "remf", "maximumf", "minimumf", "maxnumf", "minnumf")
# math binary ops (libdevice/libm functions of two floats), also through `create_binary`
# orthogonal polynomials of torch.special, functions of (x, n) (libdevice names, extensions of Triton's)
ORTHOGONAL_POLYNOMIALS = (
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
    "legendre_polynomial_p",
)
# math binary ops (libdevice/libm functions of two floats), also through `create_binary`
MATH_BINARY_OPS = ("powf", "atan2", "copysign", "hypot", "nextafter", "zeta", "polygamma", "igamma", "igammac",
                   *ORTHOGONAL_POLYNOMIALS)
# math unary ops, by the name used in `create_unary`.
UNARY_OPS = (
    "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "erf",
    "floor", "ceil", "absf", "absi", "negf",
)
# libdevice-style functions of one float (`inductor_tile.language.extra.libdevice`), also through `create_unary`
MATH_UNARY_OPS = (
    "tanh", "log1p", "expm1", "log10", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "trunc", "roundeven", "round", "erfc", "lgamma", "digamma", "erfinv",
    "j0", "j1", "y0", "y1", "cyl_bessel_i0", "cyl_bessel_i1", "i0e", "i1e", "erfcx", "ndtri",
    "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0", "airy_ai",
)
# arith casts, by the name used in `create_cast`.
CAST_OPS = ("extf", "truncf", "extsi", "extui", "trunci", "sitofp", "uitofp", "fptosi", "fptoui", "bitcast")
# predicates of `create_cmp`: integer ones go to arith.cmpi, float ones to arith.cmpf.
INT_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
FLOAT_PREDICATES = ("oeq", "une", "olt", "ole", "ogt", "oge")
# u* kinds are the unsigned-integer versions (the IR's integers are signless); prod (any numbers)
# and xor_sum (integers) wrap like the elementwise ops
REDUCE_KINDS = ("sum", "max", "min", "argmax", "argmin", "umax", "umin", "argumax", "argumin", "prod", "xor_sum")

# read-modify-write kinds of `create_atomic_rmw` (f*: floats; u*: unsigned integers; the rest: integers,
# except xchg, which takes any element type). fmax/fmin propagate NaN like maximumf/minimumf.
ATOMIC_RMW_KINDS = ("add", "fadd", "max", "min", "umax", "umin", "fmax", "fmin", "and", "or", "xor", "xchg")
# memory orderings and scopes of atomics (Triton's names)
ATOMIC_SEMS = ("relaxed", "acquire", "release", "acq_rel")
ATOMIC_SCOPES = ("cta", "gpu", "sys")
# memory-access hints of create_load / create_store (Triton's spellings without the dot; "" is the default)
LOAD_CACHE_MODIFIERS = ("ca", "cg", "cs", "cv")
STORE_CACHE_MODIFIERS = ("wb", "cg", "cs", "wt")
EVICTION_POLICIES = ("evict_first", "evict_last")
# how fp32 operands of create_dot may be rounded on tensor cores (CPU targets compute exactly)
DOT_INPUT_PRECISIONS = ("tf32", "tf32x3", "ieee")


class Builder(Protocol):
    # --- constants and ids --------------------------------------------------
    def get_constant(self, value: int | float | bool, ty: dtype) -> Handle:
        """A scalar constant of dtype `ty` (int1 for bools)."""

    def get_null_pointer(self, ty: dtype) -> Handle:
        """A null pointer of pointer type `ty` (for `None` pointer arguments)."""

    def create_program_id(self, axis: int) -> Handle:
        """int32 scalar: this program's index along grid axis 0, 1 or 2."""

    def create_num_programs(self, axis: int) -> Handle:
        """int32 scalar: the grid size along `axis`."""

    # --- shapes -------------------------------------------------------------
    def create_make_range(self, start: int, end: int, ty: block_type) -> Handle:
        """int32 1-D block [start, end)."""

    def create_splat(self, x: Handle, ty: block_type) -> Handle:
        """Scalar `x` repeated into a block of type `ty`."""

    def create_broadcast(self, x: Handle, ty: block_type) -> Handle:
        """Block `x` with size-1 dims stretched to `ty.shape` (same rank)."""

    def create_expand_dims(self, x: Handle, axis: int, ty: block_type) -> Handle:
        """Insert a size-1 dim at `axis`."""

    def create_reshape(self, x: Handle, ty: block_type) -> Handle:
        """Same elements in row-major order, new shape."""

    # --- arithmetic ---------------------------------------------------------
    def create_binary(self, op: str, lhs: Handle, rhs: Handle, ty: Type) -> Handle:
        """`op` is one of INT_BINARY_OPS, FLOAT_BINARY_OPS or MATH_BINARY_OPS; lhs, rhs and result have type `ty`.
        Integer division and remainder are C-like (truncating); `remf` is C's fmod."""

    def create_cmp(self, predicate: str, lhs: Handle, rhs: Handle, ty: Type) -> Handle:
        """Compare; `ty` is the int1 result type (scalar or block)."""

    def create_select(self, cond: Handle, a: Handle, b: Handle, ty: Type) -> Handle:
        """Elementwise `cond ? a : b`; all operands already have the shape of `ty`."""

    def create_unary(self, op: str, x: Handle, ty: Type) -> Handle:
        """`op` is one of UNARY_OPS or MATH_UNARY_OPS."""

    def create_fma(self, a: Handle, b: Handle, c: Handle, ty: Type) -> Handle:
        """a * b + c with one rounding."""

    def create_cast(self, op: str, x: Handle, ty: Type) -> Handle:
        """`op` is one of CAST_OPS; `ty` is the destination type."""

    # --- memory -------------------------------------------------------------
    def create_addptr(self, ptr: Handle, offset: Handle, ty: Type) -> Handle:
        """ptr + offset elements (offset is an integer scalar/block of the same shape)."""

    def create_load(self, ptr: Handle, mask: Handle | None, other: Handle | None, ty: Type, cache: str = "",
                    evict: str = "", volatile: bool = False) -> Handle:
        """Load from pointer(s). Lanes where mask is false produce `other` (undefined if None). `cache` (one of
        LOAD_CACHE_MODIFIERS or ""), `evict` (EVICTION_POLICIES or "") and `volatile` are hints to the caches:
        they never change the values loaded."""

    def create_store(self, ptr: Handle, value: Handle, mask: Handle | None, cache: str = "",
                     evict: str = "") -> None:
        """Store `value` at pointer(s) where mask is true; `cache` one of STORE_CACHE_MODIFIERS or ""."""

    def create_atomic_rmw(self, kind: str, ptr: Handle, value: Handle, mask: Handle | None, sem: str, scope: str,
                          ty: Type) -> Handle:
        """Atomically `*p = kind(*p, value)` for each pointer where mask is true; returns the old values
        (zero where the mask is false). `kind` is one of ATOMIC_RMW_KINDS, `sem` of ATOMIC_SEMS, `scope`
        of ATOMIC_SCOPES; value, mask and result have the pointer operand's shape, `ty` is the result type.
        Each element is updated exactly once however the tile is spread over threads."""

    def create_atomic_cas(self, ptr: Handle, cmp: Handle, value: Handle, sem: str, scope: str, ty: Type) -> Handle:
        """Atomically `old = *p; if old == cmp: *p = value` per pointer (bitwise compare); returns old."""

    # --- matrix products ----------------------------------------------------
    def create_dot(self, a: Handle, b: Handle, acc: Handle, input_precision: str, ty: block_type) -> Handle:
        """`a @ b + acc` over the last two dims (a leading batch dim allowed). a, b share an element type
        (fp16/bf16/fp32/fp64/int8); acc and the result have type `ty` (fp32, fp16, fp64 or int32)."""

    # --- the user's assembly ---------------------------------------------------
    def create_inline_asm(self, asm: str, constraints: str, args: list[Handle], types: list[Type], is_pure: bool,
                          pack: int) -> list[Handle]:
        """One result per type in `types` (the shape of the broadcast `args`): LLVM inline assembly `asm` with
        `constraints` run per element (`pack` elements per run). The interpreter cannot run it."""

    # --- reductions and hints -----------------------------------------------
    def create_reduce(self, x: Handle, axis: int, kind: str, ty: Type) -> Handle:
        """Reduce `x` along `axis`. `kind` is one of REDUCE_KINDS. `ty` is the result type
        (the input's shape without `axis`; a scalar dtype if the input was 1-D). For
        argmax/argmin the result is int32 and holds the first index of the extreme value."""

    def create_hint(self, x: Handle, kind: str, values: tuple[int, ...]) -> Handle:
        """Attach a hint (`kind` is "divisibility" or "contiguity") and return the value."""
