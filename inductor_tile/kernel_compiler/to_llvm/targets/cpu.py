"""The CPU target: one program instance is one thread that holds its whole tile in LLVM vectors.

Layouts on the CPU have one lane and one warp, so a tile's slots are all its elements and
every cross-thread step of the lowering vanishes. Loads and stores become LLVM's masked
vector loads/stores (contiguous runs) or gathers/scatters where the host has instructions
for them, else plain vector accesses or element loops (cpu_memory.py); math goes to LLVM intrinsics
and the C math library of the process, except float32 exp/tanh (vector code, cpu_math.py).
The entry point loops over a range of program ids, so the launcher can split the grid
across the machine's cores.
"""

from __future__ import annotations

import llvmlite.binding as llvm
from llvmlite import ir

from ...cpu_frame import FRAME_SLOT
from ...ir.tt_memory import NO_HINTS, AccessHints
from ..context import byte_size, intrinsic_suffix
from ..target import MathEntry, Target
from . import bessel_i, cpu_erfinv, cpu_math, cpu_memory, digamma, special_functions
from .widened import widened

I32, I64 = ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()

# math op -> (intrinsic or libm base name, is_intrinsic); libm names get an `f` suffix for f32
_MATH = {
    "exp": ("llvm.exp", True), "exp2": ("llvm.exp2", True), "log": ("llvm.log", True), "log2": ("llvm.log2", True),
    "sqrt": ("llvm.sqrt", True), "sin": ("llvm.sin", True), "cos": ("llvm.cos", True), "floor": ("llvm.floor", True),
    "ceil": ("llvm.ceil", True), "absf": ("llvm.fabs", True), "erf": ("erf", False),
    "tanh": ("tanh", False), "log1p": ("log1p", False), "expm1": ("expm1", False), "log10": ("log10", False),
    "tan": ("tan", False), "sinh": ("sinh", False), "cosh": ("cosh", False), "asin": ("asin", False),
    "acos": ("acos", False), "atan": ("atan", False), "asinh": ("asinh", False), "acosh": ("acosh", False),
    "atanh": ("atanh", False), "trunc": ("llvm.trunc", True), "roundeven": ("llvm.rint", True),
    "round": ("llvm.round", True), "pow": ("pow", False), "atan2": ("atan2", False),
    "copysign": ("llvm.copysign", True), "erfc": ("erfc", False), "lgamma": ("lgamma", False),
    "hypot": ("hypot", False), "nextafter": ("nextafter", False), "j0": ("j0", False), "j1": ("j1", False),
    "y0": ("y0", False), "y1": ("y1", False),
}
# float32 computed by the float64 library function and rounded once (glibc's j0f... are far less accurate)
_WIDENED_F32 = frozenset({"j0", "j1", "y0", "y1"})
# modified Bessel functions (bessel_i.py): op -> (order, scaled by e^-|x|)
_BESSEL_I = {"cyl_bessel_i0": (0, False), "cyl_bessel_i1": (1, False), "i0e": (0, True), "i1e": (1, True)}

# unary math without a vector instruction: one scalar call per element whatever LLVM is given
_LIBRARY_MATH = frozenset(op for op, (_, is_intrinsic) in _MATH.items() if not is_intrinsic) | {
    "exp", "exp2", "log", "log2", "sin", "cos"}


class CPUTarget(Target):
    name = "cpu"
    warp_size = 1
    native_half_kinds: frozenset[str] = frozenset()

    def triple(self) -> str:
        return llvm.get_process_triple()

    def data_layout(self) -> str:
        return ""

    # The kernel body takes (pid_x, pid_y, pid_z, grid_x, grid_y, grid_z) after the user's arguments.
    def kernel_arguments(self) -> list[ir.Type]:
        return [I32] * 6

    def program_id(self, builder: ir.IRBuilder, body: ir.Function, axis: int) -> ir.Value:
        return body.args[len(body.args) - 6 + axis]

    def num_programs(self, builder: ir.IRBuilder, body: ir.Function, axis: int) -> ir.Value:
        return body.args[len(body.args) - 3 + axis]

    def lane_id(self, builder: ir.IRBuilder) -> ir.Value:
        return ir.Constant(I32, 0)

    def warp_id(self, builder: ir.IRBuilder) -> ir.Value:
        return ir.Constant(I32, 0)

    def finish_kernel(self, module: ir.Module, body: ir.Function, name: str, user_arg_types: list[ir.Type],
                      num_warps: int) -> str:
        """`void <name>_grid(ptr frame)`: run programs [start, end) of a grid, all read from `frame`.

        The frame (runtime/cpu_launcher.py packs it with one `struct.pack_into`) holds each user
        argument in an 8-byte slot, then the grid's i32 sizes gx, gy, gz (and 4 bytes of padding),
        then the i64 `start` and `end`: one pointer is the whole foreign call, which ctypes makes
        several times faster than one with six arguments.  Program `pid` is (pid % gx, pid / gx % gy,
        pid / (gx * gy)); the divisions happen once, for `start`, and the loop steps the three ids
        like an odometer (a 64-bit division per program cost more than a one-vector program's body).
        """
        name = f"{name}_grid"
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR]), name)
        frame = fn.args[0]
        entry, loop, done = fn.append_basic_block("entry"), fn.append_basic_block("loop"), fn.append_basic_block("done")
        b = ir.IRBuilder(entry)

        def field(offset: int, ty: ir.Type) -> ir.Value:
            return b.load(b.gep(frame, [ir.Constant(I64, offset)], source_etype=ir.IntType(8)), typ=ty)

        values = [field(FRAME_SLOT * i, ty) for i, ty in enumerate(user_arg_types)]
        grid_at = FRAME_SLOT * len(user_arg_types)
        gx, gy, gz = (field(grid_at + 4 * axis, I32) for axis in range(3))
        start, end = field(grid_at + 16, I64), field(grid_at + 24, I64)
        gx64, gy64 = b.zext(gx, I64), b.zext(gy, I64)
        first = (b.trunc(b.urem(start, gx64), I32), b.trunc(b.urem(b.udiv(start, gx64), gy64), I32),
                 b.trunc(b.udiv(start, b.mul(gx64, gy64)), I32))
        b.cbranch(b.icmp_signed("<", start, end), loop, done)
        b.position_at_end(loop)
        pid = b.phi(I64)
        x, y, z = (b.phi(I32) for _ in range(3))
        for phi, initial in zip((pid, x, y, z), (start, *first)):
            phi.add_incoming(initial, entry)
        b.call(body, values + [x, y, z, gx, gy, gz])
        zero, one = ir.Constant(I32, 0), ir.Constant(I32, 1)
        x_next = b.add(x, one)
        x_wraps = b.icmp_unsigned("==", x_next, gx)
        y_next = b.add(y, b.zext(x_wraps, I32))
        y_wraps = b.icmp_unsigned("==", y_next, gy)
        following = b.add(pid, ir.Constant(I64, 1))
        for phi, value in zip((pid, x, y, z), (following, b.select(x_wraps, zero, x_next),
                                                b.select(y_wraps, zero, y_next), b.add(z, b.zext(y_wraps, I32)))):
            phi.add_incoming(value, loop)
        b.cbranch(b.icmp_signed("<", following, end), loop, done)
        b.position_at_end(done)
        b.ret_void()
        return name

    # --- memory (cache hints do not apply to the CPU's caches: ignored) -----------------
    per_element_masks = True
    shares_equal_slots = False
    max_vector_bytes = 1 << 30

    def load_contiguous(self, builder: ir.IRBuilder, address: ir.Value, mask: ir.Value | None, other: ir.Value,
                        alignment: int, hints: AccessHints = NO_HINTS) -> ir.Value:
        if cpu_memory.use_loop("load", other.type):
            return cpu_memory.load_contiguous(builder, address, mask, other, alignment)
        n, element = other.type.count, other.type.element
        mask = mask if mask is not None else _all_true(n)
        fn = _intrinsic(builder.module, f"llvm.masked.load.v{n}{intrinsic_suffix(element)}.p0", other.type,
                        [PTR, I32, mask.type, other.type])
        return builder.call(fn, [builder.inttoptr(address, PTR), ir.Constant(I32, alignment), mask, other])

    def gather(self, builder: ir.IRBuilder, addresses: ir.Value, mask: ir.Value | None, other: ir.Value,
               hints: AccessHints = NO_HINTS) -> ir.Value:
        if cpu_memory.use_loop("gather", other.type):
            return cpu_memory.gather(builder, addresses, mask, other)
        n, element = other.type.count, other.type.element
        mask = mask if mask is not None else _all_true(n)
        ptrs = builder.inttoptr(addresses, ir.VectorType(PTR, n))
        fn = _intrinsic(builder.module, f"llvm.masked.gather.v{n}{intrinsic_suffix(element)}.v{n}p0", other.type,
                        [ptrs.type, I32, mask.type, other.type])
        return builder.call(fn, [ptrs, ir.Constant(I32, byte_size(element)), mask, other])

    def store_contiguous(self, builder: ir.IRBuilder, address: ir.Value, value: ir.Value, mask: ir.Value | None,
                         alignment: int, hints: AccessHints = NO_HINTS) -> None:
        if cpu_memory.use_loop("store", value.type):
            cpu_memory.store_contiguous(builder, address, value, mask, alignment)
            return
        n, element = value.type.count, value.type.element
        mask = mask if mask is not None else _all_true(n)
        fn = _intrinsic(builder.module, f"llvm.masked.store.v{n}{intrinsic_suffix(element)}.p0", ir.VoidType(),
                        [value.type, PTR, I32, mask.type])
        builder.call(fn, [value, builder.inttoptr(address, PTR), ir.Constant(I32, alignment), mask])

    def scatter(self, builder: ir.IRBuilder, addresses: ir.Value, value: ir.Value, mask: ir.Value | None,
                hints: AccessHints = NO_HINTS) -> None:
        if cpu_memory.use_loop("scatter", value.type):
            cpu_memory.scatter(builder, addresses, value, mask)
            return
        n, element = value.type.count, value.type.element
        mask = mask if mask is not None else _all_true(n)
        ptrs = builder.inttoptr(addresses, ir.VectorType(PTR, n))
        fn = _intrinsic(builder.module, f"llvm.masked.scatter.v{n}{intrinsic_suffix(element)}.v{n}p0", ir.VoidType(),
                        [value.type, ptrs.type, I32, mask.type])
        builder.call(fn, [value, ptrs, ir.Constant(I32, byte_size(element)), mask])

    def emit_math(self, builder: ir.IRBuilder, op: str, x: ir.Value) -> ir.Value | None:
        """float32 exp and tanh as vector polynomials (cpu_math.py): LLVM would scalarize them;
        other library math on wide vectors as a loop of scalar calls (cpu_memory.map_elements); math the C
        library lacks (or has poorly in float32) as functions of this module (`_scalar_function`)."""
        element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
        fn = self._scalar_function(builder.module, op, element)
        if fn is not None:
            if isinstance(x.type, ir.VectorType):
                return cpu_memory.map_elements(builder, x, fn)
            return builder.call(fn, [x])
        emit = cpu_math.FLOAT32.get(op) if element == ir.FloatType() else None
        if emit:
            if isinstance(x.type, ir.VectorType) and op in cpu_math.LOOPED:
                return cpu_memory.map_chunks(builder, x, emit)
            return emit(builder, x)
        if isinstance(x.type, ir.VectorType) and x.type.count >= cpu_memory.LOOP_MIN_ELEMENTS and op in _LIBRARY_MATH:
            type_name = "f32" if element == ir.FloatType() else "f64"
            symbol, is_intrinsic = _MATH[op]
            name = f"{symbol}.{type_name}" if is_intrinsic else self.math(op, type_name).symbol
            fn = builder.module.globals.get(name) or ir.Function(builder.module, ir.FunctionType(element, [element]),
                                                                  name)
            return cpu_memory.map_elements(builder, x, fn)
        return None

    @staticmethod
    def _scalar_function(module: ir.Module, op: str, element: ir.Type) -> ir.Function | None:
        """The module's own scalar function for `op` on `element`, where the C library has none
        (erfinv, digamma, cyl_bessel_i0/i1, i0e/i1e, special_functions.py's) or only a poor float32 version
        (j0, j1, y0, y1)."""
        if op == "erfinv":
            return cpu_erfinv.erfinv_function(module, element)
        if op == "digamma":
            return digamma.digamma_function(module, element, lambda name: _MATH[name][0])
        if op in _BESSEL_I:
            return bessel_i.bessel_i_function(module, *_BESSEL_I[op], element, lambda name: _MATH[name][0])
        if op in special_functions.SPECIAL:
            return special_functions.function(module, op, element, _library(module))
        if op in _WIDENED_F32 and element == ir.FloatType():
            f64_type = ir.FunctionType(ir.DoubleType(), [ir.DoubleType()])
            f64 = module.globals.get(op) or ir.Function(module, f64_type, op)
            return widened(module, f64, f"__tile_cpu_{op}_f32")
        return None

    def emit_math_binary(self, builder: ir.IRBuilder, op: str, x: ir.Value, y: ir.Value) -> ir.Value | None:
        """zeta, polygamma and the orthogonal polynomials (special_functions.py), one call per element."""
        if op not in special_functions.SPECIAL:
            return None
        element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
        fn = special_functions.function(builder.module, op, element, _library(builder.module))
        if isinstance(x.type, ir.VectorType):
            return cpu_memory.map_elements(builder, x, fn, y)
        return builder.call(fn, [x, y])

    def math(self, op: str, type_name: str) -> MathEntry:
        symbol, is_intrinsic = _MATH[op]
        if is_intrinsic:
            return MathEntry(symbol, True)
        return MathEntry(symbol + ("f" if type_name == "f32" else ""), False)


def _library(module: ir.Module):
    """Names of the math the special functions call: the C library, LLVM intrinsics, or the module's own
    functions (erfinv, digamma, other special functions)."""
    def name(op: str, element: ir.Type) -> str:
        if op in special_functions.SPECIAL:
            return special_functions.function(module, op, element, name).name
        own = CPUTarget._scalar_function(module, op, element)
        if own is not None:
            return own.name
        symbol, is_intrinsic = _MATH[op]
        suffix = "f32" if element == ir.FloatType() else "f64"
        if is_intrinsic:
            return f"{symbol}.{suffix}"
        return symbol + ("f" if suffix == "f32" else "")
    return name


def _all_true(n: int) -> ir.Constant:
    return ir.Constant(ir.VectorType(ir.IntType(1), n), [1] * n)


def _intrinsic(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    existing = module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(module, ir.FunctionType(ret, args), name)
