"""AMD code generation checked without an AMD GPU: every suite kernel compiles and links for
gfx90a/gfx942 (CDNA, wave64) and gfx1100 (RDNA3, wave32); FileCheck on llvm-objdump's
disassembly confirms the instructions that make kernels fast (16-byte global accesses,
cross-lane reductions, LDS + s_barrier across waves); the code object's metadata matches
what the lowering computed; our f32 math bodies are checked numerically on the CPU (f64: test_amd_math64.py)."""

from __future__ import annotations

import ctypes
import math
import re

import pytest
import suite
import torch
from filecheck_tool import filecheck
from llvmlite import ir
from test_nvidia_ptx import _suite_specializations, copy_scale_kernel, row_sum_kernel

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.runtime import disk_cache
from inductor_tile.kernel_compiler.to_llvm import hsaco, llvm_tools
from inductor_tile.kernel_compiler.to_llvm.targets import amd_math

needs_lld = pytest.mark.skipif(not hsaco.has_linker(), reason="needs ld.lld (apt-get install lld-16, or ROCm)")
ARCHS = {"gfx90a": 64, "gfx942": 64, "gfx1100": 32}
#: kernels every architecture compiles, the ones a user writes first: vector add with tails, fp16 softmax,
#: looped layer norm, transpose, column sums, GELU, argmax, integer mix (every suite kernel and every
#: specialization compiles for gfx942; the other archs take each of these once, to keep CI short)
REPRESENTATIVE = {"add_kernel", "softmax_kernel", "layernorm_kernel", "transpose_kernel", "column_sum_kernel",
                  "bias_act_kernel", "argmax_kernel", "int_arith_kernel"}


def _objdump_available() -> bool:
    try:
        hsaco.find_objdump()
    except hsaco.ToolNotFoundError:
        return False
    return True


needs_objdump = pytest.mark.skipif(not _objdump_available(), reason="needs llvm-objdump (apt-get install llvm-16)")


def _compile(kernel, signature: dict[str, str], constexprs: dict, arch: str, aligned=(), num_warps: int = 4):
    return inductor_tile.compile(kernel, signature=signature, constexprs=constexprs, target=f"hip:{arch}",
                                 num_warps=num_warps, divisible_by_16=tuple(aligned))


def _disassembly(kernel, arch: str) -> str:
    text = hsaco.disassemble(kernel.asm["hsaco"], arch)
    return "\n".join(line.split("//")[0].strip() for line in text.splitlines())


@needs_lld
def test_suite_kernels_compile_and_link_for_every_arch(compiled, monkeypatch):
    specializations = _suite_specializations(monkeypatch)
    assert len(specializations) >= 15
    names = {kernel.__name__ for kernel, _ in specializations}
    assert REPRESENTATIVE <= names
    done = set()
    for kernel, specs in specializations:
        for arch, wave in ARCHS.items():
            if arch != "gfx942" and (kernel.__name__ not in REPRESENTATIVE or (kernel, arch) in done):
                continue
            done.add((kernel, arch))
            out = compile_specialized(kernel, specs, target=f"hip:{arch}", num_warps=4, native=False)
            meta = hsaco.kernel_metadata(out.asm["hsaco"], kernel.__name__)
            assert meta[".wavefront_size"] == wave, (kernel.__name__, arch)
            assert meta[".group_segment_fixed_size"] == out.shared_bytes, (kernel.__name__, arch)
            assert meta[".private_segment_fixed_size"] == 0, f"{kernel.__name__} spills to scratch on {arch}"


@needs_lld
@needs_objdump
@pytest.mark.parametrize("arch, load, store", [("gfx90a", "global_load_dwordx4", "global_store_dwordx4"),
                                               ("gfx942", "global_load_dwordx4", "global_store_dwordx4"),
                                               ("gfx1100", "global_load_b128", "global_store_b128")])
def test_contiguous_fp32_access_is_16_bytes_wide(tmp_path, arch, load, store):
    kernel = _compile(copy_scale_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 1024}, arch,
                      aligned=("x_ptr", "out_ptr", "n"))
    filecheck(_disassembly(kernel, arch), f"CHECK: <copy_scale_kernel>:\n"
                                          f"CHECK-NOT: global_load_dword{{{{ }}}}\n"
                                          f"CHECK: {load} \n"
                                          f"CHECK: {store} \n"
                                          f"CHECK: s_endpgm\n", tmp_path)


@needs_lld
@needs_objdump
def test_strided_access_is_not_vectorized(tmp_path):
    from test_nvidia_ptx import strided_kernel

    kernel = _compile(strided_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 512}, "gfx942",
                      aligned=("x_ptr", "out_ptr"))
    filecheck(_disassembly(kernel, "gfx942"), "CHECK-NOT: global_load_dwordx{{[234]}}\n"
                                              "CHECK: global_load_dword \n", tmp_path)


@needs_lld
@needs_objdump
def test_wave64_row_reduction_uses_cross_lane_ops_then_lds(tmp_path):
    # 1024 fp32 over 4 waves of 64: lanes combine by DPP / ds_swizzle / ds_bpermute (no LDS traffic), then
    # lane 0 of each wave writes its partial to LDS between two barriers and every wave reads the 4 back
    kernel = _compile(row_sum_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"N": 1024}, "gfx942",
                      aligned=("x_ptr", "out_ptr"))
    filecheck(_disassembly(kernel, "gfx942"), "CHECK: global_load_dwordx4\n"
                                              "CHECK-NOT: ds_write\n"
                                              "CHECK: ds_bpermute_b32\n"
                                              "CHECK: ds_swizzle_b32 {{.*}}swizzle(SWAP,16)\n"
                                              "CHECK: ds_swizzle_b32 {{.*}}swizzle(SWAP,4)\n"
                                              "CHECK: quad_perm:[2,3,0,1]\n"
                                              "CHECK: s_barrier\n"
                                              "CHECK: ds_write_b32\n"
                                              "CHECK: s_barrier\n"
                                              "CHECK: ds_read_b32\n", tmp_path)
    assert "quad_perm:[1,0,3,2]" in _disassembly(kernel, "gfx942")
    meta = hsaco.kernel_metadata(kernel.asm["hsaco"], "row_sum_kernel")
    assert meta[".group_segment_fixed_size"] == kernel.shared_bytes == 16  # 4 waves x one fp32


@needs_lld
@needs_objdump
def test_wave32_row_reduction_has_no_cross_half_step(tmp_path):
    kernel = _compile(row_sum_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"N": 1024}, "gfx1100",
                      aligned=("x_ptr", "out_ptr"))
    filecheck(_disassembly(kernel, "gfx1100"), "CHECK: global_load_b128\n"
                                               "CHECK-NOT: ds_bpermute\n"
                                               "CHECK: ds_swizzle_b32 {{.*}}swizzle(SWAP,16)\n"
                                               "CHECK: quad_perm:[1,0,3,2]\n"
                                               "CHECK: s_barrier\n"
                                               "CHECK: ds_store_b32\n"
                                               "CHECK: s_barrier\n"
                                               "CHECK: ds_load_b32\n", tmp_path)


@inductor_tile.jit
def args_kernel(x_ptr, out_ptr, flag, scale, big, h, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    value = tl.load(x_ptr + offs) * scale + big.to(tl.float32) + h.to(tl.float32)
    tl.store(out_ptr + offs, tl.where(flag != 0, value, -value))


@needs_lld
@pytest.mark.parametrize("arch", list(ARCHS))
@pytest.mark.parametrize("num_warps", [2, 8])
def test_code_object_metadata_matches_the_lowering(arch, num_warps):
    signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "flag": "i1", "scale": "fp32", "big": "i64", "h": "fp16"}
    kernel = _compile(args_kernel, signature, {"BLOCK": 256}, arch, num_warps=num_warps)
    meta = hsaco.kernel_metadata(kernel.asm["hsaco"], "args_kernel")
    sizes = [8, 8, 1, 4, 8, 2]  # by value: pointers are 64-bit addresses
    offsets, end = [], 0
    for size in sizes:
        end = -(-end // size) * size
        offsets.append(end)
        end += size
    assert [(a[".offset"], a[".size"]) for a in meta[".args"]] == list(zip(offsets, sizes))
    assert meta[".kernarg_segment_size"] == -(-end // 4) * 4  # the segment is a whole number of dwords
    assert meta[".wavefront_size"] == ARCHS[arch]
    assert meta[".max_flat_workgroup_size"] == num_warps * ARCHS[arch]
    assert meta[".group_segment_fixed_size"] == kernel.shared_bytes == 0
    assert meta[".symbol"] == "args_kernel.kd"
    assert hsaco.code_object_metadata(kernel.asm["hsaco"])["amdhsa.target"] == f"amdgcn-amd-amdhsa--{arch}"
    assert hsaco.code_object_metadata(kernel.asm["hsaco"])["amdhsa.version"] == [1, 2]  # code object v5
    assert kernel.asm["hsaco"][8] == 3  # ELF ABI version of code object v5 (ROCm 5/6 load it)


@needs_lld
def test_layout_conversion_uses_static_lds_of_the_computed_size():
    kernel = _compile(suite.transpose_kernel, {"x_ptr": "*bf16", "out_ptr": "*bf16", "M": "i32", "N": "i32"},
                      {"BLOCK": 64}, "gfx942", aligned=("x_ptr", "out_ptr", "M", "N"))
    assert kernel.shared_bytes > 0
    assert re.search(rf"@global_smem = internal .*addrspace\(3\) global \[{kernel.shared_bytes} x i8\]", kernel.asm["llir"])
    meta = hsaco.kernel_metadata(kernel.asm["hsaco"], "transpose_kernel")
    assert meta[".group_segment_fixed_size"] == kernel.shared_bytes
    if _objdump_available():  # written to LDS in the load's layout, read back in the store's, between barriers
        text = _disassembly(kernel, "gfx942")
        # (the load's runs of 8 go as one 16-byte write: shared_plan.py)
        assert re.search(r"s_barrier\n(.*\n)*?ds_write_b(16|32|64|128)(.*\n)*?s_barrier\n"
                         r"(.*\n)*?ds_read_(u16|b32|b64|b128)", text), text


@needs_lld
def test_dump_ir_writes_amdgcn_and_hsaco(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_DUMP_IR", str(tmp_path))
    kernel = _compile(copy_scale_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 256}, "gfx942")
    assert (tmp_path / "copy_scale_kernel.amdgcn").read_text() == kernel.asm["amdgcn"]
    assert ".amdhsa_kernel copy_scale_kernel" in kernel.asm["amdgcn"]
    assert (tmp_path / "copy_scale_kernel.hsaco").read_bytes() == kernel.asm["hsaco"][:] != b""
    assert "amdgpu_kernel" in (tmp_path / "copy_scale_kernel.llir").read_text()


def test_disk_cache_key_includes_the_arch():
    specs = [spec_from_signature("x_ptr", "*fp32"), spec_from_signature("out_ptr", "*fp32"),
             spec_from_signature("n", "i32"), spec_from_signature("BLOCK", "constexpr", 128)]
    keys = {disk_cache.kernel_key(copy_scale_kernel, specs, 4, f"hip:{arch}") for arch in ARCHS}
    assert len(keys) == 3
    assert disk_cache.target_identity("hip:gfx942") == "hip:gfx942"


def test_missing_linker_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("TILE_LLD", str(tmp_path / "no-such-ld.lld"))
    monkeypatch.setattr(hsaco, "_candidates", lambda tool, env: [str(tmp_path / "no-such-ld.lld")])
    with pytest.raises(hsaco.ToolNotFoundError, match=r"needs ld.lld.*TILE_LLD=.*is not an executable.*lld-16"):
        hsaco.find_linker()
    specs = [spec_from_signature("x_ptr", "*fp32"), spec_from_signature("out_ptr", "*fp32"),
             spec_from_signature("n", "i32"), spec_from_signature("BLOCK", "constexpr", 64)]
    monkeypatch.setenv("TILE_CACHE_DIR", "")
    with pytest.raises(hsaco.ToolNotFoundError, match="needs ld.lld"):
        compile_specialized(copy_scale_kernel, specs, target="hip:gfx942", native=True)
    with pytest.warns(UserWarning, match="no HSACO for copy_scale_kernel.*needs ld.lld"):
        kernel = _compile(copy_scale_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, {"BLOCK": 64},
                          "gfx942")
    assert "hsaco" not in kernel.asm and "v_" in kernel.asm["amdgcn"]


# --- the f32 math bodies, run on the CPU through the same LLVM IR -----------------------------------
_UNARY = {"sin": math.sin, "cos": math.cos, "tanh": math.tanh, "erf": math.erf, "log1p": math.log1p, "expm1": math.expm1, "tan": math.tan,
          "sinh": math.sinh, "cosh": math.cosh, "atan": math.atan, "asin": math.asin, "acos": math.acos,
          "asinh": math.asinh, "acosh": math.acosh, "atanh": math.atanh,
          "round": lambda v: math.copysign(math.floor(abs(v) + 0.5), v)}
_BINARY = {"pow": math.pow, "atan2": math.atan2}


@pytest.fixture(scope="module")
def host_math():
    """ctypes callables of every `__tile_amd_*_f32` body, JIT-compiled for this CPU."""
    module = ir.Module("amd_math_on_host")
    for op in amd_math.F32_BODIES:
        arity = 2 if op in _BINARY else 1
        ir.Function(module, ir.FunctionType(ir.FloatType(), [ir.FloatType()] * arity), f"__tile_amd_{op}_f32")
    amd_math.define_used(module)
    for fn in module.functions:
        if fn.name.startswith("__tile_amd_"):
            fn.linkage = "external"
    machine = llvm_tools.host_target_machine()
    import llvmlite.binding as llvm

    parsed = llvm_tools.parse(str(module))
    engine = llvm.create_mcjit_compiler(parsed, machine)
    engine.finalize_object()
    out = {}
    for op in amd_math.F32_BODIES:
        arity = 2 if op in _BINARY else 1
        proto = ctypes.CFUNCTYPE(ctypes.c_float, *[ctypes.c_float] * arity)
        out[op] = proto(engine.get_function_address(f"__tile_amd_{op}_f32"))
    out["_engine"] = engine
    return out


def _domain(op: str, gen: torch.Generator) -> torch.Tensor:
    x = torch.randn(400, generator=gen, dtype=torch.float64) * 3
    special = torch.tensor([0.0, -0.0, 1e-7, -1e-7, 0.5, -0.5, 2.5, -2.5, 1e-30, 20.0, -20.0], dtype=torch.float64)
    x = torch.cat([x, special])
    if op in ("asin", "acos", "atanh"):
        x = torch.tanh(x).clamp(-0.999, 0.999)
    if op == "log1p":
        x = torch.where(x > -0.9, x, -x)
    if op == "acosh":
        x = 1 + x.abs()
    if op in ("sin", "cos", "tan"):  # arguments as large as RoPE tables use
        x = torch.cat([x, x * 1000, torch.tensor([4095.5, -3000.25, 1e4 + 0.5])])
    if op in ("sinh", "cosh", "expm1"):
        x = x.clamp(-80, 80)
    return x.float().double()


@pytest.mark.parametrize("op", sorted(_UNARY))
def test_f32_math_body_matches_float64(host_math, op, gen):
    fn, reference = host_math[op], _UNARY[op]
    for value in _domain(op, gen).tolist():
        expected = reference(value)
        got = fn(value)
        # sin/cos/tan: absolute error near their zeros (the reduced argument is a float32)
        absolute = 5e-7 if op in ("sin", "cos", "tan") else 1e-37
        assert math.isclose(got, expected, rel_tol=4e-6, abs_tol=absolute), (op, value, got, expected)
    assert math.isnan(fn(float("nan")))


@pytest.mark.parametrize("op", sorted(_BINARY))
def test_f32_math_binary_body_matches_float64(host_math, op, gen):
    fn, reference = host_math[op], _BINARY[op]
    x = _domain("atan", gen)
    y = _domain("atan", torch.Generator().manual_seed(7))[: len(x)]
    if op == "pow":
        x = x.abs() + 0.1
        y = y.clamp(-6, 6)
    for a, b in zip(x.tolist(), y.tolist()):
        assert math.isclose(fn(a, b), reference(a, b), rel_tol=1e-5, abs_tol=1e-37), (op, a, b)
    if op == "pow":
        assert fn(-2.0, 3.0) == -8.0 and fn(-2.0, 2.0) == 4.0 and math.isnan(fn(-2.0, 0.5))
        assert fn(0.0, 2.0) == 0.0 and fn(0.0, -1.0) == math.inf and fn(float("nan"), 0.0) == 1.0
        assert fn(1.0, float("nan")) == 1.0 and math.copysign(1, fn(-0.0, 3.0)) == -1
    else:
        assert fn(0.0, -1.0) == pytest.approx(math.pi) and fn(-0.0, -1.0) == pytest.approx(-math.pi)
        assert fn(1.0, 0.0) == pytest.approx(math.pi / 2) and fn(0.0, 0.0) == 0.0
        assert fn(math.inf, math.inf) == pytest.approx(math.pi / 4)


def test_rocm_torch_selects_the_hip_target(monkeypatch):
    from inductor_tile.kernel_compiler.to_llvm import targets

    monkeypatch.setattr(torch.version, "hip", None)
    assert targets.gpu_target() == "cuda"
    monkeypatch.setattr(torch.version, "hip", "6.2.41133")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert targets.gpu_target() == "hip:gfx942"  # no device to ask: the default arch
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(targets, "_device_arch", lambda device: "gfx90a")
    assert targets.gpu_target() == "hip:gfx90a"
    assert disk_cache.target_identity("hip") == "hip:gfx90a"
    assert targets.get_target("hip:gfx1100").warp_size == 32 and targets.get_target("hip:gfx90a").warp_size == 64
    with pytest.raises(ValueError, match="unknown AMD GPU architecture 'sm_90'"):
        targets.get_target("hip:sm_90")


def test_too_much_lds_is_a_clear_error():
    from inductor_tile.kernel_compiler.runtime.cuda_launcher import SharedMemoryError

    with pytest.raises(SharedMemoryError, match=r"'transpose_kernel' needs \d+ bytes of LDS per workgroup, but gfx942 "
                                                r"has 65536"):
        _compile(suite.transpose_kernel, {"x_ptr": "*fp32", "out_ptr": "*fp32", "M": "i32", "N": "i32"},
                 {"BLOCK": 256}, "gfx942")


@needs_lld
@needs_objdump
@pytest.mark.parametrize("element, instruction", [("fp32", "global_atomic_add_f32"), ("fp64", "global_atomic_add_f64"),
                                                  ("i64", "global_atomic_add_x2"), ("bf16", "global_atomic_cmpswap")])
def test_atomic_add_links_for_gfx942(element, instruction, tmp_path):
    from atomic_cases import scatter_add_kernel
    from test_atomics import SCATTER_ADD_SIGNATURE, _specs

    signature = {**SCATTER_ADD_SIGNATURE, "src_ptr": f"*{element}", "out_ptr": f"*{element}"}
    kernel = compile_specialized(scatter_add_kernel, _specs(scatter_add_kernel, signature, {"BLOCK": 128}),
                                 target="hip:gfx942", num_warps=4, native=False)
    filecheck(_disassembly(kernel, "gfx942"), f"CHECK: {instruction} \n", tmp_path)


@inductor_tile.jit
def divide_kernel(a_ptr, b_ptr, out_ptr, exact_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a, b = tl.load(a_ptr + offs), tl.load(b_ptr + offs)
    tl.store(out_ptr + offs, a / b)
    tl.store(exact_ptr + offs, tl.div_rn(b, a))


@needs_lld
@needs_objdump
def test_fp32_division_is_a_reciprocal_multiply_and_div_rn_is_exact(tmp_path):
    # `/` within 2.5 ulp (as div.full.f32 on NVIDIA): v_rcp_f32 and a multiply; tl.div_rn the IEEE sequence
    kernel = _compile(divide_kernel, {"a_ptr": "*fp32", "b_ptr": "*fp32", "out_ptr": "*fp32", "exact_ptr": "*fp32"},
                      {"BLOCK": 64}, "gfx942", aligned=("a_ptr", "b_ptr", "out_ptr", "exact_ptr"))
    assert "!fpmath" in kernel.asm["llir"]
    text = _disassembly(kernel, "gfx942")
    assert text.count("v_div_fixup_f32") == 1 and "v_rcp_f32" in text  # one exact quotient per thread
