"""tl.dot on AMD matrix cores (MFMA on CDNA, WMMA on RDNA3), checked on the LLVM IR and on linked, disassembled
code objects (no AMD GPU here; the numbers the instructions compute are checked by the host simulations in
test_amd_dot_mfma_sim.py and test_amd_dot_wmma_sim.py): fp16 and bf16 dots call `llvm.amdgcn.mfma.f32.*` /
`llvm.amdgcn.wmma.f32.16x16x16.*`, the code object holds one instruction per piece and k step of a wave and no
scratch; fp32 dots, RDNA2 and TILE_AMD_MFMA=0 keep FMAs."""

from __future__ import annotations

import re

import pytest
from filecheck_tool import filecheck
from test_amd_language import dot_kernel
from test_amd_target import _disassembly, needs_lld, needs_objdump

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.to_llvm import hsaco

INTRINSIC = {("f16", 32): "32x32x8f16", ("f16", 16): "16x16x16f16", ("bf16", 32): "32x32x8bf16.1k",
             ("bf16", 16): "16x16x16bf16.1k"}
OPERAND = {"f16": "<4 x half>", "bf16": "<4 x i16>"}


@inductor_tile.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows, cols, ks = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + (k + ks)[None, :])
        b = tl.load(b_ptr + (k + ks)[:, None] * BN + cols[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], acc.to(c_ptr.dtype.element_ty))


def _compile(element: str, m: int, n: int, k: int, num_warps: int, arch: str = "gfx942", out: str = "fp32"):
    return inductor_tile.compile(dot_kernel, signature={"a_ptr": f"*{element}", "b_ptr": f"*{element}",
                                                        "c_ptr": f"*{out}"},
                                 constexprs={"M": m, "N": n, "K": k}, target=f"hip:{arch}", num_warps=num_warps)


def _mfma_lines(text: str) -> list[str]:
    return re.findall(r"^v_mfma_f32_\S+", text, flags=re.M)


def _report(kernel, name: str) -> dict:
    meta = hsaco.kernel_metadata(kernel.asm["hsaco"], name)
    assert meta[".private_segment_fixed_size"] == 0 and meta[".vgpr_spill_count"] == 0  # no scratch
    assert meta[".group_segment_fixed_size"] == kernel.shared_bytes <= 64 * 1024
    print(f"{name}: {meta['.vgpr_count']} VGPRs, {meta['.agpr_count']} AGPRs, {meta['.sgpr_count']} SGPRs, "
          f"{kernel.shared_bytes} bytes of LDS")
    return meta


# (M, N, K, waves, instruction side): each wave computes (M / waves_m) x (N / waves_n)
SHAPES = [(64, 64, 32, 4, 16), (128, 128, 32, 4, 32), (128, 128, 32, 8, 16), (64, 128, 64, 4, 32)]


@needs_lld
@needs_objdump
@pytest.mark.parametrize("element", ["fp16", "bf16"])
@pytest.mark.parametrize("m, n, k, num_warps, size", SHAPES)
def test_dot_on_mfma_links_without_scratch(tmp_path, element, m, n, k, num_warps, size):
    kernel = _compile(element, m, n, k, num_warps)
    kind = element.replace("fp", "f")
    assert "#ttg.amd_mfma<{instrShape = " + f"[{size}, {size}, {8 if size == 32 else 16}]" in kernel.asm["ttgir"]
    name, op, acc = f"@llvm.amdgcn.mfma.f32.{INTRINSIC[(kind, size)]}", OPERAND[kind], f"<{size * size // 64} x float>"
    filecheck(kernel.asm["llir"], f"""
CHECK: declare {acc} {name}({op}, {op}, {acc}, i32 immarg, i32 immarg, i32 immarg)
CHECK: [[D:%[.0-9a-z]+]] = tail call {acc} {name}({op} %{{{{.*}}}}, {op} %{{{{.*}}}}, {acc} {{{{.*}}}}, i32 0, i32 0, i32 0)
CHECK: tail call {acc} {name}({op} %{{{{.*}}}}, {op} %{{{{.*}}}}, {acc} [[D]], i32 0, i32 0, i32 0)
""", tmp_path)  # the k steps of a piece chain through the accumulator
    text = _disassembly(kernel, "gfx942")
    names = set(_mfma_lines(text))
    assert names == {f"v_mfma_f32_{size}x{size}x{8 if size == 32 else 16}_{kind}"}
    per_wave = m * n * k // (size * size * (8 if size == 32 else 16)) // num_warps
    assert len(_mfma_lines(text)) == per_wave  # every piece once per wave, none repeated
    assert "v_fma" not in text and "fmac" not in text
    # the operands' 4 k per lane come out of LDS as one 8-byte read (to_llvm/dot_amd_operands.py)
    assert re.search(r"^ds_read2?_b64", text, flags=re.M) and "ds_read_u16" not in text
    _report(kernel, "dot_kernel")


@needs_lld
@needs_objdump
@pytest.mark.parametrize("element", ["fp16", "bf16"])
def test_k_loop_keeps_the_accumulator_in_mfma_registers(element):
    """The loop-carried accumulator of a K loop stays in the MFMA layout: no conversion inside the loop,
    four 32x32x8 instructions per wave and iteration (128 x 128 x 32 tiles, 4 waves), no scratch; a's rows,
    loaded 16 bytes at a time, go into LDS 16 bytes at a time."""
    kernel = inductor_tile.compile(matmul_kernel, signature={"a_ptr": f"*{element}", "b_ptr": f"*{element}",
                                                             "c_ptr": f"*{element}", "K": "i32"},
                                   constexprs={"BM": 128, "BN": 128, "BK": 32}, target="hip:gfx942", num_warps=4,
                                   divisible_by_16=("a_ptr", "b_ptr", "c_ptr", "K"))
    loop = kernel.asm["ttgir"].split("scf.for", 1)[1].split("scf.yield", 1)[0]
    assert "#ttg.amd_mfma<{instrShape = [32, 32, 8], warpsPerCTA = [1, 4]}>" in loop
    assert not any("convert_layout" in line and "-> tensor<128x128xf32" in line for line in loop.splitlines())
    text = _disassembly(kernel, "gfx942")
    assert len(_mfma_lines(text)) == 128 * 32 * 32 // (32 * 32 * 8)
    assert "ds_write_b128" in text and "ds_read_b64" in text
    _report(kernel, "matmul_kernel")


@needs_lld
@pytest.mark.parametrize("arch", ["gfx90a", "gfx950"])
def test_other_cdna_architectures_take_mfma(arch):
    kernel = _compile("fp16", 64, 128, 32, 4, arch=arch)
    assert "llvm.amdgcn.mfma.f32.32x32x8f16" in kernel.asm["llir"] and "v_mfma_f32_32x32x8" in kernel.asm["amdgcn"]


@needs_lld
@pytest.mark.parametrize("element, arch, switch", [("fp32", "gfx942", "1"), ("fp16", "gfx942", "0"),
                                                   ("fp16", "gfx1100", "0"), ("fp16", "gfx1030", "1")])
def test_fp32_switched_off_and_rdna2_dots_keep_fmas(monkeypatch, element, arch, switch):
    monkeypatch.setenv("TILE_AMD_MFMA", switch)
    kernel = _compile(element, 64, 64, 32, 4, arch=arch)
    assert "amd_mfma" not in kernel.asm["ttgir"] and "amd_wmma" not in kernel.asm["ttgir"]
    assert "llvm.amdgcn.mfma" not in kernel.asm["llir"] and "llvm.amdgcn.wmma" not in kernel.asm["llir"]
    assert "v_mfma" not in kernel.asm["amdgcn"] and "v_wmma" not in kernel.asm["amdgcn"]


WMMA_INTRINSIC = {"f16": "f16.v8f32.v16f16(<16 x half>", "bf16": "bf16.v8f32.v16i16(<16 x i16>"}


@needs_lld
@needs_objdump
@pytest.mark.parametrize("element", ["fp16", "bf16"])
@pytest.mark.parametrize("m, n, k, num_warps", [(64, 64, 32, 4), (128, 128, 32, 4), (32, 128, 64, 8)])
def test_dot_on_wmma_links_without_scratch(tmp_path, element, m, n, k, num_warps):
    """RDNA3: one v_wmma_f32_16x16x16 per piece and k step of a wave, each lane's operand halves completed
    from lane l ^ 16 (ds_swizzle), no scratch."""
    kernel = _compile(element, m, n, k, num_warps, arch="gfx1100")
    kind = element.replace("fp", "f")
    assert "#ttg.amd_wmma<{version = 1, warpsPerCTA = [1, " + f"{num_warps}]}}>" in kernel.asm["ttgir"]
    filecheck(kernel.asm["llir"], f"""
CHECK: [[D:%[.0-9a-z]+]] = tail call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.{WMMA_INTRINSIC[kind]} %{{{{.*}}}}
CHECK: tail call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.{WMMA_INTRINSIC[kind]} %{{{{.*}}}}, {{{{.*}}}}, <8 x float> [[D]])
""", tmp_path)
    text = _disassembly(kernel, "gfx1100")
    wmma = re.findall(r"^v_wmma_f32_\S+", text, flags=re.M)
    assert set(wmma) == {f"v_wmma_f32_16x16x16_{kind}"} and len(wmma) == m * n * k // (16 * 16 * 16) // num_warps
    assert "ds_swizzle" in text and "v_fma" not in text and "fmac" not in text
    assert "ds_load_b128" in text and "ds_load_u16" not in text  # a lane's 8 k of an operand: one 16-byte read
    meta = hsaco.kernel_metadata(kernel.asm["hsaco"], "dot_kernel")
    assert meta[".private_segment_fixed_size"] == 0 and meta[".vgpr_spill_count"] == 0
    assert meta[".group_segment_fixed_size"] == kernel.shared_bytes <= 64 * 1024
    print(f"gfx1100 {element} {m}x{n}x{k}/{num_warps}: {meta['.vgpr_count']} VGPRs, {meta['.sgpr_count']} SGPRs, "
          f"{kernel.shared_bytes} bytes of LDS")


@needs_lld
def test_fp16_result_dot_keeps_fmas():
    """tl.dot(..., out_dtype=tl.float16) has no fp16-accumulating MFMA here: FMAs."""

    @inductor_tile.jit
    def half_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
        m, n, k = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
        a = tl.load(a_ptr + m[:, None] * K + k[None, :])
        b = tl.load(b_ptr + k[:, None] * N + n[None, :])
        tl.store(c_ptr + m[:, None] * N + n[None, :], tl.dot(a, b, out_dtype=tl.float16))

    kernel = inductor_tile.compile(half_dot, signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16"},
                                   constexprs={"M": 64, "N": 64, "K": 32}, target="hip:gfx942", num_warps=4)
    assert "llvm.amdgcn.mfma" not in kernel.asm["llir"]


MATMUL_INTS = ["M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"]


@needs_lld
@needs_objdump
@pytest.mark.parametrize("arch, kernel_name, blocks", [
    ("gfx942", "matmul_kernel", {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}),
    ("gfx942", "attention_fwd_kernel", {"HEAD_DIM": 64, "BLOCK_M": 64, "BLOCK_N": 64}),
    ("gfx1100", "matmul_kernel", {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}),
])
def test_benchmark_kernels_take_matrix_cores_without_scratch(arch, kernel_name, blocks):
    """model_benchmarks' tutorial-style matmul (masked edges, strides, K loop) and causal attention forward
    (q k^T, online softmax, p v) compile to one matrix-core instruction per piece and k step of a wave, without
    scratch. (Attention on RDNA3 spills, as its FMA path does more: not checked here.)"""
    from model_benchmarks import dot_kernels

    if kernel_name == "matmul_kernel":
        signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", **{name: "i32" for name in MATMUL_INTS}}
        macs = blocks["BLOCK_M"] * blocks["BLOCK_N"] * blocks["BLOCK_K"]
    else:
        signature = dot_kernels.ATTENTION_SIGNATURE
        macs = 2 * blocks["BLOCK_M"] * blocks["BLOCK_N"] * blocks["HEAD_DIM"]  # q k^T and p v
    kernel = inductor_tile.compile(getattr(dot_kernels, kernel_name), signature=signature, constexprs=blocks,
                                   target=f"hip:{arch}", num_warps=4)
    meta = hsaco.kernel_metadata(kernel.asm["hsaco"], kernel_name)
    assert meta[".private_segment_fixed_size"] == 0 and meta[".vgpr_spill_count"] == 0
    text = _disassembly(kernel, arch)
    found = re.findall(r"^v_(?:mfma|wmma)_f32_(\d+)x\d+x(\d+)_f16", text, flags=re.M)
    assert found and sum(int(side) ** 2 * int(k) for side, k in found) == macs // 4  # 4 waves
