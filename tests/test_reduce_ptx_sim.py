"""Reductions across lanes and warps, checked without a GPU: sums, maxima and argmax over either axis of
[8, 1024], [64, 64] and [1, 4096] tiles (fp16, fp32, int32; 1, 4 and 8 warps), and kernels with two
reductions, compiled to sm_90 PTX and run for one program in the PTX interpreter (`reduce_ptx_sim.py`) on
random input with NaN-poisoned outputs, against numpy in float64. FileCheck-style counts then pin the
shared-memory traffic of a reduction across warps (vector accesses, barriers).
"""

from __future__ import annotations

import platform

import numpy as np
import pytest

import inductor_tile
import inductor_tile.language as tl
from reduce_ptx_sim import ReduceMachine
from test_nvidia_ptx import layer_norm_backward_kernel

needs_llvm_nvptx = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                      reason="the NVPTX wheels exist for Linux x86-64 only")

TL_TYPES = {"fp16": np.float16, "fp32": np.float32, "i32": np.int32, "i64": np.int64}


@inductor_tile.jit
def sum_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    tl.store(out_ptr + tl.arange(0, C if AXIS == 0 else R), tl.sum(x, AXIS))


@inductor_tile.jit
def max_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    tl.store(out_ptr + tl.arange(0, C if AXIS == 0 else R), tl.max(x, AXIS))


@inductor_tile.jit
def argmax_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :])
    tl.store(out_ptr + tl.arange(0, C if AXIS == 0 else R), tl.argmax(x, AXIS))


@inductor_tile.jit
def two_sums_kernel(x_ptr, sum_ptr, squares_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    # a layer norm's two row sums: the same axis of the same layout
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]).to(tl.float32)
    sums = tl.sum(x, AXIS)
    squares = tl.sum(x * x, AXIS)
    tl.store(sum_ptr + tl.arange(0, C if AXIS == 0 else R), sums)
    tl.store(squares_ptr + tl.arange(0, C if AXIS == 0 else R), squares)


@inductor_tile.jit
def max_then_sum_kernel(x_ptr, max_ptr, sum_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    # a softmax's two reductions: the sum depends on the maximum
    x = tl.load(x_ptr + tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]).to(tl.float32)
    m = tl.max(x, AXIS)
    e = tl.exp(x - (m[None, :] if AXIS == 0 else m[:, None]))
    sums = tl.sum(e, AXIS)
    tl.store(max_ptr + tl.arange(0, C if AXIS == 0 else R), m)
    tl.store(sum_ptr + tl.arange(0, C if AXIS == 0 else R), sums)


KERNELS = {"sum": sum_kernel, "max": max_kernel, "argmax": argmax_kernel}


def compile_ptx(kernel, pointers: list[str], shape, axis: int, warps: int) -> str:
    signature = {f"{name}": ty for name, ty in zip(kernel.arg_names, pointers)}
    compiled = inductor_tile.compile(kernel, signature, constexprs={"R": shape[0], "C": shape[1], "AXIS": axis},
                                     target="cuda:90", num_warps=warps, divisible_by_16=list(signature))
    return compiled.asm["ptx"]


def random_input(shape, dtype: str, seed: int) -> np.ndarray:
    gen = np.random.default_rng(seed)
    if dtype in ("i32", "i64"):
        return gen.integers(-1000, 1000, size=shape).astype(TL_TYPES[dtype]) * (2**33 if dtype == "i64" else 1)
    x = gen.standard_normal(shape).astype(TL_TYPES[dtype])
    if dtype == "fp16":  # few ties: argmax's first-index rule is checked by the ints
        x = (x * 4).astype(np.float16)
    return x


def poisoned(count: int, dtype) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        return np.full(count, np.nan, dtype=dtype)
    return np.full(count, 0x5A5A5A5A, dtype=dtype)


def run(ptx: str, warps: int, x: np.ndarray, outputs: list[np.ndarray]) -> list[np.ndarray]:
    machine = ReduceMachine(ptx, 32 * warps, [x, *outputs])
    machine.run()
    return [machine.buffer(i + 1, out) for i, out in enumerate(outputs)]


def check_sum(got: np.ndarray, x: np.ndarray, axis: int) -> None:
    wide = x.astype(np.float64)
    expected = wide.sum(axis)
    if x.dtype in (np.int32, np.int64):
        assert (got.astype(np.int64) == x.astype(np.int64).sum(axis)).all(), (got, expected)
        return
    # the order of the additions differs: a bound of the rounding, far below one lost or doubled element
    eps = 2.0 ** -10 if x.dtype == np.float16 else 2.0 ** -23
    bound = 4 * eps * np.log2(x.shape[axis] + 1) * np.abs(wide).sum(axis) + eps
    error = np.abs(got.astype(np.float64) - expected)
    assert not np.isnan(got).any() and (error <= bound).all(), (np.argmax(error - bound), got, expected)


CASES = []
for _shape in [(8, 1024), (64, 64), (1, 4096)]:
    for _axis in (0, 1):
        for _warps in (1, 4, 8):
            CASES.append(pytest.param("sum", "fp32", _shape, _axis, _warps, id=f"sum-fp32-{_shape}-{_axis}-{_warps}w"))
            CASES.append(pytest.param("argmax", "i32", _shape, _axis, _warps,
                                      id=f"argmax-i32-{_shape}-{_axis}-{_warps}w"))
for _kind in ("sum", "max", "argmax"):
    for _dtype in ("fp16", "fp32", "i32"):
        for _shape, _axis in [((8, 1024), 1), ((64, 64), 0)]:
            CASES.append(pytest.param(_kind, _dtype, _shape, _axis, 4, id=f"{_kind}-{_dtype}-{_shape}-{_axis}-4w"))
CASES += [pytest.param("sum", "i64", (64, 64), 0, 8, id="sum-i64-(64, 64)-0-8w"),
          pytest.param("max", "i64", (8, 1024), 1, 4, id="max-i64-(8, 1024)-1-4w")]


@needs_llvm_nvptx
@pytest.mark.parametrize("kind,dtype,shape,axis,warps", CASES)
def test_reduction_matches_numpy(kind, dtype, shape, axis, warps):
    x = random_input(shape, dtype, seed=hash((kind, dtype, shape, axis, warps)) % 2**32)
    if kind == "argmax" and dtype == "i32":
        x = x % 7  # many ties: the first index must win
    out_type = {"argmax": "i32"}.get(kind, dtype)
    ptx = compile_ptx(KERNELS[kind], [f"*{dtype}", f"*{out_type}"], shape, axis, warps)
    count = shape[1 - axis]
    (got,) = run(ptx, warps, x, [poisoned(count, np.int32 if kind == "argmax" else TL_TYPES[dtype])])
    if kind == "sum":
        check_sum(got, x, axis)
    elif kind == "max":
        assert (got == x.max(axis)).all(), (got, x.max(axis))
    else:
        assert (got == x.argmax(axis)).all(), (got, x.argmax(axis))


@needs_llvm_nvptx
@pytest.mark.parametrize("shape,axis,warps", [((8, 1024), 1, 4), ((64, 64), 0, 4), ((64, 64), 1, 8),
                                              ((1, 4096), 1, 8), ((8, 1024), 0, 1)])
def test_two_reductions_in_one_kernel(shape, axis, warps):
    x = random_input(shape, "fp16", seed=17)
    count = shape[1 - axis]
    ptx = compile_ptx(two_sums_kernel, ["*fp16", "*fp32", "*fp32"], shape, axis, warps)
    sums, squares = run(ptx, warps, x, [poisoned(count, np.float32), poisoned(count, np.float32)])
    check_sum(sums, x.astype(np.float32), axis)
    check_sum(squares, x.astype(np.float32) ** 2, axis)
    ptx = compile_ptx(max_then_sum_kernel, ["*fp16", "*fp32", "*fp32"], shape, axis, warps)
    maxima, sums = run(ptx, warps, x, [poisoned(count, np.float32), poisoned(count, np.float32)])
    wide = x.astype(np.float64)
    assert (maxima == wide.max(axis)).all()
    e = np.exp(wide - wide.max(axis, keepdims=True))
    assert np.allclose(sums, e.sum(axis), rtol=1e-4), (sums, e.sum(axis))


@inductor_tile.jit
def cumsum_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    offsets = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(out_ptr + offsets, tl.cumsum(tl.load(x_ptr + offsets), AXIS))


@inductor_tile.jit
def reverse_cummax_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, AXIS: tl.constexpr):
    offsets = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    tl.store(out_ptr + offsets, tl.associative_scan(tl.load(x_ptr + offsets), AXIS, _maximum, reverse=True))


@inductor_tile.jit
def _maximum(a, b):
    return tl.maximum(a, b)


@needs_llvm_nvptx
@pytest.mark.parametrize("shape,axis,warps", [((8, 1024), 1, 4), ((64, 64), 0, 4), ((64, 64), 1, 8),
                                              ((1, 4096), 1, 8), ((8, 1024), 1, 1)])
@pytest.mark.parametrize("dtype", ["fp32", "i32"])
def test_scans_match_numpy(shape, axis, warps, dtype):
    x = random_input(shape, dtype, seed=23)
    for kernel, expected in [(cumsum_kernel, np.cumsum(x.astype(np.float64), axis)),
                             (reverse_cummax_kernel, np.flip(np.maximum.accumulate(np.flip(x, axis), axis), axis))]:
        ptx = compile_ptx(kernel, [f"*{dtype}", f"*{dtype}"], shape, axis, warps)
        (got,) = run(ptx, warps, x, [poisoned(x.size, TL_TYPES[dtype]).reshape(shape)])
        if kernel is cumsum_kernel and dtype == "fp32":
            bound = 8 * 2.0 ** -23 * np.log2(shape[axis] + 1) * np.cumsum(np.abs(x.astype(np.float64)), axis)
            assert (np.abs(got - expected) <= bound + 1e-30).all(), (got, expected)
        else:
            assert (got == expected).all(), (kernel, got, expected)


@inductor_tile.jit
def chained_kernel(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr, ITERS: tl.constexpr):
    # in a loop: a maximum, a sum that needs it, and a sum of squares that does not (its partner); then the
    # next iteration's maximum reuses the scratch
    acc = tl.zeros([R], tl.float32)
    offsets = tl.arange(0, R)[:, None] * C + tl.arange(0, C)[None, :]
    for i in range(ITERS):
        x = tl.load(x_ptr + i * R * C + offsets).to(tl.float32)
        m = tl.max(x, 1)
        s = tl.sum(tl.exp(x - m[:, None]), 1)
        q = tl.sum(x * x, 1)
        acc += m + tl.log(s) + q
    tl.store(out_ptr + tl.arange(0, R), acc)


def chained_reference(x: np.ndarray) -> np.ndarray:
    wide = x.astype(np.float64)
    m = wide.max(2)
    return (m + np.log(np.exp(wide - m[..., None]).sum(2)) + (wide * wide).sum(2)).sum(0)


@needs_llvm_nvptx
@pytest.mark.parametrize("shape,warps", [((8, 1024), 4), ((1, 4096), 8), ((64, 64), 8)])
def test_chained_reductions_in_a_loop(shape, warps):
    check_chained(shape, warps, seed=29)


def check_chained(shape: tuple[int, int], warps: int, seed: int) -> None:
    """`chained_kernel` (three iterations) on random fp16 rows through the PTX interpreter, against numpy."""
    x = random_input((3, *shape), "fp16", seed=seed)
    signature = {"x_ptr": "*fp16", "out_ptr": "*fp32"}
    ptx = inductor_tile.compile(chained_kernel, signature, constexprs={"R": shape[0], "C": shape[1], "ITERS": 3},
                                target="cuda:90", num_warps=warps, divisible_by_16=list(signature)).asm["ptx"]
    (got,) = run(ptx, warps, x, [poisoned(shape[0], np.float32)])
    assert np.allclose(got, chained_reference(x), rtol=1e-4), (got, chained_reference(x))


def shared_traffic(ptx: str) -> dict[str, int]:
    import re

    ops = re.findall(r"^\s+(?:@\S+\s+)?((?:ld|st)\.shared\S*|bar\.sync)", ptx, re.M)
    return {"barriers": ops.count("bar.sync"), "accesses": sum(o != "bar.sync" for o in ops),
            "vector stores": sum(o.startswith("st.shared.v") for o in ops),
            "vector loads": sum(o.startswith("ld.shared.v") for o in ops)}


@needs_llvm_nvptx
def test_row_sums_cross_warps_together_in_vectors():
    # [8, 1024] over 4 warps, all 4 along the rows: each thread holds the 8 row sums of each reduction; both
    # sums share the barriers. 4 warps x 8 rows of partials would be 32 registers in flight, so 32 threads
    # combine them, one each (reduce_warp_tree.py): per sum each warp's 8 partials in 2 v4 stores, one load,
    # one store of the result and the 8 results in 2 v4 loads (8 stores and 8 v4 loads per sum before, and
    # 8 stores and 32 loads before that); three barriers. Then each result's conversion for its store: 2 v4
    # stores, 1 load, 2 barriers.
    ptx = compile_ptx(two_sums_kernel, ["*fp16", "*fp32", "*fp32"], (8, 1024), 1, 4)
    assert shared_traffic(ptx) == {"barriers": 3 + 2 * 2, "accesses": 2 * 6 + 2 * 3, "vector stores": 2 * 2 + 2 * 2,
                                   "vector loads": 2 * 2}, ptx


@needs_llvm_nvptx
def test_layer_norm_sums_store_one_vector_per_warp():
    # BERT's layer-norm backward: [8, 1024] in [1, 16] x [1, 32] x [2, 2], the sums over 2 warps: each thread's
    # 4 rows in one v4 store and each warp's in one v4 load (4 stores and 8 loads of 4 bytes before)
    sig = {"dy_ptr": "*fp16", "w_ptr": "*fp32", "xhat_ptr": "*fp32", "rstd_ptr": "*fp32", "keep_ptr": "*i1",
           "dx_ptr": "*fp32", "dx_half_ptr": "*fp16", "xnumel": "i32"}
    ptx = inductor_tile.compile(layer_norm_backward_kernel, sig, constexprs={"XBLOCK": 8, "RBLOCK": 1024},
                                target="cuda:90", num_warps=4, divisible_by_16=list(sig)).asm["ptx"]
    traffic = shared_traffic(ptx)
    # three layout conversions (v4 on both sides, 2 barriers each) and one barrier pair for both sums
    assert traffic["barriers"] == 3 * 2 + 2 and traffic["accesses"] == traffic["vector stores"] + \
        traffic["vector loads"], traffic


@needs_llvm_nvptx
def test_dependent_reductions_need_one_barrier_fewer():
    # softmax's sum needs its maximum: two barrier pairs, less the barrier before the sum's stores
    # (its scratch lies after the maximum's)
    ptx = compile_ptx(max_then_sum_kernel, ["*fp16", "*fp32", "*fp32"], (1, 4096), 1, 8)
    assert shared_traffic(ptx)["barriers"] == 3, ptx
