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
import torch

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


def test_an_error_inductor_raises_too_is_counted_apart():
    """Seed 301178 (found on the H200): a strided slice's backward under dynamic shapes fails Inductor's
    stride assertion at the third call, under backend="inductor" as under ours; it is counted as
    Inductor's, not as a failure. The same error raised by ours alone stays a failure."""
    result = fuzz.run_case(fuzz.generate(301178, "cpu"), "cpu")
    assert result.ok and result.upstream, result.error
    case = fuzz.generate(301178, "cpu")
    assert not fuzz._inductor_fails_too(case, fuzz._function(case), "cpu", 1, AssertionError("expected size"))
    assert "1 failing under backend='inductor' too" in fuzz.summary_line([result], "cpu", 1.0)


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


def _rounded_through(low):
    def graph(x):
        y = x.to(low).to(x.dtype)
        return y.sum(0), torch.sin(y) * 2.0 - y

    return graph


@pytest.mark.parametrize("low", [torch.float16, torch.bfloat16])
def test_a_round_trip_read_by_our_kernel_and_a_fallback_rounds_in_both(monkeypatch, low):
    """Seed 40250 (a gradient rounded through fp16, read by our scan kernel and by a handed-over
    pointwise kernel): Inductor's C++ code reused the fp32 value for the upcast of its fp16 cast,
    ours rounded, and the two disagreed by an fp16 rounding.  Here the column sums are ours and
    the pointwise node goes to the C++ fallback; both must read the rounded value (fp64 reference)."""
    from inductor_tile import metrics
    from inductor_tile.backend import tile_backend
    from inductor_tile.codegen.common import Unsupported
    from inductor_tile.scheduler import fallback
    from inductor_tile.scheduler.scheduling import TileScheduling

    original = TileScheduling._codegen_group

    def pointwise_handed_over(self, nodes):
        if all(fallback.reduction_type(n) is None for n in nodes):
            raise Unsupported("pointwise handed over by the test")
        return original(self, nodes)

    monkeypatch.setattr(TileScheduling, "_codegen_group", pointwise_handed_over)
    g = torch.Generator().manual_seed(40250)
    x = torch.randn(37, 45, generator=g, dtype=torch.float64).to(torch.float32)
    graph = _rounded_through(low)
    torch._dynamo.reset()
    metrics.reset()
    out = torch.compile(graph, backend=tile_backend)(x)
    ref = graph(x.double())  # the same rounding of the same values, then float64 math
    for o, r in zip(out, ref):
        assert o.dtype == torch.float32
        torch.testing.assert_close(o.double(), r, rtol=1e-6, atol=1e-5)
    assert metrics.fallback_kernels >= 1 and metrics.generated_kernels >= 1, metrics.fallback_reasons


def test_the_handover_compiles_afresh(monkeypatch):
    """A handed-over graph is never served from (or stored in) the graph cache, whose key does not
    know the handover: a cached graph of our kernels would make the case test nothing."""
    from inductor_tile import config, graph_cache

    monkeypatch.setattr(config, "graph_cache", True)  # as in a developer's fuzz run (tests turn it off)
    assert graph_cache.enabled()
    with fuzz._forced_handover():
        assert not graph_cache.enabled()
    assert graph_cache.enabled()


def _past_midpoints(low, n: int, seed: int):
    """float64 values within half a float32 ulp of a `low` rounding midpoint (either side), then
    random ones and specials: where a direct rounding and one through float32 differ."""
    g = torch.Generator().manual_seed(seed)
    a = (torch.randn(n, generator=g, dtype=torch.float64) * 8).to(low)
    b = torch.nextafter(a, torch.full_like(a, float("inf")))
    mid = (a.double() + b.double()) / 2
    mid32 = mid.float()
    ulp32 = (torch.nextafter(mid32, torch.full_like(mid32, float("inf"))) - mid32).double()
    side = torch.randint(0, 2, (n,), generator=g) * 2 - 1
    x = mid + side * torch.rand(n, generator=g, dtype=torch.float64) * 0.45 * ulp32
    nearest = torch.where((x - a.double()).abs() < (x - b.double()).abs(), a, b)
    specials = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1e-30, 7e4, -7e4, 3.3e38],
                            dtype=torch.float64)
    return torch.cat([x, torch.randn(n, generator=g, dtype=torch.float64), specials]), nearest


@pytest.mark.parametrize("low", [torch.float16, torch.bfloat16])
def test_float64_rounds_to_half_through_float32_as_eager(low):
    """Seed 40730 (a float64 gradient rounded through fp16): eager builds a Half/BFloat16 from a
    float, so float64 -> float16 rounds to float32 first; a value just past a midpoint rounds
    twice, to the even neighbour.  Our kernels rounded once (to the nearest), one element in
    ~20000 apart.  The kernel writes into a NaN-poisoned buffer; results equal eager bit for bit."""
    from inductor_tile import metrics
    from inductor_tile.backend import tile_backend

    def cast_into(x, out):
        out.copy_(x.to(low) * 2)  # x * 2 in `low` is exact: the rounding is the cast's

    x, nearest = _past_midpoints(low, 500, seed=40730)
    ref = torch.empty_like(x, dtype=low)
    cast_into(x, ref)
    assert (ref[: len(nearest)] != nearest * 2).sum() > 50  # the inputs tell the two roundings apart
    torch._dynamo.reset()
    metrics.reset()
    out = torch.full_like(x, float("nan"), dtype=low)
    torch.compile(cast_into, backend=tile_backend)(x, out)
    assert metrics.generated_kernels >= 1 and metrics.fallback_kernels == 0, metrics.fallback_reasons
    torch.testing.assert_close(out, ref, rtol=0, atol=0, equal_nan=True)


def test_an_element_off_eager_but_on_float64_is_no_failure():
    """Seed 40772 (``cos`` then a cast to int): eager's float32 cos(2.67e-4) is 1.0, not the nearest
    float32 1 - 2**-24, and ``8 * cos`` casts to 8 where float64 (and our kernel) casts to 7.  The
    tolerance model accepts an element close to eager's or to the float64 evaluation of the graph;
    an element close to neither still fails."""
    case = fuzz.generate(40772)
    assert case.dtype == "float32" and "torch.int64" in case.source
    sizes = case.sizes[2]
    fn = fuzz._function(case)
    ref = fuzz._results(fn, case, sizes, "cpu", 2)
    case64 = fuzz.Case(**{**case.__dict__, "source": case.source.replace("torch.float32", "torch.float64")})
    ref64 = fuzz._results(fuzz._function(case64), case, sizes, "cpu", 2, upcast=True)
    assert ref64[0][0].dtype == torch.float64
    as_float64 = ((ref64[0][0].to(torch.float32),), None)
    with pytest.raises(AssertionError):  # float64 and eager differ here: the case tells them apart
        fuzz._compare_results(as_float64, ref, case)
    assert fuzz._float64_agrees(case, sizes, "cpu", 2, as_float64, ref)
    off_both = ref[0][0].clone()
    agree = (ref[0][0].double() == ref64[0][0]).nonzero()[0]
    off_both[tuple(agree)] += 1.0
    assert not fuzz._float64_agrees(case, sizes, "cpu", 2, ((off_both,), None), ref)
    float64_case = fuzz.Case(**{**case.__dict__, "dtype": "float64"})  # no higher precision to ask
    assert not fuzz._float64_agrees(float64_case, sizes, "cpu", 2, as_float64, ref)


def test_summary_lines_and_the_final_table(monkeypatch):
    """A long run prints a summary line every N graphs and a table per mode/direction/dtype at the end."""
    def run(case, device="cpu"):
        return fuzz.Result(case.seed, case.seed != 3, "" if case.seed != 3 else "planted", fallbacks=case.seed % 2,
                           generated=2, seconds=1.0)

    monkeypatch.setattr(fuzz, "run_case", run)
    out = io.StringIO()
    results = fuzz.fuzz(range(6), out=out, summary_every=2)
    text = out.getvalue()
    lines = [line for line in text.splitlines() if line.startswith("fuzz: ")]
    assert [line.split(" graphs")[0] for line in lines] == ["fuzz: 2", "fuzz: 4", "fuzz: 6"], text
    assert "1 failed (seeds 3)" in lines[-1] and "3 with fallbacks" in lines[-1]
    total = next(line for line in text.splitlines() if line.startswith("total")).split()
    assert total[1:8] == ["6", "1", "3", "0", "0", "0", "12"], text
    for r in results:
        case = fuzz.generate(r.seed)
        assert (r.mode, r.backward, r.dtype) == (case.mode, case.backward, case.dtype)
    modes = {f"{r.mode} {'forward+backward' if r.backward else 'forward'}" for r in results}
    assert all(any(line.startswith(m + " ") for line in text.splitlines()) for m in modes), text


def test_the_handover_share_changes_only_the_handover(monkeypatch):
    """``--handover 1.0`` hands every graph over (a run that tests the fallbacks); the graphs are the
    same, and a failure's replay command carries the share."""
    for seed in range(20):
        plain = fuzz.generate(seed)
        all_over, none = fuzz.generate(seed, handover=1.0), fuzz.generate(seed, handover=0.0)
        assert all_over.handover and not none.handover
        assert plain.source == all_over.source == none.source and plain.sizes == all_over.sizes
    monkeypatch.setattr(fuzz, "run_case", lambda case, device="cpu": fuzz.Result(case.seed, False, "planted"))
    out = io.StringIO()
    fuzz.fuzz([5], out=out, handover=1.0)
    assert "python -m inductor_tile.tools.fuzz --seed 5 --handover 1.0" in out.getvalue()
    assert "handover True" in out.getvalue()


def test_fallback_reasons_are_counted_apart_from_the_forced_handovers(monkeypatch):
    """The summary line counts graphs with fallbacks of their own, not the graphs handed over on
    purpose; the final list gives each reason (node names stripped) with its count and seeds."""
    def run(case, device="cpu"):
        reasons = ["op with no rule"] * (case.seed % 2) + (["fuzz: every node handed over"] if case.seed == 4 else [])
        return fuzz.Result(case.seed, True, fallbacks=len(reasons), generated=1, seconds=1.0, reasons=reasons)

    def generate(seed, device="cpu", handover=None):
        case = real_generate(seed, device, handover)
        return fuzz.Case(**{**case.__dict__, "handover": seed == 4})

    real_generate = fuzz.generate
    monkeypatch.setattr(fuzz, "run_case", run)
    monkeypatch.setattr(fuzz, "generate", generate)
    out = io.StringIO()
    fuzz.fuzz(range(6), out=out, summary_every=6)
    text = out.getvalue()
    summary = next(line for line in text.splitlines() if line.startswith("fuzz: "))
    assert "3 with fallbacks, 1 handed over on purpose" in summary, text
    handed_over = next(line for line in text.splitlines() if line.startswith("every node handed over")).split()
    assert handed_over[4:7] == ["1", "0", "0"], text  # graphs, failed, fallbacks of their own
    assert "     3  op with no rule  [seeds 1 3 5]" in text, text
    assert "every node handed over  [" not in text, text


def test_reasons_lose_their_node_names(monkeypatch):
    from inductor_tile import metrics

    monkeypatch.setattr(metrics, "fallback_reasons", ["buf12: index expression Foo: x", "op3: op bar"])
    assert fuzz._reasons() == ["index expression Foo: x", "op bar"]
