"""The GPU profile read from torch.profiler's Chrome trace (issue 22, item 3), without a GPU.

tests/data/profile_h100/ holds a trimmed real trace of DistilGPT2 on an H100 (see its README):
every device event must land in exactly one row, cuBLAS/cuDNN kernels and their memsets in the
row of the aten op that launched them, the rows must add up to the trace's device total, long
C++ kernel names must not widen the table, and no roofline may read above 100%.
"""

import gzip
import json
import os
import re

import pytest

from inductor_tile.profile import from_trace
from inductor_tile.profile.report import roofline_text, short_name
from inductor_tile.profile.rows import Row, gpu_rows
from inductor_tile.profile.session import LaunchStats
from inductor_tile.profile.trace import device_events, device_total_seconds, load

DATA = os.path.join(os.path.dirname(__file__), "data", "profile_h100")
TRACE = os.path.join(DATA, "trace.json.gz")
_KEY = re.compile(r"^(tile_\w+)_[0-9a-f]{24}$")  # a generated kernel's launch key: <name>_<source hash>


def _launches(trace) -> dict[str, LaunchStats]:
    """The session's launches, as the trace's tile launch ranges show them."""
    launches = {}
    for event in trace["traceEvents"]:
        match = _KEY.match(event.get("name", ""))
        if match and event.get("cat") == "user_annotation":
            stats = launches.setdefault(event["name"], LaunchStats(name=match[1]))
            stats.calls += 1
    return launches


@pytest.fixture(scope="module")
def trace():
    return load(TRACE)


@pytest.fixture(scope="module")
def rows(trace):
    return {(r.kind, r.name): r for r in gpu_rows(trace, _launches(trace), set())}


def test_every_device_event_is_in_one_row_and_the_rows_add_up_to_the_device_total(trace, rows):
    events = device_events(trace)
    assert len(events) > 90 and {e.category for e in events} == {"kernel", "gpu_memset", "gpu_memcpy"}
    total = device_total_seconds(trace)
    assert total == pytest.approx(sum(e.seconds for e in events))
    assert sum(r.seconds for r in rows.values()) == pytest.approx(total, rel=0.05)  # the done-criterion
    assert sum(r.seconds for r in rows.values()) == pytest.approx(total, rel=1e-9)  # in fact: each event once
    assert sum(calls for r in rows.values() for calls, _ in r.kernels.values()) == len(events)


def test_cublas_and_cudnn_kernels_are_in_the_row_of_their_aten_op(trace, rows):
    addmm = rows[("extern", "aten::addmm")]
    # the graph's 24 addmm calls (one under PythonDispatchMode, whose inner aten::addmm is not a call of its own)
    assert addmm.calls == 24
    assert {name.split("_bias")[0] for name in addmm.kernels} == {"nvjet_sm90_hsh_256x128_64x4_1x2_h_bz_coopA",
                                                                  "nvjet_sm90_hsh_192x192_64x3_2x1_v_bz_coopB",
                                                                  "Memset (Device)"}
    assert sum(calls for name, (calls, _) in addmm.kernels.items() if name.startswith("nvjet")) == 24
    assert set(rows[("extern", "aten::mm")].kernels) == {"nvjet_sm90_hsh_160x256_64x4_1x2_h_bz_coopA_TNN",
                                                         "Memset (Device)"}
    sdpa = rows[("extern", "aten::_scaled_dot_product_cudnn_attention")]
    assert sdpa.calls == 6 and sdpa.seconds > 1e-4  # launched by its inner aten::_cudnn_attention_forward
    assert any(name.startswith("cudnn_generated_fort_native_sdpa") for name in sdpa.kernels)
    # no device kernel of an extern op is a row of its own
    assert not [name for kind, name in rows if name.startswith(("nvjet", "cudnn", "Memset"))]


def test_tile_kernels_get_the_events_of_their_launch_ranges(trace, rows):
    launches = _launches(trace)
    tile = {r.key: r for r in gpu_rows(trace, launches, set()) if r.kind == "tile"}
    assert set(tile) == set(launches)
    for key, row in tile.items():
        assert list(row.kernels) == [launches[key].name] and row.calls == launches[key].calls
    # eager code outside the compiled graphs: rows named by their aten op, not by C++ template names
    assert rows[("other", "aten::normal_")].calls == 3 and rows[("other", "aten::uniform_")].calls == 1
    assert list(rows[("other", "aten::to")].kernels) == ["Memcpy HtoD (Pageable -> Device)"]


def test_long_names_are_cut_in_the_text_and_kept_in_json(tmp_path):
    profiler = from_trace(DATA)
    text = profiler.text()
    long_name = next(name for row in profiler.rows for name in row.kernels if len(name) > 500)
    assert long_name not in text and short_name(long_name) in text  # the details name what aten::normal_ ran
    table = text.split("\n\n")[0].splitlines()
    assert max(len(line) for line in table) < 400
    paths = profiler.save(str(tmp_path / "out"))
    saved = json.load(open(paths["json"]))
    assert any(long_name in row["device_events"] for row in saved["rows"])
    assert saved["kernel_seconds"] == pytest.approx(saved["device_total_seconds"], rel=0.05)


def test_from_trace_prints_both_totals_and_no_roofline_above_100_percent(tmp_path, capsys):
    from inductor_tile.profile.__main__ import main

    assert main(["--from-trace", DATA, "--out", str(tmp_path / "again"), "--limit", "100"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    shown = re.findall(r"kernel time ([\d.]+) ms; torch.profiler's device total ([\d.]+) ms", header)
    assert shown and float(shown[0][0]) == pytest.approx(float(shown[0][1]), rel=0.05)
    assert float(shown[0][1]) == pytest.approx(device_total_seconds(load(TRACE)) * 1e3, abs=0.01)
    rooflines = re.findall(r"(<=)?(~)?(\d+)%  ", out)
    assert rooflines and all(int(value) <= 100 for _, _, value in rooflines)
    # the run's bytes predate the byte model: upper bounds, said so; cross-entropy's whole-logits
    # count (1.6 GB a call for a gather of one logit per row) is no claim of 6x the copy bandwidth
    rows = {r.name: r for r in from_trace(DATA).rows}
    loss = rows["tile_red_clone_constant_pad_nd__to_copy_nll_loss_forward__log_softmax_slice_1"]
    assert loss.bytes_bound and loss.roofline > 1 and roofline_text(loss) == "<=100%"
    assert all(r.bytes_bound for r in rows.values() if r.kind == "tile")
    assert sorted(os.listdir(tmp_path / "again")) == ["chart.html", "profile.json", "profile.txt", "trace.json"]
    with gzip.open(TRACE, "rt") as f, open(tmp_path / "again" / "trace.json") as g:
        assert json.load(f) == json.load(g)
    # the source lines come from the run's profile.json
    assert [str(line) for line in rows["aten::mm"].info.lines] == ["modeling_gpt2.py:697"]


def test_roofline_is_never_shown_above_100_percent():
    def row(roofline, bound):
        r = Row("k", "tile", 1, 1.0, bytes=1, bytes_bound=bound)
        r.roofline = roofline
        return r

    assert roofline_text(row(0.5, False)) == "50%"
    assert roofline_text(row(1.04, False)) == "~100%"  # faster than a copy: its inputs were in L2
    assert roofline_text(row(0.3, True)) == "<=30%"
    assert roofline_text(row(6.5, True)) == "<=100%"
    assert roofline_text(row(None, False)) == "-"


def _synthetic_trace():
    """A graph call with a tile launch, an Inductor triton kernel and an aten op; eager code after."""
    events = []

    def host(cat, name, ts, dur, correlation=None):
        args = {"correlation": correlation} if correlation is not None else {}
        events.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args})

    def device(cat, name, ts, dur, correlation):
        events.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                       "args": {"correlation": correlation}})

    host("cpu_op", "## Call CompiledFxGraph abc ##", 0, 100)
    host("user_annotation", "tile_poi_add_0_" + "a" * 24, 1, 9)
    host("cuda_driver", "cuLaunchKernel", 2, 5, correlation=1)
    host("user_annotation", "tile_poi_add_0_" + "b" * 24, 11, 9)  # another kernel of the same name
    host("cuda_driver", "cuLaunchKernel", 12, 5, correlation=2)
    host("cuda_driver", "cuLaunchKernel", 21, 5, correlation=3)  # Inductor's kernel (a fallback)
    host("cpu_op", "aten::bmm", 30, 20)
    host("cuda_runtime", "cudaMemsetAsync", 31, 2, correlation=4)
    host("cuda_driver", "cuLaunchKernelEx", 35, 5, correlation=5)
    host("cpu_op", "aten::fill_", 200, 10)  # eager, outside the graph
    host("cuda_runtime", "cudaLaunchKernel", 201, 5, correlation=6)
    device("kernel", "tile_poi_add_0", 1000, 10, 1)
    device("kernel", "tile_poi_add_0", 1010, 30, 2)
    device("kernel", "triton_poi_fused_sin_0", 1040, 5, 3)
    device("gpu_memset", "Memset (Device)", 1045, 1, 4)
    device("kernel", "sm90_gemm", 1050, 100, 5)
    device("kernel", "void at::native::vectorized_elementwise_kernel<4, FillFunctor<float>>(int)", 1200, 2, 6)
    device("kernel", "tile_poi_add_0", 1300, 50, 99)  # its launch is not in the trace
    device("gpu_user_annotation", "tile_poi_add_0_" + "a" * 24, 1000, 10, 1)  # a range's GPU span: no event
    return {"traceEvents": events}


def test_synthetic_trace_attribution(monkeypatch):
    from inductor_tile.profile import registry

    monkeypatch.setattr(registry, "kernels", {})  # no kernel of this name was generated in this process
    trace = _synthetic_trace()
    launches = {"tile_poi_add_0_" + c * 24: LaunchStats(name="tile_poi_add_0", calls=1) for c in "ab"}
    rows = {(r.kind, r.name): r for r in gpu_rows(trace, launches, set())}
    assert rows[("tile", "tile_poi_add_0#aaaaaa")].seconds == pytest.approx(10e-6)
    assert rows[("tile", "tile_poi_add_0#bbbbbb")].seconds == pytest.approx(30e-6)
    assert rows[("fallback", "triton_poi_fused_sin_0")].seconds == pytest.approx(5e-6)
    bmm = rows[("extern", "aten::bmm")]
    assert bmm.calls == 1 and bmm.seconds == pytest.approx(101e-6) and set(bmm.kernels) == {"sm90_gemm",
                                                                                            "Memset (Device)"}
    assert rows[("other", "aten::fill_")].seconds == pytest.approx(2e-6)
    # an event whose launch is not in the trace keeps its own name (two tile kernels share it: no guess)
    assert rows[("other", "tile_poi_add_0")].seconds == pytest.approx(50e-6)
    assert sum(r.seconds for r in rows.values()) == pytest.approx(device_total_seconds(trace)) == pytest.approx(198e-6)
