"""TTIRBuilder: build kernels through the Builder API, verify, print, re-parse."""

from __future__ import annotations

import pytest
from xdsl.rewriter import InsertPoint

from inductor_tile.kernel_compiler.ir import parse_ttir, print_ir
from inductor_tile.kernel_compiler.ir_builder import TTIRBuilder
from inductor_tile.language import dtypes as tl

BLOCK = 128
F32_PTR = tl.pointer_type(tl.float32)


def _roundtrip(builder: TTIRBuilder) -> str:
    builder.module.verify()
    text = print_ir(builder.module)
    again = parse_ttir(text)
    again.verify()
    assert print_ir(again) == text
    return text


def build_vector_add() -> TTIRBuilder:
    """out[i] = x[i] + y[i] for i < n, BLOCK elements per program."""
    b = TTIRBuilder()
    x, y, out, n = b.create_function(
        "add_kernel", [F32_PTR, F32_PTR, F32_PTR, tl.int32], [{"tt.divisibility": 16}] * 3 + [{}]
    )
    blk_i32 = tl.block_type(tl.int32, (BLOCK,))
    blk_f32 = tl.block_type(tl.float32, (BLOCK,))
    blk_ptr = tl.block_type(F32_PTR, (BLOCK,))
    pid = b.create_program_id(0)
    start = b.create_binary("muli", pid, b.get_constant(BLOCK, tl.int32), tl.int32)
    offsets = b.create_binary(
        "addi", b.create_splat(start, blk_i32), b.create_make_range(0, BLOCK, blk_i32), blk_i32
    )
    offsets = b.create_hint(offsets, "contiguity", (BLOCK,))
    mask = b.create_cmp("slt", offsets, b.create_splat(n, blk_i32), tl.block_type(tl.int1, (BLOCK,)))

    def load(ptr):
        ptrs = b.create_addptr(b.create_splat(ptr, blk_ptr), offsets, blk_ptr)
        return b.create_load(ptrs, mask, None, blk_f32)

    total = b.create_binary("addf", load(x), load(y), blk_f32)
    out_ptrs = b.create_addptr(b.create_splat(out, blk_ptr), offsets, blk_ptr)
    b.create_store(out_ptrs, total, mask)
    b.create_return()
    return b


def build_row_sum() -> TTIRBuilder:
    """out[row] = sum(x[row, :]) over a loop of column tiles, with a masked tail."""
    b = TTIRBuilder()
    x, out, n_cols = b.create_function("row_sum", [F32_PTR, F32_PTR, tl.int32], [])
    cols = tl.block_type(tl.int32, (64,))
    vals = tl.block_type(tl.float32, (64,))
    ptrs_t = tl.block_type(F32_PTR, (64,))
    row = b.create_program_id(0)
    row_ptr = b.create_addptr(x, b.create_binary("muli", row, n_cols, tl.int32), F32_PTR)
    zero = b.create_splat(b.get_constant(0.0, tl.float32), vals)
    lb, step = b.get_constant(0, tl.int32), b.get_constant(64, tl.int32)

    body = b.new_block([tl.int32, vals])
    iv, acc = body.args
    saved = b.insertion_point
    b.insertion_point = InsertPoint.at_end(body)
    idx = b.create_binary("addi", b.create_splat(iv, cols), b.create_make_range(0, 64, cols), cols)
    mask = b.create_cmp("slt", idx, b.create_splat(n_cols, cols), tl.block_type(tl.int1, (64,)))
    ptrs = b.create_addptr(b.create_splat(row_ptr, ptrs_t), idx, ptrs_t)
    tile = b.create_load(ptrs, mask, zero, vals)
    b.create_yield([b.create_binary("addf", acc, tile, vals)])
    b.insertion_point = saved

    (acc_final,) = b.insert_for(lb, n_cols, step, [zero], body)
    tile2d = b.create_expand_dims(acc_final, 0, tl.block_type(tl.float32, (1, 64)))
    total = b.create_reduce(tile2d, 1, "sum", tl.block_type(tl.float32, (1,)))
    total = b.create_reduce(total, 0, "sum", tl.float32)
    b.create_store(b.create_addptr(out, row, F32_PTR), total, None)
    b.create_return()
    return b


def test_vector_add_roundtrip():
    text = _roundtrip(build_vector_add())
    assert "func.func public @add_kernel(%0: !tt.ptr<f32> {tt.divisibility = 16 : i32}" in text
    assert "tt.contiguity = array<i32: 128>" in text
    assert text.count("tt.load") == 2 and text.count("tt.store") == 1


def test_row_sum_roundtrip():
    text = _roundtrip(build_row_sum())
    assert "scf.for" in text and "scf.yield" in text
    assert 'kind = "sum"' in text and "-> f32" in text


def test_hint_on_kernel_argument():
    b = TTIRBuilder()
    (p, n) = b.create_function("k", [F32_PTR, tl.int32], [])
    assert b.create_hint(n, "divisibility", (16,)) is n
    b.create_return()
    assert "%1: i32 {tt.divisibility = 16 : i32}" in _roundtrip(b)


@pytest.mark.parametrize(
    "value, ty, text",
    [
        (True, tl.int1, "arith.constant true"),
        (255, tl.uint8, "arith.constant -1 : i8"),
        (-3, tl.int64, "arith.constant -3 : i64"),
        (1.5, tl.float16, "arith.constant 1.500000e+00 : f16"),
        (2, tl.float32, "arith.constant 2.000000e+00 : f32"),
    ],
)
def test_constants(value, ty, text):
    b = TTIRBuilder()
    b.create_function("k", [], [])
    b.get_constant(value, ty)
    b.create_return()
    assert text in _roundtrip(b)


def test_casts_compares_and_null_pointer():
    b = TTIRBuilder()
    (x,) = b.create_function("k", [tl.block_type(tl.int32, (8,))], [])
    f = b.create_cast("sitofp", x, tl.block_type(tl.float32, (8,)))
    h = b.create_cast("truncf", f, tl.block_type(tl.float16, (8,)))
    b.create_cmp("ult", x, x, tl.block_type(tl.int1, (8,)))
    b.create_cmp("olt", f, f, tl.block_type(tl.int1, (8,)))
    b.create_unary("exp", h, tl.block_type(tl.float16, (8,)))
    null = b.get_null_pointer(F32_PTR)
    b.create_cast("bitcast", null, tl.pointer_type(tl.int32))
    b.create_return()
    text = _roundtrip(b)
    for needle in ("arith.sitofp", "arith.truncf", "arith.cmpi ult", "arith.cmpf olt", "math.exp", "tt.int_to_ptr", "tt.bitcast"):
        assert needle in text


def test_pipeline_on_row_sum(monkeypatch):
    monkeypatch.setenv("TILE_VERIFY", "1")
    from inductor_tile.kernel_compiler.passes.pipeline import optimize_ttir

    module = optimize_ttir(build_row_sum().module)
    text = print_ir(module)
    loop_body = text.split("scf.for")[1].split("scf.yield")[0]
    # Invariant range, bounds and base pointers left the loop; the load stayed.
    assert "tt.make_range" not in loop_body and "tt.load" in loop_body
    assert loop_body.count("tt.splat") == 1  # only the induction variable's splat
    assert print_ir(parse_ttir(text)) == text


def test_pipeline_keeps_vector_add_memory_ops():
    from inductor_tile.kernel_compiler.passes.pipeline import optimize_ttir

    text = print_ir(optimize_ttir(build_vector_add().module))
    assert text.count("tt.load") == 2 and text.count("tt.store") == 1
