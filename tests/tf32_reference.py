"""tf32 rounding written independently of the compiler, for tl.dot references: float64 arithmetic on
the value (not bit tricks), to nearest with ties away from zero, like cvt.rna.tf32.f32."""

from __future__ import annotations

import torch


def tf32(x: torch.Tensor) -> torch.Tensor:
    """fp32 `x` rounded to 10 mantissa bits, returned in float64 (NaN and infinities unchanged)."""
    wide = x.double()
    _, exponent = torch.frexp(wide)  # |x| = f 2^e, f in [0.5, 1): the tf32 quantum is 2^(e - 11)
    quantum = torch.ldexp(torch.ones_like(wide), torch.clamp(exponent, min=-125) - 11)  # subnormals: 2^-136
    rounded = torch.sign(wide) * torch.floor(wide.abs() / quantum + 0.5) * quantum
    rounded = torch.where(rounded.abs() > torch.finfo(torch.float32).max, torch.sign(wide) * torch.inf, rounded)
    return torch.where(torch.isfinite(wide), rounded, wide)


def tf32_truncated(x: torch.Tensor) -> torch.Tensor:
    """fp32 `x` with its mantissa cut to 10 bits (toward zero), in float64: what wgmma's tf32 instructions
    read from raw fp32 in shared memory (the 13 low bits dropped, as Triton's tf32 wgmma dots rely on)."""
    wide = x.double()
    _, exponent = torch.frexp(wide)
    quantum = torch.ldexp(torch.ones_like(wide), torch.clamp(exponent, min=-125) - 11)
    cut = torch.sign(wide) * torch.floor(wide.abs() / quantum) * quantum
    return torch.where(torch.isfinite(wide), cut, wide)
