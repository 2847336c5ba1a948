"""A graph Inductor's passes cannot compile runs eagerly with a warning (config.eager_fallback),
forward and backward, and agrees with eager; TILE_EAGER_FALLBACK=0 raises instead."""

import logging

import pytest
import torch

import torch._inductor.compile_fx as compile_fx_module
from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend


def f(x, w):
    return torch.nn.functional.conv2d(torch.relu(x), w).sin().sum(dim=(1, 2))


def _inputs():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(2, 3, 9, 9, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, 3, 3, 3, generator=g, dtype=torch.float64, requires_grad=True)
    return x, w


@pytest.fixture(autouse=True)
def fallback_on(monkeypatch):
    monkeypatch.setattr(config, "eager_fallback", True)  # conftest turns it off for the other tests


def _run(monkeypatch, target: str):
    def broken(*args, **kwargs):
        raise RuntimeError("simulated failure of Inductor's lowering")

    monkeypatch.setattr(compile_fx_module, target, broken)
    torch._dynamo.reset()
    metrics.reset()
    x, w = _inputs()
    out = torch.compile(f, backend=tile_backend)(x, w)
    out.backward(torch.ones_like(out))
    rx, rw = (t.detach().clone().requires_grad_() for t in (x, w))
    ref = f(rx, rw)
    ref.backward(torch.ones_like(ref))
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(x.grad, rx.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(w.grad, rw.grad, rtol=1e-12, atol=1e-12)


def test_aot_graphs_that_fail_to_compile_run_eagerly(monkeypatch, caplog):
    with caplog.at_level(logging.WARNING, logger="inductor_tile.backend"):
        _run(monkeypatch, "compile_fx_inner")  # forward and backward graphs: our inner_compile
    assert len(metrics.eager_graphs) == 2 and "simulated failure" in metrics.eager_graphs[0]
    assert "runs eagerly" in caplog.text and "TILE_EAGER_FALLBACK=0" in caplog.text
    assert metrics.generated_kernels == 0


def test_a_dynamo_graph_that_fails_to_compile_runs_eagerly(monkeypatch):
    _run(monkeypatch, "compile_fx")
    assert len(metrics.eager_graphs) == 1 and metrics.eager_graphs[0].startswith("RuntimeError: simulated")


def test_without_the_fallback_the_error_propagates(monkeypatch):
    monkeypatch.setattr(config, "eager_fallback", False)
    with pytest.raises(Exception, match="simulated failure"):
        _run(monkeypatch, "compile_fx_inner")
    assert not metrics.eager_graphs
