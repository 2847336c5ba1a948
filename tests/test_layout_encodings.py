"""The layout encodings that hold one plain layout (`layouts.LayoutEncodingAttr`: blocked, nvidia_mma, dot_op,
amd_mfma, amd_wmma): text round trip, equality and hashing by the held layout, refusal of a layout of the wrong
class; and the matrix-core layouts' blocked views, against the register descriptions written out here."""

from __future__ import annotations

import random

import pytest
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from inductor_tile.kernel_compiler.ir.context import make_context
from inductor_tile.kernel_compiler.ir.dot_layouts import DotOperand, NvidiaMma
from inductor_tile.kernel_compiler.ir.layouts import (AmdMfma, AmdWmma, Blocked, BlockedEncodingAttr, LayoutData,
                                                      LayoutEncodingAttr, encoding_of, layout_of_encoding)


def _random_pair(rng: random.Random) -> tuple[int, int]:
    return rng.choice((1, 2, 4, 8)), rng.choice((1, 2, 4, 8))


def _random_blocked(rng: random.Random) -> Blocked:
    return Blocked(_random_pair(rng), _random_pair(rng), _random_pair(rng), rng.choice(((1, 0), (0, 1))))


def _layouts(rng: random.Random) -> list:
    """Two different layouts of every class an encoding holds."""
    w = rng.choice((2, 4, 8))
    return [_random_blocked(rng), _random_blocked(rng), NvidiaMma((w, 1)), NvidiaMma((1, w), 3),
            AmdMfma(32, (1, w)), AmdMfma(16, (w, 1)), AmdWmma((1, w)), AmdWmma((1, 1)),
            DotOperand(0, AmdMfma(16, (1, w))), DotOperand(1, NvidiaMma((w, 1))), DotOperand(0, _random_blocked(rng))]


@pytest.mark.parametrize("seed", range(4))
def test_encodings_round_trip_and_compare_by_layout(seed):
    layouts = list(dict.fromkeys(_layouts(random.Random(seed))))
    encodings = [encoding_of(layout) for layout in layouts]
    assert all(isinstance(e, LayoutEncodingAttr) for e in encodings)
    for layout, encoding in zip(layouts, encodings):
        text = str(encoding)
        parsed = Parser(make_context(), text).parse_attribute()
        assert parsed == encoding and hash(parsed) == hash(encoding) and str(parsed) == text
        assert layout_of_encoding(parsed) == layout
    for i, a in enumerate(encodings):  # different layouts: different attributes
        assert [b for b in encodings[i + 1:] if b == a] == []


def test_an_encoding_refuses_a_layout_of_another_class():
    with pytest.raises(VerifyException, match=r"#ttg.blocked must hold a Blocked layout, not AmdWmma"):
        BlockedEncodingAttr(LayoutData(AmdWmma((1, 4))))


def _blocked(spt, tpw, wpc, order) -> Blocked:
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc), tuple(order))


@pytest.mark.parametrize("w", [1, 2, 4])
def test_matrix_core_layouts_as_blocked(w):
    """Result, a and b of each instruction family (see the classes' docstrings), warps along N and along M."""
    for wm, wn in ((1, w), (w, 1)):
        mma = NvidiaMma((wm, wn))
        assert mma.to_blocked() == _blocked((1, 2), (8, 4), (wm, wn), (1, 0))
        assert DotOperand(0, mma).to_blocked() == _blocked((1, 2), (8, 4), (wm, 1), (1, 0))
        assert DotOperand(1, mma).to_blocked() == _blocked((2, 1), (4, 8), (1, wn), (0, 1))
        for size in (32, 16):
            mfma = AmdMfma(size, (wm, wn))
            assert mfma.to_blocked() == _blocked((4, 1), (64 // size, size), (wm, wn), (1, 0))
            assert DotOperand(0, mfma).to_blocked() == _blocked((1, 4), (size, 64 // size), (wm, 1), (0, 1))
            assert DotOperand(1, mfma).to_blocked() == _blocked((4, 1), (64 // size, size), (1, wn), (1, 0))
    wmma = AmdWmma((1, w))
    assert wmma.to_blocked() == _blocked((1, 1), (2, 16), (1, w), (1, 0))
    assert DotOperand(0, wmma).to_blocked() == _blocked((1, 8), (16, 2), (1, 1), (0, 1))
    assert DotOperand(1, wmma).to_blocked() == _blocked((8, 1), (2, 16), (1, w), (1, 0))
