"""accelerate-matmul on AMD: fp16 / bf16 dots on matrix cores, MFMA on CDNA (gfx90a, gfx94x, gfx950, wave64)
and WMMA on RDNA3 (gfx110x, wave32).

A 2-D `tt.dot` of fp16 x fp16 or bf16 x bf16 operands with an fp32 result gets the `#ttg.amd_mfma`
(`ir/layouts.AmdMfma`) or `#ttg.amd_wmma` (`AmdWmma`) result layout and its operands the dot-operand
layouts of it, converted through LDS like every other layout conversion; to_llvm/dot_mfma.py and
dot_wmma.py lower them to `llvm.amdgcn.mfma.f32.*` / `llvm.amdgcn.wmma.f32.16x16x16.*` calls.
WMMA takes the waves along N ([1, w]: N a multiple of 16 * w, M and K of 16). On MFMA the
instruction and where the waves go, first that fits:

- 32x32x8 with the waves along N ([1, w]): M a multiple of 32, N of 32 * w, K of 8;
- 16x16x16 along N ([1, w]): N a multiple of 16 * w, M of 16, K of 16;
- 16x16x16 with the waves along M ([w, 1]): M a multiple of 16 * w, N of 16, K of 16.

Waves along N first: the accumulator's row tile then stays small, so that a large one leaves
through LDS in chunks of rows (to_llvm/dot_mfma_epilogue.py).

Everything else (fp32 / fp64 / int8 dots, fp16 results, batched or smaller dots, other architectures)
keeps the FMA path, as does every dot under TILE_AMD_MFMA=0 (MFMA and WMMA alike).
"""

from __future__ import annotations

import os

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, ModuleOp

from ..ir import tt
from ..ir.layouts import AmdMfma, AmdWmma
from ..ir.tt_types import element_of, shape_of
from ..ir.ttg import launch_shape
from .layout_constraints import functions

#: the architectures with the fp16 and bf16 ("_1k") MFMA instructions used here
MFMA_ARCHS = ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")
#: the RDNA3 architectures with v_wmma_f32_16x16x16_{f16,bf16} (wave32; gfx12's WMMA has other layouts)
WMMA_ARCHS = ("gfx1100", "gfx1101", "gfx1102")


def has_matrix_cores(arch: str) -> bool:
    """Whether dots for `arch` go to MFMA or WMMA (TILE_AMD_MFMA=0 keeps them on FMAs)."""
    return arch in MFMA_ARCHS + WMMA_ARCHS and os.environ.get("TILE_AMD_MFMA", "1") != "0"


def mfma_layout(shape: tuple[int, int, int], num_warps: int) -> AmdMfma | None:
    """The MFMA result layout of an [M, N] = [M, K] @ [K, N] dot on `num_warps` waves, or None."""
    m, n, k = shape
    if k % 8 == 0 and m % 32 == 0 and n % (32 * num_warps) == 0:
        return AmdMfma(32, (1, num_warps))
    if k % 16 == 0 and n % (16 * num_warps) == 0 and m % 16 == 0:
        return AmdMfma(16, (1, num_warps))
    if k % 16 == 0 and m % (16 * num_warps) == 0 and n % 16 == 0:
        return AmdMfma(16, (num_warps, 1))
    return None


def wmma_layout(shape: tuple[int, int, int], num_warps: int) -> AmdWmma | None:
    """The WMMA result layout of an [M, N] = [M, K] @ [K, N] dot on `num_warps` waves of 32, or None."""
    m, n, k = shape
    return AmdWmma((1, num_warps)) if k % 16 == 0 and m % 16 == 0 and n % (16 * num_warps) == 0 else None


def mfma_eligible(dot: tt.DotOp) -> bool:
    operand, other = element_of(dot.a.type), element_of(dot.b.type)
    return (isinstance(operand, Float16Type | BFloat16Type) and type(other) is type(operand)
            and isinstance(element_of(dot.result.type), Float32Type) and len(shape_of(dot.a.type)) == 2)


def accelerate_amd_matmul(module: ModuleOp, arch: str) -> None:
    """Give the dots the matrix cores of `arch` can compute the `#ttg.amd_mfma` / `#ttg.amd_wmma` layouts."""
    from .accelerate_matmul import _to_mma

    num_warps, lanes = launch_shape(module)
    if (arch, lanes) not in [(a, 64) for a in MFMA_ARCHS] + [(a, 32) for a in WMMA_ARCHS]:
        return
    choose = mfma_layout if lanes == 64 else wmma_layout
    for func_op in functions(module):
        for dot in [o for o in func_op.walk() if isinstance(o, tt.DotOp)]:
            if not mfma_eligible(dot):
                continue
            m, k = shape_of(dot.a.type)
            layout = choose((m, shape_of(dot.b.type)[1], k), num_warps)
            if layout is not None:
                _to_mma(dot, layout)
