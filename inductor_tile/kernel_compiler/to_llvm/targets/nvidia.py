"""The NVIDIA target: NVPTX through llvmlite, NVVM intrinsics, libdevice math.

A program is a CTA of `32 * num_warps` threads. Lanes and warps come from `%tid.x`,
programs from `%ctaid`. Cross-lane steps use `shfl.sync.bfly`, cross-warp steps the
dynamic shared memory `global_smem` (address space 3) between `bar.sync`s. Global
accesses go through `ptr addrspace(1)` so they become `ld.global`/`st.global`, up to
16 bytes per access; a masked access (a run or one element) is one predicated instruction
(nvidia_predicated.py). fp32 `exp`/`exp2` are `ex2.approx.ftz` of x*log2(e) / x; other math calls libdevice
(`__nv_*`), linked later.
"""

from __future__ import annotations

import math
import os
import re

from llvmlite import ir

from ..context import byte_size, lane_by_lane_gather, map_elements, map_pairs
from ..target import MathEntry, Target, define_gpu_entry
from . import bessel_i, digamma, nvidia_atomics, special_functions
from ...ir.tt_memory import NO_HINTS, AccessHints
from .nvidia_predicated import fits_one_access, l2_policy, predicated_load, predicated_store

I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
F32 = ir.FloatType()
GLOBAL = ir.PointerType(addrspace=1)
SHARED = ir.PointerType(addrspace=3)

_LIBDEVICE = {"exp": "__nv_exp", "exp2": "__nv_exp2", "log": "__nv_log", "log2": "__nv_log2", "sin": "__nv_sin",
              "cos": "__nv_cos", "erf": "__nv_erf", "tanh": "__nv_tanh", "log1p": "__nv_log1p", "expm1": "__nv_expm1",
              "log10": "__nv_log10", "tan": "__nv_tan", "sinh": "__nv_sinh", "cosh": "__nv_cosh", "asin": "__nv_asin",
              "acos": "__nv_acos", "atan": "__nv_atan", "asinh": "__nv_asinh", "acosh": "__nv_acosh",
              "atanh": "__nv_atanh", "round": "__nv_round", "pow": "__nv_pow", "atan2": "__nv_atan2",
              "erfc": "__nv_erfc", "lgamma": "__nv_lgamma", "erfinv": "__nv_erfinv", "hypot": "__nv_hypot",
              "nextafter": "__nv_nextafter", "j0": "__nv_j0", "j1": "__nv_j1", "y0": "__nv_y0", "y1": "__nv_y1",
              "cyl_bessel_i0": "__nv_cyl_bessel_i0", "cyl_bessel_i1": "__nv_cyl_bessel_i1", "erfcx": "__nv_erfcx",
              "ndtri": "__nv_normcdfinv"}
_INTRINSICS = {"sqrt": "llvm.sqrt", "floor": "llvm.floor", "ceil": "llvm.ceil", "absf": "llvm.fabs",
               "trunc": "llvm.trunc", "roundeven": "llvm.rint", "copysign": "llvm.copysign"}


#: dynamic shared memory a block may opt in to, by compute capability (CUDA's occupancy tables)
MAX_SHARED_BYTES = {80: 166912, 86: 101376, 87: 166912, 89: 101376, 90: 232448}


class NvidiaTarget(Target):
    name = "cuda"
    warp_size = 32
    native_half_kinds = frozenset({"f16"})
    float_contract = True  # as Triton: `a * b + c` becomes one fma.rn (ptxas cannot fuse `mul.rn`/`add.rn`)
    per_element_masks = False
    max_vector_bytes = 16
    global_address_space = 1
    atomic_sync_scopes = {"cta": "block", "gpu": "device", "sys": ""}
    sincos_functions = {"f32": "__nv_sincosf", "f64": "__nv_sincos"}

    def __init__(self, capability: int = 90):
        self.capability = capability
        self.max_shared_bytes = MAX_SHARED_BYTES.get(capability, 101376 if capability > 90 else 49152)
        self.mma_version = 2 if capability >= 80 else 0  # mma.sync.m16n8k16 for fp16/bf16 dots
        if capability == 90 and os.environ.get("TILE_WGMMA", "1") != "0":
            self.mma_version = 3  # wgmma (sm_90a) where a warpgroup can compute the dot: dot_wgmma.py

    def triple(self) -> str:
        return "nvptx64-nvidia-cuda"

    def data_layout(self) -> str:
        return "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"

    def kernel_arguments(self) -> list[ir.Type]:
        return []

    def finish_kernel(self, module: ir.Module, body: ir.Function, name: str, user_arg_types: list[ir.Type],
                      num_warps: int) -> str:
        define_gpu_entry(module, body, name, user_arg_types, "ptx_kernel")
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
    # a masked access is one predicated instruction (nvidia_predicated.py), never a branch around it; an
    # access with cache hints is that instruction too, with its qualifiers (unpredicated without a mask)
    def _policy(self, builder: ir.IRBuilder, hints: AccessHints) -> ir.Value | None:
        """The L2 policy register for `hints` (eviction priorities over L2 need sm_80)."""
        if not hints.evict or hints.volatile or self.capability < 80:
            return None
        return l2_policy(builder, hints.evict)

    def load_contiguous(self, builder: ir.IRBuilder, address: ir.Value, mask: ir.Value | None, other: ir.Value,
                        alignment: int, hints: AccessHints = NO_HINTS) -> ir.Value:
        if mask is None and not hints:
            return builder.load(builder.inttoptr(address, GLOBAL), typ=other.type, align=alignment)
        if not fits_one_access(other.type, alignment):
            return self.gather(builder, _address_vector(builder, address, other),
                               None if mask is None else _splat_mask(builder, mask, other.type.count), other, hints)
        return predicated_load(builder, address, mask, other, hints, self._policy(builder, hints))

    def gather(self, builder: ir.IRBuilder, addresses: ir.Value, mask: ir.Value | None, other: ir.Value,
               hints: AccessHints = NO_HINTS) -> ir.Value:
        if mask is None and not hints:
            return lane_by_lane_gather(builder, addresses, None, other, GLOBAL)
        policy = self._policy(builder, hints)
        out = other
        for i in range(other.type.count):
            index = ir.Constant(I32, i)
            element = predicated_load(builder, builder.extract_element(addresses, index),
                                      None if mask is None else builder.extract_element(mask, index),
                                      builder.extract_element(other, index), hints, policy)
            out = builder.insert_element(out, element, index)
        return out

    def load_scalar(self, builder: ir.IRBuilder, address: ir.Value, mask: ir.Value | None,
                    other: ir.Value, hints: AccessHints = NO_HINTS) -> ir.Value:
        if mask is None and not hints:
            return builder.load(builder.inttoptr(address, GLOBAL), typ=other.type)
        return predicated_load(builder, address, mask, other, hints, self._policy(builder, hints))

    def store_contiguous(self, builder: ir.IRBuilder, address: ir.Value, value: ir.Value, mask: ir.Value | None,
                         alignment: int, hints: AccessHints = NO_HINTS) -> None:
        if mask is None and not hints:
            builder.store(value, builder.inttoptr(address, GLOBAL), align=alignment)
        elif not fits_one_access(value.type, alignment):
            self.scatter(builder, _address_vector(builder, address, value), value,
                         None if mask is None else _splat_mask(builder, mask, value.type.count), hints)
        else:
            predicated_store(builder, address, value, mask, hints, self._policy(builder, hints))

    def scatter(self, builder: ir.IRBuilder, addresses: ir.Value, value: ir.Value, mask: ir.Value | None,
                hints: AccessHints = NO_HINTS) -> None:
        for i in range(value.type.count):
            index = ir.Constant(I32, i)
            self.store_scalar(builder, builder.extract_element(addresses, index), builder.extract_element(value, index),
                              builder.extract_element(mask, index) if mask is not None else None, hints)

    def store_scalar(self, builder: ir.IRBuilder, address: ir.Value, value: ir.Value, mask: ir.Value | None,
                     hints: AccessHints = NO_HINTS) -> bool:
        if mask is None and not hints:
            builder.store(value, builder.inttoptr(address, GLOBAL))
        else:
            predicated_store(builder, address, value, mask, hints, self._policy(builder, hints))
        return True

    # atomics: one predicated atom/red per element (nvidia_atomics.py) where PTX has the instruction
    def atomic_rmw(self, builder: ir.IRBuilder, kind: str, sem: str, scope: str, address: ir.Value, value: ir.Value,
                   mask: ir.Value | None, used: bool) -> ir.Value | None:
        return nvidia_atomics.atomic_rmw(builder, self.capability, kind, sem, scope, address, value, mask, used)

    def atomic_vector_width(self, kind: str, element: ir.Type) -> int:
        return nvidia_atomics.vector_width(self.capability, kind, element)

    def atomic_cas(self, builder: ir.IRBuilder, sem: str, scope: str, address: ir.Value, expected: ir.Value,
                   value: ir.Value, mask: ir.Value | None) -> ir.Value | None:
        return nvidia_atomics.atomic_cas(builder, self.capability, sem, scope, address, expected, value, mask)

    # --- math ---------------------------------------------------------------------------
    def math(self, op: str, type_name: str) -> MathEntry:
        if op in _INTRINSICS:
            return MathEntry(_INTRINSICS[op], True)
        return MathEntry(_LIBDEVICE[op] + ("f" if type_name == "f32" else ""), False)

    def emit_math_binary(self, builder: ir.IRBuilder, op: str, x: ir.Value, y: ir.Value) -> ir.Value | None:
        """zeta, polygamma and the orthogonal polynomials (not in libdevice): functions of the module built on
        libdevice (special_functions.py), one call per element."""
        if op not in special_functions.SPECIAL:
            return None
        element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
        fn = special_functions.function(builder.module, op, element, _library(builder.module))
        return map_pairs(builder, x, y, lambda a, b: builder.call(fn, [a, b]))

    def emit_divf(self, builder: ir.IRBuilder, a: ir.Value, b: ir.Value) -> ir.Value | None:
        """fp32 `/` is `div.full.f32` (within 2 ulp), as in Triton; tl.div_rn stays correctly rounded."""
        element = a.type.element if isinstance(a.type, ir.VectorType) else a.type
        if element != F32:
            return None
        module = builder.module
        fn = module.globals.get("llvm.nvvm.div.full") or ir.Function(module, ir.FunctionType(F32, [F32, F32]),
                                                                    "llvm.nvvm.div.full")
        if not isinstance(a.type, ir.VectorType):
            return builder.call(fn, [a, b])
        out = a
        for i in range(a.type.count):
            index = ir.Constant(I32, i)
            out = builder.insert_element(out, builder.call(fn, [builder.extract_element(a, index),
                                                                builder.extract_element(b, index)]), index)
        return out

    def emit_truncf(self, builder: ir.IRBuilder, x: ir.Value, kind: str, ty: ir.Type) -> ir.Value | None:
        """f32 vectors round to f16/bf16 two elements at a time (`cvt.rn.f16x2.f32`, sm_80+): half the
        instructions, and ptxas keeps wgmma groups asynchronous across a loop whose accumulator is
        converted this way (scalar `cvt.rn.f16.f32` pairs of a wgmma accumulator after such a loop make
        it serialize every wgmma: ptxas C7514, dot_async.py)."""
        if self.capability < 80 or not isinstance(x.type, ir.VectorType) or x.type.count % 2:
            return None
        pair = ir.InlineAsm(ir.FunctionType(I32, [F32, F32]), f"cvt.rn.{kind}x2.f32 $0, $1, $2;", "=r,f,f")
        words = ir.Constant(ir.VectorType(I32, x.type.count // 2), None)
        for i in range(0, x.type.count, 2):
            low, high = (builder.extract_element(x, ir.Constant(I32, i + j)) for j in (0, 1))
            # `cvt d, a, b` puts a in the upper half: element i + 1 (little-endian lanes of the i32 word)
            words = builder.insert_element(words, builder.call(pair, [high, low]), ir.Constant(I32, i // 2))
        return builder.bitcast(words, ty)

    def emit_rsqrt(self, builder: ir.IRBuilder, x: ir.Value) -> ir.Value | None:
        """fp32 rsqrt is rsqrt.approx.f32 (as libdevice's __nv_rsqrtf, which Triton and Inductor use; CUDA
        documents 2 ulp): the correctly rounded sqrt then division are two multi-instruction sequences on
        a norm's critical path between its reduction and its stores."""
        element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
        if element != F32:
            return None
        module = builder.module
        fn = module.globals.get("llvm.nvvm.rsqrt.approx.f") or ir.Function(module, ir.FunctionType(F32, [F32]),
                                                                           "llvm.nvvm.rsqrt.approx.f")
        return map_elements(builder, x, lambda element: builder.call(fn, [element]))

    def emit_math(self, builder: ir.IRBuilder, op: str, x: ir.Value) -> ir.Value | None:
        """fp32 exp is ex2.approx.ftz(x * log2(e)) and exp2 ex2.approx.ftz(x), as fast GPU code does
        (results below 2**-126 flush to zero); digamma, i0e and i1e (not in
        libdevice) are float64 functions of the module built on __nv_log, __nv_tan and __nv_exp
        (digamma.py, bessel_i.py), so are special_functions.py's but erfcx and ndtri (__nv_erfcx,
        __nv_normcdfinv); everything else uses `math`."""
        element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
        if op in ("digamma", "i0e", "i1e"):
            library = _LIBDEVICE.__getitem__
            fn = (digamma.digamma_function(builder.module, element, library) if op == "digamma" else
                  bessel_i.bessel_i_function(builder.module, int(op[1]), True, element, library))
            return map_elements(builder, x, lambda element: builder.call(fn, [element]))
        if op in special_functions.SPECIAL and op not in _LIBDEVICE:
            fn = special_functions.function(builder.module, op, element, _library(builder.module))
            return map_elements(builder, x, lambda element: builder.call(fn, [element]))
        if op not in ("exp", "exp2") or element != F32:
            return None
        module = builder.module
        name = "llvm.nvvm.ex2.approx.ftz.f"  # ex2.approx.ftz.f32: one MUFU.EX2 (without ftz, ptxas adds a
        # compare and two multiplies per call to scale subnormal results; Triton's exp is ftz too)
        fn = module.globals.get(name) or ir.Function(module, ir.FunctionType(F32, [F32]), name)
        scaled = builder.fmul(x, _splat_like(x, math.log2(math.e))) if op == "exp" else x
        return map_elements(builder, scaled, lambda element: builder.call(fn, [element]))


def _library(module: ir.Module):
    """Names of the math the special functions call: libdevice, or the module's own functions (digamma,
    other special functions)."""
    def name(op: str, element: ir.Type) -> str:
        if op in special_functions.SPECIAL and op not in _LIBDEVICE:
            return special_functions.function(module, op, element, name).name
        if op == "digamma":
            return digamma.digamma_function(module, element, _LIBDEVICE.__getitem__).name
        return _LIBDEVICE[op] + ("f" if element == F32 else "")
    return name


def _address_vector(builder: ir.IRBuilder, address: ir.Value, like: ir.Value) -> ir.Value:
    """Consecutive element addresses starting at `address`, one per element of `like`."""
    n, size = like.type.count, byte_size(like.type.element)
    vec = ir.VectorType(I64, n)
    base = builder.insert_element(ir.Constant(vec, None), address, ir.Constant(I32, 0))
    base = builder.shuffle_vector(base, base, ir.Constant(ir.VectorType(I32, n), [0] * n))
    return builder.add(base, ir.Constant(vec, [i * size for i in range(n)]))


def _splat_mask(builder: ir.IRBuilder, mask: ir.Value, n: int) -> ir.Value:
    vec = ir.VectorType(I1, n)
    one = builder.insert_element(ir.Constant(vec, None), mask, ir.Constant(I32, 0))
    return builder.shuffle_vector(one, one, ir.Constant(ir.VectorType(I32, n), [0] * n))


def _splat_like(x: ir.Value, value: float) -> ir.Constant:
    if isinstance(x.type, ir.VectorType):
        return ir.Constant(x.type, [value] * x.type.count)
    return ir.Constant(x.type, value)
