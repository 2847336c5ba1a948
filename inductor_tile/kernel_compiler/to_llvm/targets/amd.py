"""The AMD target: AMDGPU through llvmlite, amdgcn intrinsics, LDS, math without a device library.

A program is a workgroup of `wave_size * num_warps` work-items (a "warp" here is a
wavefront: 64 lanes on CDNA (gfx9), 32 on RDNA3 (gfx11)). Programs come from
`llvm.amdgcn.workgroup.id`, the grid size from the HSA dispatch packet, lanes and waves
from `llvm.amdgcn.workitem.id.x` (the wave index made uniform with `readfirstlane`).

Cross-lane exchanges pick the cheapest instruction for the lane distance: DPP quad
permutes for 1 and 2, `ds_swizzle` (bit mode, within 32 lanes) for 4 to 16, and
`ds_bpermute` for 32 (the other half of a wave64). Cross-wave steps use one LDS buffer
(`global_smem`, address space 3), sized statically once the kernel is lowered
(hsaco.py), between `s_barrier`s fenced at workgroup scope (as HIP's __syncthreads).
Global accesses go through `ptr addrspace(1)`, up to 16 bytes per access; a masked
run is a branch around one vector access. Math: see amd_math.py (float32) and amd_math64.py.
"""

from __future__ import annotations

import re

from llvmlite import ir

from ...ir.tt_memory import NO_HINTS, AccessHints

from ..context import guarded, lane_by_lane_gather, map_elements, map_pairs
from ..target import MathEntry, Target, define_gpu_entry
from . import amd_math

I1, I16, I32, I64 = ir.IntType(1), ir.IntType(16), ir.IntType(32), ir.IntType(64)
GLOBAL = ir.PointerType(addrspace=1)
SHARED = ir.PointerType(addrspace=3)
CONSTANT = ir.PointerType(addrspace=4)

#: the architectures this target is tested for, and their wavefront size
WAVE_SIZES = {"gfx90a": 64, "gfx940": 64, "gfx941": 64, "gfx942": 64, "gfx950": 64, "gfx1030": 32,
              "gfx1100": 32, "gfx1101": 32, "gfx1102": 32, "gfx1200": 32, "gfx1201": 32}

#: the code object version the module asks for (500: v5)
CODE_OBJECT_VERSION = 500

#: LLVM IR name of the LDS buffer every exchange uses (sized in hsaco.size_shared_memory)
SHARED_SYMBOL = "global_smem"

# DPP controls: quad_perm patterns that swap lanes at distance 1 and 2 within each group of 4
_DPP_QUAD_XOR = {1: 0b10_11_00_01, 2: 0b01_00_11_10}


def lds_limit_of(arch: str) -> int:
    """Bytes of LDS one workgroup may use (64 KiB; 160 KiB on gfx950)."""
    return 160 * 1024 if arch == "gfx950" else 64 * 1024


def wave_size_of(arch: str) -> int:
    """64 on gfx9 (CDNA), 32 on gfx10+ (RDNA)."""
    if arch in WAVE_SIZES:
        return WAVE_SIZES[arch]
    if re.fullmatch(r"gfx9[0-9a-f]+", arch):
        return 64
    if re.fullmatch(r"gfx1[0-9a-f]{3}", arch):
        return 32
    raise ValueError(f"unknown AMD GPU architecture {arch!r}; expected e.g. gfx90a, gfx942 or gfx1100")


class AMDTarget(Target):
    name = "hip"
    native_half_kinds = frozenset({"f16"})
    float_contract = True  # as on NVIDIA (and Triton on AMD): a * b + c becomes one v_fma
    per_element_masks = False
    max_vector_bytes = 16
    global_address_space = 1
    atomic_sync_scopes = {"cta": "workgroup", "gpu": "agent", "sys": ""}

    def __init__(self, arch: str = "gfx942"):
        self.arch = arch
        self.warp_size = wave_size_of(arch)
        self.block_size = 0  # work-items per workgroup, set by finish_kernel

    @property
    def matrix_core_arch(self) -> str:
        """`arch` where fp16/bf16 dots go to matrix cores (passes/accelerate_matmul_amd.py; MFMA on CDNA:
        to_llvm/dot_mfma.py, WMMA on RDNA3: dot_wmma.py), '' where they stay FMAs (TILE_AMD_MFMA=0)."""
        from ...passes.accelerate_matmul_amd import has_matrix_cores

        return self.arch if has_matrix_cores(self.arch) else ""

    def triple(self) -> str:
        return "amdgcn-amd-amdhsa"

    def data_layout(self) -> str:
        from ..hsaco import data_layout

        return data_layout(self.arch)

    def kernel_arguments(self) -> list[ir.Type]:
        return []

    def finish_kernel(self, module: ir.Module, body: ir.Function, name: str, user_arg_types: list[ir.Type],
                      num_warps: int) -> str:
        define_gpu_entry(module, body, name, user_arg_types, "amdgpu_kernel")
        self.block_size = self.warp_size * num_warps
        amd_math.define_used(module)
        # code object v5: what ROCm 5.x/6.x load and lld 16 links (LLVM 22 would default to v6)
        module.add_named_metadata("llvm.module.flags", [ir.Constant(I32, 1), ir.MetaDataString(
            module, "amdhsa_code_object_version"), ir.Constant(I32, CODE_OBJECT_VERSION)])
        return name

    def finalize_ir(self, text: str, entry: str) -> str:
        """Give the entry the attributes HIP and the backend need (llvmlite cannot spell string attributes)."""
        attributes = (f'"amdgpu-flat-work-group-size"="1,{self.block_size}" "uniform-work-group-size"="true" '
                      f'"target-cpu"="{self.arch}"')
        pattern = re.compile(rf'(define amdgpu_kernel void @"?{re.escape(entry)}"?\([^)]*\))')
        return pattern.sub(lambda m: f"{m.group(1)} {attributes}", text, count=1)

    # --- where a thread is ------------------------------------------------------------
    def _intrinsic(self, builder: ir.IRBuilder, symbol: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        module = builder.module
        return module.globals.get(symbol) or ir.Function(module, ir.FunctionType(ret, args), symbol)

    def _workitem_id(self, builder: ir.IRBuilder) -> ir.Value:
        return builder.call(self._intrinsic(builder, "llvm.amdgcn.workitem.id.x", I32, []), [])

    def program_id(self, builder: ir.IRBuilder, body: ir.Function, axis: int) -> ir.Value:
        return builder.call(self._intrinsic(builder, f"llvm.amdgcn.workgroup.id.{'xyz'[axis]}", I32, []), [])

    def num_programs(self, builder: ir.IRBuilder, body: ir.Function, axis: int) -> ir.Value:
        """The HSA dispatch packet's grid size (work-items) over its workgroup size along `axis`."""
        packet = builder.call(self._intrinsic(builder, "llvm.amdgcn.dispatch.ptr", CONSTANT, []), [])
        group = builder.load(builder.gep(packet, [ir.Constant(I64, 4 + 2 * axis)], source_etype=ir.IntType(8)),
                             typ=I16, align=2)
        grid = builder.load(builder.gep(packet, [ir.Constant(I64, 12 + 4 * axis)], source_etype=ir.IntType(8)),
                            typ=I32, align=4)
        return builder.udiv(grid, builder.zext(group, I32))

    def lane_id(self, builder: ir.IRBuilder) -> ir.Value:
        return builder.and_(self._workitem_id(builder), ir.Constant(I32, self.warp_size - 1))

    def warp_id(self, builder: ir.IRBuilder) -> ir.Value:
        wave = builder.lshr(self._workitem_id(builder), ir.Constant(I32, self.warp_size.bit_length() - 1))
        uniform = self._intrinsic(builder, "llvm.amdgcn.readfirstlane.i32", I32, [I32])
        return builder.call(uniform, [wave])  # the same in every lane: scalar registers, uniform branches

    # --- communication ----------------------------------------------------------------
    def shuffle_xor(self, builder: ir.IRBuilder, value: ir.Value, lane_mask: int) -> ir.Value:
        """Exchange a scalar with lane (lane ^ lane_mask); any type up to 64 bits."""
        if not 0 < lane_mask < self.warp_size:
            raise ValueError(f"lane distance {lane_mask} outside a wave of {self.warp_size}")
        ty = value.type
        bits = ty.width if isinstance(ty, ir.IntType) else {"float": 32, "double": 64, "half": 16, "bfloat": 16}[str(ty)]
        as_int = value if isinstance(ty, ir.IntType) else builder.bitcast(value, ir.IntType(bits))
        if bits == 64:
            low = self._exchange_word(builder, builder.trunc(as_int, I32), lane_mask)
            high = self._exchange_word(builder, builder.trunc(builder.lshr(as_int, ir.Constant(I64, 32)), I32),
                                       lane_mask)
            out = builder.or_(builder.zext(low, I64), builder.shl(builder.zext(high, I64), ir.Constant(I64, 32)))
        else:
            out = self._exchange_word(builder, as_int if bits == 32 else builder.zext(as_int, I32), lane_mask)
            out = out if bits == 32 else builder.trunc(out, ir.IntType(bits))
        return out if isinstance(ty, ir.IntType) else builder.bitcast(out, ty)

    def _exchange_word(self, builder: ir.IRBuilder, word: ir.Value, lane_mask: int) -> ir.Value:
        if lane_mask in _DPP_QUAD_XOR:
            dpp = self._intrinsic(builder, "llvm.amdgcn.update.dpp.i32", I32, [I32, I32, I32, I32, I32, I1])
            return builder.call(dpp, [word, word, ir.Constant(I32, _DPP_QUAD_XOR[lane_mask]), ir.Constant(I32, 0xF),
                                      ir.Constant(I32, 0xF), ir.Constant(I1, 0)])
        if lane_mask < 32:
            # ds_swizzle bit mode: lane' = ((lane & and_mask) | or_mask) ^ xor_mask within 32 lanes
            swizzle = self._intrinsic(builder, "llvm.amdgcn.ds.swizzle", I32, [I32, I32])
            return builder.call(swizzle, [word, ir.Constant(I32, 0x1F | (lane_mask << 10))])
        permute = self._intrinsic(builder, "llvm.amdgcn.ds.bpermute", I32, [I32, I32])
        source = builder.xor(self.lane_id(builder), ir.Constant(I32, lane_mask))
        return builder.call(permute, [builder.shl(source, ir.Constant(I32, 2)), word])

    def barrier(self, builder: ir.IRBuilder) -> None:
        """Every wave of the workgroup arrives, with its LDS and global writes visible to the others."""
        builder.fence("release", "workgroup")
        builder.call(self._intrinsic(builder, "llvm.amdgcn.s.barrier", ir.VoidType(), []), [])
        builder.fence("acquire", "workgroup")

    def shared_memory(self, module: ir.Module, builder: ir.IRBuilder, num_bytes: int) -> ir.Value:
        smem = module.globals.get(SHARED_SYMBOL)
        if smem is None:
            smem = ir.GlobalVariable(module, ir.ArrayType(ir.IntType(8), 0), SHARED_SYMBOL, addrspace=3)
            smem.linkage = "external"
            smem.align = 16
            smem.type = SHARED  # an opaque pointer: llvmlite would otherwise print a typed one
        return smem

    # --- memory (cache hints are ignored here: no glc/slc/nt mapping yet) ---------------
    def load_contiguous(self, builder: ir.IRBuilder, address: ir.Value, mask: ir.Value | None, other: ir.Value,
                        alignment: int, hints: AccessHints = NO_HINTS) -> ir.Value:
        pointer = builder.inttoptr(address, GLOBAL)
        return guarded(builder, mask, lambda: builder.load(pointer, typ=other.type, align=alignment), other)

    def gather(self, builder: ir.IRBuilder, addresses: ir.Value, mask: ir.Value | None, other: ir.Value,
               hints: AccessHints = NO_HINTS) -> ir.Value:
        return lane_by_lane_gather(builder, addresses, mask, other, GLOBAL)

    def store_contiguous(self, builder: ir.IRBuilder, address: ir.Value, value: ir.Value, mask: ir.Value | None,
                         alignment: int, hints: AccessHints = NO_HINTS) -> None:
        pointer = builder.inttoptr(address, GLOBAL)
        guarded(builder, mask, lambda: builder.store(value, pointer, align=alignment), None)

    def scatter(self, builder: ir.IRBuilder, addresses: ir.Value, value: ir.Value, mask: ir.Value | None,
                hints: AccessHints = NO_HINTS) -> None:
        for i in range(value.type.count):
            index = ir.Constant(I32, i)
            pointer = builder.inttoptr(builder.extract_element(addresses, index), GLOBAL)
            element = builder.extract_element(value, index)
            lane_mask = builder.extract_element(mask, index) if mask is not None else None
            guarded(builder, lane_mask, lambda: builder.store(element, pointer), None)

    # --- math ---------------------------------------------------------------------------
    def math(self, op: str, type_name: str) -> MathEntry:
        return amd_math.entry(op, type_name)

    def implements_math(self, op: str) -> bool:
        return amd_math.implements(op)

    def emit_math(self, builder: ir.IRBuilder, op: str, x: ir.Value) -> ir.Value | None:
        """float64 math and the special functions: functions of the module (amd_math.own_function), one
        call per element; float32 natives and bodies go through `math`."""
        element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
        fn = amd_math.own_function(builder.module, op, element)
        if fn is None:
            return None
        return map_elements(builder, x, lambda value: builder.call(fn, [value]))

    def emit_math_binary(self, builder: ir.IRBuilder, op: str, x: ir.Value, y: ir.Value) -> ir.Value | None:
        element = x.type.element if isinstance(x.type, ir.VectorType) else x.type
        fn = amd_math.own_function(builder.module, op, element)
        if fn is None:
            return None
        return map_pairs(builder, x, y, lambda a, b: builder.call(fn, [a, b]))

    def emit_divf(self, builder: ir.IRBuilder, a: ir.Value, b: ir.Value) -> ir.Value | None:
        """fp32 `/` within 2.5 ulp (`!fpmath`: v_rcp_f32 and a multiply, with scaling for tiny divisors), as
        NVIDIA's div.full.f32; tl.div_rn stays correctly rounded."""
        element = a.type.element if isinstance(a.type, ir.VectorType) else a.type
        if element != ir.FloatType():
            return None
        accuracy = builder.module.add_metadata([ir.Constant(ir.FloatType(), 2.5)])

        def divide(x: ir.Value, y: ir.Value) -> ir.Value:
            quotient = builder.fdiv(x, y)
            quotient.set_metadata("fpmath", accuracy)
            return quotient

        if not isinstance(a.type, ir.VectorType):
            return divide(a, b)
        out = a  # one scalar division per element: LLVM drops !fpmath when it scalarizes a vector fdiv
        for i in range(a.type.count):
            index = ir.Constant(I32, i)
            out = builder.insert_element(out, divide(builder.extract_element(a, index),
                                                     builder.extract_element(b, index)), index)
        return out

