"""The conformance tool on a small test directory written here (not Triton's tests): the import
shim resolves `triton` to inductor_tile, outcomes are classified per test function, and a test
that kills its process is reported as failed while the others still run."""

from __future__ import annotations

import textwrap
from pathlib import Path

from inductor_tile.tools.triton_conformance import report, run

TESTS = '''
import os
import pytest
import torch
import triton
import triton.language as tl
from triton._internal_testing import numpy_random, to_numpy, to_triton


@triton.jit
def double(X, Z, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(Z + offs, tl.cumsum(tl.load(X + offs) * 2, 0))


@pytest.mark.parametrize("n", [16, 64])
def test_passes(n, device):
    x = numpy_random(n, dtype_str="float32")
    z = to_triton(x, device=device)
    double[(1,)](to_triton(x, device=device), z, N=n, num_ctas=1)
    assert abs(to_numpy(z) - (x * 2).cumsum()).max() < 1e-4


def test_fails(device):
    assert tl.float8e4nv is not None
    tl.some_missing_name(1)


def test_skips(device):
    pytest.skip("not here")


def test_dot_family(device):
    tl.dot(1, 2)


def test_crashes(device):
    os.abort()


@pytest.mark.parametrize("fmt", ["float8e5", "int8"])
def test_number_formats(fmt, device):
    assert fmt != "float8e5", "fails for the fp8 parametrization only"


def test_helper_process_imports_the_shim(device):
    import subprocess
    import sys

    code = "import triton; print(triton.__version__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and "inductor_tile" in done.stdout, done.stderr
'''

CUDA_ONLY = '''
import torch

DEVICE = torch.cuda.current_device()  # at import: the module cannot be collected without CUDA


def test_never_collected():
    pass
'''


def test_tool_classifies_and_survives_crashes(tmp_path: Path, capsys):
    (tmp_path / "test_small.py").write_text(textwrap.dedent(TESTS))
    (tmp_path / "test_cuda_only.py").write_text(textwrap.dedent(CUDA_ONLY))
    results = run(tmp_path, ["test_small.py", "test_cuda_only.py"], "cpu", per_function=0, keyword=None)
    by_name = {name.rsplit("::", 1)[-1]: r for name, r in results.items()}
    assert by_name["test_passes"].passed == 2 and by_name["test_passes"].failed == 0
    assert by_name["test_fails"].failed == 1 and "some_missing_name" in by_name["test_fails"].first_error
    assert by_name["test_skips"].not_applicable == 1
    assert by_name["test_dot_family"].not_applicable == 1 and by_name["test_dot_family"].failed == 0
    assert by_name["test_crashes"].failed == 1 and "died" in by_name["test_crashes"].first_error
    formats = by_name["test_number_formats"]  # the fp8 parametrization is n.a., the int8 one passes
    assert (formats.passed, formats.failed, formats.not_applicable) == (1, 0, 1)
    assert by_name["test_helper_process_imports_the_shim"].passed == 1  # subprocesses get the shim too
    assert by_name["<collection>"].not_applicable == 1 and "CUDA" in "".join(by_name["<collection>"].reasons)
    report(results, 1.0)
    out = capsys.readouterr().out
    assert "4 passed, 2 failed, 4 not applicable" in out


def test_tests_that_refuse_cpu_tensors_are_not_applicable():
    from inductor_tile.tools.triton_conformance import _family_reason

    assert "CPU tensors" in _family_reason("test_core.py::test_pointer_arguments")
    assert _family_reason("test_core.py::test_pointer_arguments_extra") is None


def test_inline_asm_tests_apply_on_nvidia_only():
    from inductor_tile.tools.triton_conformance import _family_reason

    assert "PTX" in _family_reason("test_core.py::test_inline_asm", "cpu")
    assert _family_reason("test_core.py::test_inline_asm_packed", "cuda") is None
    assert "assembly" in _family_reason("test_core.py::test_asm_text", "cuda")  # other asm stays out
