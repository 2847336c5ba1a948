"""Language features on the AMD target, checked on linked code objects (no AMD GPU): tl.dot's FMA path (fp32
dots, RDNA3, and CDNA fp16/bf16 dots under TILE_AMD_MFMA=0; MFMA: test_amd_dot_mfma.py) with operands through
LDS, float64 reductions exchange both 32-bit words across a wave64, and scans, sorts, histograms, gathers, random
numbers and permutes link for CDNA and RDNA3 without spilling."""

from __future__ import annotations

import pytest
from filecheck_tool import filecheck
from test_amd_target import _disassembly, needs_lld, needs_objdump
from test_nvidia_ptx import row_sum_kernel

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.to_llvm import hsaco

WAVES = {"gfx942": 64, "gfx1100": 32}


@inductor_tile.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + m[:, None] * K + k[None, :])
    b = tl.load(b_ptr + k[:, None] * N + n[None, :])
    tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b))


def _fma_count(text: str) -> int:
    """Multiply-adds in the disassembly (a v_dual_fmac line of RDNA3 holds two)."""
    return sum(line.count("fmac_f32") + line.count("v_fma_f32") + line.count("v_fma_mix_f32")
               for line in text.splitlines())


_SPILLS = pytest.mark.xfail(strict=True, reason="known gap: fp32 FMA dots spill on RDNA3 (256 VGPRs a lane): "
                                                "64x64x32 over 4 waves needs 1176 bytes of scratch")


@needs_lld
@needs_objdump
@pytest.mark.parametrize("arch, element", [("gfx942", "fp32"), ("gfx942", "fp16"), ("gfx942", "bf16"),
                                           pytest.param("gfx1100", "fp32", marks=_SPILLS), ("gfx1100", "fp16"),
                                           ("gfx1100", "bf16")])
def test_dot_is_fmas_with_operands_through_lds(monkeypatch, arch, element):
    monkeypatch.setenv("TILE_AMD_MFMA", "0")  # the FMA path on CDNA too
    M, N, K, num_warps = 64, 64, 32, 4
    kernel = inductor_tile.compile(dot_kernel, signature={"a_ptr": f"*{element}", "b_ptr": f"*{element}",
                                                          "c_ptr": "*fp32"},
                                   constexprs={"M": M, "N": N, "K": K}, target=f"hip:{arch}", num_warps=num_warps)
    meta = hsaco.kernel_metadata(kernel.asm["hsaco"], "dot_kernel")
    assert meta[".private_segment_fixed_size"] == 0 and meta[".group_segment_fixed_size"] == kernel.shared_bytes > 0
    text = _disassembly(kernel, arch)
    per_thread = M * N * K // (WAVES[arch] * num_warps)
    assert per_thread <= _fma_count(text) <= 1.1 * per_thread  # every product once, none repeated
    assert ("ds_read" in text or "ds_load" in text) and "v_mfma" not in text and "v_wmma" not in text
    if element == "fp16":
        assert "v_fma_mix_f32" in text  # f16 operands into an f32 accumulator in one instruction


@needs_lld
@needs_objdump
def test_float64_wave64_reduction_exchanges_both_words(tmp_path):
    kernel = inductor_tile.compile(row_sum_kernel, signature={"x_ptr": "*fp64", "out_ptr": "*fp64"},
                                   constexprs={"N": 1024}, target="hip:gfx942", num_warps=4,
                                   divisible_by_16=("x_ptr", "out_ptr"))
    filecheck(_disassembly(kernel, "gfx942"), "CHECK: ds_bpermute_b32\n"
                                              "CHECK-NEXT: ds_bpermute_b32\n"
                                              "CHECK: v_add_f64\n"
                                              "CHECK: ds_swizzle_b32 {{.*}}swizzle(SWAP,16)\n"
                                              "CHECK-NEXT: ds_swizzle_b32 {{.*}}swizzle(SWAP,16)\n"
                                              "CHECK: v_add_f64\n"
                                              "CHECK: ds_write_b64\n"
                                              "CHECK: s_barrier\n"
                                              "CHECK: ds_read_b64\n", tmp_path)


@inductor_tile.jit
def scan_sort_kernel(x_ptr, i_ptr, out_ptr, hist_ptr, seed, BLOCK: tl.constexpr, BINS: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x, i = tl.load(x_ptr + offs), tl.load(i_ptr + offs)
    value = tl.cumsum(x, 0) + tl.sort(x) + tl.gather(x, i, 0) + tl.rand(seed, offs) + tl.cumprod(x, 0)
    tl.store(out_ptr + offs, value)
    tl.store(hist_ptr + tl.arange(0, BINS), tl.histogram(i, BINS))


@inductor_tile.jit
def permute_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    r, c = tl.arange(0, R), tl.arange(0, C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :])
    tl.store(out_ptr + c[:, None] * R + r[None, :], tl.trans(x) + tl.cumsum(tl.trans(x), 1))


@needs_lld
@pytest.mark.parametrize("arch", sorted(WAVES))
def test_scans_sorts_gathers_and_permutes_link_without_spilling(arch):
    kernels = [(scan_sort_kernel, {"x_ptr": "*fp32", "i_ptr": "*i32", "out_ptr": "*fp32", "hist_ptr": "*i32",
                                   "seed": "i32"}, {"BLOCK": 256, "BINS": 16}),
               (permute_kernel, {"x_ptr": "*fp16", "out_ptr": "*fp16"}, {"R": 64, "C": 64})]
    for kernel, signature, constexprs in kernels:
        out = inductor_tile.compile(kernel, signature=signature, constexprs=constexprs, target=f"hip:{arch}",
                                    num_warps=4)
        meta = hsaco.kernel_metadata(out.asm["hsaco"], kernel.__name__)
        assert meta[".wavefront_size"] == WAVES[arch]
        assert meta[".private_segment_fixed_size"] == 0, f"{kernel.__name__} spills on {arch}"
        assert meta[".group_segment_fixed_size"] == out.shared_bytes > 0
