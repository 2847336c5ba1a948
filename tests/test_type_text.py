"""ir/type_text.py: printing with each type's text made once gives xdsl's own text, for TTIR and TTGIR
(layouts in the types), twice in a row (the second time from the table) and when the table starts over."""

from __future__ import annotations

import pytest

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.frontend.ttir import generate_ttir
from inductor_tile.kernel_compiler.ir import type_text
from inductor_tile.kernel_compiler.ir.context import parse_ttir, print_ir
from inductor_tile.kernel_compiler.ir_builder import TTIRBuilder
from inductor_tile.kernel_compiler.passes.pipeline import make_ttgir, optimize_ttir


@inductor_tile.jit
def norm_rows_kernel(x_ptr, out_ptr, n, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, RBLOCK)[None, :]
    x = tl.load(x_ptr + rows * n + cols, mask=cols < n, other=0.0).to(tl.float32)
    centered = tl.where(cols < n, x - tl.sum(x, 1)[:, None] / n, 0.0)
    scale = 1.0 / tl.sqrt(tl.sum(centered * centered, 1) / n + 1e-5)
    tl.store(out_ptr + rows * n + cols, (centered * scale[:, None]).to(tl.float16), mask=cols < n)


def _modules():
    specs = [spec_from_signature("x_ptr", "*fp16", divisible_by_16=True),
             spec_from_signature("out_ptr", "*fp16", divisible_by_16=True), spec_from_signature("n", "i32"),
             spec_from_signature("XBLOCK", "constexpr", 4), spec_from_signature("RBLOCK", "constexpr", 256)]
    ttir = optimize_ttir(generate_ttir(norm_rows_kernel, specs, TTIRBuilder(), 4))
    return ttir, make_ttgir(ttir.clone(), num_warps=4, threads_per_warp=32)


@pytest.mark.parametrize("stage", ["ttir", "ttgir"])
def test_the_text_is_xdsls(stage):
    module = dict(zip(("ttir", "ttgir"), _modules()))[stage]
    expected = str(module)  # xdsl's printer
    assert "tensor<4x256x" in expected and (stage == "ttir" or "#ttg." in expected)
    type_text._texts.clear()
    assert print_ir(module) == expected
    assert type_text._texts  # the types were kept ...
    assert print_ir(module) == expected  # ... and printed from the table
    assert str(parse_ttir(expected)) == expected


def test_the_table_starts_over_when_full(monkeypatch):
    ttir, ttgir = _modules()
    monkeypatch.setattr(type_text, "MAX_TYPES", 2)
    type_text._texts.clear()
    assert print_ir(ttgir) == str(ttgir) and print_ir(ttir) == str(ttir)
    assert len(type_text._texts) <= 2
