"""In-place outputs of generated CPU kernels (scheduler/inplace.py): an output takes over the memory
of an input that dies with the kernel, as Inductor's own kernels do.  The wrapper shows it (a reuse
line instead of an allocation, the launch passing one buffer for both pointers); the values are
compared with torch in float64."""

from __future__ import annotations

import re

import pytest
import torch
from torch._inductor.utils import run_and_get_code

from inductor_tile import metrics


pytestmark = pytest.mark.usefixtures("fresh_backend")


def _compiled(fn, *args):
    out, codes = run_and_get_code(torch.compile(fn, backend="tile"), *args)
    return out, codes[-1][codes[-1].index("def call"):]


def _tile_launches(code: str) -> list[list[str]]:
    """The buffer arguments of each tile kernel launch in the wrapper's `call`."""
    launches = re.findall(r"tile_\w+_launch\d+\.run\(\([^)]*\), ([^)]*)\)", code)
    return [[a.strip() for a in args.split(",") if a.strip().startswith(("buf", "arg"))] for args in launches]


def _reused(code: str) -> list[tuple[str, str]]:
    """(new name, old name) of each `bufN = bufM; del bufM  # reuse` line."""
    return re.findall(r"(buf\d+) = (buf\d+); del buf\d+  # reuse", code)


def _rand(*shape):
    return torch.randn(*shape) * 2 + 0.25


def test_relu_after_matmul_writes_into_the_matmul_output():
    x, w, w2 = _rand(64, 32), _rand(32, 128), _rand(128, 32)

    def fn(x, w, w2):
        return torch.mm(torch.mm(x, w).relu(), w2)

    out, code = _compiled(fn, x, w, w2)
    torch.testing.assert_close(out, fn(x.double(), w.double(), w2.double()).float(), rtol=1e-4, atol=1e-3)
    (launch,) = _tile_launches(code)
    assert len(launch) == 2 and launch[0] == launch[1], code  # one buffer read and written
    assert (launch[0], "buf0") in _reused(code), code


@pytest.mark.parametrize("columns", [100, 3000])  # one program per row block; several blocks per row
def test_epilogue_with_broadcast_operands_writes_into_the_matmul_output(columns):
    x, w, bias, scale = _rand(8, 16), _rand(16, columns) * 0.2, _rand(columns), _rand(8)

    def fn(x, w, bias, scale):
        return torch.sigmoid(torch.mm(x, w) + bias) * scale[:, None]

    out, code = _compiled(fn, x, w, bias, scale)
    torch.testing.assert_close(out, fn(x.double(), w.double(), bias.double(), scale.double()).float(),
                               rtol=1e-5, atol=1e-6)
    (launch,) = _tile_launches(code)
    assert launch[0] == launch[-1] and len(set(launch)) == len(launch) - 1, code
    assert (launch[0], "buf0") in _reused(code), code


def test_softmax_reads_its_input_at_two_indices_so_writes_a_new_buffer():
    """Inductor's rule (`decide_inplace_update`): the row reductions and the epilogue read the
    input with different index expressions, which it does not prove safe; we follow it."""
    x, w = _rand(8, 16), _rand(16, 100) * 0.2

    def fn(x, w):
        return torch.softmax(torch.mm(x, w), dim=-1)

    out, code = _compiled(fn, x, w)
    torch.testing.assert_close(out, fn(x.double(), w.double()).float(), rtol=1e-5, atol=1e-6)
    (launch,) = _tile_launches(code)
    assert len(set(launch)) == len(launch), code


def test_input_read_later_is_not_overwritten():
    x, w, w2 = _rand(64, 32), _rand(32, 128), _rand(128, 128)

    def fn(x, w, w2):
        h = torch.mm(x, w)
        return torch.mm(h.relu(), w2), h  # h outlives the relu kernel

    (out, h), code = _compiled(fn, x, w, w2)
    ref_out, ref_h = fn(x.double(), w.double(), w2.double())
    torch.testing.assert_close(h, ref_h.float(), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(out, ref_out.float(), rtol=1e-5, atol=1e-3)
    (launch,) = _tile_launches(code)
    assert len(set(launch)) == len(launch), code
    assert not _reused(code), code


def test_graph_input_is_not_overwritten():
    x = _rand(40, 30)
    kept = x.clone()

    def fn(x):
        return torch.sigmoid(x) * 2.0

    out, code = _compiled(fn, x)
    torch.testing.assert_close(out, fn(x.double()).float())
    torch.testing.assert_close(x, kept, rtol=0, atol=0)
    (launch,) = _tile_launches(code)
    assert len(set(launch)) == len(launch), code
