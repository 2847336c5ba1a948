"""torch.compile(backend="tile") on CUDA for scans, sorts and index-bound asserts (codegen/scans.py):
our kernels run on the GPU (no fallback) and match eager in float64."""

import subprocess
import sys
import textwrap

import pytest
import torch

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _scans_on_gpus(monkeypatch):
    """Whatever the environment says, these tests are about our scans on the GPU."""
    monkeypatch.setattr(config, "scans", "on")
    monkeypatch.setenv("TILE_SCANS", "on")  # for the child processes


def _compile(fn, **kwargs):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend, **kwargs)


def _rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", generator=g).to(dtype)


def _generated(text: str) -> None:
    """Some kernel contains `text`; the only fallbacks are split scans (Inductor may split a scan of
    few rows across programs: its Triton kernel does that, ours would run each row in one program)."""
    assert all("split scan" in reason for reason in metrics.fallback_reasons), metrics.fallback_reasons
    assert any(text in source for source in metrics.kernel_sources.values()), list(metrics.kernel_sources)


def scans(x):
    values, indices = torch.cummax(x, 1)
    return torch.cumsum(x, 1), torch.cumprod(x[:, :30], 1), torch.logcumsumexp(x, 1), values, indices


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
@pytest.mark.parametrize("shape", [(37, 53), (300, 3000)], ids=str)
def test_scans_on_gpu(dtype, shape):
    x = _rand(*shape, dtype=dtype)
    got = _compile(scans)(x)
    _generated("tl.associative_scan(")
    expected = scans(x.double())
    tolerance = 1e-4 if dtype == torch.float32 else 2e-2
    for g, e in zip(got, expected):
        assert g.device.type == "cuda"
        if e.is_floating_point():
            scale = max(1.0, e.abs().max().item())
            torch.testing.assert_close(g.double(), e, rtol=tolerance, atol=tolerance * scale)
        elif dtype == torch.float32:  # fp16 rounding may move a tie
            torch.testing.assert_close(g, e)


def test_cumsum_dynamic_and_backward_on_gpu():
    def loss(x, w):
        return (torch.cumsum(x, 1) * w).sum() + torch.logcumsumexp(x, 1).sum()

    compiled = _compile(loss, dynamic=True)
    for cols in (50, 3000):
        x, w = _rand(64, cols, seed=cols).requires_grad_(), _rand(64, cols, seed=1)
        compiled(x, w).backward()
        x64 = x.detach().double().requires_grad_()
        loss(x64, w.double()).backward()
        torch.testing.assert_close(x.grad.double(), x64.grad, rtol=1e-4, atol=1e-3)
    _generated("tl.associative_scan(")


def test_one_long_scan_is_left_to_inductors_split_scan():
    x = _rand(1_000_000)
    got = _compile(lambda x: torch.cumsum(x, 0))(x)
    torch.testing.assert_close(got.double(), torch.cumsum(x.double(), 0), rtol=1e-4, atol=1e-2)
    assert all("split scan" in reason for reason in metrics.fallback_reasons), metrics.fallback_reasons


def sorts(x, i):
    down = torch.sort(x, dim=1, descending=True, stable=True)
    return torch.sort(x, dim=1, stable=True), down.values, down.indices, torch.sort(i, dim=1, stable=True).indices


@pytest.mark.parametrize("cols", [37, 500])
def test_sorts_on_gpu(cols):
    x = _rand(64, cols)
    x[0, 3] = float("nan")
    x[1, :] = 2.0
    i = torch.randint(-4, 4, (16, cols), device="cuda", dtype=torch.int32)
    got = _compile(sorts)(x, i)
    _generated("tl.sort(")
    expected = sorts(x, i)
    torch.testing.assert_close(got[0].values, expected[0].values, equal_nan=True, rtol=0, atol=0)
    torch.testing.assert_close(got[0].indices, expected[0].indices)
    for g, e in zip(got[1:], expected[1:]):
        torch.testing.assert_close(g, e, equal_nan=True, rtol=0, atol=0)


def test_index_bound_assert_on_gpu():
    def add_positions(x, table):
        return x + torch.nn.functional.embedding(torch.arange(x.shape[0], device=x.device), table)

    table = _rand(40, 8, seed=2)
    x = _rand(30, 8, seed=3)
    got = _compile(add_positions, dynamic=True)(x, table)
    torch.testing.assert_close(got, add_positions(x, table))
    _generated("tl.device_assert(")
    # out of range: the device assertion ends the CUDA context, so it runs in another process
    script = textwrap.dedent("""
        import torch
        from inductor_tile.backend import tile_backend
        def f(x, t):
            return x + torch.nn.functional.embedding(torch.arange(x.shape[0], device=x.device), t)
        g = torch.compile(f, backend=tile_backend, dynamic=True)
        t = torch.randn(40, 8, device="cuda")
        g(torch.randn(30, 8, device="cuda"), t)
        g(torch.randn(45, 8, device="cuda"), t)
        torch.cuda.synchronize()
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert "index out of bounds" in run.stderr or "device-side assert" in run.stderr, run.stderr[-2000:]
