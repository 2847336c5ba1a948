"""Lowering of the debugging and synchronization ops: tt.debug_barrier, tt.assert, tt.print (and
llvm.intr.assume, LLVM's intrinsic on every target).

A failed assertion and a print call out of the kernel, differently per target (a table):
- CPU: `tile_device_assert_fail(message, pid x, y, z)` (runtime/device_assert.py records it and
  the launch raises; the failing program returns at once), and libc's `printf`;
- NVIDIA: CUDA's `__assertfail(message, file, line, function, char size)` and `vprintf`.
Each thread checks (or prints) the elements it holds.
"""

from __future__ import annotations

from llvmlite import ir
from xdsl.ir import Operation

from ..ir.tt_types import PointerType
from .context import F32, I1, I8, I32, I64, LoweringContext, float_kind, lowering
from . import half

F64 = ir.DoubleType()


@lowering("tt.debug_barrier")
def lower_debug_barrier(ctx: LoweringContext, op: Operation) -> None:
    """A CTA barrier; nothing where one thread runs the program."""
    if not ctx.single_thread:
        ctx.target.barrier(ctx.builder)


def _string(ctx: LoweringContext, text: str, name: str) -> ir.Value:
    """A pointer to a NUL-terminated constant string in the module."""
    data = bytearray(text.encode("utf-8")) + b"\0"
    ty = ir.ArrayType(I8, len(data))
    index = sum(1 for g in ctx.module.global_values if g.name.startswith(name))
    variable = ir.GlobalVariable(ctx.module, ty, f"{name}{index}")
    variable.global_constant = True
    variable.linkage = "internal"
    variable.initializer = ir.Constant(ty, data)
    return ctx.builder.bitcast(variable, I8.as_pointer())


def _function(ctx: LoweringContext, name: str, ret: ir.Type, args: list[ir.Type], var_arg: bool = False):
    existing = ctx.module.globals.get(name)
    if existing is not None:
        return existing
    return ir.Function(ctx.module, ir.FunctionType(ret, args, var_arg=var_arg), name)


def _cpu_fail(ctx: LoweringContext, message: str) -> None:
    fn = _function(ctx, "tile_device_assert_fail", ir.VoidType(), [I8.as_pointer(), I32, I32, I32])
    pids = [ctx.target.program_id(ctx.builder, ctx.function, axis) for axis in range(3)]
    ctx.builder.call(fn, [_string(ctx, message, "assert_message"), *pids])
    ctx.builder.ret_void()  # the program ends here (as a GPU's trap ends it): nothing after the check runs


def _nvidia_fail(ctx: LoweringContext, message: str) -> None:
    fn = _function(ctx, "__assertfail", ir.VoidType(), [I8.as_pointer(), I8.as_pointer(), I32, I8.as_pointer(), I64])
    text = _string(ctx, message, "assert_message")
    file, _, rest = message.partition(": ")
    where, line = (file.rsplit(":", 1) + ["0"])[:2] if ":" in file else (file, "0")
    ctx.builder.call(fn, [text, _string(ctx, where, "assert_file"), ir.Constant(I32, int(line) if line.isdigit() else 0),
                          _string(ctx, "kernel", "assert_function"), ir.Constant(I64, 1)])


FAIL = {"cpu": _cpu_fail, "cuda": _nvidia_fail}


@lowering("tt.assert")
def lower_assert(ctx: LoweringContext, op: Operation) -> None:
    b = ctx.builder
    ok = ctx.get(op.operands[0])
    if isinstance(ok.type, ir.VectorType):
        reduce_and = ctx.intrinsic(f"llvm.vector.reduce.and.v{ok.type.count}i1", I1, [ok.type])
        ok = b.call(reduce_and, [ok])
    with b.if_then(b.not_(ok), likely=False):
        FAIL[ctx.target.name](ctx, op.message.data)


@lowering("llvm.intr.assume")
def lower_assume(ctx: LoweringContext, op: Operation) -> None:
    """LLVM's own promise, the same on every target."""
    ctx.builder.call(ctx.intrinsic("llvm.assume", ir.VoidType(), [I1]), [ctx.get(op.operands[0])])


# --- printing -------------------------------------------------------------------------------------
def _printable(ctx: LoweringContext, value: ir.Value, ty, signed: bool, hex: bool) -> tuple[ir.Value, str]:
    """A scalar as printf takes it (ints and pointers as i64, floats as double) and its conversion:
    floats %f, pointers and `hex` integers 0x-prefixed hexadecimal (integers zero-padded to their size),
    unsigned integers and booleans zero-extended."""
    b = ctx.builder
    kind = float_kind(ty)
    if kind is not None:
        if ctx.soft_half(kind):
            value = half.half_to_f32(b, value, kind)
        elif kind in ("f16", "bf16"):
            value = b.fpext(value, F32)
        return (b.fpext(value, F64) if value.type != F64 else value), "%f"
    if isinstance(ty, PointerType) or isinstance(value.type, ir.PointerType):
        return (b.ptrtoint(value, I64) if isinstance(value.type, ir.PointerType) else value), "0x%llx"
    width = value.type.width
    if width < 64:
        value = b.sext(value, I64) if signed and not hex and width > 1 else b.zext(value, I64)
    if hex:
        return value, f"0x%0{2 * max(1, width // 8)}llx"
    return value, "%lld" if signed and width > 1 else "%llu"


def _cpu_print(ctx: LoweringContext, fmt: str, args: list[ir.Value]) -> None:
    printf = _function(ctx, "printf", I32, [I8.as_pointer()], var_arg=True)
    ctx.builder.call(printf, [_string(ctx, fmt, "print_format"), *args])
    fflush = _function(ctx, "fflush", I32, [I8.as_pointer()])  # lines appear in order with Python's output
    ctx.builder.call(fflush, [ir.Constant(I8.as_pointer(), None)])


def _nvidia_print(ctx: LoweringContext, fmt: str, args: list[ir.Value]) -> None:
    b = ctx.builder
    vprintf = _function(ctx, "vprintf", I32, [I8.as_pointer(), I8.as_pointer()])
    fields = ir.LiteralStructType([a.type for a in args])
    buffer = b.alloca(fields)
    for i, a in enumerate(args):
        b.store(a, b.gep(buffer, [ir.Constant(I32, 0), ir.Constant(I32, i)]))
    b.call(vprintf, [_string(ctx, fmt, "print_format"), b.bitcast(buffer, I8.as_pointer())])


PRINT = {"cpu": _cpu_print, "cuda": _nvidia_print}


UNROLLED_PRINT_SLOTS = 8  # more slots than this print in a loop (a printf call per element takes LLVM long)
PRINT_STACK_SLOT = 100  # stack_array slots of the loop's copies (distinct from other lowerings' transient ones)


@lowering("tt.print")
def lower_print(ctx: LoweringContext, op: Operation) -> None:
    """One line per element, `pid (x, y, z) idx (i, j) <label>: <value>` (each index as wide as its dimension's
    largest; `(operand n)` after the colon when there are several values); no values: `pid (x, y, z) <label>`."""
    from xdsl.dialects.builtin import TensorType

    from .rules_tensor import index_vectors

    b = ctx.builder
    pids = [ctx.target.program_id(b, ctx.function, axis) for axis in range(3)]
    label = op.prefix.data.replace("%", "%%")
    signed = op.is_signed.get_values()
    hex = op.hex.value.data != 0
    if not op.operands:
        PRINT[ctx.target.name](ctx, f"pid (%d, %d, %d) {label}\n", pids)
        return
    for n, operand in enumerate(op.operands):
        head = (f" {label}" if label else "") + ":" + (f" (operand {n})" if len(op.operands) > 1 else "")
        value = ctx.get(operand)
        if not isinstance(operand.type, TensorType):
            scalar, conversion = _printable(ctx, value, operand.type, signed[n], hex)
            PRINT[ctx.target.name](ctx, f"pid (%d, %d, %d) idx (){head} {conversion}\n", [*pids, scalar])
            continue
        lmap = ctx.layout_map(operand.type)
        indices = index_vectors(ctx, lmap)
        index_fmt = ", ".join(f"%{len(str(size - 1))}d" for size in operand.type.get_shape())

        def print_slot(element: ir.Value, coords: list[ir.Value]) -> None:
            scalar, conversion = _printable(ctx, element, operand.type.element_type, signed[n], hex)
            PRINT[ctx.target.name](ctx, f"pid (%d, %d, %d) idx ({index_fmt}){head} {conversion}\n",
                                   [*pids, *coords, scalar])

        if lmap.num_slots <= UNROLLED_PRINT_SLOTS:
            for slot in range(lmap.num_slots):
                at = ir.Constant(I32, slot)
                print_slot(b.extract_element(value, at), [b.extract_element(v, at) for v in indices])
            continue
        # many slots: a loop over stack copies of the values and indices (one printf call in the code)
        zero = ir.Constant(I32, 0)
        values = ctx.vector_to_stack(value, PRINT_STACK_SLOT)
        coords = [ctx.vector_to_stack(v, PRINT_STACK_SLOT + 1 + d) for d, v in enumerate(indices)]
        ctx.counted_loop(lmap.num_slots, lambda i: print_slot(
            b.load(b.gep(values, [zero, i], inbounds=True)),
            [b.load(b.gep(c, [zero, i], inbounds=True)) for c in coords]))
