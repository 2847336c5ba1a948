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
