"""TTGIR: layouts (ownership of elements, the coalesced-layout builder), axis info, and the
TTIR -> TTGIR stage on every kernel of the suite, for a GPU launch (4 warps of 32 lanes)
and for the CPU (one thread holds the whole tile)."""

from __future__ import annotations

import itertools

import math

import pytest
import torch
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue

import suite
from inductor_tile.kernel_compiler import compiler
from inductor_tile.kernel_compiler.analysis import AxisInfo, compute_axis_info
from inductor_tile.kernel_compiler.ir.context import parse_ttir, print_ir
from inductor_tile.kernel_compiler.ir.layouts import (
    Blocked,
    LayoutMap,
    Slice,
    blocked_for,
    default_blocked,
    same_mapping,
)
from inductor_tile.kernel_compiler.ir.ttg import layout_of, launch_shape
from inductor_tile.kernel_compiler.passes.coalesce import access_order
from inductor_tile.kernel_compiler.passes.pipeline import make_ttgir
from suite import CASES

LAUNCHES = [(4, 32), (1, 1)]


# ===--------------------------------------------------------------------------===
# Layouts
# ===--------------------------------------------------------------------------===
def _covers_exactly(layout: Blocked, shape: tuple[int, ...]) -> bool:
    return all(layout.cta_tile(d) == shape[d] for d in range(len(shape)))


EXACT_CASES = [
    (default_blocked((128,), 4, 32), (128,), 32, 4),
    (blocked_for((1024,), (8,), (0,), 4, 32), (1024,), 32, 4),
    (blocked_for((16, 32), (1, 4), (1, 0), 4, 32), (16, 32), 32, 4),
    (blocked_for((64, 8), (4, 1), (0, 1), 2, 32), (64, 8), 32, 2),
    (blocked_for((8, 4, 16), (1, 1, 2), (2, 1, 0), 4, 32), (8, 4, 16), 32, 4),
    (default_blocked((4, 8), 1, 1), (4, 8), 1, 1),
]


@pytest.mark.parametrize("layout, shape, lanes, warps", EXACT_CASES)
def test_layout_owns_each_element_once(layout: Blocked, shape: tuple[int, ...], lanes: int, warps: int) -> None:
    if not _covers_exactly(layout, shape):
        # one thread per repetition: the layout tiles the shape several times, still once each
        assert all(shape[d] % layout.cta_tile(d) == 0 for d in range(len(shape)))
    owners = LayoutMap(layout, shape).owners(lanes, warps)
    assert sorted(owners) == list(itertools.product(*(range(s) for s in shape)))
    assert all(len(held) == 1 for held in owners.values()), "an element is held twice"


def test_layout_repeats_and_replicates() -> None:
    layout = Blocked((1,), (32,), (4,), (0,))
    # 512 elements over 128 threads: 4 slots each, every element held once
    big = LayoutMap(layout, (512,)).owners(32, 4)
    assert len(big) == 512 and all(len(h) == 1 for h in big.values())
    assert LayoutMap(layout, (512,)).num_slots == 4
    # 32 elements over 128 threads: the tile wraps, each element held by 4 threads
    small = LayoutMap(layout, (32,)).owners(32, 4)
    assert len(small) == 32 and all(len(h) == 4 for h in small.values())


def test_slice_layout_replicates_along_the_removed_dim() -> None:
    parent = Blocked((1, 4), (4, 8), (2, 2), (1, 0))
    rows = LayoutMap(Slice(1, parent), (8,)).owners(32, 4)
    assert sorted(rows) == [(i,) for i in range(8)]
    # the threads that differed only along dim 1 (8 lanes x 2 warps) hold the same row
    assert all(len(h) == 8 * 2 for h in rows.values())
    # a thread's slots along the kept dim match the parent's (one element per repetition)
    assert LayoutMap(Slice(1, parent), (8,)).num_slots == 1


@pytest.mark.parametrize("shape", [(1,), (8,), (128,), (4096,), (8, 16), (16, 1), (1, 64), (64, 128), (2, 4, 8)])
@pytest.mark.parametrize("warps, lanes", [(4, 32), (8, 32), (1, 1), (2, 64)])
def test_blocked_for_with_one_element_per_thread_is_the_default(shape: tuple[int, ...], warps: int, lanes: int) -> None:
    order = tuple(reversed(range(len(shape))))
    assert blocked_for(shape, (1,) * len(shape), order, warps, lanes) == default_blocked(shape, warps, lanes)


@pytest.mark.parametrize(
    "shape, per_thread, order, expected",
    [
        ((1024,), (4,), (0,), Blocked((4,), (32,), (4,), (0,))),
        ((1024,), (8,), (0,), Blocked((8,), (32,), (4,), (0,))),
        ((64, 32), (4, 1), (0, 1), Blocked((4, 1), (16, 2), (1, 4), (0, 1))),
        ((16, 64), (1, 4), (1, 0), Blocked((1, 4), (2, 16), (4, 1), (1, 0))),
        ((128,), (4,), (0,), Blocked((4,), (32,), (4,), (0,))),  # smaller than the CTA: warps wrap
    ],
)
def test_blocked_for(shape: tuple[int, ...], per_thread: tuple[int, ...], order: tuple[int, ...], expected: Blocked) -> None:
    layout = blocked_for(shape, per_thread, order, 4, 32)
    assert layout == expected
    assert _product(layout.threads_per_warp) == 32 and _product(layout.warps_per_cta) == 4


def test_access_order_and_equivalent_layouts() -> None:
    assert access_order((1, 64)) == (1, 0)
    assert access_order((64, 1)) == (0, 1)
    assert access_order((1, 1)) == (0, 1)  # ties: the first dimension first (Triton's rule)
    assert access_order((4, 16, 16)) == (1, 2, 0)
    one_thread = [Blocked((k,), (1,), (1,), (0,)) for k in (1, 4, 8)]
    assert all(same_mapping(one_thread[0], other, (128,), 1, 1) for other in one_thread)
    assert not same_mapping(Blocked((1,), (32,), (4,), (0,)), Blocked((4,), (32,), (4,), (0,)), (512,), 32, 4)


def _product(values: tuple[int, ...]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


# ===--------------------------------------------------------------------------===
# Axis info
# ===--------------------------------------------------------------------------===
def test_axis_info_of_a_block_of_offsets() -> None:
    module = parse_ttir(
        """
        func.func @f(%p: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %n: i32) {
          %pid = tt.get_program_id {axis = 0 : i32} : i32
          %c = arith.constant 512 : i32
          %start = arith.muli %pid, %c : i32
          %r = tt.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
          %s = tt.splat %start : i32 -> tensor<512xi32>
          %offs = arith.addi %s, %r : tensor<512xi32>
          %ps = tt.splat %p : !tt.ptr<f16> -> tensor<512x!tt.ptr<f16>>
          %ptrs = tt.addptr %ps, %offs : tensor<512x!tt.ptr<f16>>, tensor<512xi32>
          func.return
        }
        """
    )
    func_op = next(iter(module.body.block.ops))
    infos = compute_axis_info(func_op)  # type: ignore[arg-type]
    by_name = {v.name_hint: info for v, info in infos.items() if isinstance(v, SSAValue) and v.name_hint}
    assert by_name["offs"] == AxisInfo((512,), (512,), (1,))
    assert by_name["ptrs"] == AxisInfo((512,), (16,), (1,))  # bytes: gcd(16, 512 * 2)
    assert by_name["s"].constancy == (512,)
    assert AxisInfo((8,), (64,), (1,)).divisibility_at(0, 4) == 4  # inside a run: start + 4k


@pytest.mark.parametrize("divisor", [768, 96, 48, 64, 3, 1000])
def test_axis_info_of_division_and_remainder_by_a_constant(divisor: int) -> None:
    # split reductions index [splits x columns] outputs as xindex // 768 and xindex % 768:
    # over 64 consecutive offsets starting at a multiple of 64 the quotient is constant and
    # the remainder consecutive whenever 64 divides the divisor (the coalescer needs both)
    module = parse_ttir(
        f"""
        func.func @f(%n: i32) {{
          %pid = tt.get_program_id {{axis = 0 : i32}} : i32
          %c64 = arith.constant 64 : i32
          %start = arith.muli %pid, %c64 : i32
          %r = tt.make_range {{end = 64 : i32, start = 0 : i32}} : tensor<64xi32>
          %s = tt.splat %start : i32 -> tensor<64xi32>
          %offs = arith.addi %s, %r : tensor<64xi32>
          %cd = arith.constant dense<{divisor}> : tensor<64xi32>
          %q = arith.divsi %offs, %cd : tensor<64xi32>
          %m = arith.remsi %offs, %cd : tensor<64xi32>
          func.return
        }}
        """
    )
    func_op = next(iter(module.body.block.ops))
    infos = compute_axis_info(func_op)  # type: ignore[arg-type]
    by_name = {v.name_hint: info for v, info in infos.items() if isinstance(v, SSAValue) and v.name_hint}
    q, m = by_name["q"], by_name["m"]
    run = math.gcd(64, divisor)
    assert q.constancy[0] >= run and m.contiguity[0] == run
    # brute force: every claim holds for the values of many programs
    for pid in range(0, 4000, 7):
        offs = [pid * 64 + i for i in range(64)]
        for start in range(0, 64, m.contiguity[0]):
            chunk = [o % divisor for o in offs[start:start + m.contiguity[0]]]
            assert chunk == list(range(chunk[0], chunk[0] + len(chunk)))
            assert chunk[0] % m.divisibility[0] == 0
        for start in range(0, 64, q.constancy[0]):
            assert len({o // divisor for o in offs[start:start + q.constancy[0]]}) == 1


# ===--------------------------------------------------------------------------===
# The suite through make_ttgir
# ===--------------------------------------------------------------------------===
def _suite_kernels() -> list:
    return [v for v in vars(suite).values() if type(v).__name__ == "JITFunction"]


@pytest.fixture(scope="module")
def suite_ttir() -> list[tuple[str, str]]:
    """(kernel name, optimized TTIR text) of every specialization the suite compiles. The
    native CPU back end is switched off for speed (launches then run in the interpreter):
    these tests need the TTIR, and the suite's own tests cover the back end. The kernels'
    caches are swapped for fresh ones meanwhile, so no other test sees these kernels."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("TILE_INTERPRET", raising=False)
        patch.setattr(compiler, "_compile_cpu", _no_native_code, raising=False)
        for kernel in _suite_kernels():
            patch.setattr(kernel, "cache", {})
            patch.setattr(kernel, "launch_cache", {}, raising=False)
        gen = torch.Generator().manual_seed(1234)
        for case in CASES.values():
            case(gen)
        texts = [(k.__name__, ck.asm["ttir"]) for k in _suite_kernels() for ck in k.cache.values()]
    assert len(texts) >= 12
    return texts


def _no_native_code(*args: object, **kwargs: object) -> None:
    return None


def _tensor_values(module: ModuleOp) -> list[SSAValue]:
    values: list[SSAValue] = []
    for op in module.walk():
        values.extend(r for r in op.results if isinstance(r.type, TensorType))
        for region in op.regions:
            for block in region.blocks:
                values.extend(a for a in block.args if isinstance(a.type, TensorType))
    return values


@pytest.mark.parametrize("num_warps, threads_per_warp", LAUNCHES)
def test_suite_kernels_become_ttgir(suite_ttir: list[tuple[str, str]], num_warps: int, threads_per_warp: int) -> None:
    for name, ttir in suite_ttir:
        module = make_ttgir(parse_ttir(ttir), num_warps, threads_per_warp)
        module.verify()
        assert launch_shape(module) == (num_warps, threads_per_warp)
        missing = [str(v.type) for v in _tensor_values(module) if layout_of(v.type) is None]
        assert not missing, f"{name}: tensors without a layout: {missing[:3]}"
        text = print_ir(module)
        again = parse_ttir(text)
        again.verify()
        assert print_ir(again) == text, f"{name}: TTGIR does not round-trip"


@pytest.mark.parametrize("num_warps, threads_per_warp", LAUNCHES)
def test_elementwise_suite_kernels_need_no_conversion(
    suite_ttir: list[tuple[str, str]], num_warps: int, threads_per_warp: int
) -> None:
    """1-D kernels (vector add, softmax rows, casts, math, ...) end without any convert_layout."""
    one_d = {"add_kernel", "softmax_kernel", "layernorm_kernel", "cast_kernel", "math_kernel", "int_arith_kernel",
             "bias_act_kernel", "control_flow_kernel", "argmax_kernel", "promotion_kernel"}
    for name, ttir in suite_ttir:
        if name in one_d:
            text = print_ir(make_ttgir(parse_ttir(ttir), num_warps, threads_per_warp))
            assert "ttg.convert_layout" not in text, f"{name} keeps a layout conversion"
