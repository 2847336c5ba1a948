"""tests/test_models.py's models on a CUDA GPU in float32 and float16, and CUDA graphs.

Each model runs forward + backward three ways: eager in float64 (the reference), eager in the
low precision, and ``backend="tile"`` in the low precision.  As PyTorch's benchmark harness
does, the compiled error against the float64 reference may be at most a small multiple of
eager's own rounding error (plus a floor), for the output and for every gradient.
"""

import copy

import pytest
import torch
from test_models import (
    MLP,
    SEQ,
    VOCAB,
    Attention,
    EmbeddingClassifier,
    LogitsOf,
    NormBlock,
    _hf_model,
    long_chain,
)

from inductor_tile import metrics
from inductor_tile.backend import tile_backend

pytestmark = pytest.mark.gpu

ERROR_MULTIPLIER = 3.0
ERROR_FLOOR = {torch.float32: 1e-5, torch.float16: 2e-3}


def _rms(t: torch.Tensor) -> float:
    return t.double().square().mean().sqrt().item()


def _run(module, inputs, loss_fn, compiled: bool):
    module.zero_grad(set_to_none=True)
    run = torch.compile(module, backend=tile_backend) if compiled else module
    out = run(*inputs)
    loss_fn(out).backward()
    grads = [p.grad for p in module.parameters() if p.grad is not None]
    grads += [t.grad for t in inputs if t.grad is not None]
    return [out.detach()] + [g.detach().clone() for g in grads]


def _check_on_gpu(module, make_inputs, dtype, loss_fn=lambda out: out.float().square().mean()):
    """``make_inputs(dtype)`` gives fresh CUDA inputs (leaf tensors where gradients are wanted)."""
    torch._dynamo.reset()
    metrics.reset()
    module = module.cuda()
    ref = _run(copy.deepcopy(module).double(), make_inputs(torch.float64), loss_fn, compiled=False)
    low = module.to(dtype)
    eager = _run(low, make_inputs(dtype), loss_fn, compiled=False)
    tile = _run(low, make_inputs(dtype), loss_fn, compiled=True)
    assert len(tile) == len(eager) == len(ref) > 1
    for i, (t, e, r) in enumerate(zip(tile, eager, ref)):
        assert t.device.type == "cuda" and t.dtype == e.dtype and t.shape == r.shape
        assert torch.isfinite(t).all(), f"tensor {i}: non-finite values"
        tile_error, eager_error = _rms(t.double() - r), _rms(e.double() - r)
        bound = ERROR_MULTIPLIER * eager_error + ERROR_FLOOR[dtype] * max(_rms(r), 1e-3)
        what = "output" if i == 0 else f"gradient {i}"
        assert tile_error <= bound, f"{what}: rms error {tile_error:.3g} > {bound:.3g} (eager {eager_error:.3g})"
    assert metrics.generated_kernels >= 2, "forward and backward should each generate tile kernels"


def _randn(*shape, seed, dtype, requires_grad=True):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, generator=g, device="cuda", dtype=torch.float64).to(dtype).requires_grad_(requires_grad)


DTYPES = [torch.float32, torch.float16]


#: one-input blocks: (module class, input shape, input seed)
BLOCKS = {"mlp": (MLP, (5, 7, 48), 1), "norm_gelu_silu": (NormBlock, (3, 9, 64), 2),
          "causal_attention": (Attention, (2, 12, 32), 3)}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("block", list(BLOCKS))
def test_block_gpu(block, dtype):
    module_class, shape, seed = BLOCKS[block]
    torch.manual_seed(0)
    _check_on_gpu(module_class(), lambda d: (_randn(*shape, seed=seed, dtype=d),), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_embedding_cross_entropy_gpu(dtype):
    torch.manual_seed(0)
    g = torch.Generator(device="cuda").manual_seed(4)
    ids = torch.randint(0, 50, (6, 9), generator=g, device="cuda")
    labels = torch.randint(0, 11, (6,), generator=g, device="cuda")
    _check_on_gpu(EmbeddingClassifier(), lambda d: (ids, labels), dtype, loss_fn=lambda loss: loss.float())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_long_pointwise_chain_with_reductions_gpu(dtype):
    class Chain(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(45))

        def forward(self, x, y):
            return long_chain(x * self.scale, y)

    _check_on_gpu(Chain(), lambda d: (_randn(19, 45, seed=6, dtype=d), _randn(19, 45, seed=7, dtype=d)), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("family", ["gpt2", "bert", "t5", "llama"])
def test_tiny_huggingface_model_gpu(family, dtype):
    torch.manual_seed(0)
    model = LogitsOf(_hf_model(family), encoder_decoder=family == "t5")
    g = torch.Generator(device="cuda").manual_seed(8)
    ids = torch.randint(1, VOCAB, (2, SEQ), generator=g, device="cuda")
    _check_on_gpu(model, lambda d: (ids,), dtype)


# --- CUDA graphs ---------------------------------------------------------------------------------


def _block(x, w):
    h = torch.nn.functional.layer_norm(x, x.shape[-1:]) * w
    return torch.nn.functional.gelu(h) + h.softmax(-1)


def _fresh_inputs(step: int):
    g = torch.Generator(device="cuda").manual_seed(100 + step)
    return (torch.randn(64, 300, device="cuda", generator=g), torch.randn(300, device="cuda", generator=g))


def test_reduce_overhead_uses_cuda_graphs():
    from torch._dynamo.utils import counters
    from torch._inductor.cudagraph_trees import get_container

    torch._dynamo.reset()
    metrics.reset()
    counters.clear()
    run = torch.compile(_block, backend=tile_backend, mode="reduce-overhead")
    for step in range(4):  # warm-up, record, then replays: new values every step
        x, w = _fresh_inputs(step)
        out = run(x, w).clone()
        torch.testing.assert_close(out.double(), _block(x.double(), w.double()), rtol=1e-4, atol=1e-4)
    assert metrics.generated_kernels >= 1
    assert counters["inductor"]["cudagraph_skips"] == 0
    assert get_container(torch.cuda.current_device()).tree_manager is not None


def test_generated_kernels_captured_in_a_cuda_graph():
    torch._dynamo.reset()
    metrics.reset()
    run = torch.compile(_block, backend=tile_backend)
    x, w = _fresh_inputs(0)
    run(x, w)  # compile and load outside the capture
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        run(x, w)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = run(x, w)
    for step in (1, 2):
        new_x, new_w = _fresh_inputs(step)
        x.copy_(new_x)
        w.copy_(new_w)
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        torch.testing.assert_close(out.double(), _block(new_x.double(), new_w.double()), rtol=1e-4, atol=1e-4)
