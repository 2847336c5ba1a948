"""The K loop of the cp.async-ring matmuls (TILE_PIPELINE=1) in PTX for sm_90, against the causes a 2x
loss could have (issue 21): each iteration waits for the oldest copy group only (not all of them), the
wgmma operands are read straight from the ring slots (nothing goes through registers and back into
shared memory), one wgmma group stays in flight, the copies move 16 bytes each, and the slots are laid
out as Triton 3.6 lays them out for the same kernels (swizzled rows, descriptors with the swizzle mode,
1 KiB-aligned, no padding). TILE_PIPELINE=padded keeps the padded core matrices (to time both)."""

from __future__ import annotations

import platform
import re

import pytest

from filecheck_tool import filecheck
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.runtime.cuda_tools import assemble_ptx
from inductor_tile.kernel_compiler.to_llvm.nvptx import ptx_arch
from model_benchmarks import dot_kernels
from test_pipeline_async_copies import _matmul_specs

needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")

#: (BLOCK_M, BLOCK_N, BLOCK_K, warps) of the benchmark's matmuls
CONFIGS = [(128, 128, 32, 4), (128, 256, 64, 8), (128, 64, 32, 4)]


@pytest.fixture(autouse=True)
def sm90(monkeypatch):
    monkeypatch.setenv("TILE_PIPELINE", "1")
    monkeypatch.delenv("TILE_WGMMA", raising=False)


def _ptx(block_m: int, block_n: int, block_k: int, warps: int) -> tuple[str, int]:
    specs = _matmul_specs(block_m, block_n, block_k, out="fp16")
    compiled = compile_specialized(dot_kernels.matmul_kernel, specs, target="cuda:90", num_warps=warps,
                                   native=False, num_stages=3)
    return compiled.asm["ptx"], compiled.shared_bytes


def _copy_registers(body: str) -> int:
    """How many shared-memory address registers the loop's copies use."""
    return len(set(re.findall(r"cp\.async\.cg\.shared\.global \[(%r\d+) \+ \d+\]", body)))


def _loop_body(ptx: str) -> str:
    """From the loop's wait for its oldest copy group to the commit of the copies it starts."""
    start = ptx.index("cp.async.wait_group 1;")
    return ptx[start:ptx.index("cp.async.commit_group;", start)]


def _descriptor_modes(ptx: str) -> set[tuple[int, int, int]]:
    """(swizzle mode, LBO bytes, SBO bytes) of the descriptors' constant halves (`or.b64 %rd, %rd, C`)."""
    found = set()
    for constant in re.findall(r"or\.b64\s+%rd\d+, %rd\d+, (-?\d+);", ptx):
        value = int(constant) % 2**64
        if value >> 62 or (value >> 16) & 0x3FFF:
            found.add((value >> 62, ((value >> 16) & 0x3FFF) * 16, ((value >> 32) & 0x3FFF) * 16))
    return found


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "x".join(map(str, c[:3])) + f"-{c[3]}w")
def test_loop_reads_the_slots_and_keeps_one_group_in_flight(config, tmp_path):
    block_m, block_n, block_k, warps = config
    body = _loop_body(_ptx(*config)[0])
    per_iteration = (block_m // (64 * warps // 4)) * (block_k // 16)  # wgmma instructions per warpgroup
    # 16-byte copies of this thread's share of both tiles: (BM + BN) * BK halves over 32 * warps threads
    copies = (block_m + block_n) * block_k // (8 * 32 * warps)
    filecheck(body, f"""
CHECK: cp.async.wait_group 1;
CHECK-NOT: cp.async.wait_group
CHECK-NOT: st.shared
CHECK-NOT: ld.shared
CHECK: bar.sync
CHECK-NOT: st.shared
CHECK-NOT: ld.shared
CHECK: wgmma.fence.sync.aligned;
CHECK-COUNT-{per_iteration}: wgmma.mma_async.sync.aligned
CHECK-NOT: wgmma.mma_async
CHECK: wgmma.commit_group.sync.aligned;
CHECK-NOT: wgmma.wait_group.sync.aligned 0;
CHECK: wgmma.wait_group.sync.aligned 1;
CHECK: bar.sync
CHECK-COUNT-{copies}: cp.async.cg.shared.global [%r{{{{[0-9]+}}}} + {{{{[0-9]+}}}}], [%rd{{{{[0-9]+}}}}], 16, %r{{{{[0-9]+}}}};
CHECK-NOT: cp.async
""", tmp_path)
    assert _copy_registers(body) == 2  # a's copies at immediate offsets from one register, b's from another


@pytest.mark.parametrize("config,expected", [
    ((128, 128, 32, 4), {(2, 16, 512), (1, 4096, 1024)}),  # a: 64-byte rows, b: 128-byte rows
    ((128, 256, 64, 8), {(1, 16, 1024), (1, 8192, 1024)}),  # a: 128-byte rows
    ((128, 64, 32, 4), {(2, 16, 512), (1, 4096, 1024)}),  # b: one 64-column block (LBO unused; Triton: 0)
], ids=["128x128x32-4w", "128x256x64-8w", "128x64x32-4w"])
def test_slots_are_swizzled_as_triton_lays_them_out(config, expected):
    """Triton 3.6's PTX for these kernels has the same modes, SBOs, b's LBOs and shared memory (3 stages);
    a K-major tile's LBO is unused: 1 (16 bytes) here, as CUTLASS sets it, 0 in Triton's."""
    block_m, block_n, block_k, _ = config
    ptx, shared = _ptx(*config)
    assert _descriptor_modes(ptx) == expected
    assert ".extern .shared .align 1024 .b8 global_smem[];" in ptx
    assert shared == 3 * (block_m + block_n) * block_k * 2  # the rings (the fp16 epilogue's exchange is smaller)


def test_padded_slots_stay_available(monkeypatch):
    monkeypatch.setenv("TILE_PIPELINE", "padded")
    ptx, _ = _ptx(128, 128, 32, 4)
    assert {mode for mode, _, _ in _descriptor_modes(ptx)} == {0}
    assert "cp.async.wait_group 1;" in ptx and "wgmma.wait_group.sync.aligned 1;" in ptx


@needs_ptxas
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "x".join(map(str, c[:3])) + f"-{c[3]}w")
def test_ptxas_keeps_the_groups_asynchronous_without_spills(config):
    ptx, _ = _ptx(*config)
    log: list[str] = []
    assemble_ptx(ptx, ptx_arch(ptx, 90), "matmul_kernel", ["-v", "--warn-on-spills"], log)
    assert "serialized" not in log[0] and "0 bytes spill stores" in log[0], log[0]


def test_words_combine(monkeypatch):
    """TILE_PIPELINE=sync,padded: every wgmma dot waits in its iteration, and reads padded slots."""
    monkeypatch.setenv("TILE_PIPELINE", "sync,padded")
    ptx, _ = _ptx(128, 128, 32, 4)
    assert {mode for mode, _, _ in _descriptor_modes(ptx)} == {0}
    assert "cp.async.wait_group 1;" in ptx and "wgmma.wait_group.sync.aligned 1;" not in ptx


def test_an_unknown_word_names_the_variable(monkeypatch):
    from inductor_tile.kernel_compiler.passes.pipeline import async_copy_stages

    monkeypatch.setenv("TILE_PIPELINE", "1,swizzle")
    with pytest.raises(ValueError, match=r"TILE_PIPELINE='1,swizzle': unknown \['swizzle'\]"):
        async_copy_stages(3, 3)
