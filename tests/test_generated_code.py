"""Generated launch code (runtime/generated_code.py): a source is compiled once a process, and each copy
still names its own kernel in tracebacks."""

import random
import traceback

import pytest

from inductor_tile.kernel_compiler.runtime import generated_code

SOURCE = """
def launch(x):
    return _scale * x + _fail(x)
"""


def _fails(x):
    raise ValueError("bad argument")


def test_a_source_compiles_once_and_each_copy_keeps_its_scope(monkeypatch):
    compiled = []
    real_compile = compile
    monkeypatch.setattr(generated_code, "compile", lambda *a: compiled.append(a[1]) or real_compile(*a), raising=False)
    source = SOURCE + f"# {random.random()}\n"  # new to this process
    scales = [random.uniform(1, 2) for _ in range(3)]
    launches = [generated_code.run_generated(source, f"<launch k{i}>", {"_scale": s, "_fail": lambda x: 0})["launch"]
                for i, s in enumerate(scales)]
    assert compiled == ["<launch k0>"]
    x = random.uniform(-5, 5)
    assert [f(x) for f in launches] == [s * x for s in scales]


def test_a_copy_names_its_own_file_in_tracebacks():
    source = SOURCE + f"# {random.random()}\n"
    for name in ("<launch first 0x1>", "<launch second 0x2>"):
        launch = generated_code.run_generated(source, name, {"_scale": 1.0, "_fail": _fails})["launch"]
        with pytest.raises(ValueError) as info:
            launch(3.0)
        frames = traceback.extract_tb(info.value.__traceback__)
        ours = [f for f in frames if f.filename == name]
        assert ours and ours[0].line == "return _scale * x + _fail(x)"
