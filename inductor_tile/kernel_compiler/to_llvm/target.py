"""The target interface: everything the shared LLVM lowering needs to know about a machine.

The lowering (`lowering.py` and the `rules_*.py` files) is written once. What differs
between NVIDIA, AMD and the CPU lives behind this interface: the warp size, how a
program id and a thread's lane and warp are obtained, cross-lane shuffles, barriers and
shared memory, how a group of contiguous elements is loaded or stored, which float
types have native arithmetic, and the math library.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from llvmlite import ir

from ..ir.tt_memory import NO_HINTS, AccessHints


@dataclass(frozen=True)
class MathEntry:
    """How a math op is lowered: an LLVM intrinsic (`llvm.exp.f32`) or a library function."""

    symbol: str
    is_intrinsic: bool


def define_gpu_entry(module: ir.Module, body: ir.Function, name: str, user_arg_types: list[ir.Type],
                     calling_convention: str) -> ir.Function:
    """The kernel entry `name` of a GPU target: takes the user's arguments and calls `body` with them."""
    entry = ir.Function(module, ir.FunctionType(ir.VoidType(), user_arg_types), name)
    entry.calling_convention = calling_convention
    b = ir.IRBuilder(entry.append_basic_block("entry"))
    b.call(body, list(entry.args))
    b.ret_void()
    return entry


class Target(ABC):
    """A machine the tile compiler generates code for."""

    #: short name: "cpu", "cuda", "hip"
    name: str
    #: lanes per warp (1 on the CPU: one program instance is one thread holding the whole tile)
    warp_size: int
    #: the half types ("f16", "bf16") with native arithmetic; the others are i16 bit patterns in registers
    #: and their arithmetic goes through f32 (see half.py)
    native_half_kinds: frozenset[str] = frozenset()
    #: whether float adds, subtracts and multiplies may fuse into FMAs (LLVM's `contract` flag), as Triton
    #: allows on GPUs: one rounding instead of two; off where results must match unfused arithmetic
    float_contract: bool = False
    #: the tensor-core matrix instructions dots may use: 0 none (FMAs), 2 NVIDIA mma.sync (sm_80+)
    mma_version: int = 0
    #: library functions `void f(x, float *sin, float *cos)` by element type ("f32", "f64"): a sin and a cos of
    #: the same value share one argument reduction (rotary embeddings compute both of every angle)
    sincos_functions: dict[str, str] = {}
    #: whether element-wise results read slots that axis info proves equal from one leader slot (constancy.py):
    #: on GPUs a thread's slots are separate scalar registers, so the other slots' computation goes away; the
    #: CPU computes a thread's slots as SIMD vectors, where the shuffle would only cost
    shares_equal_slots: bool = True

    # --- the module and the kernel entry -------------------------------------
    @abstractmethod
    def triple(self) -> str:
        """The LLVM target triple."""

    @abstractmethod
    def data_layout(self) -> str:
        """The LLVM data layout string ('' lets the target machine decide)."""

    @abstractmethod
    def kernel_arguments(self) -> list[ir.Type]:
        """Extra parameters the lowered kernel body takes after the user's arguments (program ids...)."""

    @abstractmethod
    def finish_kernel(self, module: ir.Module, body: ir.Function, name: str, user_arg_types: list[ir.Type],
                      num_warps: int) -> str:
        """Add the externally visible entry point (for kernel `name`) that calls `body`; return its symbol."""

    # --- where a thread is ---------------------------------------------------
    @abstractmethod
    def program_id(self, builder: ir.IRBuilder, body: ir.Function, axis: int) -> ir.Value:
        """i32: this program's index along `axis`."""

    @abstractmethod
    def num_programs(self, builder: ir.IRBuilder, body: ir.Function, axis: int) -> ir.Value:
        """i32: the grid size along `axis`."""

    @abstractmethod
    def lane_id(self, builder: ir.IRBuilder) -> ir.Value:
        """i32: this thread's lane within its warp."""

    @abstractmethod
    def warp_id(self, builder: ir.IRBuilder) -> ir.Value:
        """i32: this thread's warp within the program."""

    # --- communication between threads (unused when warp_size == num_warps == 1) ---
    def shuffle_xor(self, builder: ir.IRBuilder, value: ir.Value, lane_mask: int) -> ir.Value:
        raise NotImplementedError(f"the {self.name} target has no cross-lane shuffle")

    def barrier(self, builder: ir.IRBuilder) -> None:
        raise NotImplementedError(f"the {self.name} target has no barrier")

    def shared_memory(self, module: ir.Module, builder: ir.IRBuilder, num_bytes: int) -> ir.Value:
        raise NotImplementedError(f"the {self.name} target has no shared memory")

    # --- memory ------------------------------------------------------------------
    # every access takes the op's cache `hints` (tt_memory.AccessHints); targets without such controls ignore them
    #: whether loads/stores of a contiguous run accept a per-element mask (else the mask must be uniform per run)
    per_element_masks: bool
    #: the most bytes one contiguous access may move (a run is split to this size)
    max_vector_bytes: int
    #: the LLVM address space of global memory (atomics address it directly)
    global_address_space: int = 0
    #: the language's atomic scopes ("cta", "gpu", "sys") as LLVM sync scopes ("" is the whole system)
    atomic_sync_scopes: dict[str, str] = {}

    @abstractmethod
    def load_contiguous(self, builder: ir.IRBuilder, address: ir.Value, mask: ir.Value | None, other: ir.Value,
                        alignment: int, hints: AccessHints = NO_HINTS) -> ir.Value:
        """Load `other.type.count` consecutive elements from i64 `address`. `mask` is a vector of i1 (or, when
        `per_element_masks` is False, a scalar i1 for the whole run), `other` the values for masked-off lanes;
        `alignment` is the known byte alignment of `address`."""

    @abstractmethod
    def gather(self, builder: ir.IRBuilder, addresses: ir.Value, mask: ir.Value | None, other: ir.Value,
               hints: AccessHints = NO_HINTS) -> ir.Value:
        """Load one element per i64 address of the vector `addresses`."""

    @abstractmethod
    def store_contiguous(self, builder: ir.IRBuilder, address: ir.Value, value: ir.Value, mask: ir.Value | None,
                         alignment: int, hints: AccessHints = NO_HINTS) -> None:
        """Store the vector `value` at consecutive addresses from `address`; mask as in load_contiguous."""

    @abstractmethod
    def scatter(self, builder: ir.IRBuilder, addresses: ir.Value, value: ir.Value, mask: ir.Value | None,
                hints: AccessHints = NO_HINTS) -> None:
        """Store each element of `value` at the matching i64 address."""

    def load_scalar(self, builder: ir.IRBuilder, address: ir.Value, mask: ir.Value | None,
                    other: ir.Value, hints: AccessHints = NO_HINTS) -> ir.Value | None:
        """A scalar load of `other.type` from i64 `address` (`other` where the i1 `mask` is false), or None:
        the lowering branches around a plain load."""
        return None

    def store_scalar(self, builder: ir.IRBuilder, address: ir.Value, value: ir.Value,
                     mask: ir.Value | None, hints: AccessHints = NO_HINTS) -> bool:
        """Store the scalar `value` at i64 `address` where the i1 `mask` holds; False: the lowering branches
        around a plain store instead."""
        return False

    def atomic_rmw(self, builder: ir.IRBuilder, kind: str, sem: str, scope: str, address: ir.Value, value: ir.Value,
                   mask: ir.Value | None, used: bool) -> ir.Value | None:
        """One atomic instruction doing rmw `kind` (tt_memory.ATOMIC_RMW_KINDS) with the language's `sem` and
        `scope` at i64 `address` where the i1 `mask` holds, returning the old value (0 where it does not; any
        value when not `used`), or None: the lowering branches around LLVM's `atomicrmw` instead."""
        return None

    def atomic_vector_width(self, kind: str, element: ir.Type) -> int:
        """The most consecutive elements (of LLVM type `element`) one `atomic_rmw` of `kind` may update: it
        then gets a vector of them, at an address aligned to the vector's size."""
        return 1

    def atomic_cas(self, builder: ir.IRBuilder, sem: str, scope: str, address: ir.Value, expected: ir.Value,
                   value: ir.Value, mask: ir.Value | None) -> ir.Value | None:
        """As `atomic_rmw` for a compare-and-swap (bitwise compare with `expected`)."""
        return None

    def finalize_ir(self, text: str, entry: str) -> str:
        """Last edits to the LLVM IR text before it is parsed (what llvmlite's builder cannot spell)."""
        return text

    def emit_divf(self, builder: ir.IRBuilder, a: ir.Value, b: ir.Value) -> ir.Value | None:
        """Target-specific float division, or None for LLVM's correctly rounded `fdiv`."""
        return None

    def emit_math(self, builder: ir.IRBuilder, op: str, x: ir.Value) -> ir.Value | None:
        """Target-specific code for a math op, or None to use the `math` table."""
        return None

    def emit_rsqrt(self, builder: ir.IRBuilder, x: ir.Value) -> ir.Value | None:
        """Target-specific 1 / sqrt(x), or None for the correctly rounded sqrt and division."""
        return None

    def emit_math_binary(self, builder: ir.IRBuilder, op: str, x: ir.Value, y: ir.Value) -> ir.Value | None:
        """Target-specific code for a math op of two floats, or None to use the `math` table."""
        return None

    def emit_truncf(self, builder: ir.IRBuilder, x: ir.Value, kind: str, ty: ir.Type) -> ir.Value | None:
        """Target-specific rounding of the f32 `x` to the half kind `kind` ("f16"/"bf16"), as a value of
        the LLVM type `ty` (half, or i16 bits for a soft half), or None for the generic conversion."""
        return None

    # --- math --------------------------------------------------------------------
    @abstractmethod
    def math(self, op: str, type_name: str) -> MathEntry:
        """How to compute math op `op` ("exp", "erf", ...) on `type_name` ("f32" or "f64")."""

    def implements_math(self, op: str) -> bool:
        """Whether math op `op` (the lowering's name: "erfc", "j0", ...) compiles for this target; the
        torch.compile backend leaves the nodes of the others to a fallback kernel."""
        return True
