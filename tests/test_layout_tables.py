"""Layout attributes and tensor types with a layout are made once per layout (ir/layouts.encoding_of,
ir/ttg.with_layout): the same values as made fresh (blocked and slice layouts), also when a table is full
and when a layout cannot be hashed."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType, f16, f32

from inductor_tile.kernel_compiler.ir import layouts, ttg
from inductor_tile.kernel_compiler.ir.layouts import Blocked, Slice

BLOCKED = Blocked((1, 4), (4, 8), (4, 1), (1, 0))
BLOCKED_3D = Blocked((1, 1, 4), (1, 4, 8), (1, 4, 1), (2, 1, 0))
LAYOUTS = [(BLOCKED, 2), (Slice(1, BLOCKED), 1), (Slice(0, Slice(1, BLOCKED_3D)), 1)]  # (layout, rank)


def test_tables_give_what_a_fresh_construction_gives():
    for layout, rank in LAYOUTS:
        fresh = layouts._make_encoding(layout)
        assert layouts.encoding_of(layout) == fresh and layouts.encoding_of(layout) is layouts.encoding_of(layout)
        for elem in (f16, f32):
            ty = TensorType(elem, (64,) * rank)
            expected = TensorType(elem, (64,) * rank, fresh)
            assert ttg.with_layout(ty, layout) == expected and ttg.with_layout(ty, layout) is ttg.with_layout(ty, layout)
            assert ttg.layout_of(ttg.with_layout(ty, layout)) == layout


def test_full_tables_start_over(monkeypatch):
    monkeypatch.setattr(layouts, "MAX_ENCODINGS", 1)
    monkeypatch.setattr(ttg, "MAX_WITH_LAYOUT", 1)
    ty = TensorType(f32, (64, 64))
    for layout in [BLOCKED, BLOCKED, Blocked((4, 1), (8, 4), (1, 4), (0, 1))]:
        assert ttg.with_layout(ty, layout) == TensorType(f32, (64, 64), layouts._make_encoding(layout))
    assert len(layouts._ENCODINGS) == 1 and len(ttg._WITH_LAYOUT) == 1


def test_an_unhashable_layout_is_made_each_time():
    listed = Blocked([1, 4], [4, 8], [4, 1], [1, 0])  # lists, not tuples
    ty = TensorType(f32, (64, 64))
    assert ttg.with_layout(ty, listed) == TensorType(f32, (64, 64), layouts._make_encoding(listed))
