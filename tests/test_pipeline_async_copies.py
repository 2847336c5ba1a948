"""pipeline-async-copies (passes/pipeline_async_copies.py) and its NVIDIA lowering (to_llvm/dot_async.py),
without a GPU: FileCheck on the TTGIR of the matmul and attention kernels for wgmma (sm_90) and mma.sync
(sm_80), num_stages from the launch, the shared-memory budget, and PTX that ptxas accepts with cp.async
and wgmma groups left in flight (tests/gpu/test_dot_gpu.py runs them)."""

from __future__ import annotations

import platform
import re

import pytest

import inductor_tile
import inductor_tile.language as tl
from dot_kernel_specs import attention_specs
from filecheck_tool import filecheck
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.code_generator import generate_ttir
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.ir.context import parse_ttir, print_ir
from inductor_tile.kernel_compiler.ir_builder import TTIRBuilder
from inductor_tile.kernel_compiler.passes.pipeline import EXCHANGE_MARGIN, make_ttgir, optimize_ttir, ttgir_pipeline
from inductor_tile.kernel_compiler.passes.pipeline_async_copies import PipelineAsyncCopiesPass
from inductor_tile.kernel_compiler.runtime.cuda_tools import assemble_ptx
from inductor_tile.kernel_compiler.to_llvm.nvptx import ptx_arch
from model_benchmarks import dot_kernels

needs_ptxas = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="ptxas and libdevice wheels exist for Linux x86-64 only")

SM90_SHARED, SM80_SHARED = 232448, 166912


@pytest.fixture(autouse=True)
def rings_on(monkeypatch):
    """Rings for every tensor-core dot here (TILE_PIPELINE=1; unset, only wgmma's); a test may say otherwise."""
    monkeypatch.setenv("TILE_PIPELINE", "1")


def _matmul_specs(block_m: int, block_n: int, block_k: int, unit_stride: str = "k", out: str = "fp32",
                  operands: str = "fp16") -> list:
    """matmul_kernel specs (`operands` a and b, `out` c); `unit_stride` "k": a row-major, b row-major;
    "mn": both transposed."""
    ones = ("stride_ak", "stride_bn") if unit_stride == "k" else ("stride_am", "stride_bk")
    ints = ["M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm", "stride_cn"]
    signature = {"a_ptr": f"*{operands}", "b_ptr": f"*{operands}", "c_ptr": f"*{out}", **{name: "i32" for name in ints}}
    constexprs = {"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "GROUP_M": 8}
    return [spec_from_signature(n, signature[n], divisible_by_16=n not in ones + ("stride_cn",),
                                equal_to_1=n in ones + ("stride_cn",))
            if n in signature else spec_from_signature(n, "constexpr", constexprs[n])
            for n in dot_kernels.matmul_kernel.arg_names]


def _ttgir(kernel, specs, mma_version: int, num_stages: int, num_warps: int = 4, shared: int = SM90_SHARED) -> str:
    module = optimize_ttir(generate_ttir(kernel, specs, TTIRBuilder()))
    return print_ir(make_ttgir(module, num_warps, 32, mma_version=mma_version, num_stages=num_stages,
                               shared_limit=shared))


def test_wgmma_matmul_copies_ahead_and_keeps_a_group_in_flight(tmp_path):
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32), mma_version=3, num_stages=3)
    assert print_ir(parse_ttir(text)) == text  # the new ops and !ttg.ring print and parse back
    filecheck(text, """
CHECK: %[[A:.*]] = ttg.ring_alloc : !ttg.ring<3x128x32xf16>
CHECK: %[[B:.*]] = ttg.ring_alloc : !ttg.ring<3x32x128xf16>
CHECK: ttg.async_copy %[[A]], %[[S0:[0-9]+]]
CHECK: ttg.async_copy %[[B]], %[[S0]]
CHECK: ttg.async_commit_group
CHECK: ttg.async_copy %[[A]], %[[S1:[0-9]+]]
CHECK: ttg.async_copy %[[B]], %[[S1]]
CHECK: ttg.async_commit_group
CHECK-NOT: ttg.async_copy
CHECK: scf.for {{.*}} iter_args(%[[ACC:[0-9]+]] = {{.*}}, %[[READ:[0-9]+]] = {{.*}}, %[[WRITE:[0-9]+]] = {{.*}})
CHECK-NEXT: ttg.async_wait {pending = 1 : i32}
CHECK-NOT: tt.load
CHECK: %[[X:.*]] = ttg.ring_read %[[A]], %[[READ]] : {{.*}} -> tensor<128x32xf16, #ttg.dot_op<{opIdx = 0
CHECK: %[[Y:.*]] = ttg.ring_read %[[B]], %[[READ]] : {{.*}} -> tensor<32x128xf16, #ttg.dot_op<{opIdx = 1
CHECK: %[[D:.*]] = tt.dot %[[X]], %[[Y]], %[[ACC]]
CHECK-NEXT: %[[W:.*]] = ttg.dot_wait %[[D]] {pending = 1 : i32}
CHECK-NEXT: tt.debug_barrier
CHECK: ttg.async_copy %[[A]], %[[WRITE]]
CHECK: ttg.async_copy %[[B]], %[[WRITE]]
CHECK-NEXT: ttg.async_commit_group
CHECK: scf.yield %[[W]],
CHECK: %[[DONE:.*]] = ttg.dot_wait %{{.*}} {pending = 0 : i32}
CHECK-NEXT: ttg.async_wait {pending = 0 : i32}
CHECK: ttg.convert_layout %[[DONE]]
""", tmp_path)


def test_mma_sync_matmul_copies_at_the_top_of_the_loop(tmp_path):
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(64, 64, 32), mma_version=2, num_stages=4,
                  shared=SM80_SHARED)
    filecheck(text, """
CHECK-COUNT-3: ttg.async_commit_group
CHECK: scf.for
CHECK-NEXT: ttg.async_wait {pending = 2 : i32}
CHECK: ttg.async_copy
CHECK: ttg.async_copy
CHECK-NEXT: ttg.async_commit_group
CHECK: ttg.ring_read {{.*}} -> tensor<64x32xf16, #ttg.dot_op<{opIdx = 0, parent = #ttg.nvidia_mma<{versionMajor = 2
CHECK: ttg.ring_read {{.*}} -> tensor<32x64xf16, #ttg.dot_op<{opIdx = 1
CHECK-NOT: ttg.dot_wait
CHECK: scf.yield
CHECK-NEXT: }
CHECK-NEXT: ttg.async_wait {pending = 0 : i32}
""", tmp_path)


def test_attention_copies_k_and_v_and_leaves_p_v_in_flight(tmp_path):
    """q is loaded once (its conversion stays); the scores' dot feeds the softmax and waits for itself; p v
    (on the rescaled accumulator) stays in flight into the next iteration, whose rescaling reads the
    accumulator through a dot_wait after the scores' dot; the copies come after p v and a barrier."""
    text = _ttgir(dot_kernels.attention_fwd_kernel, attention_specs(64), mma_version=3, num_stages=3)
    filecheck(text, """
CHECK: ttg.convert_layout {{.*}} -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0
CHECK: ttg.ring_alloc : !ttg.ring<3x64x64xf16>
CHECK: ttg.ring_alloc : !ttg.ring<3x64x64xf16>
CHECK: scf.for {{.*}} iter_args(%{{[0-9]+}} = %{{[0-9]+}}, %[[ACC:[0-9]+]] = 
CHECK-NEXT: ttg.async_wait {pending = 1 : i32}
CHECK-NOT: ttg.async_copy
CHECK: ttg.ring_read
CHECK-NEXT: %[[SCORES:[0-9]+]] = tt.dot
CHECK-NOT: ttg.dot_wait %[[SCORES]]
CHECK: %[[READY:[0-9]+]] = ttg.dot_wait %[[ACC]] {pending = 0 : i32}
CHECK-NEXT: arith.mulf %[[READY]]
CHECK: ttg.ring_read
CHECK-NEXT: %[[PV:[0-9]+]] = tt.dot
CHECK-NEXT: %[[FLIGHT:[0-9]+]] = ttg.dot_wait %[[PV]] {pending = 1 : i32}
CHECK-NEXT: tt.debug_barrier
CHECK: ttg.async_copy
CHECK: ttg.async_copy
CHECK: ttg.async_commit_group
CHECK: scf.yield {{.*}}, %[[FLIGHT]],
CHECK: ttg.dot_wait {{.*}} {pending = 0 : i32}
CHECK-NEXT: ttg.async_wait {pending = 0 : i32}
""", tmp_path)
    assert text.count("ttg.async_copy") == 3 * 2  # two prologue stages and the loop's, for k and v


def test_attention_accsync_keeps_p_v_waiting_and_the_copies_on_top(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_PIPELINE", "accsync")
    text = _ttgir(dot_kernels.attention_fwd_kernel, attention_specs(64), mma_version=3, num_stages=3)
    filecheck(text, """
CHECK: scf.for
CHECK-NEXT: ttg.async_wait {pending = 1 : i32}
CHECK: ttg.async_commit_group
CHECK: tt.dot
CHECK: tt.dot
CHECK-NOT: ttg.dot_wait
CHECK: ttg.async_wait {pending = 0 : i32}
""", tmp_path)


@pytest.mark.parametrize("num_stages", [0, 1])
def test_one_stage_keeps_the_register_prefetch(num_stages):
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32), mma_version=3, num_stages=num_stages)
    assert "ttg.ring_alloc" not in text and "ttg.async_copy" not in text
    assert text.count("tt.load") == 4  # pipeline-loads: the first iteration's before the loop, the next one's in it


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("TILE_PIPELINE", "0")
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32), mma_version=3, num_stages=3)
    assert "ttg.ring_alloc" not in text
    monkeypatch.setenv("TILE_PIPELINE", "sync")  # rings, but every wgmma dot waits in its iteration
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32), mma_version=3, num_stages=3)
    assert "ttg.ring_alloc" in text and "ttg.dot_wait" not in text and "tt.debug_barrier" not in text
    monkeypatch.setenv("TILE_PIPELINE", "nofence")  # as 1 (the proxy fence is the lowering's: a PTX test)
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32), mma_version=3, num_stages=3)
    assert "ttg.ring_alloc" in text and "ttg.dot_wait" in text


def test_rings_by_default_for_wgmma_only(monkeypatch):
    monkeypatch.delenv("TILE_PIPELINE")
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32), mma_version=3, num_stages=3)
    assert "ttg.ring_alloc" in text and "ttg.dot_wait" in text  # Hopper: rings, a wgmma group in flight
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32), mma_version=2, num_stages=3)
    assert "ttg.ring_alloc" not in text  # mma.sync: the register prefetch (rings untimed there)


def test_cpu_and_fma_pipelines_ignore_num_stages():
    for num_stages in (1, 4):
        for mma_version in (0,):
            passes = ttgir_pipeline(1, 1, mma_version, num_stages)
            assert not any(isinstance(p, PipelineAsyncCopiesPass) for p in passes)


@pytest.mark.parametrize("shared,stages", [(SM90_SHARED, 4), (SM80_SHARED, 2)], ids=["sm90", "sm80"])
def test_stages_are_limited_by_shared_memory(shared, stages):
    """128 x 256 x 64 takes ~54 KiB a stage: 4 fit sm_90's 227 KiB, sm_80's 163 KiB only 2 with the margin."""
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 256, 64), mma_version=3, num_stages=4, num_warps=8,
                  shared=shared)
    assert f"!ttg.ring<{stages}x128x64xf16>" in text and f"!ttg.ring<{stages}x64x256xf16>" in text


def _ptx(kernel, specs, arch: int, num_stages: int, num_warps: int = 4) -> tuple[str, str, int]:
    """PTX, ptxas's -v report and the shared memory of a kernel compiled for sm_<arch>."""
    compiled = compile_specialized(kernel, specs, target=f"cuda:{arch}", num_warps=num_warps, native=False,
                                   num_stages=num_stages)
    ptx = compiled.asm["ptx"]
    log: list[str] = []
    assemble_ptx(ptx, ptx_arch(ptx, arch), kernel.__name__, ["-v"], log)
    return ptx, log[0], compiled.shared_bytes


@needs_ptxas
@pytest.mark.parametrize("arch,unit_stride", [(90, "k"), (90, "mn"), (80, "k")],
                         ids=["sm90-rows", "sm90-transposed", "sm80-rows"])
def test_matmul_ptx_copies_with_cp_async(arch, unit_stride, monkeypatch):
    monkeypatch.delenv("TILE_WGMMA", raising=False)
    ptx, report, shared = _ptx(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32, unit_stride), arch, 3)
    # 128 x 32 + 32 x 128 halves in 16-byte copies over 128 threads: 8 per thread and stage, 3 stages
    assert ptx.count("cp.async.cg.shared.global") == 3 * 8
    assert "cp.async.wait_group 1;" in ptx and "cp.async.wait_group 0;" in ptx
    assert "tile_rings_offset" not in ptx  # the rings' offset is a constant folded into the addresses
    assert "ld.global" not in ptx.split("cp.async.wait_group 0;")[0]  # the operands arrive by cp.async only
    if arch == 90:
        assert "wgmma.wait_group.sync.aligned 1;" in ptx and "fence.proxy.async.shared::cta;" in ptx
        assert "serialized" not in report  # ptxas keeps the wgmma groups asynchronous
    else:
        assert "ldmatrix" in ptx and "wgmma" not in ptx and "fence.proxy.async" not in ptx
    # the rings (3 slots of a and b, padded) and the epilogue's exchange (128 x 128 fp32, rows padded by 8:
    # dot_epilogue.py) share memory
    assert shared == 128 * (128 + 8) * 4


@needs_ptxas
@pytest.mark.parametrize("arch,head_dim", [(90, 64), (90, 128), (80, 64)])
def test_attention_ptx_copies_with_cp_async(arch, head_dim, monkeypatch):
    monkeypatch.delenv("TILE_WGMMA", raising=False)
    ptx, report, shared = _ptx(dot_kernels.attention_fwd_kernel, attention_specs(head_dim), arch, 3)
    # k and v: 64 x head_dim halves each, 16-byte copies over 128 threads, 3 stages
    assert ptx.count("cp.async.cg.shared.global") == 3 * 2 * 64 * head_dim // (8 * 128)
    assert ("wgmma.mma_async" in ptx) == (arch == 90) and "serialized" not in report
    assert shared >= 3 * 2 * 64 * head_dim * 2  # the rings come after the softmax's exchanges


@needs_ptxas
def test_unaligned_operands_are_copied_element_by_element():
    """Rows of an odd number of halves: no 16-byte run is aligned, so each element is loaded and stored
    (synchronously) into its slot; the ring and its waits stay."""
    specs = _matmul_specs(64, 64, 32)
    specs = [spec_from_signature(s.name, "i32") if s.name in ("stride_am", "stride_bk") else s for s in specs]
    ptx, _, _ = _ptx(dot_kernels.matmul_kernel, specs, 90, 3)
    assert "cp.async.cg" not in ptx and "cp.async.wait_group 1;" in ptx
    assert "st.shared.b16" in ptx or "st.shared.u16" in ptx


@inductor_tile.jit
def scaled_a_kernel(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + rows[:, None] * K + (k + rows)[None, :]) * 2.0
        b = tl.load(b_ptr + (k + rows)[:, None] * BLOCK + rows[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rows[:, None] * BLOCK + rows[None, :], acc)


def test_a_computed_operand_keeps_the_register_prefetch(tmp_path):
    """a is scaled after its load: it is prefetched through registers and converted; b gets a ring."""
    specs = [spec_from_signature("a_ptr", "*fp16", divisible_by_16=True),
             spec_from_signature("b_ptr", "*fp16", divisible_by_16=True),
             spec_from_signature("c_ptr", "*fp32", divisible_by_16=True),
             spec_from_signature("K", "i32", divisible_by_16=True), spec_from_signature("BLOCK", "constexpr", 64)]
    text = _ttgir(scaled_a_kernel, specs, mma_version=3, num_stages=3)
    filecheck(text, """
CHECK: %[[FIRST:.*]] = tt.load
CHECK-NOT: tt.load
CHECK: %[[B:.*]] = ttg.ring_alloc : !ttg.ring<3x64x64xf16>
CHECK-NOT: ttg.ring_alloc
CHECK: scf.for {{.*}} iter_args({{.*}}, %[[A:[0-9]+]] = %[[FIRST]],
CHECK: tt.load
CHECK: %[[X:.*]] = ttg.convert_layout {{.*}} -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0
CHECK: %[[Y:.*]] = ttg.ring_read %[[B]]
CHECK: tt.dot %[[X]], %[[Y]]
""", tmp_path)
    assert "ttg.dot_wait" not in text  # a's exchange buffer would be overwritten under an in-flight dot


@needs_ptxas
@pytest.mark.parametrize("arch", [90, 80])
def test_a_computed_operand_ptx(arch, monkeypatch):
    monkeypatch.delenv("TILE_WGMMA", raising=False)
    specs = [spec_from_signature("a_ptr", "*fp16", divisible_by_16=True),
             spec_from_signature("b_ptr", "*fp16", divisible_by_16=True),
             spec_from_signature("c_ptr", "*fp32", divisible_by_16=True),
             spec_from_signature("K", "i32", divisible_by_16=True), spec_from_signature("BLOCK", "constexpr", 64)]
    ptx, _, _ = _ptx(scaled_a_kernel, specs, arch, 3)
    assert ptx.count("cp.async.cg.shared.global") == 3 * 4  # b only: 64 x 64 halves over 128 threads
    assert ("wgmma.mma_async" in ptx) == (arch == 90)


def test_the_pass_alone_on_textual_ttgir(tmp_path):
    """The TTGIR before the pass, printed and parsed back, then `pipeline-async-copies{num-stages=2}` alone."""
    from inductor_tile.kernel_compiler.ir.context import make_context
    from inductor_tile.kernel_compiler.passes import parse_pass_pipeline

    module = optimize_ttir(generate_ttir(dot_kernels.matmul_kernel, _matmul_specs(64, 64, 32), TTIRBuilder()))
    ctx = make_context()
    for module_pass in ttgir_pipeline(4, 32, 2, 2)[:-3]:  # up to the pass, its cse and dce
        module_pass.apply(ctx, module)
    module = parse_ttir(print_ir(module))
    for module_pass in parse_pass_pipeline("pipeline-async-copies{num-stages=2}"):
        module_pass.apply(ctx, module)
    module.verify()
    filecheck(print_ir(module), """
CHECK-COUNT-2: ttg.ring_alloc : !ttg.ring<2x
CHECK: ttg.async_commit_group
CHECK: scf.for
CHECK-NEXT: ttg.async_wait {pending = 0 : i32}
CHECK: ttg.async_commit_group
CHECK: ttg.ring_read
CHECK: ttg.ring_read
CHECK: tt.dot
CHECK: scf.yield
CHECK: ttg.async_wait {pending = 0 : i32}
""", tmp_path)


@needs_ptxas
def test_short_runs_use_cp_async_ca():
    """A 16 x 16 a tile over 128 threads: 2 halves (4 bytes) per thread, copied with cp.async.ca."""
    ptx, _, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(16, 64, 16), 80, 3)
    assert ptx.count("cp.async.ca.shared.global") == 3 and ", 4, " in ptx  # a, one per stage
    assert ptx.count("cp.async.cg.shared.global") == 3  # b: 16 x 64 halves, 8 per thread


def _tutorial_specs(out: str) -> list:
    """matmul_pointers_kernel (pointer tiles advanced around the loop), fp16 operands, 128 x 128 x 32."""
    ones = ("stride_ak", "stride_bn", "stride_cn")
    pointers = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": f"*{out}"}
    constexprs = {"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}
    return [spec_from_signature(n, pointers[n], divisible_by_16=True) if n in pointers
            else spec_from_signature(n, "constexpr", constexprs[n]) if n in constexprs
            else spec_from_signature(n, "i32", divisible_by_16=n not in ones, equal_to_1=n in ones)
            for n in dot_kernels.matmul_pointers_kernel.arg_names]


@needs_ptxas
@pytest.mark.parametrize("out", ["fp16", "bf16"])
@pytest.mark.parametrize("kernel,blocks", [("matmul", (128, 128, 32, 4)), ("matmul", (128, 256, 64, 8)),
                                           ("tutorial", (128, 128, 32, 4))],
                         ids=["128x128x32-4w", "128x256x64-8w", "tutorial"])
def test_wgmma_groups_stay_asynchronous_with_a_half_result(kernel, blocks, out, monkeypatch):
    """The benchmark's matmuls store fp16/bf16: the accumulator leaves the loop with its last wgmma group
    in flight and is rounded after `wgmma.wait_group 0`. Rounded with scalar cvt.rn.f16.f32, ptxas
    serialized every wgmma of the kernel (C7514: 'non wgmma instructions reading accumulator registers');
    two elements per cvt.rn.f16x2.f32 (as Triton rounds) keep the groups asynchronous."""
    monkeypatch.delenv("TILE_WGMMA", raising=False)
    block_m, block_n, block_k, warps = blocks
    specs = (_tutorial_specs(out) if kernel == "tutorial"
             else _matmul_specs(block_m, block_n, block_k, out=out, operands=out))
    jit_fn = dot_kernels.matmul_pointers_kernel if kernel == "tutorial" else dot_kernels.matmul_kernel
    ptx, report, _ = _ptx(jit_fn, specs, 90, 3, num_warps=warps)
    assert "wgmma.wait_group.sync.aligned 1;" in ptx  # a group in flight across iterations
    assert "serialized" not in report, report
    kind = {"fp16": "f16", "bf16": "bf16"}[out]
    assert ptx.count(f"cvt.rn.{kind}x2.f32") == block_m * block_n // (32 * warps) // 2
    assert f"cvt.rn.{kind}.f32" not in ptx


@needs_ptxas
def test_proxy_fence_only_before_wgmma_reads(tmp_path, monkeypatch):
    """The cp.async writes (generic proxy) of a slot are fenced before the wgmma dots read it (async proxy):
    in the loop, after the wait for the oldest group and before the barrier. After the loop only generic
    accesses follow (the epilogue's exchange): the last wait needs the barrier, not the fence."""
    monkeypatch.delenv("TILE_WGMMA", raising=False)
    ptx, _, _ = _ptx(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32, out="fp16"), 90, 3)
    filecheck(ptx, """
CHECK-NOT: fence.proxy.async
CHECK: cp.async.wait_group 1;
CHECK-NOT: bar.sync
CHECK: fence.proxy.async.shared::cta;
CHECK-NEXT: // end inline asm
CHECK-NEXT: bar.sync 0;
CHECK-NOT: fence.proxy.async
CHECK: wgmma.mma_async
CHECK-NOT: fence.proxy.async
CHECK: cp.async.wait_group 0;
CHECK-NEXT: // end inline asm
CHECK-NEXT: bar.sync 0;
CHECK-NOT: fence.proxy.async
""", tmp_path)


@needs_ptxas
def test_nofence_leaves_out_the_proxy_fence(monkeypatch):
    """TILE_PIPELINE=nofence: the rings and groups in flight of TILE_PIPELINE=1, without the
    fence.proxy.async (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S in SASS) after each cp.async wait, as Triton 3.6
    and CUTLASS's cp.async + GMMA main loops leave it out (the PTX ISA asks for it: to_llvm/dot_async.py)."""
    monkeypatch.delenv("TILE_WGMMA", raising=False)
    specs = _matmul_specs(128, 128, 32, out="fp16")
    monkeypatch.setenv("TILE_PIPELINE", "nofence")
    ptx, report, _ = _ptx(dot_kernels.matmul_kernel, specs, 90, 3)
    assert "fence.proxy.async" not in ptx
    assert "cp.async.wait_group 1;" in ptx and "wgmma.wait_group.sync.aligned 1;" in ptx
    assert "serialized" not in report


def test_attention_resident_q_reads_a_one_slot_ring(tmp_path, monkeypatch):
    """TILE_PIPELINE=resident: q (loaded before the loop, converted for the scores' dot) goes into a one-slot ring
    with the first prologue group and the scores' dot reads slot 0 every iteration; k and v keep their rings."""
    monkeypatch.setenv("TILE_PIPELINE", "resident")
    text = _ttgir(dot_kernels.attention_fwd_kernel, attention_specs(128), mma_version=3, num_stages=3)
    assert print_ir(parse_ttir(text)) == text
    filecheck(text, """
CHECK-NOT: tt.load
CHECK-NOT: ttg.convert_layout {{.*}} -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 0
CHECK: ttg.ring_alloc : !ttg.ring<3x128x64xf16>
CHECK: ttg.ring_alloc : !ttg.ring<3x64x128xf16>
CHECK: %[[Q:[0-9]+]] = ttg.ring_alloc : !ttg.ring<1x64x128xf16>
CHECK: ttg.async_copy
CHECK: ttg.async_copy
CHECK: ttg.async_copy %[[Q]], %[[ZERO:[0-9]+]],
CHECK-NEXT: ttg.async_commit_group
CHECK-NOT: ttg.async_copy %[[Q]]
CHECK: scf.for
CHECK-NEXT: ttg.async_wait {pending = 1 : i32}
CHECK: %[[K:[0-9]+]] = ttg.ring_read
CHECK-NEXT: %[[QR:[0-9]+]] = ttg.ring_read %[[Q]], %[[ZERO]] : {{.*}} -> tensor<64x128xf16, #ttg.dot_op<{opIdx = 0
CHECK-NEXT: tt.dot %[[QR]], %[[K]],
CHECK: ttg.dot_wait {{.*}} {pending = 1 : i32}
CHECK: scf.yield
CHECK: ttg.async_wait {pending = 0 : i32}
CHECK-NOT: tt.load
""", tmp_path)


def test_resident_q_by_default_for_one_warpgroup_only(monkeypatch):
    """TILE_PIPELINE unset: a 4-warp attention reads q from a one-slot ring (faster on the H200), an 8-warp one
    keeps it in registers (its ring cost the k/v rings room: slower); named words decide when the variable is set."""
    monkeypatch.delenv("TILE_PIPELINE")
    one_slot = "!ttg.ring<1x"
    assert one_slot in _ttgir(dot_kernels.attention_fwd_kernel, attention_specs(128), mma_version=3, num_stages=3)
    assert one_slot not in _ttgir(dot_kernels.attention_fwd_kernel, attention_specs(128, block_m=128), mma_version=3,
                                  num_stages=3, num_warps=8)
    monkeypatch.setenv("TILE_PIPELINE", "nofence")
    assert one_slot not in _ttgir(dot_kernels.attention_fwd_kernel, attention_specs(128), mma_version=3, num_stages=3)


def test_resident_needs_a_wgmma_dot(monkeypatch):
    """mma.sync (sm_80) keeps q in registers under TILE_PIPELINE=resident; matmuls have no loop-invariant a."""
    monkeypatch.setenv("TILE_PIPELINE", "resident")
    text = _ttgir(dot_kernels.attention_fwd_kernel, attention_specs(64), mma_version=2, num_stages=3, shared=SM80_SHARED)
    assert "!ttg.ring<1x" not in text and "ttg.ring_alloc" in text
    text = _ttgir(dot_kernels.matmul_kernel, _matmul_specs(128, 128, 32), mma_version=3, num_stages=3)
    assert "!ttg.ring<1x" not in text


def test_resident_takes_no_stage_from_the_rings(monkeypatch):
    """Room for k's and v's three stages but not for q's slot beside them: q stays in registers, three stages."""
    monkeypatch.setenv("TILE_PIPELINE", "resident")
    rings = 3 * 2 * 18 * 1024  # 64 x 128 halves a slot, 8 elements of padding a row at most, 1 KiB multiples
    text = _ttgir(dot_kernels.attention_fwd_kernel, attention_specs(128), mma_version=3, num_stages=3,
                  shared=rings + EXCHANGE_MARGIN + 1024)
    assert "!ttg.ring<3x64x128xf16>" in text and "!ttg.ring<1x" not in text
    text = _ttgir(dot_kernels.attention_fwd_kernel, attention_specs(128), mma_version=3, num_stages=3,
                  shared=rings + 18 * 1024 + EXCHANGE_MARGIN)
    assert "!ttg.ring<3x64x128xf16>" in text and "!ttg.ring<1x64x128xf16>" in text


@needs_ptxas
@pytest.mark.parametrize("head_dim,block_m,warps", [(128, 64, 4), (128, 128, 8), (64, 64, 4)])
def test_attention_resident_q_ptx(head_dim, block_m, warps, monkeypatch):
    """q arrives by cp.async (no global load before the loop) and the scores' wgmma reads it through a descriptor
    (`wgmma... {acc}, %rd, %rd`) instead of four registers; d128 64x64/4w drops from ~200 registers to Triton's
    ~168, and ptxas keeps the groups asynchronous (with two warpgroups too: each reads its own 64 rows)."""
    monkeypatch.delenv("TILE_WGMMA", raising=False)
    specs = attention_specs(head_dim, block_m)
    ptx_default, report_default, shared_default = _ptx(dot_kernels.attention_fwd_kernel, specs, 90, 3, warps)
    monkeypatch.setenv("TILE_PIPELINE", "resident")
    ptx, report, shared = _ptx(dot_kernels.attention_fwd_kernel, specs, 90, 3, warps)
    copies = 3 * 2 * 64 * head_dim // (8 * 32 * warps)
    assert ptx_default.count("cp.async.cg.shared.global") == copies
    assert ptx.count("cp.async.cg.shared.global") == copies + block_m * head_dim // (8 * 32 * warps)
    assert "ld.global" not in ptx.split("cp.async.wait_group 0;")[0]
    def register_a(text: str) -> int:  # wgmma instructions whose a is four registers, not a descriptor
        return sum(1 for line in text.splitlines() if "wgmma.mma_async" in line and "}, {%r" in line)
    assert register_a(ptx) == 64 // 16  # p v only (its k steps); the scores' dot added head_dim / 16
    assert register_a(ptx_default) == 64 // 16 + head_dim // 16
    assert shared == shared_default + block_m * head_dim * 2  # the one slot of q
    assert "serialized" not in report
    registers = [int(r) for r in (re.search(r"Used (\d+) registers", t).group(1) for t in (report_default, report))]
    if (head_dim, warps) == (128, 4):
        assert registers[1] <= 176 < registers[0]
