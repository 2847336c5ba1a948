"""The NVIDIA target: NVPTX through llvmlite, NVVM intrinsics, libdevice math.

A program is a CTA of `32 * num_warps` threads. Lanes and warps come from `%tid.x`,
programs from `%ctaid`. Cross-lane steps use `shfl.sync.bfly`, cross-warp steps the
dynamic shared memory `global_smem` (address space 3) between `bar.sync`s. Global
accesses go through `ptr addrspace(1)` so they become `ld.global`/`st.global`, up to
16 bytes per access; a masked run is a branch around one vector access. fp32 `exp`
is `ex2.approx` of x*log2(e); other math calls libdevice (`__nv_*`), linked later.
"""

from __future__ import annotations

import math
import re

from llvmlite import ir

from ..target import MathEntry, Target

I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
F32 = ir.FloatType()
GLOBAL = ir.PointerType(addrspace=1)
SHARED = ir.PointerType(addrspace=3)

_LIBDEVICE = {"exp": "__nv_exp", "exp2": "__nv_exp2", "log": "__nv_log", "log2": "__nv_log2", "sin": "__nv_sin",
              "cos": "__nv_cos", "erf": "__nv_erf"}
_INTRINSICS = {"sqrt": "llvm.sqrt", "floor": "llvm.floor", "ceil": "llvm.ceil", "absf": "llvm.fabs"}


class NvidiaTarget(Target):
    name = "cuda"
    warp_size = 32
    native_half_kinds = frozenset({"f16"})
    per_element_masks = False
    max_vector_bytes = 16

    def __init__(self, capability: int = 90):
        self.capability = capability

    def triple(self) -> str:
        return "nvptx64-nvidia-cuda"

    def data_layout(self) -> str:
        return "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"

    def kernel_arguments(self) -> list[ir.Type]:
        return []

    def finish_kernel(self, module: ir.Module, body: ir.Function, name: str, user_arg_types: list[ir.Type],
                      num_warps: int) -> str:
        entry = ir.Function(module, ir.FunctionType(ir.VoidType(), user_arg_types), name)
        entry.calling_convention = "ptx_kernel"
        b = ir.IRBuilder(entry.append_basic_block("entry"))
        b.call(body, list(entry.args))
        b.ret_void()
        self.max_threads = 32 * num_warps
        return name

    def finalize_ir(self, text: str, entry: str) -> str:
        """Mark the entry with its thread count (`.maxntid`), which llvmlite cannot spell."""
        pattern = re.compile(rf'(define ptx_kernel void @"?{re.escape(entry)}"?\([^)]*\))')
        return pattern.sub(rf'\1 "nvvm.maxntid"="{self.max_threads}"', text, count=1)

    # --- where a thread is ------------------------------------------------------------
    def _sreg(self, builder: ir.IRBuilder, name: str) -> ir.Value:
        module = builder.module
        symbol = f"llvm.nvvm.read.ptx.sreg.{name}"
        fn = module.globals.get(symbol) or ir.Function(module, ir.FunctionType(I32, []), symbol)
        return builder.call(fn, [])

    def program_id(self, builder: ir.IRBuilder, body: ir.Function, axis: int) -> ir.Value:
        return self._sreg(builder, f"ctaid.{'xyz'[axis]}")

    def num_programs(self, builder: ir.IRBuilder, body: ir.Function, axis: int) -> ir.Value:
        return self._sreg(builder, f"nctaid.{'xyz'[axis]}")

    def lane_id(self, builder: ir.IRBuilder) -> ir.Value:
        return builder.and_(self._sreg(builder, "tid.x"), ir.Constant(I32, 31))

    def warp_id(self, builder: ir.IRBuilder) -> ir.Value:
        return builder.lshr(self._sreg(builder, "tid.x"), ir.Constant(I32, 5))

    # --- communication ----------------------------------------------------------------
    def shuffle_xor(self, builder: ir.IRBuilder, value: ir.Value, lane_mask: int) -> ir.Value:
        """Exchange a scalar with lane (lane ^ lane_mask); any type up to 64 bits."""
        module = builder.module
        symbol = "llvm.nvvm.shfl.sync.bfly.i32"
        fn = module.globals.get(symbol) or ir.Function(module, ir.FunctionType(I32, [I32] * 4), symbol)
        ty = value.type
        bits = ty.width if isinstance(ty, ir.IntType) else {"float": 32, "double": 64, "half": 16, "bfloat": 16}[str(ty)]
        as_int = value if isinstance(ty, ir.IntType) else builder.bitcast(value, ir.IntType(bits))
        if bits == 64:
            low = builder.trunc(as_int, I32)
            high = builder.trunc(builder.lshr(as_int, ir.Constant(I64, 32)), I32)
            args = [ir.Constant(I32, -1), None, ir.Constant(I32, lane_mask), ir.Constant(I32, 31)]
            low = builder.call(fn, [args[0], low, args[2], args[3]])
            high = builder.call(fn, [args[0], high, args[2], args[3]])
            joined = builder.or_(builder.zext(low, I64), builder.shl(builder.zext(high, I64), ir.Constant(I64, 32)))
            return joined if isinstance(ty, ir.IntType) else builder.bitcast(joined, ty)
        wide = as_int if bits == 32 else builder.zext(as_int, I32)
        out = builder.call(fn, [ir.Constant(I32, -1), wide, ir.Constant(I32, lane_mask), ir.Constant(I32, 31)])
        out = out if bits == 32 else builder.trunc(out, ir.IntType(bits))
        return out if isinstance(ty, ir.IntType) else builder.bitcast(out, ty)

    def barrier(self, builder: ir.IRBuilder) -> None:
        module = builder.module
        fn = module.globals.get("llvm.nvvm.barrier0") or ir.Function(module, ir.FunctionType(ir.VoidType(), []),
                                                                     "llvm.nvvm.barrier0")
        builder.call(fn, [])

    def shared_memory(self, module: ir.Module, builder: ir.IRBuilder, num_bytes: int) -> ir.Value:
        smem = module.globals.get("global_smem")
        if smem is None:
            smem = ir.GlobalVariable(module, ir.ArrayType(ir.IntType(8), 0), "global_smem", addrspace=3)
            smem.linkage = "external"
            smem.align = 16
            smem.type = SHARED  # an opaque pointer: llvmlite would otherwise print a typed one
        return smem

    # --- memory -------------------------------------------------------------------------
    def _guarded(self, builder: ir.IRBuilder, mask: ir.Value | None, make, fallback: ir.Value | None):
        if mask is None:
            return make()
        with builder.if_else(mask) as (then, otherwise):
            with then:
                value = make()
                then_block = builder.block
            with otherwise:
                else_block = builder.block
        if fallback is None:
            return None
        phi = builder.phi(fallback.type)
        phi.add_incoming(value, then_block)
        phi.add_incoming(fallback, else_block)
        return phi

    def load_contiguous(self, builder: ir.IRBuilder, address: ir.Value, mask: ir.Value | None, other: ir.Value,
                        alignment: int) -> ir.Value:
        pointer = builder.inttoptr(address, GLOBAL)
        return self._guarded(builder, mask, lambda: builder.load(pointer, typ=other.type, align=alignment), other)

    def gather(self, builder: ir.IRBuilder, addresses: ir.Value, mask: ir.Value | None, other: ir.Value) -> ir.Value:
        out = other
        element = other.type.element
        for i in range(other.type.count):
            index = ir.Constant(I32, i)
            pointer = builder.inttoptr(builder.extract_element(addresses, index), GLOBAL)
            lane_mask = builder.extract_element(mask, index) if mask is not None else None
            value = self._guarded(builder, lane_mask, lambda: builder.load(pointer, typ=element),
                                  builder.extract_element(other, index))
            out = builder.insert_element(out, value, index)
        return out

    def store_contiguous(self, builder: ir.IRBuilder, address: ir.Value, value: ir.Value, mask: ir.Value | None,
                         alignment: int) -> None:
        pointer = builder.inttoptr(address, GLOBAL)
        self._guarded(builder, mask, lambda: builder.store(value, pointer, align=alignment), None)

    def scatter(self, builder: ir.IRBuilder, addresses: ir.Value, value: ir.Value, mask: ir.Value | None) -> None:
        for i in range(value.type.count):
            index = ir.Constant(I32, i)
            pointer = builder.inttoptr(builder.extract_element(addresses, index), GLOBAL)
            element = builder.extract_element(value, index)
            lane_mask = builder.extract_element(mask, index) if mask is not None else None
            self._guarded(builder, lane_mask, lambda: builder.store(element, pointer), None)

    # --- math ---------------------------------------------------------------------------
    def math(self, op: str, type_name: str) -> MathEntry:
        if op in _INTRINSICS:
            return MathEntry(_INTRINSICS[op], True)
        return MathEntry(_LIBDEVICE[op] + ("f" if type_name == "f32" else ""), False)

    def emit_math(self, builder: ir.IRBuilder, op: str, x: ir.Value) -> ir.Value | None:
        """fp32 exp is ex2.approx(x * log2(e)), as fast GPU code does; everything else uses `math`."""
        element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
        if op != "exp" or element != F32:
            return None
        module = builder.module
        fn = module.globals.get("llvm.nvvm.ex2.approx.f") or ir.Function(module, ir.FunctionType(F32, [F32]),
                                                                         "llvm.nvvm.ex2.approx.f")
        scaled = builder.fmul(x, _splat_like(x, math.log2(math.e)))
        if not isinstance(x.type, ir.VectorType):
            return builder.call(fn, [scaled])
        out = scaled
        for i in range(x.type.count):
            index = ir.Constant(I32, i)
            out = builder.insert_element(out, builder.call(fn, [builder.extract_element(scaled, index)]), index)
        return out


def _splat_like(x: ir.Value, value: float) -> ir.Constant:
    if isinstance(x.type, ir.VectorType):
        return ir.Constant(x.type, [value] * x.type.count)
    return ir.Constant(x.type, value)
