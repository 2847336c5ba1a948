"""Generated kernels on CUDA with the GPU shape heuristics: every kernel shape (pointwise,
persistent short/wide rows, looped rows, strided reductions), dynamic shapes and autotuning,
compared with eager in float64."""

import re

import pytest
import torch
from torch._dynamo.utils import counters
from torch._inductor.utils import run_and_get_code

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend

pytestmark = pytest.mark.gpu

# Inductor's CUDA softmax becomes online_softmax_reduce, which we do not generate yet
OPTIONS = {"online_softmax": False}


def _compile(fn, **kwargs):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend, options=OPTIONS, **kwargs)


def _check(out, ref, dtype):
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    for o, r in zip(out, ref):
        assert o.device.type == "cuda" and o.dtype == dtype
        torch.testing.assert_close(o.double(), r, rtol=tol, atol=tol * max(1.0, r.abs().max().item()))


def _rand(*shape, dtype, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", dtype=dtype, generator=g)


def rows(x, w, b):
    return (torch.softmax(x, -1), torch.nn.functional.layer_norm(x, x.shape[-1:], w, b),
            torch.relu(x) * 2.0 + 1.0)


@pytest.mark.parametrize("shape,dtype", [((4096, 64), torch.float16), ((513, 300), torch.float32),
                                         ((256, 1024), torch.float16), ((64, 4096), torch.float32),
                                         ((16, 10000), torch.float16)])
def test_row_kernels(shape, dtype, monkeypatch):
    monkeypatch.setattr(config, "autotune", False)  # the heuristic's launches (tuning: test_autotuned_kernels)
    x, w, b = _rand(*shape, dtype=dtype), _rand(shape[1], dtype=dtype, seed=1), _rand(shape[1], dtype=dtype, seed=2)
    out, codes = run_and_get_code(_compile(rows), x, w, b)
    _check(out, rows(x.double(), w.double(), b.double()), dtype)
    code = "\n".join(codes)
    sites = re.findall(r"tile_\w+\.launcher\(.*\)", code)  # each launch site fixes its warps
    assert sites and all("num_warps=" in line for line in sites), sites
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons


@pytest.mark.parametrize("shape", [(32, 5000), (3000, 1000)])
def test_strided_reductions(shape):
    x = _rand(*shape, dtype=torch.float32)
    fn = lambda t: (t.sum(0), t.amax(0))  # noqa: E731
    _check(_compile(fn)(x), fn(x.double()), torch.float32)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons


def test_large_pointwise():
    x = _rand((1 << 24) + 3, dtype=torch.float32)
    fn = lambda t: torch.sigmoid(t) * t  # noqa: E731
    out, codes = run_and_get_code(_compile(fn), x)
    _check((out,), (fn(x.double()),), torch.float32)
    assert "XBLOCK=1024, num_warps=4" in "\n".join(codes)  # 4 warps at every size: 16-byte accesses for fp16


def test_dynamic_shapes_on_gpu():
    graphs = []

    def backend(gm, inputs):
        graphs.append(gm)
        return tile_backend(gm, inputs, options=OPTIONS)

    torch._dynamo.reset()
    counters.clear()
    metrics.reset()
    fn = lambda t: (torch.softmax(t, -1), t.sum(0), torch.relu(t) * 3.0)  # noqa: E731
    compiled = torch.compile(fn, backend=backend, dynamic=True)
    for i, shape in enumerate([(7, 33), (100, 2000), (1030, 64), (3, 5000)]):
        x = _rand(*shape, dtype=torch.float32, seed=i)
        _check(compiled(x), fn(x.double()), torch.float32)
        if i == 0:
            kernels = metrics.generated_kernels
    assert len(graphs) == 1 and metrics.generated_kernels == kernels
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons


@pytest.mark.parametrize("setting", [True, "reductions"])
def test_autotuned_kernels(monkeypatch, setting):
    monkeypatch.setattr(config, "autotune", setting, raising=False)
    x, w, b = (_rand(513, 300, dtype=torch.float32), _rand(300, dtype=torch.float32, seed=1),
               _rand(300, dtype=torch.float32, seed=2))
    out, codes = run_and_get_code(_compile(rows), x, w, b)
    _check(out, rows(x.double(), w.double(), b.double()), torch.float32)
    code = "\n".join(codes)
    assert "autotune=[{" in code
    if setting == "reductions":  # only reduction kernels are tuned
        tuned = re.findall(r"load_kernel\('(\w+)', .*autotune=\[\{", code)
        assert tuned and all(name.startswith("tile_red_") for name in tuned), tuned
