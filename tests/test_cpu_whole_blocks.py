"""CPU kernels over a static size that is a multiple of the block get all-true masks (codegen/kernel.py,
`_mask_line`): plain vector loads and stores instead of masked ones (a masked store to a page not yet
written takes a microcode assist on x86). Other sizes keep their bounds; values match torch in float64."""

from __future__ import annotations

import pytest
import torch

from inductor_tile import metrics

WHOLE = "tl.full([XBLOCK], True, tl.int1)"


pytestmark = pytest.mark.usefixtures("fresh_backend")


def _sources() -> str:
    return "\n".join(metrics.kernel_sources.values())


@pytest.mark.parametrize("n, whole", [(8192, True), (8192 + 3, False), (100, False)])
def test_pointwise_mask_is_all_true_only_over_whole_blocks(n, whole):
    x = torch.randn(n) * 3

    def fn(x):
        return torch.sigmoid(x) * x + 1.0

    out = torch.compile(fn, backend="tile")(x)
    torch.testing.assert_close(out, fn(x.double()).float(), rtol=1e-6, atol=1e-6)
    source = _sources()
    assert (WHOLE in source) == whole, source
    assert ("xmask = xindex < xnumel" in source) == (not whole), source


@pytest.mark.parametrize("rows, cols", [(64, 64), (64, 50), (6, 4096)])  # whole rows; a partial block; a loop
def test_row_reductions_over_whole_and_partial_blocks(rows, cols):
    x = torch.randn(rows, cols) * 2 + 0.5
    w = torch.randn(cols)

    def fn(x, w):
        return torch.nn.functional.layer_norm(x, (cols,), w) + torch.softmax(x, -1)

    out = torch.compile(fn, backend="tile")(x, w)
    torch.testing.assert_close(out, fn(x.double(), w.double()).float(), rtol=1e-5, atol=1e-5)
    source = _sources()
    if cols == 50:
        assert "rmask = rindex < rnumel" in source, source
    else:
        assert "rmask = tl.full([1, RBLOCK], True, tl.int1)" in source, source
