"""model_benchmarks/compile_times.py: fresh-process start-up table (the children are faked here:
a real model run takes minutes; the lead runs it on the GPU machine)."""

import sys
from pathlib import Path

from model_benchmarks import compile_times


def test_child_result_is_read_from_its_output_with_the_caches_it_was_given(tmp_path):
    script = ("import json, os; print('noise'); print('COMPILE_TIMES ' + json.dumps({'first_call_s': 1.5, "
              "'process_s': 4.0, 'dir': os.environ['TILE_CACHE_DIR'], 'ind': os.environ['TORCHINDUCTOR_CACHE_DIR']}))")
    row = compile_times.run_child([sys.executable, "-c", script], tmp_path, timeout=60)
    assert row["first_call_s"] == 1.5 and row["dir"] == str(tmp_path / "tile")
    assert row["ind"] == str(tmp_path / "inductor")
    failed = compile_times.run_child([sys.executable, "-c", "raise SystemExit('model did not build')"], tmp_path, 60)
    assert failed == {"error": "model did not build"}


def test_table_rows():
    tile_cold = {"first_call_s": 20.04, "process_s": 25.0, "kernels_compiled": 40, "graph_cache_hits": 0}
    tile_warm = {"first_call_s": 3.2, "process_s": 8.1, "kernels_compiled": 0, "graph_cache_hits": 2}
    inductor = {"first_call_s": 9.0, "process_s": 12.0, "fx_graph_hits": 1}
    text = compile_times.table([("GPT2", "tile", tile_cold, tile_warm), ("GPT2", "inductor", inductor, inductor),
                                ("T5Small", "tile", {"error": "timeout after 10s"}, {})])
    lines = text.splitlines()
    assert lines[2] == "| GPT2 | tile | 20.0 | 3.2 | 25.0 | 8.1 | 40/0 | 2 |"
    assert lines[3] == "| GPT2 | inductor | 9.0 | 9.0 | 12.0 | 12.0 | - | 1 |"
    assert "error: timeout after 10s" in lines[4] and lines[4].count("|") == lines[0].count("|")


def test_child_command_carries_the_settings():
    args = compile_times.parse_args(["--small", "--device", "cpu", "--mode", "train"])
    cmd = compile_times.child_command(args, "T5Small", "tile")
    assert cmd[1:3] == ["-m", "model_benchmarks.compile_times"] and "--small" in cmd
    assert cmd[cmd.index("--precision") + 1] == "float32" and cmd[cmd.index("--mode") + 1] == "train"
    assert Path(compile_times.__file__).name == "compile_times.py"


def test_phase_table_rows():
    warm = {"first_call_s": 3.0, "first_call_cpu_s": 2.5, "import_s": 0.06, "inductor_import_s": 1.1, "trace_s": 1.25,
            "backend_s": 1.4, "torch_key_s": 0.0, "graph_load_s": 0.3, "lowering_s": 0, "codegen_s": 0, "guards_s": 0.18,
            "run_s": 0.5, "gc_s": 0.21, "gc_full": 1, "gc_full_s": 0.12, "kernel_load_s": 0.13, "kernel_compile_s": 0.0, "tuning_lookup_s": 0.02,
            "tunings": 0, "workers": 0}
    cold = dict(warm, lowering_s=0.8, codegen_s=1.43, kernel_compile_s=6.04, workers=8, torch_key_s=0.45)
    inductor = {"first_call_s": 9.0, "inductor_import_s": 1.2, "trace_s": 1.0, "backend_s": 7.0, "lowering_s": 0.5,
                "codegen_s": 1.0, "guards_s": 0.2, "run_s": 0.1}
    text = compile_times.phase_table([("GPT2", "tile", cold, warm), ("GPT2", "inductor", inductor, {"error": "x"}),
                                      ("T5", "tile", {"error": "timeout"}, {"error": "timeout"})])
    lines = text.splitlines()
    assert len(lines) == 5  # header, rule, tile cold and warm, inductor cold (its warm run failed)
    assert lines[2] == ("| GPT2 | tile | cold | 2.50 | 0.06 | 1.10 | 1.25 | 1.40 | 0.45 | 0.30 | 0.80 | 1.43 | 0.18 | 0.50 | "
                        "0.21 | 1 | 0.12 | 0.13 | 6.04 | 0.02 | 0 | 8 |")
    assert lines[3].startswith("| GPT2 | tile | warm | 2.50 | 0.06 | 1.10 | 1.25 | 1.40 | 0.00 |")
    assert lines[3].endswith("| 0.13 | 0.00 | 0.02 | 0 | 0 |")
    assert lines[4] == ("| GPT2 | inductor | cold | - | - | 1.20 | 1.00 | 7.00 | - | - | 0.50 | 1.00 | 0.20 | 0.10 | - | - | "
                        "- | - | - | - | - | - |")


def test_warm_runs_are_summarized_by_their_medians():
    rows = [{"first_call_s": 3.0, "tunings": 0, "workers": 1, "note": "a"},
            {"first_call_s": 9.0, "tunings": 0, "workers": 3, "note": "b"},
            {"first_call_s": 4.0, "tunings": 0, "workers": 2, "note": "c"}]
    merged = compile_times.median_row(rows)
    assert merged == {"first_call_s": 4.0, "tunings": 0, "workers": 2, "note": "a", "runs": 3}
    assert compile_times.median_row(rows[:1] + [{"error": "timeout"}]) == {"error": "timeout"}
    assert compile_times.parse_args(["--runs", "3"]).runs == 3 and compile_times.parse_args([]).runs == 1


def test_phases_of_a_first_call_come_from_dynamo_timers(monkeypatch):
    from torch._dynamo import utils

    timers = {"bytecode_tracing": [0.5], "OutputGraph.call_user_compiler": [2.0, 1.0],
              "_compile.compile_inner": [3.5, 0.25], "build_guards": [0.1]}
    monkeypatch.setattr(utils, "compilation_time_metrics", timers)
    row = compile_times.phases(4.0)
    assert row["trace_s"] == 0.5 and row["backend_s"] == 3.0 and row["guards_s"] == 0.1
    assert row["lowering_s"] == 0 and row["run_s"] == 0.25


def test_gc_timer_counts_collections_until_stopped():
    import gc

    timer = compile_times.GCTimer()
    for _ in range(3):
        gc.collect()
    timer.stop()
    counted = timer.seconds
    assert counted > 0 and timer._callback not in gc.callbacks
    gc.collect()  # after stop: not counted
    assert timer.seconds == counted


def test_profiles_go_to_one_file_per_run_and_are_summarized(tmp_path):
    import cProfile

    args = compile_times.parse_args(["--small", "--device", "cpu", "--profile", str(tmp_path)])
    assert compile_times.profile_path(compile_times.parse_args([]), "GPT2", "tile", "warm") is None
    path = compile_times.profile_path(args, "GPT2", "tile", "warm")
    assert path == tmp_path / "GPT2.tile.warm.prof"
    from inductor_tile.kernel_compiler.runtime import disk_cache

    profiler = cProfile.Profile()
    profiler.enable()
    disk_cache.kernel_key.__doc__.split()  # something of ours, and something that is not
    disk_cache.default_cache_dir()
    profiler.disable()
    profiler.dump_stats(str(path))
    summary = compile_times.profile_summary(path)
    assert "disk_cache.py" in summary and "default_cache_dir" in summary


def test_runs_are_primed_interleaved_and_alternated(monkeypatch, capsys):
    """One untimed priming process, then cold and warm runs with the backends interleaved and their order
    alternating; each backend keeps its own caches across its runs."""
    calls = []

    def fake_child(cmd, root, timeout):
        backend = cmd[cmd.index("--backend") + 1]
        calls.append(("prime" if "--prime" in cmd else backend, cmd[cmd.index("--model") + 1], root))
        return {"first_call_s": float(len(calls)), "process_s": 1.0, "run_s": 0.5}

    monkeypatch.setattr(compile_times, "run_child", fake_child)
    assert compile_times.main(["--device", "cpu", "--models", "GPT2ForSequenceClassification,BertForMaskedLM",
                               "--backends", "tile,inductor", "--runs", "2"]) == 0
    order = [(who, model[:4]) for who, model, _ in calls]
    assert order == [("prime", "GPT2"),
                     ("tile", "GPT2"), ("inductor", "GPT2"), ("inductor", "GPT2"), ("tile", "GPT2"),
                     ("tile", "GPT2"), ("inductor", "GPT2"),
                     ("inductor", "Bert"), ("tile", "Bert"), ("tile", "Bert"), ("inductor", "Bert"),
                     ("inductor", "Bert"), ("tile", "Bert")]
    roots = {}
    for who, model, root in calls[1:]:
        roots.setdefault((who, model), set()).add(root)
    assert all(len(r) == 1 for r in roots.values()) and len(set().union(*roots.values())) == 4
    out = capsys.readouterr().out
    assert "| GPT2ForSequenceClassification | tile |" in out and "| BertForMaskedLM | inductor |" in out


def test_gc_timer_counts_full_collections_apart_and_says_where_they_began():
    import gc

    namespace = {"gc": gc}  # a function of the package's, as far as its file name tells
    exec(compile("def allocating_here():\n    gc.collect(2)\n", "/x/inductor_tile/codegen/fake.py", "exec"), namespace)
    allocating_here = namespace["allocating_here"]
    timer = compile_times.GCTimer()
    gc.collect(0)
    allocating_here()
    timer.stop()
    assert timer.full == 1 and 0 < timer.full_seconds <= timer.seconds
    (site,) = timer.full_at
    assert site.endswith("inductor_tile/codegen/fake.py:2 allocating_here") and "+" in site  # "<start>s +<duration>s <where>"


def test_allocation_site_names_the_innermost_frame_of_a_package_and_ours_further_out():
    def call_in(path: str, inner):
        namespace = {"inner": inner}
        exec(compile("def f():\n    return inner()\n", path, "exec"), namespace)
        return namespace["f"]()

    def site():
        return compile_times.allocation_site()  # what GCTimer's callback calls: skips its caller's frame

    outer = "/x/site-packages/torch/_dynamo/convert.py"
    inner = "/x/site-packages/torch/fx/graph.py"
    assert call_in(outer, lambda: call_in(inner, site)) == "torch/fx/graph.py:2 f"
    ours = "/work/inductor_tile/backend.py"
    assert call_in(ours, lambda: call_in(outer, site)) == ("torch/_dynamo/convert.py:2 f "
                                                            "(under inductor_tile/backend.py:2 f)")
    assert call_in(ours, site) == "inductor_tile/backend.py:2 f"
    assert call_in("/x/nowhere/else.py", site) == "?"


def test_warm_runs_keep_every_runs_full_collections():
    rows = [{"gc_full": 1, "gc_full_at": ["0.50s +0.25s torch/_dynamo/a.py:1 f"]}, {"gc_full": 0, "gc_full_at": []},
            {"gc_full": 2, "gc_full_at": ["0.40s +0.20s x", "1.00s +0.30s y"]}]
    merged = compile_times.median_row(rows)
    assert merged["gc_full"] == 1
    assert merged["gc_full_at"] == ["run 1: 0.50s +0.25s torch/_dynamo/a.py:1 f", "run 3: 0.40s +0.20s x",
                                    "run 3: 1.00s +0.30s y"]
    text = compile_times.full_collections([("GPT2", "tile", {"gc_full_at": ["0.1s +0.2s z"], "gc_tracked_k": 512.3},
                                            merged)])
    assert text.splitlines()[0] == "GPT2 tile cold: 0.1s +0.2s z" and len(text.splitlines()) == 5
    assert text.splitlines()[-1] == "objects tracked after the first call: GPT2 tile cold 512k"
