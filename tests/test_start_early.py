"""Cold start: compile workers start before a graph is lowered (so their start-up overlaps with
Inductor's lowering and our codegen) and import the compiler before their first task."""

import torch

from inductor_tile import config
from inductor_tile.codegen import compile_worker, compile_workers


def test_pool_starts_before_the_first_kernel_is_generated(monkeypatch):
    events = []
    monkeypatch.setattr(compile_workers, "pool", lambda workers: events.append(("pool", workers)))
    from inductor_tile.scheduler import scheduling

    original = scheduling.TileScheduling._codegen_group
    monkeypatch.setattr(scheduling.TileScheduling, "_codegen_group",
                        lambda self, nodes: (events.append(("codegen",)), original(self, nodes))[1])
    torch._dynamo.reset()
    x = torch.randn(37, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    with config.patch(compile_workers=2, precompile=True, graph_cache=False):
        out = torch.compile(lambda t: torch.sigmoid(t) * 3.0, backend="tile")(x)
    torch.testing.assert_close(out, torch.sigmoid(x) * 3.0)
    assert events and events[0] == ("pool", 2) and ("codegen",) in events
    torch._dynamo.reset()


def test_no_pool_without_workers(monkeypatch):
    calls = []
    monkeypatch.setattr(compile_workers, "pool", lambda workers: calls.append(workers))
    with config.patch(compile_workers=0):
        compile_workers.start_early()
    with config.patch(compile_workers=2, precompile=False):
        compile_workers.start_early()
    assert calls == []


def test_worker_warm_up_loads_the_compiler():
    import sys

    compile_worker.warm_up()
    for module in ("inductor_tile.kernel_compiler.compiler", "inductor_tile.kernel_compiler.to_llvm.lowering",
                   "inductor_tile.kernel_compiler.passes.pipeline"):
        assert module in sys.modules
