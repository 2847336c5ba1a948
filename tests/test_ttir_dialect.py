"""The TTIR dialects in Python: type mapping, op construction and verification, and the
value semantics of IR types used by constant folding."""

from __future__ import annotations

import math
import random
import struct

import numpy as np
import pytest
import torch
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, TensorType, bf16, f16, f32, i1, i8, i32, i64
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from inductor_tile.kernel_compiler.ir import PointerType, make_context, parse_ttir, to_ir_type
from inductor_tile.kernel_compiler.ir import arith_ext, tt, tt_memory
from inductor_tile.kernel_compiler.passes import PASSES, get_pass
from inductor_tile.kernel_compiler.passes.const_eval import _bitcast, round_float
from inductor_tile.language import dtypes as tl

PTR_F32 = PointerType(f32)


def values(*types):
    """Block arguments of the given types, as opaque SSA values for tests."""
    return Block(arg_types=list(types)).args


@pytest.mark.parametrize(
    "lang, ir",
    [
        (tl.int1, i1),
        (tl.int8, i8),
        (tl.uint8, i8),
        (tl.int32, i32),
        (tl.float16, f16),
        (tl.bfloat16, bf16),
        (tl.float32, f32),
        (tl.pointer_type(tl.float32), PTR_F32),
        (tl.block_type(tl.float16, (64, 128)), TensorType(f16, [64, 128])),
        (tl.block_type(tl.pointer_type(tl.int64), (8,)), TensorType(PointerType(i64), [8])),
    ],
)
def test_to_ir_type(lang, ir):
    assert to_ir_type(lang) == ir


def test_pointer_type_text():
    module = parse_ttir("func.func @f(%p: !tt.ptr<!tt.ptr<bf16>>, %q: tensor<4x!tt.ptr<f32>>) {\n  func.return\n}")
    assert "%p: !tt.ptr<!tt.ptr<bf16>>, %q: tensor<4x!tt.ptr<f32>>" in str(module)


def test_context_has_all_dialects():
    names = {d.name for d in make_context().loaded_dialects}
    assert {"builtin", "arith", "math", "scf", "func", "tt"} <= names


@pytest.mark.parametrize(
    "make_op",
    [
        lambda: tt.GetProgramIdOp(2),
        lambda: tt.MakeRangeOp(0, 64),
        lambda: tt.SplatOp(values(f32)[0], TensorType(f32, [8])),
        lambda: tt.BroadcastOp(values(TensorType(f32, [1, 8]))[0], TensorType(f32, [4, 8])),
        lambda: tt.ExpandDimsOp(values(TensorType(f32, [8]))[0], 1, TensorType(f32, [8, 1])),
        lambda: tt.ReshapeOp(values(TensorType(f32, [4, 8]))[0], TensorType(f32, [32])),
        lambda: tt.AddPtrOp(*values(TensorType(PTR_F32, [8]), TensorType(i32, [8]))),
        lambda: tt.ReduceOp(values(TensorType(f32, [4, 8]))[0], 0, "argmin", TensorType(i32, [8])),
        lambda: tt.BitcastOp(values(PTR_F32)[0], PointerType(i32)),
        lambda: tt.IntToPtrOp(values(i64)[0], PTR_F32),
        lambda: tt_memory.LoadOp(*values(TensorType(PTR_F32, [8]), TensorType(i1, [8]), TensorType(f32, [8]))),
        lambda: tt_memory.StoreOp(*values(PTR_F32, f32)),
        lambda: arith_ext.CmpiOp(*values(TensorType(i32, [8]), TensorType(i32, [8])), "ult"),
        lambda: arith_ext.SelectOp(*values(TensorType(i1, [8]), TensorType(f32, [8]), TensorType(f32, [8]))),
        lambda: arith_ext.SIToFPOp(values(TensorType(i32, [8]))[0], TensorType(f32, [8])),
    ],
)
def test_ops_verify(make_op):
    make_op().verify()


@pytest.mark.parametrize(
    "make_op, message",
    [
        (lambda: tt.GetProgramIdOp(3), "axis must be 0, 1 or 2"),
        (lambda: tt.SplatOp(values(f32)[0], TensorType(f16, [8])), "element types differ"),
        (lambda: tt.BroadcastOp(values(TensorType(f32, [2, 8]))[0], TensorType(f32, [4, 8])), "cannot broadcast"),
        (lambda: tt.ReduceOp(values(TensorType(f32, [8]))[0], 1, "sum", f32), "out of range"),
        (lambda: tt.ReduceOp(values(TensorType(f32, [8]))[0], 0, "argmax", f32), "result type must be i32"),
        (lambda: tt.AddPtrOp(*values(TensorType(PTR_F32, [8]), TensorType(f32, [8]))), "offset must be integers"),
        (lambda: tt_memory.LoadOp(*values(PTR_F32, i1, f16)), "other must have the result type"),
        (lambda: arith_ext.ExtSIOp(values(i32)[0], i8), "result must be wider"),
        (lambda: arith_ext.FPToSIOp(values(i32)[0], i8), "bad operand type"),
    ],
)
def test_ops_reject(make_op, message):
    with pytest.raises(VerifyException, match=message):
        make_op().verify()


def test_pure_and_memory_traits():
    from xdsl.traits import MemoryEffectKind, get_effects, is_side_effect_free

    assert is_side_effect_free(tt.MakeRangeOp(0, 8))
    load = tt_memory.LoadOp(values(PTR_F32)[0])
    store = tt_memory.StoreOp(*values(PTR_F32, f32))
    assert {e.kind for e in get_effects(load)} == {MemoryEffectKind.READ}
    assert {e.kind for e in get_effects(store)} == {MemoryEffectKind.WRITE}


def test_pass_table():
    ttgir = {"convert-to-ttgir", "coalesce", "remove-layout-conversions", "test-print-axis-info"}
    cpu = {"broadcast-compare-operands"}
    dots = {"accelerate-matmul", "pipeline-loads", "pointer-induction", "pipeline-async-copies"}  # GPU passes for tl.dot
    sanitizer = {"sanitize"}  # TILE_SANITIZE=1
    ttir = {"canonicalize", "constant-fold", "cse", "merge-masked-loads", "fold-known-selects", "dce", "licm"}
    assert set(PASSES) == ttir | cpu | ttgir | dots | sanitizer
    assert all(get_pass(name).name == name for name in PASSES)
    with pytest.raises(KeyError, match="unknown pass"):
        get_pass("inline")


# --- value semantics of the IR float types (used by constant-fold) ---------------


def _random_doubles(count: int) -> list[float]:
    rng = random.Random(0)
    out = [rng.uniform(-1, 1) * 2.0 ** rng.randint(-160, 140) for _ in range(count)]
    return out + [65504.0, 65520.0, 65519.99, 2.0**-24, 2.0**-25, 3 * 2.0**-26, 1e-45, 3.4028235e38, 3.4e38 * 1.0000001]


@pytest.mark.parametrize("ty, np_type", [(f16, np.float16), (f32, np.float32)])
def test_round_float_matches_numpy(ty, np_type):
    for x in _random_doubles(4000):
        with np.errstate(over="ignore"):
            expected = float(np_type(x))
        assert round_float(x, ty) == expected or (math.isnan(expected) and math.isnan(round_float(x, ty))), x


def test_round_float_bf16_matches_torch():
    # torch rounds double -> bfloat16 directly (one rounding), like round_float.
    xs = _random_doubles(4000)
    expected = torch.tensor(xs, dtype=torch.float64).to(torch.bfloat16).to(torch.float64).tolist()
    for x, want in zip(xs, expected):
        assert round_float(x, bf16) == want, x


def test_bitcast_bits():
    assert _bitcast(FloatAttr(1.0, f32), f32, i32).value.data == 0x3F800000
    assert _bitcast(FloatAttr(-2.0, f16), f16, IntegerType(16)).value.data == struct.unpack("<h", struct.pack("<e", -2.0))[0]
    assert _bitcast(IntegerAttr(0x3F80, IntegerType(16)), IntegerType(16), bf16).value.data == 1.0

