"""The profiler that points at the model (issue 22, item 3), on the CPU.

A small model script (layernorm, linear + gelu, residual) is written to tmp_path, compiled with
backend="tile" and profiled: the table must name the script's file and the line of each fused op,
the CLI form must work in a subprocess, and the output directory must hold the trace and chart.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import inductor_tile
from inductor_tile.profile import Profiler, registry
from inductor_tile.profile.report import diagnose
from inductor_tile.profile.rows import Row

MODEL = textwrap.dedent('''
    import sys

    import torch
    import torch.nn.functional as F


    class Block(torch.nn.Module):
        def __init__(self, d):
            super().__init__()
            self.ln = torch.nn.LayerNorm(d)
            self.fc = torch.nn.Linear(d, d)

        def forward(self, x):
            h = self.ln(x)  # LINE:ln
            h = F.gelu(self.fc(h))  # LINE:gelu
            return x + h  # LINE:residual


    def run(steps):
        torch.manual_seed(0)
        model = Block(96).double()
        compiled = torch.compile(model, backend="tile")
        x = torch.randn(40, 96, dtype=torch.float64)
        with torch.no_grad():
            for _ in range(steps):
                out = compiled(x)
            ref = model(x)
        return out, ref


    if __name__ == "__main__":
        run(int(sys.argv[1]))
        print("script ran")
''')


def _line(marker: str) -> int:
    return next(i for i, text in enumerate(MODEL.splitlines(), 1) if text.endswith(f"# LINE:{marker}"))


@pytest.fixture
def model_script(tmp_path):
    path = tmp_path / "tiny_model.py"
    path.write_text(MODEL)
    return path


def _load(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("tiny_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_profile_names_the_script_lines_of_each_fused_op(model_script, tmp_path):
    from inductor_tile.kernel_compiler.runtime.jit import JITFunction
    from inductor_tile.kernel_compiler.runtime.launch_site import LaunchSite

    torch._dynamo.reset()
    run_before, site_call_before = JITFunction.run, LaunchSite.__call__
    module = _load(model_script)
    with inductor_tile.profile(out_dir=str(tmp_path / "out")) as p:
        out, ref = module.run(steps=3)
    # launches outside a session are not wrapped
    assert JITFunction.run is run_before and LaunchSite.__call__ is site_call_before
    torch.testing.assert_close(out, ref, rtol=1e-9, atol=1e-9)  # profiling changes no result

    text = p.text()
    for marker in ("ln", "gelu", "residual"):
        assert f"tiny_model.py:{_line(marker)}" in text, marker
    assert "h = self.ln(x)" in text  # the tree shows the source text of the line
    tile_rows = [r for r in p.rows if r.kind == "tile"]
    assert len(tile_rows) >= 2
    for row in tile_rows:
        # the first launch compiles and is not timed; the next two (the wrapper's fast path) are
        assert row.calls == 2 and row.seconds > 0
        assert row.bytes >= 2 * 40 * 96 * 8  # each reads at least x (40x96 doubles)
        assert row.roofline is not None and row.roofline > 0
        assert row.info is not None and row.info.nodes
    ln = next(r for r in tile_rows if any(line.line == _line("ln") for line in r.info.lines))
    assert "var_mean" in ln.info.nodes  # the FX nodes it fused
    assert not ln.bytes_bound  # it reads x twice (statistics, then normalize): x once, exactly
    assert ln.bytes == ln.calls * (2 * 40 * 96 * 8 + 2 * 96 * 8)  # x in, h out, weight and bias
    extern = next(r for r in p.rows if r.kind == "extern")
    assert extern.name == "aten::addmm" and [line.line for line in extern.info.lines] == [_line("gelu")]
    # the per-line tree adds up to the table's total
    from inductor_tile.profile.report import by_line

    assert sum(n.seconds for n in by_line(p.rows)) == pytest.approx(sum(r.seconds for r in p.rows))
    assert p.device_total is None and "device total" not in text.splitlines()[0]  # the CPU has no device events
    assert any(e.get("name", "").startswith("tile_") for e in p.session.trace()["traceEvents"])
    files = sorted(os.listdir(tmp_path / "out"))
    assert files == ["chart.html", "profile.json", "profile.txt", "trace.json"]
    packed = p.save(str(tmp_path / "packed"), gzip_trace=True)["trace"]
    import gzip

    with gzip.open(packed) as f:
        assert {r.key for r in tile_rows} <= {event.get("name") for event in json.load(f)["traceEvents"]}


def test_cli_runs_the_script_and_writes_trace_and_chart(model_script, tmp_path):
    out = tmp_path / "prof"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), *sys.path]))
    result = subprocess.run([sys.executable, "-m", "inductor_tile.profile", "--out", str(out), str(model_script), "3"],
                            capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "script ran" in result.stdout  # ran as __main__ with its arguments
    for marker in ("ln", "gelu", "residual"):
        assert f"tiny_model.py:{_line(marker)}" in result.stdout, marker
    trace = json.loads((out / "trace.json").read_text())
    names = {event.get("name") for event in trace["traceEvents"]}
    rows = json.loads((out / "profile.json").read_text())["rows"]
    tile = [r["name"] for r in rows if r["kind"] == "tile"]
    assert tile and {r["key"] for r in rows if r["kind"] == "tile"} <= names  # launches are marked in the trace
    chart = (out / "chart.html").read_text()
    assert "<svg" in chart and all(name in chart for name in tile)
    assert f"tiny_model.py:{_line('ln')}" in chart


def test_the_module_is_the_callable():
    import inductor_tile.profile as module

    assert inductor_tile.profile is module and callable(module)
    assert isinstance(inductor_tile.profile(), Profiler)


def test_a_fallback_is_a_row_with_its_reason_and_line(monkeypatch):
    from inductor_tile.codegen.common import Unsupported
    from inductor_tile.scheduler.scheduling import TileScheduling

    def refuse(self, nodes):
        raise Unsupported("refused by the test")

    monkeypatch.setattr(TileScheduling, "_codegen_group", refuse)
    torch._dynamo.reset()

    def fn(x):
        return torch.sin(x) * 2  # LINE:fallback

    line = fn.__code__.co_firstlineno + 1
    x = torch.randn(64, dtype=torch.float64)
    with inductor_tile.profile() as p:
        compiled = torch.compile(fn, backend="tile")
        for _ in range(2):
            out = compiled(x)
    torch.testing.assert_close(out, torch.sin(x) * 2)
    row = next(r for r in p.rows if r.kind == "fallback")
    assert row.name.startswith("cpp_fused") and row.calls == 2
    assert row.info is not None and "refused by the test" in row.info.reasons
    assert [(os.path.basename(s.file), s.line) for s in row.info.lines] == [("test_profile.py", line)]
    assert "refused by the test" in p.text()
    from inductor_tile.profile.outputs import _rows_json

    (fallback,) = _rows_json(p)["fallbacks"]
    assert fallback["reasons"] == ["refused by the test"] and fallback["source_lines"][0].endswith(f":{line}")


def test_user_line_skips_torch_frames():
    torch_file = os.path.join(os.path.dirname(torch.__file__), "nn", "modules", "linear.py")
    trace = (f'  File "/home/u/model.py", line 7, in forward\n    y = self.fc(x)\n'
             f'  File "{torch_file}", line 125, in forward\n    return F.linear(x)\n')
    line = registry.user_line(trace)
    assert (line.file, line.line) == ("/home/u/model.py", 7) and str(line) == "model.py:7"
    assert registry.user_line(None) is None


def test_kernel_time_divides_among_sites_and_lines():
    a, b = registry.SourceLine("/m.py", 1), registry.SourceLine("/m.py", 2)
    info = registry.KernelInfo("k", "tile", [registry.Site(["x", "y", "z"], [a, b], {a: 2, b: 1}),
                                             registry.Site(["w"], [b], {b: 1})])
    shares = info.line_shares()
    assert shares[a] == pytest.approx(1 / 3) and shares[b] == pytest.approx(2 / 3)


def test_diagnosis_names_the_findings_of_slow_kernels_only():
    slow = Row("slow", "tile", 10, 9e-3, bytes=10 * (4 << 20), findings=["load not vectorized (kernel line 7)"])
    fast = Row("fast", "tile", 10, 1e-4, bytes=10 * (4 << 20), findings=["store not vectorized"])
    clean = Row("clean", "tile", 10, 2e-3, bytes=10 * (4 << 20))
    rows = [slow, clean, fast]
    diagnose(rows, copy_bandwidth=100e9)
    assert slow.roofline == pytest.approx(10 * (4 << 20) / 9e-3 / 100e9)
    assert slow.diagnosis == "load not vectorized (kernel line 7)"
    assert "no compiler finding" in clean.diagnosis
    assert fast.diagnosis == ""  # not among the kernels taking 90% of the time


@inductor_tile.jit
def _scale_kernel(x_ptr, out_ptr, n, BLOCK: inductor_tile.language.constexpr):
    offsets = inductor_tile.language.program_id(0) * BLOCK + inductor_tile.language.arange(0, BLOCK)
    mask = offsets < n
    x = inductor_tile.language.load(x_ptr + offsets, mask=mask)
    inductor_tile.language.store(out_ptr + offsets, x * 3.0, mask=mask)


def test_a_hand_written_kernel_gets_a_row_with_its_performance_findings():
    from types import SimpleNamespace

    x = torch.randn(1000, dtype=torch.float64)
    out = torch.full_like(x, float("nan"))
    with inductor_tile.profile() as p:
        for _ in range(3):
            _scale_kernel[(8,)](x, out, x.numel(), BLOCK=128)
    torch.testing.assert_close(out, x * 3.0)
    for compiled in _scale_kernel.cache.values():  # as issue 22.1's performance warnings leave them
        compiled.perf_findings = [SimpleNamespace(reason="load not vectorized: offsets not provably contiguous",
                                                  line=4),
                                  SimpleNamespace(reason="register spills", line=0, file="k.py"),
                                  SimpleNamespace(reason="store not coalesced", line=9, file="/x/k.py")]
    row = next(r for r in p.rows if r.name == "_scale_kernel")
    assert row.kind == "tile" and row.calls == 2 and row.bytes == 2 * 2 * 1000 * 8
    assert row.findings == ["load not vectorized: offsets not provably contiguous (kernel line 4)",
                            "register spills", "store not coalesced (k.py:9)"]
    assert "offsets not provably contiguous" in row.diagnosis and "launch-bound" in row.diagnosis
    # a hand-written kernel's source line is its definition
    assert [(os.path.basename(s.file), s.line) for s in row.info.lines] == [
        ("test_profile.py", _scale_kernel.first_line)]
    assert "_scale_kernel" in p.text()


def test_byte_model_counts_gathered_rows_and_broadcast_inputs_once():
    # issue 22.3: a gather reads the rows it looks up, not the table; a broadcast input is read once
    torch._dynamo.reset()
    rows_, cols, vocab, batch = 32, 64, 5000, 48
    table = torch.randn(vocab, cols, dtype=torch.float64)
    idx = torch.randint(0, vocab, (rows_,))
    w = torch.randn(cols, dtype=torch.float64)
    x = torch.randn(batch, cols, dtype=torch.float64)

    def fn(idx, table, w, x):
        return table[idx] * w, x + w

    with inductor_tile.profile() as p:
        compiled = torch.compile(fn, backend="tile")
        for _ in range(3):
            gathered, added = compiled(idx, table, w, x)
    torch.testing.assert_close(gathered, table[idx] * w)
    torch.testing.assert_close(added, x + w)
    gather = next(r for r in p.rows if r.kind == "tile" and "index" in r.info.nodes)
    plain = next(r for r in p.rows if r.kind == "tile" and "add" in r.info.nodes)
    assert gather is not plain
    # gathered rows + indices + w once + the output; not the 5000-row table (an upper bound: "<=")
    assert gather.bytes == gather.calls * (rows_ * cols * 8 + rows_ * 8 + cols * 8 + rows_ * cols * 8)
    assert gather.bytes_bound and vocab * cols * 8 > 10 * gather.bytes // gather.calls
    assert plain.bytes == plain.calls * (2 * batch * cols * 8 + cols * 8) and not plain.bytes_bound
    from inductor_tile.profile.report import roofline_text

    assert roofline_text(gather).startswith("<=") and not roofline_text(plain).startswith("<=")


def test_training_profiles_backward_kernels_and_leaves_nothing_behind():
    torch._dynamo.reset()

    def fn(x):
        return (torch.sin(x) * 2).sum()  # LINE:train

    line = fn.__code__.co_firstlineno + 1
    x = torch.randn(64, dtype=torch.float64, requires_grad=True)
    compiled = torch.compile(fn, backend="tile")
    with inductor_tile.profile() as p:
        for _ in range(3):
            x.grad = None
            compiled(x).backward()  # the backward graph compiles lazily, inside the session
    torch.testing.assert_close(x.grad, 2 * torch.cos(x.detach()))
    cos_rows = [r for r in p.rows if r.kind == "tile" and "cos" in r.name]  # the backward graph's kernel
    assert cos_rows and all(line in [s.line for s in r.info.lines] for r in cos_rows)
    # the session's pauses while compiling leave no profiler callback behind: a later profile
    # records each op once
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as later:
        torch.ones(3).add_(1)
    assert [e.name for e in later.events()].count("aten::add_") == 1


def test_kernel_key_is_the_generated_module_name():
    # the registry's key of a generated kernel must be what launches see (codegen.runtime's module name)
    from inductor_tile.codegen import runtime
    from inductor_tile.profile.session import launch_key

    source = ("import inductor_tile\nimport inductor_tile.language as tl\n\n\n@inductor_tile.jit\n"
              "def tile_poi_probe_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n"
              "    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)\n"
              "    tl.store(out_ptr0 + xindex, tl.load(in_ptr0 + xindex, mask=xindex < xnumel), mask=xindex < xnumel)\n")
    fn = runtime.load_kernel("tile_poi_probe_0", source)
    assert launch_key(fn) == registry.kernel_key("tile_poi_probe_0", source)
