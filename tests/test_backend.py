"""End-to-end tests of torch.compile(backend="tile") on the CPU.

Each test compiles a small function with Inductor's front end and our tile kernels,
then compares with eager PyTorch in float64 (random inputs, never zeros).
"""

import importlib.metadata

import pytest
import torch

import inductor_tile
from inductor_tile import config, metrics
from inductor_tile.backend import tile_backend


def _compile(fn, **kwargs):
    torch._dynamo.reset()
    metrics.reset()
    return torch.compile(fn, backend=tile_backend, **kwargs)


def _close(out, ref, rtol=1e-12, atol=1e-12):
    if isinstance(ref, torch.Tensor):
        out, ref = (out,), (ref,)
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        assert o.dtype == r.dtype and o.shape == r.shape
        torch.testing.assert_close(o, r, rtol=rtol, atol=atol)


def _rand(*shape, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed + sum(shape))
    return torch.randn(*shape, generator=g, dtype=dtype)


def pointwise_chain(x, y):
    # every intermediate is a graph output, so Inductor realizes each one: three
    # scheduler nodes that fusion puts into one kernel
    a = torch.relu(x + y) * 2.0
    b = torch.sigmoid(a) - y
    c = torch.where(x > 0, b, a * y)
    return a, b, c


def test_pointwise_chain_matches_eager():
    x, y = _rand(37, 53), _rand(37, 53, seed=1)
    out = _compile(pointwise_chain)(x, y)
    _close(out, pointwise_chain(x, y))
    assert metrics.generated_kernels >= 1
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    (source,) = metrics.kernel_sources.values()
    assert "tl.sigmoid" in source and "tl.where" in source and "tl.store" in source


def test_fusion_off_generates_more_kernels():
    x, y = _rand(37, 53), _rand(37, 53, seed=1)
    _compile(pointwise_chain)(x, y)
    fused = metrics.generated_kernels
    with config.patch(fusion=False):
        out = _compile(pointwise_chain)(x, y)
        unfused = metrics.generated_kernels
    _close(out, pointwise_chain(x, y))
    assert fused == 1
    assert unfused == 3 > fused



def test_fusion_off_keeps_a_16_bit_loss_sum_with_its_division():
    # 16384 tokens x a loss near 8 sum past float16's 65504: stored alone, the sum
    # would round to inf before the division by the token count (eager does both in one op)
    g = torch.Generator().manual_seed(3)
    logits = (torch.randn(16384, 64, generator=g) * 3).half()
    target = torch.randint(0, 64, (16384,), generator=g)
    fn = torch.nn.functional.cross_entropy
    ref = fn(logits.double(), target)
    with config.patch(fusion=False):
        out = _compile(fn)(logits, target)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert out.dtype == torch.float16 and torch.isfinite(out)
    torch.testing.assert_close(out.double(), ref, rtol=2e-3, atol=0)


def test_cpu_column_sums_load_whole_rows_of_columns():
    x, y = _rand(300, 77), _rand(300, 77, seed=4)
    fn = lambda a, b: ((a * b).sum(0), a.sum(0) + b.amax(0))  # noqa: E731
    _close(_compile(fn)(x, y), fn(x, y), rtol=1e-10, atol=1e-10)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    launches = " ".join(metrics.launch_lines.values())
    assert "XBLOCK=128" in launches and "RBLOCK=2" in launches, launches
    # rows gathered through an index (another kind of gather) keep the small gather tiles
    idx = torch.randint(0, 300, (300,), generator=torch.Generator().manual_seed(6))
    fn2 = lambda a: a[idx].sum(0)  # noqa: E731
    _close(_compile(fn2)(x), fn2(x), rtol=1e-10, atol=1e-10)
    assert "XBLOCK=128" not in " ".join(metrics.launch_lines.values())


def test_half_division_rounds_like_eager():
    # amax's backward counts the elements equal to the stored (float16) max by recomputing
    # them: a division left in float32 matched none in some rows (count 0 -> NaN gradient)
    g = torch.Generator().manual_seed(6)
    x = torch.randn(19, 45, generator=g).half()
    fn = lambda t: (t / (1.0 + t.square()), (t % 0.7) / 3.0)  # noqa: E731
    out = _compile(fn)(x)
    for o, r in zip(out, fn(x)):
        assert o.dtype == torch.float16
        torch.testing.assert_close(o, r, rtol=0, atol=0)  # bit for bit: one rounding per op, as eager

    def max_centred(t):
        c = t / (1.0 + t.square())
        return c - c.amax(1, keepdim=True)

    grads = []
    for compiled, dtype in ((True, torch.float16), (False, torch.float16), (False, torch.float64)):
        leaf = x.to(dtype, copy=True).requires_grad_()
        (_compile(max_centred) if compiled else max_centred)(leaf).float().square().sum().backward()
        grads.append(leaf.grad.double())
    tile, eager, exact = grads
    assert torch.isfinite(tile).all()
    # eager sums the row's gradient in float16, the kernel in float32: no worse than eager
    assert (tile - exact).abs().max() <= (eager - exact).abs().max() + 1e-3


def inlining_probe(x, y):
    # relu(x * 2 + 1) is inlined into the add, twice; with inlining off it is a buffer that
    # the add reads at two elements per element it writes, so fusion cannot merge them back
    a = torch.relu(x * 2 + 1)
    return a + a.flip(0), (x.exp() * y.t()).sum(-1)


@pytest.mark.parametrize("fusion", [True, False])
def test_inlining_off_generates_more_kernels(fusion):
    x, y = _rand(33, 17), _rand(17, 33, seed=1)
    with config.patch(fusion=fusion):
        _close(_compile(inlining_probe)(x, y), inlining_probe(x, y))
        inlined = metrics.generated_kernels
        with config.patch(inlining=False):
            out = _compile(inlining_probe)(x, y)
            materialized = metrics.generated_kernels
    _close(out, inlining_probe(x, y))
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert materialized > inlined, (materialized, inlined)


def test_inlining_off_is_scoped_to_tile_compiles():
    from torch._inductor.graph import GraphLowering

    original = GraphLowering.run_node
    x, y = _rand(33, 17), _rand(17, 33, seed=1)
    with config.patch(inlining=False):
        _compile(inlining_probe)(x, y)
    assert GraphLowering.run_node is original


def test_softmax_one_kernel():
    x = _rand(37, 53)
    fn = lambda t: torch.softmax(t, -1)  # noqa: E731
    _close(_compile(fn)(x), fn(x))
    assert metrics.generated_kernels == 1 and metrics.fallback_kernels == 0, metrics.fallback_reasons
    (name,) = metrics.kernel_sources
    assert name.startswith("tile_red_")
    source = metrics.kernel_sources[name]
    assert "tl.max(" in source and "tl.sum(" in source and "tl.exp(" in source


def test_layer_norm():
    x, w, b = _rand(29, 64), _rand(64, seed=2), _rand(64, seed=3)
    fn = lambda t, w, b: torch.nn.functional.layer_norm(t, (64,), w, b)  # noqa: E731
    _close(_compile(fn)(x, w, b), fn(x, w, b))
    assert metrics.generated_kernels >= 1 and metrics.fallback_kernels == 0, metrics.fallback_reasons


def test_looped_and_strided_reductions_float32():
    # rows longer than config.max_rblock reduce in a loop; sum over dim 0 gathers
    x = _rand(6, 3000, dtype=torch.float32)
    fn = lambda t: (t.sum(-1), t.amax(-1), t.sum(0) * 0.5)  # noqa: E731
    out = _compile(fn)(x)
    _close(out, fn(x), rtol=1e-5, atol=1e-4)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert any("for roffset in range" in s for s in metrics.kernel_sources.values())


def _refuse(monkeypatch, op_name):
    """Make the codegen refuse one op, as it does for ops it has no rule for."""
    from inductor_tile.codegen.common import Unsupported
    from inductor_tile.codegen.ops import TileOps

    def refuse(self, *args, **kwargs):
        raise Unsupported(f"op {op_name}")

    monkeypatch.setattr(TileOps, op_name, refuse, raising=False)


def test_unsupported_op_falls_back_to_inductor(monkeypatch):
    # a node with an op the codegen refuses runs as Inductor's own C++ kernel, the rest as tile kernels
    _refuse(monkeypatch, "tanh")
    x = _rand(16, 40)
    fn = lambda t: (torch.tanh(t).sum(-1), torch.relu(t) + 1.0)  # noqa: E731
    _close(_compile(fn)(x), fn(x))
    assert metrics.fallback_kernels >= 1
    assert any("tanh" in r for r in metrics.fallback_reasons)
    assert metrics.generated_kernels >= 1


def test_training_backward():
    x = _rand(24, 33).requires_grad_()
    w = _rand(33, seed=5).requires_grad_()
    fn = lambda t, w: (torch.sigmoid(t * w) * t).sum()  # noqa: E731
    out = _compile(fn)(x, w)
    out.backward()
    gx, gw = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    ref = fn(x, w)
    ref.backward()
    _close(out.detach(), ref.detach())
    _close((gx, gw), (x.grad, w.grad))
    assert metrics.generated_kernels >= 2  # forward and backward graphs


def test_mode_and_options_accepted():
    x = _rand(50)
    fn = lambda t: torch.relu(t) * 3.0  # noqa: E731
    _close(_compile(fn, mode="reduce-overhead")(x), fn(x))
    _close(_compile(fn, options={"size_asserts": False})(x), fn(x))


def test_inductor_backend_unaffected_in_same_process():
    from torch._inductor.codegen.common import get_scheduling_for_device
    from torch._inductor.utils import run_and_get_code

    from inductor_tile.scheduler.scheduling import TileScheduling

    x = _rand(40, 30)
    fn = lambda t: torch.relu(t).sum(-1)  # noqa: E731
    _close(_compile(fn)(x), fn(x))
    tile_kernels = metrics.generated_kernels
    assert tile_kernels >= 1
    assert get_scheduling_for_device("cpu") is not TileScheduling

    torch._dynamo.reset()
    out, codes = run_and_get_code(torch.compile(fn, backend="inductor"), x)
    _close(out, fn(x))
    code = "\n".join(codes)
    assert "load_kernel" not in code and "inductor_tile" not in code
    assert "cpp_fused" in code  # Inductor's own C++ kernel, not one of ours
    assert metrics.generated_kernels == tile_kernels


def test_backend_name_registered_by_entry_point():
    names = {ep.name for ep in importlib.metadata.entry_points(group="torch_dynamo_backends")}
    if "tile" not in names:
        pytest.fail("the 'tile' entry point is not installed: run `pip install -e .`")
    from torch._dynamo import lookup_backend

    assert lookup_backend("tile") is tile_backend


def test_import_is_light():
    # importing the package must not import Inductor (the backend loads it lazily)
    import subprocess
    import sys

    code = "import sys, inductor_tile, inductor_tile.backend; print('torch._inductor' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert inductor_tile.__version__


def test_fused_group_split_when_a_node_falls_back(monkeypatch):
    # with the embedding gather (indirect indexing) refused, its fused group is split, that
    # node runs as Inductor's kernel and the rest still as tile kernels; the wrapper's
    # memory planner must accept the frees of a split group
    _refuse(monkeypatch, "indirect_indexing")
    emb = torch.nn.Embedding(100, 16).double()
    idx = torch.randint(0, 100, (4, 7), generator=torch.Generator().manual_seed(0))
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.LayerNorm(32)).double()
    fn = lambda i: mlp(emb(i).softmax(-1))  # noqa: E731
    with torch.no_grad():
        _close(_compile(fn)(idx), fn(idx), rtol=1e-10, atol=1e-10)
    assert metrics.fallback_kernels >= 1
    assert any("indirect_indexing" in r for r in metrics.fallback_reasons)
    assert metrics.generated_kernels >= 1


def test_codegen_bug_becomes_a_fallback(monkeypatch):
    # an exception other than Unsupported inside the generator must not fail the compile
    from inductor_tile.codegen.ops import TileOps

    def broken(self, *args):
        raise TypeError("generator bug")

    monkeypatch.setattr(TileOps, "sigmoid", broken)
    x = _rand(16, 40)
    fn = lambda t: (torch.sigmoid(t) * 2.0, torch.relu(t).sum(-1))  # noqa: E731
    _close(_compile(fn)(x), fn(x))
    assert any("codegen error TypeError: generator bug" in r for r in metrics.fallback_reasons)
    assert metrics.generated_kernels >= 1


def test_precompile_predicts_the_launched_specialization(monkeypatch):
    # every generated kernel starts compiling while Inductor generates code; the launch then
    # finds its specialization compiled (no second compile of any kernel)
    import threading

    from inductor_tile.kernel_compiler import compiler

    threads = []
    original = compiler.compile_specialized

    def counting(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(compiler, "compile_specialized", counting)
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    x = _rand(37, 53)
    fn = lambda t: (torch.softmax(t * 1.375, -1), torch.sigmoid(t) - 0.625)  # noqa: E731 (kernels new to this process)
    with config.patch(precompile=True):
        _close(_compile(fn)(x), fn(x))
    assert metrics.generated_kernels >= 1 and metrics.fallback_kernels == 0, metrics.fallback_reasons
    assert len(threads) == metrics.generated_kernels, threads
    assert all(name.startswith("tile-compile") for name in threads), threads


def test_single_element_loads_are_scalar_loads():
    # y[0], y[1]... read one element for the whole tile: an unmasked scalar load broadcast,
    # not a masked gather of one address (which the CPU target compiled for minutes at 1024 lanes)
    x, y = _rand(64, 300), _rand(5, seed=2)
    b = x > 0.3
    fn = lambda x, y, b: (torch.where(b, y[0], y[1]) * x + y[2], (x * y[3]).sum(-1))  # noqa: E731
    with config.patch(pointwise_block=1024):
        _close(_compile(fn)(x, y, b), fn(x, y, b))
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    sources = "\n".join(metrics.kernel_sources.values())
    assert "tl.load(in_ptr1 + 0)" in sources and "tl.broadcast_to(" in sources


@pytest.mark.parametrize("mix_order, expected", [("off", False), ("gpu", True), ("on", True)])
def test_inductor_reduction_pairings_follow_our_switch(mix_order, expected, monkeypatch):
    # Inductor pairs reductions itself on GPUs (mix-order, nested) and hands them to codegen
    # hooks only its Triton scheduling has; during our compiles (forward and backward) its mix-order
    # switch follows ours (our can_pair then decides), Python bools only, and is restored after
    import torch._inductor.compile_fx as compile_fx_module
    import torch._inductor.config as inductor_config

    from inductor_tile import config

    monkeypatch.setattr(config, "mix_order", mix_order)

    seen = []
    original = compile_fx_module.compile_fx_inner

    def recording(*args, **kwargs):
        seen.append(inductor_config.triton.mix_order_reduction)
        return original(*args, **kwargs)

    monkeypatch.setattr(compile_fx_module, "compile_fx_inner", recording)
    x = _rand(16, 24).requires_grad_()
    _compile(lambda t: torch.nn.functional.layer_norm(t, (24,)).sum())(x).backward()
    assert seen == [expected, expected]  # forward and backward graphs
    assert all(type(value) is bool for value in seen)
    assert inductor_config.triton.mix_order_reduction  # restored afterwards


def test_a_reduction_pairing_inductor_made_becomes_two_kernels(monkeypatch):
    from types import SimpleNamespace

    from inductor_tile import config
    from inductor_tile.scheduler.scheduling import TileScheduling

    monkeypatch.setattr(config, "mix_order", "off")  # Inductor's pair goes to its two groups as they are
    done = []
    monkeypatch.setattr(TileScheduling, "codegen_node", lambda self, node: done.append(node))
    monkeypatch.setattr(TileScheduling, "_codegen_nodes", lambda self, node: done.append(node))
    monkeypatch.setattr(TileScheduling, "free_buffers_in_scheduler", lambda self: done.append("free"))
    scheduling = TileScheduling.__new__(TileScheduling)
    scheduling.codegen_mix_order_reduction(SimpleNamespace(node1="rows", node2="columns"))
    scheduling.codegen_nested_reduction(SimpleNamespace(node1="outer", node2="inner"))
    # what the pair reads last is freed once both kernels ran (columns reads the rows' inputs too)
    assert done == ["rows", "columns", "free", "outer", "inner"]
