"""CPU exp's 2^n step (to_llvm/targets/cpu_math.py): one `llvm.ldexp` (vscalefps) on AVX-512 hosts,
two multiplies by exponent-bit powers of two elsewhere.  Both round once, so they give the same bits,
subnormal results and overflow included."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from filecheck_tool import filecheck
from inductor_tile.kernel_compiler.to_llvm.targets import cpu_math
from suite import poison

AVX512 = cpu_math._native_ldexp()


# two kernels with their own sources, so that neither compiled form is cached under the other's key
@inductor_tile.jit
def exp_with_host_ldexp(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.exp(tl.load(x_ptr + offsets, mask=mask)), mask=mask)


@inductor_tile.jit
def exp_with_exponent_bits(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.exp(tl.load(x_ptr + offsets, mask=mask)), mask=mask)


def _inputs() -> torch.Tensor:
    gen = torch.Generator().manual_seed(3)
    ragged = 100_003  # a partial last block
    return torch.cat([torch.rand(ragged, generator=gen, dtype=torch.float64) * 200 - 108,  # -108..92
                      torch.tensor([-103.97, -87.34, -87.33, 88.72, 88.73, 0.0, -0.0, float("nan"),
                                    float("inf"), float("-inf")], dtype=torch.float64)]).float()


def _run(kernel, x: torch.Tensor) -> torch.Tensor:
    out = poison(torch.empty_like(x))
    block = 256
    kernel[(-(-x.numel() // block),)](x, out, x.numel(), BLOCK=block)
    return out


def test_exp_with_exponent_bits_is_right_to_3_ulp_and_subnormal(monkeypatch):
    monkeypatch.setattr(cpu_math, "_native_ldexp", lambda: False)
    x = _inputs()
    out = _run(exp_with_exponent_bits, x)
    ref = x.double().exp()
    torch.testing.assert_close(out.double(), ref.float().double(), rtol=3 * 2.0 ** -23, atol=2.0 ** -149 * 2,
                               equal_nan=True)
    assert (out[(x < -87.4) & (x > -103)] > 0).all()  # subnormal results, not flushed


@pytest.mark.skipif(not AVX512, reason="llvm.ldexp is one instruction only with AVX-512")
def test_exp_through_ldexp_gives_the_same_bits(monkeypatch, tmp_path):
    x = _inputs()
    fast = _run(exp_with_host_ldexp, x)
    monkeypatch.setattr(cpu_math, "_native_ldexp", lambda: False)
    bits = _run(exp_with_exponent_bits, x)
    assert torch.equal(fast.view(torch.int32), bits.view(torch.int32))
    monkeypatch.undo()
    text = inductor_tile.compile(exp_with_host_ldexp, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                                 {"BLOCK": 256}, target="cpu").asm
    filecheck(text["llir"], """
CHECK: [[K:%.*]] = fptosi <[[W:(4|8|16)]] x float> {{.*}} to <[[W]] x i32>
CHECK-NOT: shl <[[W]] x i32>
CHECK: call <[[W]] x float> @llvm.ldexp.v[[W]]f32.v[[W]]i32(<[[W]] x float> {{.*}}, <[[W]] x i32> [[K]])
""", tmp_path)
    assert "vscalefps" in text["asm"] and "ldexpf" not in text["asm"]
