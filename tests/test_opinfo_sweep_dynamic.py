"""The OpInfo sweep with dynamic=True and backward on a few ops (issue 23): no failure.

The whole CI list of tests/test_opinfo_sweep.py ran this way on the CPU (76 correct, 0 fell
back, 0 failed: `python -m inductor_tile.tools.opinfo_sweep --ops ... --dynamic --backward`);
CI keeps a sample that covers reductions, softmax, normalization, scans and indexing.
"""

import pytest

pytest.importorskip("expecttest", reason="the OpInfo database needs expecttest (pip install expecttest)")

from inductor_tile.tools import opinfo_sweep  # noqa: E402

OPS = ["var", "softmax", "cumsum", "gather"]


def test_opinfo_sweep_dynamic_backward_has_no_failures():
    results = opinfo_sweep.sweep(OPS, "float32", max_samples=1, jobs=0, dynamic=True, backward=True)
    failed = [f"{r.op}: {'; '.join(r.reasons)}" for r in results if r.status == "failed"]
    assert not failed, "\n".join(failed)
    assert sum(r.status == "correct" for r in results) >= len(OPS) - 1, [(r.op, r.status, r.reasons) for r in results]
    assert opinfo_sweep.OPTIONS == {"dynamic": False, "backward": False}  # restored


# ops that fell back in the full sweep of session 12 (every op, --dynamic --backward): a precomputed
# size (`ps0`), a 0-d store, torch's Mod, TruncToInt of a float size expression
FELL_BACK = ["constant_pad_nd", "scalar_tensor", "fft.fftshift", "nn.functional.interpolate.nearest"]


def test_opinfo_ops_that_fell_back_are_ours_now():
    results = opinfo_sweep.sweep(FELL_BACK, "float32", max_samples=3, jobs=0, dynamic=True, backward=True)
    assert {r.op: r.status for r in results} == dict.fromkeys(FELL_BACK, "correct"), \
        [(r.op, r.status, r.reasons) for r in results]



def test_an_op_dynamo_cannot_trace_is_skipped_not_failed():
    """cov with dynamic=True fails in Dynamo (its C++ kernel asks a fake tensor for numel()) with
    backend="eager" too: no backend sees a graph, so the sweep skips those samples."""
    (result,) = opinfo_sweep.sweep(["cov"], "float32", max_samples=3, jobs=0, dynamic=True)
    assert result.status != "failed", result.reasons
    assert any("Dynamo fails (backend='eager' too)" in r for r in result.reasons), result.reasons


def test_a_graph_inductor_cannot_compile_either_is_tagged_upstream(monkeypatch):
    """narrow with a tensor start under dynamic=True: AOTAutograd asks a fake tensor for its value
    (Inductor's compile_fx raises the same), so the graph runs eagerly and the reason says so."""
    from inductor_tile import config

    monkeypatch.setattr(config, "eager_fallback", True)  # as outside the tests (conftest turns it off)
    (result,) = opinfo_sweep.sweep(["narrow"], "float32", max_samples=2, jobs=0, dynamic=True)
    assert result.status == "fell back", (result.status, result.reasons)
    eager = [r for r in result.reasons if r.startswith("ran eagerly")]
    assert eager and all(r.endswith("(backend='inductor' fails too)") for r in eager), result.reasons


def test_a_graph_only_we_run_eagerly_is_not_tagged_upstream(monkeypatch):
    import contextlib

    from inductor_tile import config
    from inductor_tile.scheduler import eager_parity

    monkeypatch.setattr(config, "eager_fallback", True)

    @contextlib.contextmanager
    def broken():
        raise RuntimeError("our lowering setup broke")
        yield  # noqa: unreachable - a generator for contextmanager

    monkeypatch.setattr(eager_parity, "eager_parity", broken)
    (result,) = opinfo_sweep.sweep(["tanh"], "float32", max_samples=1, jobs=0, dynamic=True)
    assert result.status == "fell back", (result.status, result.reasons)
    assert any("our lowering setup broke" in r for r in result.reasons), result.reasons
    assert not any("fails too" in r for r in result.reasons), result.reasons
