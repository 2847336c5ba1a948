"""torch.compile(backend="tile") with dynamic shapes on the CPU.

One compiled graph serves every size: symbolic sizes are kernel arguments, the wrapper
computes grids at run time, and the tile compiler recompiles a kernel only for a new
specialization of its int arguments (==1, divisibility by 16).  Each test calls the
compiled function on several sizes and compares with eager in float64.
"""

import pytest
import torch
from torch._dynamo.utils import counters
from torch._inductor.utils import run_and_get_code

from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend
from inductor_tile.codegen import runtime


class Compiled:
    """``torch.compile`` through a backend that counts the graphs Dynamo hands it."""

    def __init__(self, fn, **kwargs):
        torch._dynamo.reset()
        counters.clear()
        metrics.reset()
        self.graphs = 0
        self.shape_env = None
        self.fn = fn
        self.compiled = torch.compile(fn, backend=self._backend, **kwargs)
        self.wrapper_code = ""

    def _backend(self, gm, example_inputs):
        self.graphs += 1
        for value in example_inputs:  # a SymInt or a tensor with symbolic sizes knows the ShapeEnv
            sizes = [value] if isinstance(value, torch.SymInt) else list(getattr(value, "shape", ()))
            for size in sizes:
                if isinstance(size, torch.SymInt):
                    self.shape_env = size.node.shape_env
        return tile_backend(gm, example_inputs)

    def first(self, *args):
        out, codes = run_and_get_code(self.compiled, *args)
        self.wrapper_code = "\n".join(codes)
        return out

    def __call__(self, *args):
        return self.compiled(*args)


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + 31 * sum(shape))
    return torch.randn(*shape, generator=g, dtype=torch.float64)


def _close(out, ref):
    if isinstance(ref, torch.Tensor):
        out, ref = (out,), (ref,)
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        assert o.dtype == r.dtype and o.shape == r.shape
        torch.testing.assert_close(o, r, rtol=1e-12, atol=1e-12)


def _run_sizes(c: Compiled, make_inputs, sizes):
    """Call on every size; the first call compiles, the others must reuse graph and kernels."""
    for i, size in enumerate(sizes):
        args = make_inputs(*size)
        out = c.first(*args) if i == 0 else c(*args)
        _close(out, c.fn(*args))
        if i == 0:
            kernels = metrics.generated_kernels
            assert kernels >= 1
    assert c.graphs == 1, f"{c.graphs} graphs for {len(sizes)} sizes"
    assert counters["stats"]["unique_graphs"] == 1
    assert metrics.generated_kernels == kernels  # no new kernel source for a new size
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons


def pointwise_chain(x, y):
    a = torch.relu(x + y) * 2.0
    b = torch.sigmoid(a) - y
    return a, b, torch.where(x > 0, b, a * y)


def test_pointwise_chain_dynamic():
    c = Compiled(pointwise_chain, dynamic=True)
    _run_sizes(c, lambda m, n: (_rand(m, n), _rand(m, n, seed=1)), [(7, 33), (16, 64), (5, 1100), (40, 3)])
    assert metrics.generated_kernels == 1
    # the grid is computed from the symbolic numel at run time
    assert "XBLOCK=" in c.wrapper_code and "// " in c.wrapper_code


def test_broadcast_with_symbolic_strides():
    # a row vector broadcast over rows and a transposed read: index expressions carry s0/s1
    fn = lambda x, b, t: (x * b + t.t(), (x - b).exp())  # noqa: E731
    c = Compiled(fn, dynamic=True)
    _run_sizes(c, lambda m, n: (_rand(m, n), _rand(n, seed=2), _rand(n, m, seed=3)), [(6, 9), (17, 32), (3, 130)])
    for source in metrics.kernel_sources.values():
        params = source.split("def ", 1)[1].split(")", 1)[0]
        assert any(p.strip().startswith("s") for p in params.split(",")), params  # size symbols are arguments


def test_softmax_over_dynamic_dim_loops():
    fn = lambda t: torch.softmax(t, -1)  # noqa: E731
    c = Compiled(fn, dynamic=True)
    _run_sizes(c, lambda m, n: (_rand(m, n),), [(7, 33), (4, 1500), (9, 16), (3, 2050)])
    assert metrics.generated_kernels == 1
    (source,) = metrics.kernel_sources.values()
    # the row length is unbounded: a persistent block could not hold every size
    assert "for roffset in range(0, rnumel, RBLOCK)" in source


def test_bounded_reduction_is_persistent():
    def fn(t):
        torch._check(t.size(1) <= 300)
        return torch.softmax(t, -1), t.sum(-1)

    c = Compiled(fn, dynamic=True)
    with config.patch(max_rblock=512, max_block_elems=512):  # rows up to 512 fit one CPU block
        _run_sizes(c, lambda m, n: (_rand(m, n),), [(7, 33), (4, 300), (9, 16), (2, 257)])
    assert metrics.generated_kernels == 1
    (source,) = metrics.kernel_sources.values()
    assert "for roffset" not in source and "rmask = rindex < rnumel" in source
    assert "RBLOCK=512" in c.wrapper_code  # next power of two of the bound


def test_layer_norm_dynamic_rows():
    # dynamic=True: the rows vary; the normalized size is a constant of the graph (64)
    fn = lambda t, w, b: torch.nn.functional.layer_norm(t, (64,), w, b)  # noqa: E731
    c = Compiled(fn, dynamic=True)
    w, b = _rand(64, seed=4), _rand(64, seed=5)
    _run_sizes(c, lambda m: (_rand(m, 64), w, b), [(29,), (3,), (130,)])


def test_layer_norm_and_var_over_a_dynamic_dim():
    # the normalized size is symbolic: welford loops over it
    fn = lambda t, w: (torch.nn.functional.layer_norm(t, t.shape[-1:], w), t.var(0))  # noqa: E731
    c = Compiled(fn, dynamic=True)
    _run_sizes(c, lambda m, n: (_rand(m, n), _rand(n, seed=6)), [(29, 64), (3, 300), (17, 40)])
    assert all("for roffset" in s for s in metrics.kernel_sources.values() if "tile_red" in s)


def test_reductions_over_dynamic_dims_mark_dynamic():
    # sum over the strided dim 0, amax and mean over the contiguous dim 1, both dims dynamic
    fn = lambda t: (t.sum(0), t.amax(-1), t.mean(-1) + 1.0)  # noqa: E731
    sizes = [(6, 40), (33, 7), (5, 1200), (64, 16)]
    first = _rand(*sizes[0])
    torch._dynamo.mark_dynamic(first, 0)
    torch._dynamo.mark_dynamic(first, 1)
    c = Compiled(fn)
    inputs = iter([first] + [_rand(*s) for s in sizes[1:]])
    _run_sizes(c, lambda m, n: (next(inputs),), sizes)


def test_mark_dynamic_one_dim_keeps_the_other_static():
    fn = lambda t: torch.softmax(t, -1) * 2.0  # noqa: E731
    sizes = [(6, 40), (33, 40), (5, 40)]
    first = _rand(*sizes[0])
    torch._dynamo.mark_dynamic(first, 0)
    c = Compiled(fn)
    inputs = iter([first] + [_rand(*s) for s in sizes[1:]])
    _run_sizes(c, lambda m, n: (next(inputs),), sizes)
    (source,) = metrics.kernel_sources.values()
    assert "for roffset" not in source  # the row length is static: persistent


def test_automatic_dynamic_after_a_second_size():
    # without dynamic=True, Dynamo recompiles once with symbolic sizes, then reuses that graph
    c = Compiled(pointwise_chain)
    for m, n in [(7, 33), (9, 20), (12, 5), (3, 70)]:
        x, y = _rand(m, n), _rand(m, n, seed=1)
        _close(c(x, y), pointwise_chain(x, y))
    assert c.graphs == 2
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons


def test_tile_compiler_specializes_only_on_int_properties():
    fn = lambda x: torch.sigmoid(x) * 3.0 + x  # noqa: E731
    c = Compiled(fn, dynamic=True)
    runtime._loaded.clear()
    # 7*33 and 5*35 are neither 1 nor multiples of 16: one compiled kernel serves both
    _run_sizes(c, lambda m, n: (_rand(m, n),), [(7, 33), (5, 35)])
    (kernel,) = runtime._loaded.values()
    assert len(kernel.cache) == 1
    x = _rand(16, 64)  # multiples of 16: a second specialization
    _close(c(x), fn(x))
    assert len(kernel.cache) == 2


def test_int32_guard_installed():
    # indices are int32: the compiled graph guards on its sizes staying below 2**31,
    # so a larger input recompiles (and falls back) instead of overflowing
    c = Compiled(lambda t: t + 1.0, dynamic=True)
    _close(c(_rand(5, 7)), _rand(5, 7) + 1.0)
    shape_env = c.shape_env
    guards = [str(g.expr) for g in shape_env.guards]
    assert any("2147483647" in g for g in guards), guards


@pytest.mark.parametrize("rows", [1, 2])
def test_size_one_specialization(rows):
    # Dynamo specializes sizes 0 and 1; 2 stays symbolic: both compile and agree with eager
    fn = lambda t: t.sum(-1)  # noqa: E731
    c = Compiled(fn, dynamic=True)
    x = _rand(rows, 9)
    _close(c(x), fn(x))
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons


@pytest.mark.parametrize("dynamic", [False, True])
def test_reductions_over_the_same_sizes_fuse_horizontally(dynamic):
    fn = lambda t: (t.sum(-1), t.amax(-1), (t * t).sum(-1))  # noqa: E731
    c = Compiled(fn, dynamic=dynamic)
    x = _rand(37, 300)
    _close(c(x), fn(x))
    assert metrics.generated_kernels == 1 and metrics.fallback_kernels == 0, metrics.fallback_reasons


def test_training_with_dynamic_shapes():
    # forward and backward graphs are compiled once and serve every size
    fn = lambda t, w: (torch.relu(t * w) * 2.0).sum()  # noqa: E731
    c = Compiled(fn, dynamic=True)
    for m, n in [(6, 10), (7, 11), (5, 13)]:  # no multiple of 16: one specialization per kernel
        x, w = _rand(m, n).requires_grad_(), _rand(n, seed=1).requires_grad_()
        out = c(x, w)
        out.backward()
        x2, w2 = x.detach().requires_grad_(), w.detach().requires_grad_()
        ref = fn(x2, w2)
        ref.backward()
        _close((out, x.grad, w.grad), (ref, x2.grad, w2.grad))
    assert c.graphs == 1 and metrics.generated_kernels >= 2
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons


def zero_dim_from_sizes(x):
    return torch.scalar_tensor(x.shape[0] * x.shape[1], dtype=torch.float64), x * 2.0


def test_a_zero_dim_output_from_size_symbols():
    # one element stored from a scalar value: the kernel stores a block of its address (a scalar
    # pointer with a block mask did not compile, and the kernel fell back)
    c = Compiled(zero_dim_from_sizes, dynamic=True)
    _run_sizes(c, lambda m, n: (_rand(m, n),), [(7, 33), (16, 64), (3, 5)])

