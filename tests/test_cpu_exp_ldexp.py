"""CPU exp's 2^n step (to_llvm/targets/cpu_math.py): on AVX-512 hosts one vscalefps (16 floats: the
x86 intrinsic on the float n; other widths: `llvm.ldexp`), elsewhere two multiplies by exponent-bit
powers of two.  All round once, so they give the same bits, subnormal results and overflow included."""

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


def _run(kernel, x: torch.Tensor, block: int = 256) -> torch.Tensor:
    out = poison(torch.empty_like(x))
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


SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}


@pytest.mark.skipif(not AVX512, reason="vscalefps is an AVX-512 instruction")
@pytest.mark.parametrize("block", [256, 8])
def test_exp_through_scalef_gives_the_same_bits(monkeypatch, block):
    """256: 16-float slices (the x86 scalef intrinsic); 8: one <8 x float> (llvm.ldexp)."""
    x = _inputs()
    fast = _run(exp_with_host_ldexp, x, block)
    monkeypatch.setattr(cpu_math, "_native_ldexp", lambda: False)
    bits = _run(exp_with_exponent_bits, x, block)
    assert torch.equal(fast.view(torch.int32), bits.view(torch.int32))


@pytest.mark.skipif(not AVX512, reason="vscalefps is an AVX-512 instruction")
def test_exp_on_16_floats_scales_by_the_float_n(tmp_path):
    """No float->int->float round trip of n and no NaN select: scalef(NaN, NaN) is NaN."""
    asm = inductor_tile.compile(exp_with_host_ldexp, SIGNATURE, {"BLOCK": 256}, target="cpu").asm
    filecheck(asm["llir"], """
CHECK: [[N:%.*]] = call <16 x float> @llvm.floor.v16f32(
CHECK-NOT: fptosi
CHECK-NOT: fcmp uno
CHECK: call <16 x float> @llvm.x86.avx512.mask.scalef.ps.512(<16 x float> {{%[^,]*}},
CHECK-SAME: <16 x float> [[N]], <16 x float> zeroinitializer, i16 -1, i32 4)
CHECK-NOT: fcmp uno
CHECK: store <16 x float>
""", tmp_path)
    assert "vscalefps" in asm["asm"] and "ldexpf" not in asm["asm"]


@pytest.mark.skipif(not AVX512, reason="llvm.ldexp is one instruction only with AVX-512")
def test_exp_on_8_floats_calls_ldexp(tmp_path):
    asm = inductor_tile.compile(exp_with_host_ldexp, SIGNATURE, {"BLOCK": 8}, target="cpu").asm
    filecheck(asm["llir"], """
CHECK: [[K:%.*]] = fptosi <8 x float> {{.*}} to <8 x i32>
CHECK-NOT: shl <8 x i32>
CHECK: call <8 x float> @llvm.ldexp.v8f32.v8i32(<8 x float> {{.*}}, <8 x i32> [[K]])
""", tmp_path)
    assert "vscalefps" in asm["asm"] and "ldexpf" not in asm["asm"]
