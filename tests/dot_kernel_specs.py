"""Compiler specializations of model_benchmarks' dot kernels, shared by the tests that compile them
through `compile_specialized` (every runtime argument assumed divisible by 16)."""

from __future__ import annotations

from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from model_benchmarks import dot_kernels


def attention_specs(head_dim: int, block_m: int = 64, block_n: int = 64) -> list:
    """`attention_fwd_kernel`'s specs for fp16 tensors and the given blocks."""
    signature = dot_kernels.ATTENTION_SIGNATURE
    constexprs = {"HEAD_DIM": head_dim, "BLOCK_M": block_m, "BLOCK_N": block_n}
    return [spec_from_signature(n, signature[n], divisible_by_16=True) if n in signature
            else spec_from_signature(n, "constexpr", constexprs[n]) for n in dot_kernels.attention_fwd_kernel.arg_names]
