"""Per-stage compile times of the CPU target (CompiledKernel.stage_seconds) and the table of
model_benchmarks/cpu_compile_stages.py."""

from __future__ import annotations

import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from model_benchmarks.cpu_compile_stages import STAGES, table
from suite import poison


@inductor_tile.jit
def shifted_exp_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    tl.store(out_ptr + offsets, tl.exp(x) - 1.0, mask=offsets < n)


def test_a_fresh_cpu_compile_times_every_stage_in_order(monkeypatch):
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    specs = [spec_from_signature("x_ptr", "*fp32", divisible_by_16=True),
             spec_from_signature("out_ptr", "*fp32", divisible_by_16=True), spec_from_signature("n", "i32"),
             spec_from_signature("BLOCK", "constexpr", 64)]
    kernel = compile_specialized(shifted_exp_kernel, specs, target="cpu", num_warps=1)
    assert list(kernel.stage_seconds) == list(STAGES)
    assert all(seconds > 0 for seconds in kernel.stage_seconds.values())
    assert sum(kernel.stage_seconds.values()) <= kernel.compile_seconds
    # the timed kernel is the one that runs
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(100, generator=gen)
    out = poison(torch.empty(100))
    kernel.launch_values(shifted_exp_kernel, (x, out, 100, 64), (2, 1, 1))
    torch.testing.assert_close(out.double(), torch.expm1(x.double()), rtol=1e-5, atol=1e-6)


def test_table_takes_the_median_of_each_stage_over_runs():
    def run(scale: float, warm_up: float) -> dict:
        stages = {stage: scale * (i + 1) for i, stage in enumerate(STAGES)}
        stages.update(total=scale * 100, llir_lines=7)
        return {"warm_up": warm_up, "kernels": {"00 k": stages, "01 j": {**stages, "total": scale * 50}}}

    text = table([run(1.0, 2.0), run(3.0, 9.0), run(2.0, 1.0)])
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in text.splitlines()
            if line.startswith("| ") and not line.startswith("| kernel")}
    assert rows["00 k"][:len(STAGES) + 1] == [f"{2.0 * (i + 1):.3f}" for i in range(len(STAGES))] + ["200.000"]
    assert rows["sum of 2"][len(STAGES)] == "300.00"
    assert "one tiny kernel: 2.00 s" in text
