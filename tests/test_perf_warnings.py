"""Performance warnings (kernel_compiler/diagnostics): each finding is one PerformanceWarning at
the kernel line it concerns, with the source line, a caret and the missing fact in words; a
clean kernel says nothing. Most kernels are compiled for NVIDIA PTX (cuda:90) without a GPU."""

from __future__ import annotations

import re
import warnings

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.runtime.cuda_tools import find_ptxas

F32 = {"src": "*fp32", "dst": "*fp32"}


@inductor_tile.jit
def strided_copy(src, dst, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs * stride)
    tl.store(dst + offs, x)


@inductor_tile.jit
def masked_copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(src + offs, mask=mask)
    tl.store(dst + offs, x * 2.0, mask=mask)


@inductor_tile.jit
def row_softmax(src, dst, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(src + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    y = tl.exp(x - tl.max(x, 0))
    tl.store(dst + row * n_cols + cols, y / tl.sum(y, 0), mask=cols < n_cols)


def line_of(kernel, text: str) -> int:
    """The file line of the first line of `kernel` containing `text`."""
    lines = kernel.src.splitlines()
    return kernel.first_line + next(i for i, line in enumerate(lines) if text in line)


def compile_with_warnings(kernel, signature, constexprs, target="cuda:90", **options):
    with inductor_tile.config.patch(perf_warnings=True), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = inductor_tile.compile(kernel, signature, constexprs, target=target, **options)
    return compiled, [w for w in caught if issubclass(w.category, inductor_tile.PerformanceWarning)]


def test_performance_warning_is_a_user_warning():
    assert issubclass(inductor_tile.PerformanceWarning, UserWarning)


def test_strided_load_warns_at_its_line_naming_the_stride():
    compiled, caught = compile_with_warnings(strided_copy, {**F32, "stride": "i32"}, {"BLOCK": 1024},
                                             divisible_by_16=("src", "dst"))
    line = line_of(strided_copy, "tl.load(")
    assert len(caught) == 1, [str(w.message) for w in caught]
    warning = caught[0]
    assert (warning.filename, warning.lineno) == (__file__, line)
    text = str(warning.message)
    assert text.startswith(f"in kernel `strided_copy`, {__file__}:{line}:9:\n"
                           "    x = tl.load(src + offs * stride)\n"
                           "        ^\n")
    assert "load from `src` is not coalesced" in text
    assert "runtime stride `stride`" in text
    assert [(f.kind, f.line) for f in compiled.perf_findings] == [("uncoalesced", line)]


def test_strided_load_on_the_cpu_is_not_vectorized():
    compiled, caught = compile_with_warnings(strided_copy, {**F32, "stride": "i32"}, {"BLOCK": 16}, target="cpu",
                                             divisible_by_16=("src", "dst"))
    assert [(w.lineno, "not vectorized" in str(w.message), "`stride`" in str(w.message)) for w in caught] == [
        (line_of(strided_copy, "tl.load("), True, True)]


def test_size_not_divisible_warns_about_the_mask():
    _, caught = compile_with_warnings(masked_copy, {**F32, "n": "i32"}, {"BLOCK": 1024},
                                      divisible_by_16=("src", "dst"))
    lines = {w.lineno: str(w.message) for w in caught}
    assert sorted(lines) == [line_of(masked_copy, "tl.load("), line_of(masked_copy, "tl.store(")]
    for text in lines.values():
        assert "mask may change inside a vector of 4 elements" in text
        assert "depends on `n`, not known to be a multiple of 4" in text
    assert "    tl.store(dst + offs, x * 2.0, mask=mask)\n    ^\n" in lines[line_of(masked_copy, "tl.store(")]


def test_unaligned_pointer_warns():
    compiled, caught = compile_with_warnings(masked_copy, {**F32, "n": "i32"}, {"BLOCK": 1024},
                                             divisible_by_16=("dst", "n"))
    line = line_of(masked_copy, "tl.load(")
    assert [w.lineno for w in caught] == [line]
    text = str(caught[0].message)
    assert "load from `src` is not vectorized to the widest access: 1 element(s) (4 bytes)" in text
    assert "pointer argument `src` is not known to be 16-byte aligned" in text
    assert "    x = tl.load(src + offs, mask=mask)\n        ^\n" in text
    # the layout conversion the narrow load causes is the same finding, not a second warning
    assert [f.kind for f in compiled.perf_findings] == ["not_vectorized"]


@pytest.mark.parametrize("target", ["cuda:90", "cpu"])
def test_clean_kernel_is_silent(target):
    compiled, caught = compile_with_warnings(masked_copy, {**F32, "n": "i32"}, {"BLOCK": 256}, target=target,
                                             divisible_by_16=("src", "dst", "n"))
    assert caught == []
    assert compiled.perf_findings == []


def test_off_by_default_but_findings_are_kept():
    assert not inductor_tile.config.perf_warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = inductor_tile.compile(masked_copy, {**F32, "n": "i32"}, {"BLOCK": 1024}, target="cuda:90",
                                         divisible_by_16=("src", "dst"))
    assert not [w for w in caught if issubclass(w.category, inductor_tile.PerformanceWarning)]
    assert {f.kind for f in compiled.perf_findings} == {"not_vectorized"}
    assert {f.line for f in compiled.perf_findings} == {line_of(masked_copy, "tl.load("),
                                                        line_of(masked_copy, "tl.store(")}


def test_reduction_across_warps_goes_through_shared_memory():
    signature = {**F32, "n_cols": "i32"}
    _, caught = compile_with_warnings(row_softmax, signature, {"BLOCK": 2048}, num_warps=8,
                                      divisible_by_16=("src", "dst", "n_cols"))
    reduction_line = line_of(row_softmax, "tl.max(")
    assert sorted(w.lineno for w in caught) == [reduction_line, line_of(row_softmax, "tl.sum(")]
    text = next(str(w.message) for w in caught if w.lineno == reduction_line)
    assert "reduction over axis 0 (2048 elements) spans 8 warps" in text
    assert "    y = tl.exp(x - tl.max(x, 0))\n                   ^\n" in text


def _has_ptxas() -> bool:
    try:
        find_ptxas()
    except FileNotFoundError:
        return False
    return True


@pytest.mark.skipif(not _has_ptxas(), reason="needs ptxas (CUDA toolkit or the nvidia wheels)")
def test_register_spills_reported_by_ptxas(monkeypatch):
    """The path of a launch on the GPU, without loading the binary: ptxas -v of the cubin made."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.diagnostics import perf_warnings
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    # 8192 floats per program on one warp: 256 live values per thread, more than 255 registers
    specs = [spec_from_signature("src", "*fp32", divisible_by_16=True),
             spec_from_signature("dst", "*fp32", divisible_by_16=True),
             spec_from_signature("n_cols", "i32", divisible_by_16=True),
             spec_from_signature("BLOCK", "constexpr", 8192)]
    kernel = compile_specialized(row_softmax, specs, target="cuda:90", num_warps=1, native=True, load=False)
    assert kernel.binary and kernel.runner is None
    def_line = line_of(row_softmax, "def row_softmax")
    spills = [f for f in kernel.perf_findings if f.kind == "register_spill"]
    assert len(spills) == 1 and spills[0].line == 0
    stored = re.search(r"ptxas spilled registers to local memory: (\d+) bytes stored", spills[0].reason)
    assert stored and int(stored.group(1)) > 0
    assert "low_occupancy" in [f.kind for f in kernel.perf_findings]
    with inductor_tile.config.patch(perf_warnings=True), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        perf_warnings.report(spills, row_softmax)
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, def_line)]
    assert f"{__file__}:{def_line}:1:\n    def row_softmax(src, dst, n_cols, BLOCK: tl.constexpr):\n    ^\n" in str(
        caught[0].message)


@pytest.mark.skipif(not _has_ptxas(), reason="needs ptxas (CUDA toolkit or the nvidia wheels)")
def test_ahead_of_time_compiles_ask_ptxas_when_warnings_are_on(monkeypatch):
    from inductor_tile.kernel_compiler.diagnostics import ptxas_findings

    logs = []
    real = ptxas_findings.ptxas_findings
    monkeypatch.setattr(ptxas_findings, "ptxas_findings", lambda log, *args: logs.append(log) or real(log, *args))
    signature = {**F32, "n": "i32"}
    inductor_tile.compile(masked_copy, signature, {"BLOCK": 256}, target="cuda:90", divisible_by_16=("src", "dst", "n"))
    assert logs == []  # off: no ptxas run for a compile that makes no binary
    _, caught = compile_with_warnings(masked_copy, signature, {"BLOCK": 256}, divisible_by_16=("src", "dst", "n"))
    assert len(logs) == 1 and re.search(r"Used \d+ registers", logs[0]) and caught == []


def test_a_kernel_loaded_from_the_disk_cache_still_warns(compiled, monkeypatch, tmp_path, gen):
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TILE_DUMP_IR", raising=False)
    src = torch.randn(64 * 3, generator=gen)
    line = line_of(strided_copy, "tl.load(")
    for attempt in range(2):
        strided_copy.cache.clear()
        strided_copy.launch_cache.clear()
        dst = torch.full((64,), float("nan"))
        with inductor_tile.config.patch(perf_warnings=True), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            strided_copy[(4,)](src, dst, 3, BLOCK=16)
        torch.testing.assert_close(dst.double(), src.double()[::3], rtol=0, atol=0)
        kernel = next(iter(strided_copy.cache.values()))
        assert kernel.from_disk == (attempt == 1)
        ours = [w for w in caught if issubclass(w.category, inductor_tile.PerformanceWarning)]
        assert [(w.filename, w.lineno) for w in ours] == [(__file__, line)]
        assert "`stride`" in str(ours[0].message)


def test_generated_kernels_warn_naming_their_fx_nodes(compiled, gen):
    def transposed_add(x, y):
        return torch.relu(x.t() + y) * 2

    x, y = torch.randn(40, 24, generator=gen), torch.randn(24, 40, generator=gen)
    torch._dynamo.reset()
    with inductor_tile.config.patch(perf_warnings=True), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = torch.compile(transposed_add, backend="tile")(x, y)
    torch.testing.assert_close(out.double(), transposed_add(x.double(), y.double()), rtol=1e-6, atol=1e-6)
    ours = [str(w.message) for w in caught if issubclass(w.category, inductor_tile.PerformanceWarning)]
    assert len(ours) == 1, ours
    assert "tl.load(" in ours[0] and "is not vectorized" in ours[0]
    assert "generated from FX nodes add, mul, permute, relu (scheduler node" in ours[0]


def test_occupancy_from_a_ptxas_report():
    """CUDA's rules on an H100: registers are allocated per warp in units of 256 of the SM's 65536."""
    from inductor_tile.kernel_compiler.diagnostics.ptxas_findings import ptxas_findings

    def log(registers: int, spills: int = 0) -> str:
        return ("ptxas info    : Compiling entry function 'k' for 'sm_90'\nptxas info    : Function properties for k\n"
                f"    0 bytes stack frame, {spills} bytes spill stores, {spills} bytes spill loads\n"
                f"ptxas info    : Used {registers} registers, used 0 barriers, 380 bytes cmem[0]\n")

    assert ptxas_findings(log(128), num_warps=4, capability=90, shared_bytes=0) == []  # 16 of 64 warp slots
    (low,) = ptxas_findings(log(168), num_warps=4, capability=90, shared_bytes=0)  # 3 blocks of 4 warps
    assert low.kind == "low_occupancy" and "168 registers" in low.reason and "19%" in low.reason
    (low,) = ptxas_findings(log(32), num_warps=4, capability=90, shared_bytes=100 * 1024)  # 2 blocks fit
    assert "12%" in low.reason and "limited by shared memory" in low.reason
    kinds = [f.kind for f in ptxas_findings(log(255, spills=64), num_warps=8, capability=90, shared_bytes=0)]
    assert kinds == ["register_spill", "low_occupancy"]


def test_serialized_wgmma_from_a_ptxas_report():
    """ptxas's note that it serialized the wgmma pipeline (what halved the cp.async-ring matmuls) is a finding."""
    from inductor_tile.kernel_compiler.diagnostics.ptxas_findings import ptxas_findings

    log = ("ptxas info    : Compiling entry function 'matmul_kernel' for 'sm_90a'\n"
           "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to "
           "non wgmma instructions defining input registers of a wgmma between start and end of the pipeline stage "
           "in the function 'matmul_kernel'\n"
           "ptxas info    : Used 128 registers, used 1 barriers, 380 bytes cmem[0]\n")
    (finding,) = ptxas_findings(log, num_warps=4, capability=90, shared_bytes=0)
    assert finding.kind == "serialized_wgmma"
    assert "non wgmma instructions defining input registers" in finding.reason and "'matmul_kernel'" not in finding.reason
    assert ptxas_findings(log.replace("serialized", "pipelined"), num_warps=4, capability=90, shared_bytes=0) == []
