"""Matmul templates on the CPU (``scheduler/matmul_templates.py``, ``codegen/matmul_template.py``).

``config.matmul_templates="force"`` takes the template wherever it fits, so these tests check the
generated template + fused epilogue against float64 references (random inputs, outputs poisoned
with NaN where the test allocates them). One end-to-end test compiles through the CPU target; the
others run the generated kernels in the interpreter (``TILE_INTERPRET=1``: the same source, fast).
The choice against aten is tested with stubbed timings (real ones depend on the machine).
"""

import platform

import pytest
import torch

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from inductor_tile.codegen import matmul_template as mt
from inductor_tile.codegen import runtime
from inductor_tile.scheduler import matmul_templates

# torch.testing's relative tolerances; errors are relative to the reference's largest value
TOLERANCE = {torch.float16: 1e-3, torch.bfloat16: 1.6e-2, torch.float32: 1.3e-6}


def _compile(fn, **kwargs):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend, **kwargs)


def _rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(dtype)


def _check(out, ref, dtype, k=64):
    assert not out.isnan().any()
    error = ((out.double() - ref).abs().max() / ref.abs().max()).item()
    assert error <= 4 * TOLERANCE[dtype] * max(1, k / 64), f"relative error {error:.3g}"


@pytest.fixture
def interpret(monkeypatch):
    monkeypatch.setenv("TILE_INTERPRET", "1")


@pytest.fixture
def fresh_choices(monkeypatch):
    monkeypatch.setattr(matmul_templates, "_choices", {})


# -- the template's source ------------------------------------------------------------------------
def _spec(m, n, k, dtype=torch.float32, bias=False, batch=None):
    a = mt.Operand("a", 0, (m * k, k, 1))
    b = mt.Operand("b", 0, (k * n, 1, k))  # b transposed: k is its fastest dim
    return mt.MatmulSpec(batch is not None, batch or 1, m, n, k, a, b, dtype,
                         bias=mt.Operand("bias", 0, (0, 0, 1)) if bias else None)


def test_loads_are_masked_only_along_ragged_sizes():
    cfg = mt.TemplateConfig(32, 32, 16)
    even = mt.benchmark_source(_spec(64, 64, 48), cfg, "k")
    assert "a = tl.load(a_ptr + (rows[:, None] * 48 + k[None, :]))" in even
    assert "b = tl.load(b_ptr + (k[:, None] + cols[None, :] * 48))" in even
    ragged = mt.benchmark_source(_spec(45, 64, 40), cfg, "k")
    assert "mask=(rows[:, None] < M) & (k[None, :] < K), other=0.0)" in ragged
    assert "b = tl.load(b_ptr + (k[:, None] + cols[None, :] * 40), mask=(k[:, None] < K), other=0.0)" in ragged
    assert "tl.store(out_ptr + ((x1 + (64 * x0))), result, mask=xmask)" in ragged


def test_candidate_blocks_fit_the_problem():
    small = matmul_templates.candidates(_spec(5, 20, 100, torch.float16), "cuda")
    assert all(c.block_m == 16 and c.block_n == 32 and c.block_k == 32 for c in small) and len(small) == 1
    big = _spec(4096, 4096, 4096, torch.float16)
    assert matmul_templates.candidates(big, "cuda")[0] == mt.TemplateConfig(128, 128, 32)
    assert max(c.block_m * c.block_n for c in matmul_templates.candidates(_spec(4096, 4096, 4096), "cuda")) <= 4096
    assert [c.num_warps for c in matmul_templates.candidates(_spec(64, 64, 64), "cpu")] == [1]


CASES = {  # name -> (batch, m, n, k, bias, alpha, beta, a transposed)
    "mm": (None, 20, 24, 40, False, 1, 1, False),
    "mm-aT": (None, 33, 17, 29, False, 1, 1, True),
    "addmm": (None, 20, 24, 40, True, 0.5, 2.0, False),
    "bmm": (3, 18, 20, 24, False, 1, 1, True),
}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("case", CASES)
def test_template_kernel_in_the_interpreter(case, dtype, interpret):
    batch, m, n, k, with_bias, alpha, beta, a_t = CASES[case]
    lead = [batch] if batch else []
    a = _rand(*lead, k, m, dtype=dtype).transpose(-1, -2) if a_t else _rand(*lead, m, k, dtype=dtype)
    b = _rand(*lead, n, k, dtype=dtype, seed=1).transpose(-1, -2)  # transposed through strides
    bias = _rand(n, dtype=dtype, seed=2)
    pad = 0 if batch is None else 5  # bmm: b starts 5 elements into its storage
    b_storage = torch.cat([_rand(pad, dtype=dtype, seed=3), b.transpose(-1, -2).reshape(-1)])

    def operand(x, offset=0):
        strides = tuple(x.stride()) if batch else (0, *x.stride())
        return mt.Operand("x", offset, strides)

    b_operand = operand(b, pad)
    spec = mt.MatmulSpec(batch is not None, batch or 1, m, n, k, operand(a), b_operand, dtype,
                         bias=mt.Operand("bias", 0, (0, 0, 1)) if with_bias else None, alpha=alpha, beta=beta)
    cfg = mt.TemplateConfig(16, 16, 16, group_m=2)
    kernel = runtime.load_kernel("tile_mm_test", mt.benchmark_source(spec, cfg, "tile_mm_test"))
    out = torch.full(spec.sizes, float("nan"), dtype=dtype)
    a_storage = a.transpose(-1, -2).contiguous() if a_t else a  # what `a`'s strides address
    args = [a_storage, b_storage] + ([bias] if with_bias else []) + [out]
    kernel[mt.grid(spec, cfg)](*args, **cfg.constexprs())
    ref = alpha * (a.double() @ b.double()) + (beta * bias.double() if with_bias else 0)
    _check(out, ref, dtype)


# -- end to end -----------------------------------------------------------------------------------
def linear_gelu_residual(x, w, b, r):
    return torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b)) + r


def test_addmm_with_epilogue_compiles_for_the_cpu_target(fresh_choices):
    """One kernel: addmm (bias on the accumulator) + gelu + residual, the matmul's buffer never stored."""
    x, w, b, r = _rand(12, 20), _rand(16, 20, seed=1), _rand(16, seed=2), _rand(12, 16, seed=3)
    with config.patch(matmul_templates="force"):
        out = _compile(linear_gelu_residual)(x, w, b, r)
    _check(out, linear_gelu_residual(x.double(), w.double(), b.double(), r.double()), torch.float32)
    assert len(metrics.template_kernels) == 1 and "+ 1 epilogue nodes" in metrics.template_kernels[0]
    assert metrics.generated_kernels == 1 and not metrics.fallback_reasons
    (source,) = metrics.kernel_sources.values()
    assert "tl.dot(a, b, acc" in source and "tl.erf" in source and source.count("tl.store(") == 1


def bmm_scaled_half(q, k):
    return (torch.bmm(q, k.transpose(1, 2)) * 0.125).to(torch.float16)


def mm_used_twice(x, y):
    z = x @ y
    return z, torch.relu(z) + 1.0


@pytest.mark.parametrize("fn,make", [
    (bmm_scaled_half, lambda: (_rand(2, 24, 16, dtype=torch.bfloat16), _rand(2, 20, 16, dtype=torch.bfloat16, seed=1))),
    (mm_used_twice, lambda: (_rand(30, 20, dtype=torch.float16), _rand(20, 26, dtype=torch.float16, seed=1))),
], ids=["bmm-transposed-bf16", "mm-output-kept-fp16"])
def test_templates_with_epilogues(fn, make, interpret, fresh_choices):
    inputs = make()
    with config.patch(matmul_templates="force"):
        out = _compile(fn)(*inputs)
    ref = fn(*[x.double() for x in inputs])
    for o, r in zip(out if isinstance(out, tuple) else (out,), ref if isinstance(ref, tuple) else (ref,)):
        _check(o, r, inputs[0].dtype)
    assert len(metrics.template_kernels) == 1 and metrics.generated_kernels == 1, metrics.template_kernels
    if fn is mm_used_twice:  # the matmul's result is a graph output: stored, and its epilogue fused
        (source,) = metrics.kernel_sources.values()
        assert source.count("tl.store(") == 2


@pytest.mark.parametrize("aten_ms,template_wins", [(1.0, True), (0.1, False)])
def test_choice_follows_the_timings(aten_ms, template_wins, interpret, fresh_choices, monkeypatch):
    def timings(op, spec, device, configs, epilogue=False):
        assert epilogue  # tanh follows the matmul: aten is timed with an epilogue pass
        return {"aten": aten_ms, configs[0]: 0.5}

    monkeypatch.setattr(matmul_templates, "_time_choices", timings)
    x, w = _rand(20, 24), _rand(24, 16, seed=1)
    out = _compile(lambda x, w: torch.tanh(x @ w), mode="max-autotune")(x, w)  # config "auto": the mode decides
    _check(out, torch.tanh(x.double() @ w.double()), torch.float32)
    (choice,) = metrics.template_choices
    assert (": template 32x16x16/1w" in choice) == template_wins, choice
    assert f"aten + epilogue pass {aten_ms:.4f} ms" in choice, choice
    assert len(metrics.template_kernels) == int(template_wins)


def test_default_mode_and_dynamic_shapes_keep_aten(interpret, fresh_choices):
    x, w = _rand(20, 24), _rand(24, 16, seed=1)
    out = _compile(lambda x, w: torch.relu(x @ w))(x, w)  # no max-autotune: no template
    _check(out, torch.relu(x.double() @ w.double()), torch.float32)
    assert not metrics.template_choices and not metrics.template_kernels
    with config.patch(matmul_templates="force"):
        out = _compile(lambda x, w: torch.relu(x @ w), dynamic=True)(x, w)  # symbolic sizes: aten
        _check(out, torch.relu(x.double() @ w.double()), torch.float32)
        ints = _compile(lambda x, w: x @ w)(x.long(), w.long())  # no integer template: aten
        assert torch.equal(ints, x.long() @ w.long())
    assert not metrics.template_kernels


@pytest.mark.parametrize("broken", ["epilogue", "template"])
def test_codegen_failures_fall_back(broken, interpret, fresh_choices, monkeypatch):
    """An epilogue that cannot be generated runs as its own kernel; a template that cannot, as aten."""
    generate = mt.MatmulTemplateKernel.generate

    def failing(self):
        if broken == "template" or self.plan.nodes:
            raise mt.Unsupported("test")
        return generate(self)

    monkeypatch.setattr(mt.MatmulTemplateKernel, "generate", failing)
    x, w, b, r = _rand(20, 24), _rand(16, 24, seed=1), _rand(16, seed=2), _rand(20, 16, seed=3)
    with config.patch(matmul_templates="force"):
        out = _compile(linear_gelu_residual)(x, w, b, r)
    _check(out, linear_gelu_residual(x.double(), w.double(), b.double(), r.double()), torch.float32)
    assert len(metrics.template_kernels) == (broken == "epilogue")
    assert metrics.generated_kernels == (2 if broken == "epilogue" else 1)  # the epilogue's own kernel
    assert any("template" in reason for reason in metrics.fallback_reasons) == (broken == "template")


@pytest.mark.parametrize("wrong", [False, True])
def test_timing_drops_configs_that_disagree_with_aten(wrong, interpret, monkeypatch):
    spec = mt.MatmulSpec(False, 1, 20, 18, 24, mt.Operand("a", 3, (0, 24, 1)), mt.Operand("b", 0, (0, 1, 24)),
                         torch.float16, bias=mt.Operand("bias", 0, (0, 0, 1)), alpha=0.5, beta=2.0)
    source = matmul_templates.benchmark_source
    if wrong:  # a template that adds 1 to every product: not used, whatever its speed
        monkeypatch.setattr(matmul_templates, "benchmark_source",
                            lambda *a: source(*a).replace("acc = tl.dot(a, b, acc)", "acc = tl.dot(a, b, acc) + 1.0"))
    cfg = mt.TemplateConfig(16, 16, 16)
    timings = matmul_templates._time_choices("addmm", spec, torch.device("cpu"), [cfg], epilogue=True)
    assert timings["aten"] > 0
    assert (cfg in timings) != wrong and all(ms > 0 for ms in timings.values())


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
def test_template_with_epilogue_compiles_to_ptx_with_tensor_cores(interpret, fresh_choices):
    """The generated fp16 addmm + gelu + residual kernel, built for sm_90 with 64 x 64 x 32 blocks:
    the dot runs on wgmma (Hopper's default) and ptxas accepts the PTX (the GPU tests run it)."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
    from inductor_tile.kernel_compiler.to_llvm.nvptx import ptx_arch

    x, w = _rand(64, 96, dtype=torch.float16), _rand(128, 96, dtype=torch.float16, seed=1)
    b, r = _rand(128, dtype=torch.float16, seed=2), _rand(64, 128, dtype=torch.float16, seed=3)
    with config.patch(matmul_templates="force"):
        _compile(linear_gelu_residual)(x, w, b, r)
    ((name, source),) = metrics.kernel_sources.items()
    kernel = runtime.load_kernel(name, source)
    blocks = {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}
    specs = [spec_from_signature(n, "constexpr", blocks[n]) if n in blocks else spec_from_signature(n, "*fp16")
             for n in kernel.arg_names]
    ptx = compile_specialized(kernel, specs, target="cuda:90", num_warps=4, native=False).asm["ptx"]
    check_ptx(ptx, ptx_arch(ptx, 90), name)
    assert ptx.count("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16") == 32 // 16  # one warpgroup, k steps of 16
