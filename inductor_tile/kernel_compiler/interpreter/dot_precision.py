"""How the interpreter rounds fp32 `tl.dot` operands for each `input_precision`, as NVIDIA tensor cores do.

- "tf32": each operand rounded to tf32 (10 explicit mantissa bits, 8 exponent bits) to nearest, ties
  away from zero, like `cvt.rna.tf32.f32`; the products of two tf32 values are exact in fp32.
- "tf32x3": each operand split into a big tf32 part and the tf32 rounding of what is left; the product
  is the sum of small * big, big * small and big * big (small * small is dropped), close to fp32.
- "ieee": the operands as they are.
"""

from __future__ import annotations

import torch
from torch import Tensor

TF32_DROPPED_BITS = 13  # fp32 has 23 explicit mantissa bits, tf32 10


def round_to_tf32(x: Tensor) -> Tensor:
    """fp32 `x` rounded to tf32 (kept in fp32): to nearest, ties away from zero; NaN, inf stay."""
    bits = x.view(torch.int32)
    half = 1 << (TF32_DROPPED_BITS - 1)
    rounded = ((bits + half) & ~((1 << TF32_DROPPED_BITS) - 1)).view(torch.float32)  # magnitude bits: away from 0
    return torch.where(torch.isfinite(x), rounded, x)


def split_tf32(x: Tensor) -> tuple[Tensor, Tensor]:
    """(big, small): big = tf32(x), small = tf32(x - big)."""
    big = round_to_tf32(x)
    return big, round_to_tf32(x - big)


def fp32_dot(a: Tensor, b: Tensor, acc: Tensor, input_precision: str) -> Tensor:
    """a @ b + acc for fp32 operands, the operands rounded as `input_precision` says, summed in fp32."""
    if input_precision == "tf32":
        return torch.matmul(round_to_tf32(a), round_to_tf32(b)) + acc
    if input_precision == "tf32x3":
        a_big, a_small = split_tf32(a)
        b_big, b_small = split_tf32(b)
        return torch.matmul(a_small, b_big) + torch.matmul(a_big, b_small) + torch.matmul(a_big, b_big) + acc
    return torch.matmul(a, b) + acc
