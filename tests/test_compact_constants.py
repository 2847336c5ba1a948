"""Compact vector constants of the LLVM lowering (to_llvm/compact_constants.py): LLVM reads them as the
same constants as llvmlite's element-by-element form, and lowered kernels print them compactly."""

from __future__ import annotations

import random

import pytest
import torch
from llvmlite import ir

import inductor_tile
import inductor_tile.language as tl
from filecheck_tool import filecheck
from inductor_tile.kernel_compiler.to_llvm import llvm_tools
from inductor_tile.kernel_compiler.to_llvm.compact_constants import (IntVectorConstant, SplatConstant, compact_module,
                                                                     vector_constant)
from suite import poison

F32, F64, I1, I32, I64 = ir.FloatType(), ir.DoubleType(), ir.IntType(1), ir.IntType(32), ir.IntType(64)


def _canonical(ty: ir.VectorType, value: ir.Constant) -> str:
    """The constant as LLVM prints it back, returned from a function."""
    module = ir.Module()
    fn = ir.Function(module, ir.FunctionType(ty, []), "f")
    ir.IRBuilder(fn.append_basic_block()).ret(value)
    parsed = llvm_tools.parse(str(module))
    return str(parsed.get_function("f"))


def _random_values(rng: random.Random, element: ir.Type, n: int, uniform: bool) -> list:
    if element == I1:
        draw = lambda: rng.random() < 0.5  # noqa: E731
    elif isinstance(element, ir.IntType):
        draw = lambda: rng.randint(-2**(element.width - 1), 2**(element.width - 1) - 1)  # noqa: E731
    else:
        draw = lambda: rng.choice([rng.uniform(-1e3, 1e3), 0.0, -0.0, float("nan"), float("inf")])  # noqa: E731
    if uniform:
        return [draw()] * n
    return [draw() for _ in range(n)]


@pytest.mark.parametrize("element", [F32, F64, I1, I32, I64], ids=str)
@pytest.mark.parametrize("uniform", [True, False], ids=["splat", "mixed"])
def test_llvm_reads_the_same_constant_as_llvmlites_form(element, uniform):
    rng = random.Random(f"{element}{uniform}")
    for n in (1, 4, 16, 256):
        values = _random_values(rng, element, n, uniform)
        ty = ir.VectorType(element, n)
        compact = vector_constant(ty, values)
        if uniform:
            assert isinstance(compact, SplatConstant) or values[0] != values[0]  # (NaN: another NaN object each)
        assert _canonical(ty, compact) == _canonical(ty, ir.Constant(ty, values))


def test_zero_and_negative_zero_are_different_elements():
    ty = ir.VectorType(F32, 4)
    mixed = vector_constant(ty, [0.0, -0.0, 0.0, 0.0])
    assert not isinstance(mixed, SplatConstant)
    assert _canonical(ty, mixed) == _canonical(ty, ir.Constant(ty, [0.0, -0.0, 0.0, 0.0]))
    assert isinstance(vector_constant(ty, [-0.0] * 4), SplatConstant)


def test_undef_elements_keep_llvmlites_form():
    ty = ir.VectorType(F32, 4)
    assert type(vector_constant(ty, [ir.Undefined] * 4)) is ir.Constant


def test_compact_forms_keep_their_elements_for_rules_that_read_them():
    splat = SplatConstant(ir.VectorType(I32, 8), 7)
    assert [c.constant for c in splat.constant] == [7] * 8
    ints = IntVectorConstant(ir.VectorType(I32, 3), [3, 1, 2])
    assert [c.constant for c in ints.constant] == [3, 1, 2]


def test_compact_module_swaps_operands_and_phi_values():
    module = ir.Module()
    ty = ir.VectorType(F32, 64)
    fn = ir.Function(module, ir.FunctionType(ty, [ty, I1]), "f")
    entry, other, join = fn.append_basic_block("entry"), fn.append_basic_block("other"), fn.append_basic_block("join")
    b = ir.IRBuilder(entry)
    summed = b.fadd(fn.args[0], ir.Constant(ty, [1.5] * 64))
    b.cbranch(fn.args[1], other, join)
    b.position_at_end(other)
    b.branch(join)
    b.position_at_end(join)
    phi = b.phi(ty)
    phi.add_incoming(summed, entry)
    phi.add_incoming(ir.Constant(ty, [0.0] * 64), other)
    b.ret(phi)
    before = str(llvm_tools.parse(str(module)))
    compact_module(module)
    text = str(module)
    assert "splat (float 0x3ff8000000000000)" in text and "splat (float              0x0)" in text
    assert str(llvm_tools.parse(text)) == before


@inductor_tile.jit
def wide_scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    tl.store(out_ptr + offsets, x * 0.75 + 2.0, mask=offsets < n)


def test_lowered_kernel_prints_splats_not_element_lists(tmp_path):
    from inductor_tile.kernel_compiler.passes.pipeline import make_ttgir
    from inductor_tile.kernel_compiler.to_llvm.lowering import lower_to_llvm
    from inductor_tile.kernel_compiler.to_llvm.targets import get_target

    compiled = inductor_tile.compile(wide_scale_kernel, signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"},
                                     constexprs={"BLOCK": 256}, target="cpu")
    ttgir = make_ttgir(compiled.module.clone(), num_warps=1, threads_per_warp=1)
    llvm_ir = lower_to_llvm(ttgir, get_target("cpu"), num_warps=1).llvm_ir
    filecheck(llvm_ir, "CHECK: fmul <256 x float> {{.*}}, splat (float 0x3fe8000000000000)\n"
                       "CHECK: fadd <256 x float> {{.*}}, splat (float 0x4000000000000000)\n", tmp_path)
    assert "<float" not in llvm_ir  # no float vector written element by element
    assert len(llvm_ir) < 20000


def test_wide_kernel_still_computes_what_torch_does():
    gen = torch.Generator().manual_seed(18)
    n = 1000
    x = torch.randn(n, generator=gen)
    out = poison(torch.empty(n))
    wide_scale_kernel[(triton_cdiv(n, 256),)](x, out, n, BLOCK=256)
    torch.testing.assert_close(out.double(), x.double() * 0.75 + 2.0, rtol=1e-6, atol=1e-6)


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)
