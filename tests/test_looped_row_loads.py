"""Looped GPU reductions load a row's own elements (indices of the row variables only) above their
loops, as Inductor's kernels do (codegen/kernel.py `_hoistable`): EfficientNet's squeeze-excitation
means over channels-last activations reduce 3136 pixels a channel in a loop, with the batch norm's
per-channel mean, variance, weight and bias in its prologue; loaded in the loop, their arithmetic
(a square root and a division) ran once an element.

Generated with the CUDA heuristics on this machine (conftest's `cuda_heuristics`), run on the CPU
target, and compared with torch in float64 (outputs poisoned with NaN first)."""

from __future__ import annotations

import pytest
import torch

from inductor_tile import metrics
from inductor_tile.backend import tile_backend

pytestmark = pytest.mark.usefixtures("fresh_backend")


def bn_relu_mean(x, mean, var, weight, bias):
    # (silu, as in EfficientNet, uses its input twice: the CPU's realize heuristic would store it)
    y = torch.relu(torch.nn.functional.batch_norm(x, mean, var, weight, bias, training=False, eps=1e-5))
    return y.mean((2, 3), keepdim=True)


def _rand(*shape, seed):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_channels_last_mean_loads_the_norm_parameters_above_the_loop(cuda_heuristics):
    channels = 128  # 8 x 128 rows of 576 pixels: one reduction, not split in two
    x = _rand(8, channels, 24, 24, seed=0).contiguous(memory_format=torch.channels_last)
    mean, weight, bias = _rand(channels, seed=1), _rand(channels, seed=2), _rand(channels, seed=3)
    var = _rand(channels, seed=4).abs() + 0.5
    means = torch.compile(bn_relu_mean, backend=tile_backend)(x, mean, var, weight, bias)
    torch.testing.assert_close(means, bn_relu_mean(x, mean, var, weight, bias), rtol=1e-12, atol=1e-12)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    (source,) = [s for s in metrics.kernel_sources.values() if "for roffset" in s]
    head, loop = source.split("for roffset", 1)
    # the four per-channel parameters load once a row, before the loop; the activations in it
    assert head.count("tl.load(") == 4, source
    assert loop.count("tl.load(") == 1 and "r0" in loop.split("tl.load(")[1].split(")")[0], source


def test_the_row_arithmetic_leaves_the_loop_in_ttir(cuda_heuristics):
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

    channels = 128
    x = _rand(8, channels, 24, 24, seed=0).half().contiguous(memory_format=torch.channels_last)
    params = [_rand(channels, seed=s).half() for s in (1, 2, 3, 4)]
    params[1] = params[1].abs() + 0.5
    means = torch.compile(bn_relu_mean, backend=tile_backend)(x, *params)
    ref = bn_relu_mean(x.double(), *(p.double() for p in params))
    torch.testing.assert_close(means.double(), ref, rtol=2e-3, atol=2e-3)
    (fn, signature, constexprs), = [k for k in cuda_heuristics if "RBLOCK" in k[2]]
    specs = [spec_from_signature(n, "constexpr", constexprs[n]) if n in constexprs
             else spec_from_signature(n, signature[n], divisible_by_16=signature[n].startswith("*"))
             for n in fn.arg_names]
    ttir = compile_specialized(fn, specs, target="cuda:90", num_warps=4, native=False).asm["ttir"]
    before, loop = ttir.split("scf.for", 1)
    assert "sqrt" in before and "sqrt" not in loop.split("scf.yield")[0], ttir
