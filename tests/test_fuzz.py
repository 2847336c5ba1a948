"""The graph fuzzer (inductor_tile.tools.fuzz): a fixed CI budget, replayable seeds, and the
regression cases of the bugs it found (issue 23).

The CI run compiles as many seeded graphs as fit in FUZZ_BUDGET seconds (forward, backward,
static/dynamic/mark_dynamic sizes, some with every node handed to Inductor's scheduling) and
fails on any mismatch with eager; the failing seed is printed with its replay command.
Longer runs: ``python -m inductor_tile.tools.fuzz --count 2000`` (``--device cuda`` on a GPU).
"""

import io
import os

import pytest

from inductor_tile.tools import fuzz

FUZZ_BUDGET = float(os.environ.get("TILE_FUZZ_BUDGET", "60"))
CI_FIRST_SEED = 100_000  # a range of its own, away from the developer runs' seeds 0..N


def test_fuzz_budget():
    out = io.StringIO()
    results = fuzz.fuzz(range(CI_FIRST_SEED, CI_FIRST_SEED + 1000), time_budget=FUZZ_BUDGET, out=out)
    assert all(r.ok for r in results), out.getvalue()
    assert results, out.getvalue()


def test_seeds_replay_the_same_graph():
    a, b = fuzz.generate(1234), fuzz.generate(1234)
    assert a.source == b.source and a.sizes == b.sizes and a.mode == b.mode
    assert fuzz.generate(1235).source != a.source
    # every generated graph is valid Python that eager runs at every size it will be called with
    for seed in range(40):
        case = fuzz.generate(seed)
        fn = fuzz._function(case)
        for call, sizes in enumerate(case.sizes):
            outs = fn(*fuzz.make_inputs(case, sizes, "cpu", call))
            assert outs and all(o.dtype.is_floating_point for o in outs), case.describe()


def test_a_failure_prints_its_seed_and_replay_command(monkeypatch):
    def failing(case, device="cpu"):
        return fuzz.Result(case.seed, False, "call 0 sizes {}: forward: planted mismatch")

    monkeypatch.setattr(fuzz, "run_case", failing)
    out = io.StringIO()
    (result,) = fuzz.fuzz([7], out=out)
    text = out.getvalue()
    assert not result.ok
    assert "python -m inductor_tile.tools.fuzz --seed 7" in text and "planted mismatch" in text
    assert fuzz.generate(7).source in text and "1 failed (seeds 7)" in text


def test_the_refusal_check_sees_the_marked_inputs():
    """A mark_dynamic case's inputs for the eager/Inductor refusal check carry the same mark as ours
    (unmarked inputs made Dynamo's own ConstraintViolationError look like our failure on torch 2.11)."""
    case = next(c for c in (fuzz.generate(seed, "cpu") for seed in range(200)) if c.mode == "mark_dynamic")
    inputs = fuzz._inputs(case, case.sizes[0], "cpu", 0, requires_grad=False, mark=True)
    marked = [(i, d) for i, (t, inp) in enumerate(zip(inputs, case.inputs)) for d, token in enumerate(inp.sig)
              if token == ("base", case.marked)]
    assert marked, case.describe()
    for i, d in marked:
        assert d in getattr(inputs[i], "_dynamo_dynamic_indices", set()), (i, d)
    unmarked = fuzz._inputs(case, case.sizes[0], "cpu", 0, requires_grad=False, mark=False)
    assert all(not getattr(t, "_dynamo_dynamic_indices", set()) for t in unmarked)


def test_handover_keeps_cpu_scans_ours():
    """Seed 40217 (a cumsum on the CPU, every node handed over): Inductor's C++ code has no scans, so
    the handover leaves Scan nodes with us instead of crashing in CppScheduling."""
    case = fuzz.generate(40217)
    assert case.handover and "cumsum" in case.source
    result = fuzz.run_case(case)
    assert result.ok, result.error
