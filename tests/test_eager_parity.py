"""Lowerings of Inductor's that differ from eager, replaced in our compiles (scheduler/eager_parity.py).

Found by the OpInfo sweep with ``--dynamic --backward`` (issue 23): var_mean/std_mean over no
elements, avg_pool ceil-mode backward, logcumsumexp backward rounding.  Each test compares with
eager run on float64 copies of random inputs; each fails with Inductor's lowering in place.
"""

import warnings

import pytest
import torch
import torch.nn.functional as F

from inductor_tile import metrics
from inductor_tile.backend import tile_backend


def _compile(fn, dynamic=None):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend, dynamic=dynamic)


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _grad(fn, x, g):
    x = x.clone().requires_grad_()
    return torch.autograd.grad(fn(x), x, g.to(x.dtype))[0]


@pytest.mark.parametrize("shape, dim", [((0,), None), ((0, 5), None), ((4, 0), 1), ((0, 5), 0)])
@pytest.mark.parametrize("which", [torch.var_mean, torch.std_mean])
def test_var_mean_of_no_elements_is_nan_as_in_eager(which, shape, dim):
    x = torch.empty(shape)

    def fn(x):
        return which(x, dim=dim)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eager's "degrees of freedom is <= 0"
        expected = fn(x.double())
        for dynamic in (None, True):
            out = _compile(fn, dynamic)(x)
            for o, e in zip(out, expected):
                assert o.dtype == torch.float32 and o.shape == e.shape
                assert o.isnan().all() and e.isnan().all(), (dynamic, out, expected)
            assert not metrics.eager_graphs


# (input shape, pool args): ceil mode adds a last window that runs past the padded input
CEIL_CASES = [
    ((1, 3, 9), dict(kernel_size=6, stride=3, padding=2, ceil_mode=True, count_include_pad=True)),
    ((2, 2, 9), dict(kernel_size=7, stride=3, padding=3, ceil_mode=True)),
    ((2, 2, 9), dict(kernel_size=7, stride=3, ceil_mode=True)),
    ((1, 2, 10, 9), dict(kernel_size=(3, 2), stride=2, padding=1, ceil_mode=True)),
    ((1, 1, 7, 8, 9), dict(kernel_size=2, stride=2, ceil_mode=True)),
]


@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("shape, kwargs", CEIL_CASES)
def test_avg_pool_ceil_mode_backward_matches_eager(shape, kwargs, dynamic):
    pool = {3: F.avg_pool1d, 4: F.avg_pool2d, 5: F.avg_pool3d}[len(shape)]

    def fn(x):
        return pool(x, **kwargs)

    x = _rand(*shape)
    g = _rand(*fn(x).shape, seed=1)
    expected = _grad(fn, x, g)
    out = _grad(_compile(fn, dynamic), x.float(), g)
    torch.testing.assert_close(out.double(), expected, rtol=1.3e-6, atol=1e-5)
    assert not metrics.eager_graphs


def test_avg_pool2d_backward_with_one_padding_entry_and_divisor_is_compiled():
    """``padding=(1,)`` reaches the backward lowering as one entry, which Inductor's asserts are two
    (backend="inductor" raises with dynamic=True; we used to run the graph eagerly)."""
    def fn(x):
        return F.avg_pool2d(x, (3, 3), (1, 1), (1,), True, False, 2)

    x = _rand(2, 3, 9, 9)
    g = _rand(2, 3, 9, 9, seed=1)
    out = _grad(_compile(fn, dynamic=True), x.float(), g)
    assert not metrics.eager_graphs and metrics.generated_kernels > 0
    torch.testing.assert_close(out.double(), _grad(fn, x, g), rtol=1.3e-6, atol=1e-5)


def test_logcumsumexp_rounds_once_as_eager_on_the_cpu():
    """Eager's CPU kernel carries the running value in float64; a float32 scan is off by ~1 ulp,
    which the backward's exp(logcumsumexp(log|g| - out) + x) turns into 1e-3 at x = 1e4."""
    x = (1e4 + _rand(5, 5, 5)).float().double()  # float32 values

    def fn(x):
        return torch.logcumsumexp(x, 0)

    reference = fn(x)
    out = _compile(fn)(x.float())
    assert metrics.generated_kernels > 0 and not metrics.fallback_reasons
    half_ulp = torch.finfo(torch.float32).eps * reference.abs() / 2
    assert ((out.double() - reference).abs() <= half_ulp * 1.001).all()

    g = _rand(5, 5, 5, seed=1)
    expected = _grad(fn, x, g)
    eager_error = (_grad(fn, x.float(), g).double() - expected).abs()
    for dynamic in (None, True):
        error = (_grad(_compile(fn, dynamic), x.float(), g).double() - expected).abs()
        assert (error <= 1e-5 + 1.3e-6 * expected.abs() + 2 * eager_error).all(), (error - 2 * eager_error).max()


def test_adaptive_avg_pool2d_to_a_symbolic_output_size_is_compiled():
    """``output_size=(None, 7)`` keeps the input's height, a symbol under dynamic=True; Inductor's
    lowering compared its window with 25 and raised (backend="inductor" too; we ran it eagerly)."""
    def fn(x):
        return F.adaptive_avg_pool2d(x, (None, 7))

    x = _rand(2, 8, 8, 8)
    g = _rand(2, 8, 8, 7, seed=1)
    out = _grad(_compile(fn, dynamic=True), x.float(), g)
    assert not metrics.eager_graphs and metrics.generated_kernels > 0
    torch.testing.assert_close(out.double(), _grad(fn, x, g), rtol=1.3e-6, atol=1e-5)
    torch.testing.assert_close(_compile(fn, dynamic=True)(x.float()).double(), fn(x), rtol=1.3e-6, atol=1e-5)
