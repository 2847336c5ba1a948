"""The OpInfo sweep over a fixed list of ops: none may fail (wrong result or crash).

The list covers what the codegen generates: elementwise unary and binary math, integer
division, comparisons and logical ops, where/clamp, casts, reductions (sum, mean, max,
argmax, var, logsumexp), softmax and log_softmax, norms and indexing ops.  Fallbacks to
Inductor's kernels are allowed (they are correct); the test also checks that most ops do
generate tile kernels, so a codegen that refused everything would not pass.
"""

import pytest

# torch.testing._internal (op_db) imports expecttest: `pip install expecttest` (it belongs in the test extra)
pytest.importorskip("expecttest", reason="the OpInfo database needs expecttest (pip install expecttest)")

from inductor_tile.tools import opinfo_sweep  # noqa: E402

OPS = [
    # unary math
    "abs", "neg", "exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "erf", "atan",
    "sign", "round", "trunc", "floor", "nn.functional.gelu", "nn.functional.silu", "nn.functional.relu",
    # binary
    "add", "sub", "mul", "div", "pow", "remainder", "fmod", "atan2", "maximum", "minimum", "floor_divide",
    "eq", "lt", "logical_and", "bitwise_xor",
    # selection and casts
    "where", "clamp", "clamp_min", "nn.functional.hardtanh", "masked_fill", "tril", "float", "int", "bool", "half",
    # reductions and normalizations
    "sum", "mean", "amax", "argmax", "argmin", "any", "prod", "var", "std", "logsumexp", "softmax", "log_softmax",
    "nn.functional.layer_norm", "nn.functional.rms_norm", "nn.functional.group_norm",
    # indexing
    "gather", "index_select", "take_along_dim", "nn.functional.embedding", "__getitem__", "index_put", "index_copy",
    "scatter",
]
SAMPLES = 3


def test_opinfo_sweep_has_no_failures():
    results = opinfo_sweep.sweep(OPS, "float32", max_samples=SAMPLES, jobs=0)
    failed = [f"{r.op}: {'; '.join(r.reasons)}" for r in results if r.status == "failed"]
    assert not failed, "\n".join(failed)
    total = opinfo_sweep.counts(results)
    assert total["correct"] >= len(results) * 2 // 3, total


def test_sweep_classifies_fallbacks_and_skips(monkeypatch):
    from inductor_tile.codegen.common import Unsupported
    from inductor_tile.codegen.ops import TileOps

    def refuse(self, x):
        raise Unsupported("op tanh")

    monkeypatch.setattr(TileOps, "tanh", refuse)
    results = {r.op: r for r in opinfo_sweep.sweep(["tanh", "bernoulli"], "float32", max_samples=1, jobs=0)}
    assert results["tanh"].status == "fell back" and "op tanh" in results["tanh"].reasons
    assert results["bernoulli"].status == "skipped"


def test_report_and_csv(tmp_path, capsys):
    rows = [opinfo_sweep.OpResult("a", "correct", 1, 1), opinfo_sweep.OpResult("b", "fell back", 1, 1, 1, ["op x"]),
            opinfo_sweep.OpResult("c", "failed", 1, reasons=["sample 0: crash: boom"])]
    opinfo_sweep.report(rows)
    text = capsys.readouterr().out
    assert "fell back" in text and "op x" in text and "crash: boom" in text
    opinfo_sweep.write_csv(rows, str(tmp_path / "out.csv"))
    lines = (tmp_path / "out.csv").read_text().splitlines()
    assert lines[0].startswith("op,status") and len(lines) == 4


def test_start_and_limit_select_a_slice_of_op_db():
    from torch.testing._internal.common_methods_invocations import op_db

    names = [opinfo_sweep.op_name(o) for o in op_db]
    picked = [opinfo_sweep.op_name(o) for o in opinfo_sweep.select_ops(start=217, limit=3)]
    assert picked == names[217:220]
    assert [opinfo_sweep.op_name(o) for o in opinfo_sweep.select_ops(["abs", "neg", "exp"], start=1)] == \
        [n for n in names if n in ("abs", "neg", "exp")][1:]
    with pytest.raises(SystemExit, match="--start"):
        opinfo_sweep.select_ops(start=-1)


def test_main_resumes_at_start(capsys, monkeypatch):
    seen = {}

    def fake_sweep(names, *args, start=0, **kwargs):
        seen["ops"] = [opinfo_sweep.op_name(o) for o in opinfo_sweep.select_ops(names, args[3], start)]
        return [opinfo_sweep.OpResult(seen["ops"][0], "correct", 1, 1)]

    monkeypatch.setattr(opinfo_sweep, "sweep", fake_sweep)
    assert opinfo_sweep.main(["--ops", "abs,neg,exp,log", "--start", "2", "--limit", "1"]) == 0
    in_order = [opinfo_sweep.op_name(o) for o in opinfo_sweep.select_ops(["abs", "neg", "exp", "log"])]
    assert seen["ops"] == in_order[2:3]
    assert "1 ops in" in capsys.readouterr().out
