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


def matmul_specs(dtype: str, block_m: int, block_n: int, block_k: int, group_m: int = 8,
                 out: str | None = None) -> list:
    """`matmul_kernel`'s specs for `dtype` operands ("fp16", "fp32", ...), an `out` result (default: `dtype`)
    and the given blocks; the unit strides (`stride_ak`, `stride_bn`, `stride_cn`) specialized to 1."""
    ints = ["M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"]
    signature = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{out or dtype}",
                 **{name: "i32" for name in ints}}
    constexprs = {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "GROUP_M": group_m}
    return [spec_from_signature(n, signature[n], divisible_by_16=True, equal_to_1=n.endswith(("_ak", "_bn", "_cn")))
            if n in signature else spec_from_signature(n, "constexpr", constexprs[n])
            for n in dot_kernels.matmul_kernel.arg_names]
