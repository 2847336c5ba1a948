"""NVIDIA code generation checked without a GPU: ptxas accepts every suite kernel's PTX,
and FileCheck confirms the instructions that make kernels fast (16-byte global accesses,
warp shuffles for reductions, libdevice linked only where used)."""

from __future__ import annotations

import platform

import pytest
import suite
import torch
from filecheck_tool import filecheck

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.machine() != "x86_64",
    reason="ptxas and libdevice wheels exist for Linux x86-64 only",
)




def _suite_specializations(monkeypatch) -> list:
    """(kernel, specs) for up to two specializations of every suite kernel, recorded while the suite runs
    (each launch then runs in the interpreter, so nothing is compiled for the CPU here)."""
    from inductor_tile.kernel_compiler import compiler

    from inductor_tile.kernel_compiler.runtime.jit import JITFunction

    # kernels compiled earlier in this process (test_suite_ttir) would not reach compile_specialized
    for kernel in vars(suite).values():
        if isinstance(kernel, JITFunction):
            kernel.cache.clear()
            kernel.launch_cache.clear()
    seen: dict = {}

    def record(jit_fn, specs, target=None, num_warps=4, native=True, num_stages=3):
        seen.setdefault(jit_fn, [])
        if len(seen[jit_fn]) < 2:
            seen[jit_fn].append(specs)
        return compiler.CompiledKernel(jit_fn.__name__, specs, "cpu", num_warps)

    with monkeypatch.context() as patch:
        patch.setattr(compiler, "compile_specialized", record)
        gen = torch.Generator().manual_seed(0)
        for case in suite.CASES.values():
            case(gen)
    for kernel in seen:  # the recorded stand-ins must not serve later launches
        kernel.cache.clear()
        kernel.launch_cache.clear()
    return [(kernel, specs) for kernel, all_specs in seen.items() for specs in all_specs]


def test_every_suite_kernel_assembles_for_sm90_and_sm80(compiled, monkeypatch):
    specializations = _suite_specializations(monkeypatch)
    assert len(specializations) >= 15
    for kernel, specs in specializations:
        for arch in (90, 80):
            ptx = compile_specialized(kernel, specs, target=f"cuda:{arch}", num_warps=4, native=False).asm["ptx"]
            check_ptx(ptx, f"sm_{arch}", kernel.__name__)


@inductor_tile.jit
def copy_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)


@inductor_tile.jit
def strided_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets * 3))


@inductor_tile.jit
def row_sum_kernel(x_ptr, out_ptr, N: tl.constexpr):
    cols = tl.arange(0, N)
    tl.store(out_ptr + tl.program_id(0), tl.sum(tl.load(x_ptr + tl.program_id(0) * N + cols), axis=0))


def _ptx(kernel, signature: dict[str, str], constexprs: dict, aligned: tuple[str, ...], num_warps: int = 4) -> str:
    specs = [spec_from_signature(name, signature[name], divisible_by_16=name in aligned) if name in signature
             else spec_from_signature(name, "constexpr", constexprs[name]) for name in kernel.arg_names]
    return compile_specialized(kernel, specs, target="cuda:90", num_warps=num_warps, native=False).asm["ptx"]


def test_contiguous_fp32_access_is_16_bytes_wide(tmp_path):
    ptx = _ptx(copy_scale_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024},
               ("x_ptr", "out_ptr", "n"))
    filecheck(ptx, "CHECK: .visible .entry copy_scale_kernel(\n"
                   "CHECK: .maxntid 128\n"
                   "CHECK: ld.global.v4.b32\n"
                   "CHECK: st.global.v4.b32\n"
                   "CHECK-NOT: __nv_\n", tmp_path)


@pytest.mark.parametrize("numel", [1 << 22, 1 << 25, 1 << 26])
def test_large_fp16_pointwise_launch_accesses_16_bytes_per_thread(numel, tmp_path):
    # the launch the CUDA heuristics give a pointwise kernel over `numel` fp16 elements: 8 elements, one
    # v4 load and store per thread at every size (8 warps on 2**24+ elements had v2: 8 bytes per thread)
    from inductor_tile.codegen import heuristics

    launch = heuristics.pointwise("cuda", numel)
    ptx = _ptx(copy_scale_kernel, {"x_ptr": "*fp16", "out_ptr": "*fp16", "n": "i32"}, {"BLOCK": launch.xblock},
               ("x_ptr", "out_ptr", "n"), num_warps=launch.num_warps)
    filecheck(ptx, "CHECK: ld.global.v4.b32\n"
                   "CHECK: st.global.v4.b32\n", tmp_path)
    assert "ld.global.v2" not in ptx and "st.global.v2" not in ptx, ptx


def test_strided_access_is_not_vectorized(tmp_path):
    ptx = _ptx(strided_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 512}, ("x_ptr", "out_ptr"))
    filecheck(ptx, "CHECK-NOT: ld.global.v{{[24]}}\n"
                   "CHECK: ld.global.{{[bfu]}}32\n", tmp_path)


@inductor_tile.jit
def split_column_sum_kernel(x_ptr, out_ptr, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    # the first stage of a split column sum, as the backend writes it: [splits x 768] partial
    # sums, each over `rnumel` rows, the column decoded from the flat output index
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    split, col = xindex // 768, xindex % 768
    acc = tl.full([XBLOCK, RBLOCK], 0.0, tl.float32)
    for roffset in range(0, rnumel, RBLOCK):
        rindex = roffset + tl.arange(0, RBLOCK)[None, :]
        rmask = rindex < rnumel
        x = tl.load(x_ptr + (col + 768 * rindex + 768 * rnumel * split), mask=xmask & rmask, other=0)
        acc = acc + tl.where(rmask & xmask, x.to(tl.float32), 0.0)
    tl.store(out_ptr + xindex, tl.sum(acc, 1)[:, None], mask=xmask)


def test_split_column_sum_loads_16_bytes_along_the_columns(tmp_path):
    # xindex % 768 is consecutive over each aligned run of 64: 8 fp16 per load, not 1
    ptx = _ptx(split_column_sum_kernel, {"x_ptr": "*fp16", "out_ptr": "*fp32", "xnumel": "i32", "rnumel": "i32"},
               {"XBLOCK": 64, "RBLOCK": 64}, ("x_ptr", "out_ptr", "xnumel", "rnumel"), num_warps=8)
    filecheck(ptx, "CHECK: ld.global.v4.b32\n"
                   "CHECK-NOT: ld.global.b16\n", tmp_path)


@inductor_tile.jit
def multiply_add_kernel(a_ptr, b_ptr, c_ptr, out_ptr, sq_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a, b, c = tl.load(a_ptr + offs), tl.load(b_ptr + offs), tl.load(c_ptr + offs)
    tl.store(out_ptr + offs, a * b + c)
    tl.store(sq_ptr, tl.sum(a * a, axis=0))  # a sum of products: an FMA chain


def test_fp32_multiply_add_contracts_to_fma(tmp_path):
    # as Triton: `mul.rn`/`add.rn` would forbid ptxas to fuse them; one fma.rn rounds once
    sig = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "out_ptr": "*fp32", "sq_ptr": "*fp32"}
    ptx = _ptx(multiply_add_kernel, sig, {"BLOCK": 256}, tuple(sig))
    filecheck(ptx, "CHECK-NOT: mul.rn.f32\n"
                   "CHECK: fma.rn.f32\n"
                   "CHECK-NOT: mul.rn.f32\n"
                   "CHECK: shfl.sync.bfly\n", tmp_path)
    # 2 fp32 per thread: two for a * b + c, one for the squares (the first square is a plain mul)
    assert ptx.count("fma.rn.f32") >= 3, ptx


def test_fp16_multiply_add_rounds_each_op(tmp_path):
    # half arithmetic keeps eager's rounding after every op: no fma.rn.f16
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "out_ptr": "*fp16", "sq_ptr": "*fp16"}
    ptx = _ptx(multiply_add_kernel, sig, {"BLOCK": 256}, tuple(sig))
    filecheck(ptx, "CHECK-NOT: fma.rn.f16\n", tmp_path)
    assert "mul.rn.f16" in ptx or "mul.f16" in ptx, ptx


def test_row_reduction_uses_warp_shuffles_and_shared_memory(tmp_path):
    ptx = _ptx(row_sum_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"N": 1024}, ("x_ptr", "out_ptr"))
    filecheck(ptx, "CHECK: .extern .shared .align 16 .b8 global_smem[];\n"
                   "CHECK: shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;\n"
                   "CHECK: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;\n"
                   "CHECK: bar.sync 0;\n"
                   "CHECK: st.shared\n"
                   "CHECK: bar.sync 0;\n"
                   "CHECK: ld.shared\n", tmp_path)


def test_only_used_libdevice_functions_are_linked(tmp_path):
    ptx = compile_specialized(suite.math_kernel, _math_specs(), target="cuda:90", num_warps=4, native=False).asm["ptx"]
    assert ptx.count(".func") < 40, "all of libdevice was linked into the kernel"
    filecheck(ptx, "CHECK: ex2.approx.ftz.f32\n", tmp_path)


def _math_specs():
    return [spec_from_signature("x_ptr", "*fp32", divisible_by_16=True),
            spec_from_signature("out_ptr", "*fp32", divisible_by_16=True),
            spec_from_signature("n", "i32"), spec_from_signature("BLOCK", "constexpr", 128)]


@inductor_tile.jit
def rsqrt_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.rsqrt(tl.load(x_ptr + offs)))


def test_fp32_rsqrt_is_one_approximate_instruction(tmp_path):
    # as libdevice's __nv_rsqrtf (Triton, Inductor): not a correctly rounded sqrt and then a division
    ptx = _ptx(rsqrt_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128}, ("x_ptr", "out_ptr"))
    filecheck(ptx, "CHECK-NOT: sqrt.rn.f32\n"
                   "CHECK: rsqrt.approx.f32\n"
                   "CHECK-NOT: rcp.rn.f32\n"
                   "CHECK-NOT: div.rn.f32\n", tmp_path)
    ptx64 = _ptx(rsqrt_kernel, {"x_ptr": "*fp64", "out_ptr": "*fp64"}, {"BLOCK": 128}, ("x_ptr", "out_ptr"))
    filecheck(ptx64, "CHECK: sqrt.rn.f64\n"
                     "CHECK-NOT: rsqrt.approx\n", tmp_path)


@inductor_tile.jit
def sin_cos_kernel(x_ptr, y_ptr, sin_ptr, cos_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(sin_ptr + offs, tl.sin(x))
    tl.store(cos_ptr + offs, tl.cos(x) + tl.sin(tl.load(y_ptr + offs)))  # y's sin has no partner


@inductor_tile.jit
def two_sines_kernel(x_ptr, y_ptr, sin_ptr, cos_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(sin_ptr + offs, tl.sin(tl.load(x_ptr + offs)))
    tl.store(cos_ptr + offs, tl.sin(tl.load(y_ptr + offs)))


@pytest.mark.parametrize("dtype", ["fp32", "fp64"])
def test_sin_and_cos_of_one_value_share_one_argument_reduction(dtype):
    # rotary embeddings take the sin and the cos of every angle: libdevice's sincos reduces the argument
    # once, so the sin+cos kernel holds as many argument reductions as a kernel of two unrelated sines, not
    # three (counted by an instruction of the reduction: the fp32 large-argument path's multi-word
    # products, the fp64 products with the parts of pi/2; 18 and 9 without the pairing)
    sig = {name: f"*{dtype}" for name in ("x_ptr", "y_ptr", "sin_ptr", "cos_ptr")}
    paired = _ptx(sin_cos_kernel, sig, {"BLOCK": 128}, tuple(sig))
    unpaired = _ptx(two_sines_kernel, sig, {"BLOCK": 128}, tuple(sig))
    marker = "mad.lo.cc.u32" if dtype == "fp32" else "mul.rn.f64"
    assert paired.count(marker) > 0, paired
    assert paired.count(marker) == unpaired.count(marker)
    check_ptx(paired, "sm_90")


@inductor_tile.jit
def rotate_with_table_kernel(x_ptr, angle_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # a rotary kernel's shape: contiguous fp16 rows and a gathered fp32 angle table
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i, mask=mask, other=0)
    angle = tl.load(angle_ptr + ((i // 64) % 512 + 512 * (i % 32)), mask=mask, other=0)
    tl.store(out_ptr + i, x * tl.cos(angle).to(tl.float16), mask=mask)


def test_gather_next_to_vector_loads_shares_their_layout(tmp_path):
    # the gather takes the rows' 8 elements per thread (scalar loads): no trip through shared memory
    ptx = _ptx(rotate_with_table_kernel, {"x_ptr": "*fp16", "angle_ptr": "*fp32", "out_ptr": "*fp16", "n": "i32"},
               {"BLOCK": 1024}, ("x_ptr", "angle_ptr", "out_ptr", "n"))
    filecheck(ptx, "CHECK: ld.global.v4.b32\n"
                   "CHECK-NOT: st.shared\n"
                   "CHECK: st.global.v4.b32\n", tmp_path)


@inductor_tile.jit
def layer_norm_backward_kernel(dy_ptr, w_ptr, xhat_ptr, rstd_ptr, keep_ptr, dx_ptr, dx_half_ptr, xnumel,
                               XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    # the shape of BERT's generated layer-norm backward (with the dropout mask of the layer before)
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, RBLOCK)[None, :]
    mask = (rows < xnumel) & (cols < 768)
    dy = tl.load(dy_ptr + cols + 768 * rows, mask=mask, other=0).to(tl.float32)
    dyw = dy * tl.load(w_ptr + cols, mask=cols < 768, other=0)
    xhat = tl.load(xhat_ptr + cols + 768 * rows, mask=mask, other=0)
    sum_dyw = tl.sum(tl.where(mask, dyw, 0.0), 1)[:, None]
    sum_dyw_xhat = tl.sum(tl.where(mask, dyw * xhat, 0.0), 1)[:, None]
    rstd = tl.load(rstd_ptr + rows, mask=rows < xnumel, other=0)
    dx = rstd * (dyw * 768.0 - sum_dyw - xhat * sum_dyw_xhat)
    tl.store(dx_ptr + cols + 768 * rows, dx, mask=mask)
    keep = tl.load(keep_ptr + cols + 768 * rows, mask=mask, other=0).to(tl.float16)
    tl.store(dx_half_ptr + cols + 768 * rows, dx.to(tl.float16) * keep, mask=mask)


def test_row_reductions_compute_in_the_layout_of_their_loads():
    # the [8, 1024] loads share one coalesced layout; the math and both sums run in it (as under Triton):
    # only the [1, 1024] weight and the two stores convert (six conversions before, most of them of the loads)
    sig = {"dy_ptr": "*fp16", "w_ptr": "*fp32", "xhat_ptr": "*fp32", "rstd_ptr": "*fp32", "keep_ptr": "*i1",
           "dx_ptr": "*fp32", "dx_half_ptr": "*fp16", "xnumel": "i32"}
    specs = [spec_from_signature(name, sig[name], divisible_by_16=True) if name in sig
             else spec_from_signature(name, "constexpr", {"XBLOCK": 8, "RBLOCK": 1024}[name])
             for name in layer_norm_backward_kernel.arg_names]
    kernel = compile_specialized(layer_norm_backward_kernel, specs, target="cuda:90", num_warps=4, native=False)
    assert kernel.asm["ttgir"].count("ttg.convert_layout") == 3, kernel.asm["ttgir"]


@inductor_tile.jit
def norm_rotary_kernel(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr,
                       RBLOCK: tl.constexpr):
    # Qwen3-0.6B's generated k-norm + rotary kernel (tile's codegen, H100 run of 2026-11-27): an RMS norm
    # over 128 columns, the rotated halves read again, a gathered angle table, a transposed store
    rnumel = 128
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    x0 = xindex
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < rnumel
    r0 = rindex
    tmp0 = tl.load(in_ptr0 + (r0 + (128 * x0)), mask=xmask & rmask, other=0)
    tmp34 = tl.load(in_ptr2 + ((512 * (r0 % 64)) + ((x0 // 8) % 512)), mask=xmask & rmask, other=0)
    tmp40 = tl.load(in_ptr1 + r0, mask=rmask, other=0)
    tmp41 = tl.load(in_ptr0 + (r0 + (128 * (x0 % 8)) + (1024 * ((x0 // 8) % 512)) + (524288 * (x0 // 4096))), mask=xmask & rmask, other=0)
    tmp1 = tmp0.to(tl.float32)
    tmp2 = tmp1 * tmp1
    tmp3 = tl.where(rmask & xmask, tmp2, 0.0)
    tmp4 = tl.sum(tmp3, 1)[:, None]
    tmp5 = (r0).to(tl.int64)
    tmp6 = tl.full([1, 1], 0, tl.int64)
    tmp7 = tmp5 >= tmp6
    tmp8 = tl.full([1, 1], 64, tl.int64)
    tmp9 = tmp5 < tmp8
    tmp10 = tl.load(in_ptr1 + (64 + r0), mask=rmask & (tmp9), other=0)
    tmp11 = tl.load(in_ptr0 + (64 + r0 + (128 * (x0 % 8)) + (1024 * ((x0 // 8) % 512)) + (524288 * (x0 // 4096))), mask=xmask & rmask & (tmp9), other=0)
    tmp12 = tmp11.to(tl.float32)
    tmp13 = tl.full([1, 1], 128.0, tl.float32)
    tmp14 = tmp4 / tmp13
    tmp15 = tl.full([1, 1], 1e-06, tl.float32)
    tmp16 = tmp14 + tmp15
    tmp17 = tl.rsqrt(tmp16)
    tmp18 = tmp12 * tmp17
    tmp19 = tmp18.to(tl.float16)
    tmp20 = tmp10 * tmp19
    tmp21 = -tmp20
    tmp22 = tl.where(tmp9, tmp21, 0.0)
    tmp23 = tmp5 >= tmp8
    tmp24 = tl.full([1, 1], 128, tl.int64)
    tmp25 = tmp5 < tmp24
    tmp26 = tl.load(in_ptr1 + ((-64) + r0), mask=rmask & (tmp23), other=0)
    tmp27 = tl.load(in_ptr0 + ((-64) + r0 + (128 * (x0 % 8)) + (1024 * ((x0 // 8) % 512)) + (524288 * (x0 // 4096))), mask=xmask & rmask & (tmp23), other=0)
    tmp28 = tmp27.to(tl.float32)
    tmp29 = tmp28 * tmp17
    tmp30 = tmp29.to(tl.float16)
    tmp31 = tmp26 * tmp30
    tmp32 = tl.where(tmp23, tmp31, 0.0)
    tmp33 = tl.where(tmp9, tmp22, tmp32)
    tmp35 = tl.sin(tmp34)
    tmp36 = tl.full([1, 1], 1.0, tl.float32)
    tmp37 = tmp35 * tmp36
    tmp38 = tmp37.to(tl.float16)
    tmp39 = tmp33 * tmp38
    tmp42 = tmp41.to(tl.float32)
    tmp43 = tmp42 * tmp17
    tmp44 = tmp43.to(tl.float16)
    tmp45 = tmp40 * tmp44
    tmp46 = tl.cos(tmp34)
    tmp47 = tmp46 * tmp36
    tmp48 = tmp47.to(tl.float16)
    tmp49 = tmp45 * tmp48
    tmp50 = tmp49 + tmp39
    tl.store(out_ptr0 + ((8 * ((x0 // 8) % 512)) + (4096 * r0) + (524288 * (x0 // 4096)) + (x0 % 8)), tmp50, mask=xmask & rmask)


@pytest.mark.parametrize("xblock,num_warps", [(8, 8), (16, 4)])
def test_norm_rotary_computes_in_the_layout_of_its_loads(xblock, num_warps):
    # the math runs in the [XBLOCK, 128] loads' layout, the gathered angles (XBLOCK / 8 positions x 128, no more
    # values than threads) are read again in it and only what the transposed store stores converts. At 8 rows a copy of
    # the angle load once lost its count of distinct values (so it was converted: 5 conversions); at 16 rows
    # no single conversion of the loads pays to remove alone (each one's users meet the weight rows and the
    # sum's), all conversions from the loads' layout planned together do
    sig = {"in_ptr0": "*fp16", "in_ptr1": "*fp16", "in_ptr2": "*fp32", "out_ptr0": "*fp16", "xnumel": "i32",
           "rnumel": "i32"}
    specs = [spec_from_signature(name, sig[name], divisible_by_16=True) if name in sig
             else spec_from_signature(name, "constexpr", {"XBLOCK": xblock, "RBLOCK": 128}[name])
             for name in norm_rotary_kernel.arg_names]
    kernel = compile_specialized(norm_rotary_kernel, specs, target="cuda:90", num_warps=num_warps, native=False)
    ttgir = kernel.asm["ttgir"]
    converts = [line for line in ttgir.splitlines() if "ttg.convert_layout" in line]
    store = [line for line in ttgir.splitlines() if "tt.store" in line][0]
    assert 1 <= len(converts) <= 2, ttgir  # the sum of the two products converts, or its two terms
    assert all(line.split("-> ")[-1].strip().rstrip(">") in store for line in converts), (converts, store)
