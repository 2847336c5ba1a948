"""Masked global loads and stores on NVIDIA, run without a GPU: the PTX the compiler emits for sm_90
executed by the PTX interpreter of the dot tests (`dot_ptx_sim.py`, one CTA in lockstep: a branch
that only some threads take is an error there, so a masked access must be a predicated instruction).

Each kernel runs on random data with NaN-poisoned (or 0x5A-filled) outputs; element by element, masked
lanes of a load keep `other` and masked lanes of a store leave memory as it was. Gathers (no
contiguity), masked tails (mask constancy 1: one element per access), whole-run masks (16-byte
vector accesses), scalars, and the element types of every access width (1, 2, 4 and 8 bytes).
FileCheck then pins the form: one `@%p ld.global`/`@%p st.global` per access and no branch.
"""

from __future__ import annotations

import platform

import numpy as np
import pytest
import torch
from dot_ptx_sim import Machine
from filecheck_tool import filecheck

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                reason="ptxas and libdevice wheels exist for Linux x86-64 only")

BLOCK, TAIL_BLOCK, WARPS = 256, 1024, 4
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32, "fp64": torch.float64,
          "i8": torch.int8, "i64": torch.int64}


@inductor_tile.jit
def masked_gather_kernel(x_ptr, index_ptr, keep_ptr, out_ptr, scattered_ptr, OTHER: tl.constexpr,
                         BLOCK: tl.constexpr):
    """out[i] = x[index[i]] where keep[i] else OTHER; scattered[index[i]] = x[i] where not keep[i]."""
    offsets = tl.arange(0, BLOCK)
    index = tl.load(index_ptr + offsets)
    keep = tl.load(keep_ptr + offsets)
    tl.store(out_ptr + offsets, tl.load(x_ptr + index, mask=keep, other=OTHER))
    tl.store(scattered_ptr + index, tl.load(x_ptr + offsets), mask=keep == 0)


@inductor_tile.jit
def masked_tail_kernel(x_ptr, out_ptr, n, m, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    """out[i] = (x[i] if i < n else OTHER) for i < m; out[m:] untouched."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n, other=OTHER), mask=offsets < m)


@inductor_tile.jit
def broadcast_tail_kernel(x_ptr, y_ptr, out_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    """out[2i] = x[i], out[2i + 1] = y[i // 4] for i < n (out[2n:] untouched): the gather of y has a
    thread's contiguous slots (x's vector load sets the layout) under one `i < n` run when n is a multiple
    of 16."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + 2 * offsets, tl.load(x_ptr + offsets, mask=mask, other=OTHER), mask=mask)
    tl.store(out_ptr + 2 * offsets + 1, tl.load(y_ptr + offsets // 4, mask=mask, other=OTHER), mask=mask)


@inductor_tile.jit
def broadcast_other_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[i] = y[i // 4] if i < n else x[i]: slots share address and mask but not `other`."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets)
    tl.store(out_ptr + offsets, tl.load(y_ptr + offsets // 4, mask=offsets < n, other=x))


@inductor_tile.jit
def masked_scalar_kernel(x_ptr, out_ptr, n, m, OTHER: tl.constexpr):
    """out[0] = (x[5] if 5 < n else OTHER) if 5 < m."""
    five = tl.program_id(0) + 5
    tl.store(out_ptr, tl.load(x_ptr + five, mask=five < n, other=OTHER), mask=five < m)


@inductor_tile.jit
def masked_tile_kernel(x_ptr, out_ptr, out_t_ptr, M, N, OTHER: tl.constexpr, ROWS: tl.constexpr, COLS: tl.constexpr):
    """x: ROWS x COLS, row-major. out[r, c] = x[r, c] if r < M and c < N else OTHER, for r < M;
    out_t[c, r] = x[r, c] for r < M, c < N and r != c + 3 (a transposed scatter: one element per access)."""
    rows = tl.arange(0, ROWS)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    inside = (rows < M) & (cols < N)
    x = tl.load(x_ptr + rows * COLS + cols, mask=inside, other=OTHER)
    tl.store(out_ptr + rows * COLS + cols, x, mask=rows < M)
    tl.store(out_t_ptr + cols * ROWS + rows, x, mask=inside & (rows != cols + 3))


@inductor_tile.jit
def scale_tile_kernel(x_ptr, out_ptr, M, N, stride, ROWS: tl.constexpr, COLS: tl.constexpr):
    """out = x over the rows < M and columns < N of a ROWS x COLS tile (a matmul epilogue's mask)."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * COLS + tl.arange(0, COLS)
    offsets = rows[:, None] * stride + cols[None, :]
    x = tl.load(x_ptr + offsets)
    tl.store(out_ptr + offsets, x, mask=(rows[:, None] < M) & (cols[None, :] < N))


def _compile(kernel, signature: dict[str, str], constexprs: dict, aligned: list[str]) -> str:
    compiled = inductor_tile.compile(kernel, signature, constexprs=constexprs, target="cuda:90",
                                     num_warps=WARPS, divisible_by_16=aligned)
    ptx = compiled.asm["ptx"]
    check_ptx(ptx, "sm_90", kernel.__name__)
    return ptx


def _random(dtype: torch.dtype, shape, gen: torch.Generator) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.randn(shape, generator=gen).to(dtype)
    return torch.randint(-100, 100, (shape,), generator=gen).to(dtype)


def _poisoned(dtype: torch.dtype, shape) -> torch.Tensor:
    """NaN for floats; integers get a value `_random` never makes (the untouched-memory marker)."""
    return torch.full((shape,), float("nan") if dtype.is_floating_point else 111, dtype=dtype)


def _numpy(t: torch.Tensor) -> np.ndarray:
    """The bytes of `t` as numpy (bf16 as its int16 bits)."""
    return t.view(torch.int16).numpy() if t.dtype == torch.bfloat16 else t.numpy()


def _torch(a: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    t = torch.from_numpy(a.copy())
    return t.view(torch.bfloat16) if dtype == torch.bfloat16 else t


def _run(ptx: str, buffers: list[torch.Tensor], scalars: dict[int, int] | None = None) -> list[torch.Tensor]:
    machine = Machine(ptx, 32 * WARPS, [_numpy(b) for b in buffers], scalars)
    machine.run()
    return [_torch(machine.buffer(i, _numpy(b)), b.dtype) for i, b in enumerate(buffers)]


def _predicated(ptx: str, opcode: str) -> int:
    return sum(line.split()[:2][-1].startswith(opcode) for line in ptx.splitlines() if line.strip().startswith("@%p"))


def _same(got: torch.Tensor, want: torch.Tensor) -> None:
    """Bit-for-bit equal as float64 (every value here is copied, never computed), NaN only where wanted."""
    torch.testing.assert_close(got.double(), want.double(), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("name", DTYPES)
def test_masked_gather_and_scatter_keep_other_and_skip_masked_lanes(name, tmp_path):
    dtype, gen = DTYPES[name], torch.Generator().manual_seed(1)
    other = -7
    ptx = _compile(masked_gather_kernel, {"x_ptr": f"*{name}", "index_ptr": "*i32", "keep_ptr": "*i1",
                                          "out_ptr": f"*{name}", "scattered_ptr": f"*{name}"},
                   {"OTHER": other, "BLOCK": BLOCK}, ["x_ptr", "index_ptr", "keep_ptr", "out_ptr", "scattered_ptr"])
    x = _random(dtype, BLOCK, gen)
    index = torch.randperm(BLOCK, generator=gen).to(torch.int32)
    keep = torch.rand(BLOCK, generator=gen) < 0.5
    out, scattered = _poisoned(dtype, BLOCK), _poisoned(dtype, BLOCK)
    *_, got_out, got_scattered = _run(ptx, [x, index, keep, out, scattered])
    want_out = torch.where(keep, x.double()[index.long()], float(other))
    want_scattered = scattered.double().clone()
    want_scattered[index.long()[~keep]] = x.double()[~keep]
    _same(got_out, want_out)
    _same(got_scattered, want_scattered)
    assert 0 < keep.sum() < BLOCK
    filecheck(ptx, "CHECK-NOT: bra\n"
                   "CHECK: @%p{{[0-9]+}} ld.global.b{{8|16|32|64}}\n"
                   "CHECK: @%p{{[0-9]+}} st.global.b{{8|16|32|64}}\n", tmp_path)
    per_thread = BLOCK // (32 * WARPS)  # elements: one predicated load and one predicated store each
    assert _predicated(ptx, "ld.global") == per_thread and _predicated(ptx, "st.global") == per_thread


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("aligned_sizes", [False, True], ids=["tail", "whole_runs"])
def test_masked_tail_loads_and_stores_element_by_element(name, aligned_sizes, tmp_path):
    """Sizes of unknown divisibility: one predicated access per element; sizes divisible by 16: one
    predicated vector access per run (n and m are multiples of 16 then)."""
    dtype, gen = DTYPES[name], torch.Generator().manual_seed(2)
    other = 3
    aligned = ["x_ptr", "out_ptr"] + (["n", "m"] if aligned_sizes else [])
    ptx = _compile(masked_tail_kernel, {"x_ptr": f"*{name}", "out_ptr": f"*{name}", "n": "i32", "m": "i32"},
                   {"OTHER": other, "BLOCK": TAIL_BLOCK}, aligned)
    n, m = (400, 880) if aligned_sizes else (397, 801)
    x = _random(dtype, TAIL_BLOCK, gen)
    _, got = _run(ptx, [x, _poisoned(dtype, TAIL_BLOCK)], {2: n, 3: m})
    want = _poisoned(dtype, TAIL_BLOCK).double()
    want[:m] = float(other)
    want[:n] = x.double()[:n]
    _same(got, want)
    if aligned_sizes:  # 8 elements a thread: 16-byte accesses, 8 bytes for int8
        access = {1: "v2.b32", 2: "v4.b32", 4: "v4.b32", 8: "v2.b64"}[x.element_size()]
        filecheck(ptx, "CHECK-NOT: bra\n"
                       f"CHECK: @%p{{{{[0-9]+}}}} ld.global.{access}\n"
                       f"CHECK: @%p{{{{[0-9]+}}}} st.global.{access}\n", tmp_path)
    else:
        filecheck(ptx, "CHECK-NOT: bra\n"
                       "CHECK-NOT: ld.global.v\n"
                       "CHECK: @%p{{[0-9]+}} ld.global.b{{8|16|32|64}}\n"
                       "CHECK: @%p{{[0-9]+}} st.global.b{{8|16|32|64}}\n", tmp_path)


@pytest.mark.parametrize("name", ["i1", "fp16", "fp64"])
@pytest.mark.parametrize("n,m", [(9, 9), (3, 9), (9, 3), (3, 3)])
def test_masked_scalar_load_and_store(name, n, m, tmp_path):
    dtype = torch.bool if name == "i1" else DTYPES[name]
    other = 1
    ptx = _compile(masked_scalar_kernel, {"x_ptr": f"*{name}", "out_ptr": f"*{name}", "n": "i32", "m": "i32"},
                   {"OTHER": other}, ["x_ptr", "out_ptr"])
    x = torch.rand(16, generator=torch.Generator().manual_seed(3)) < 0.5 if dtype == torch.bool else \
        _random(dtype, 16, torch.Generator().manual_seed(3))
    x[5] = False if dtype == torch.bool else 42  # differs from OTHER
    # a bool output is given as its byte, 0x5A until stored (a bool tensor's copies make it 1)
    poison = torch.full((1,), 0x5A, dtype=torch.uint8) if dtype == torch.bool else _poisoned(dtype, 1)
    _, got = _run(ptx, [x, poison], {2: n, 3: m})
    if dtype == torch.bool:
        assert int(got[0]) == (0x5A if m <= 5 else int(bool(x[5])) if n > 5 else other)
    else:
        want = poison.double() if m <= 5 else torch.tensor([x.double()[5] if n > 5 else float(other)])
        _same(got, want)
    filecheck(ptx, "CHECK-NOT: bra\n"
                   "CHECK: @%p{{[0-9]+}} ld.global.b{{8|16|64}}\n"
                   "CHECK: @%p{{[0-9]+}} st.global.b{{8|16|64}}\n", tmp_path)


@pytest.mark.parametrize("name", ["fp16", "fp32"])
def test_gather_slots_under_one_mask_run_share_one_predicate(name):
    """With n a multiple of 16, `offsets < n` is constant over each thread's contiguous slots (axis info):
    the gather's loads test one predicate per run instead of one per element, with the same
    results (checked element by element for a size that is a multiple of 16 and one that is not)."""
    dtype, gen = DTYPES[name], torch.Generator().manual_seed(4)
    signature = {"x_ptr": f"*{name}", "y_ptr": f"*{name}", "out_ptr": f"*{name}", "n": "i32"}
    predicates, loads = {}, {}
    for aligned_n, n in ((True, 400), (False, 397)):
        ptx = _compile(broadcast_tail_kernel, signature, {"OTHER": 5, "BLOCK": TAIL_BLOCK},
                       ["x_ptr", "y_ptr", "out_ptr"] + (["n"] if aligned_n else []))
        x, y = _random(dtype, TAIL_BLOCK, gen), _random(dtype, TAIL_BLOCK // 4, gen)
        *_, got = _run(ptx, [x, y, _poisoned(dtype, 2 * TAIL_BLOCK)], {3: n})
        want = _poisoned(dtype, 2 * TAIL_BLOCK).double()
        want[0:2 * n:2], want[1:2 * n:2] = x.double()[:n], y.double()[torch.arange(n) // 4]
        _same(got, want)
        predicates[aligned_n] = _distinct_predicates(ptx, "ld.global.b")
        loads[aligned_n] = _predicated(ptx, "ld.global.b")
    assert predicates[True] * 4 <= predicates[False], predicates
    # y[i // 4] under one mask run: loaded once per 4 slots (the other 3 copies of it are the same)
    assert loads[True] * 4 <= loads[False], loads


@pytest.mark.parametrize("name", ["fp16", "fp32"])
def test_slots_sharing_address_and_mask_keep_their_own_other(name):
    dtype, gen = DTYPES[name], torch.Generator().manual_seed(5)
    ptx = _compile(broadcast_other_kernel, {"x_ptr": f"*{name}", "y_ptr": f"*{name}", "out_ptr": f"*{name}",
                                            "n": "i32"}, {"BLOCK": TAIL_BLOCK}, ["x_ptr", "y_ptr", "out_ptr", "n"])
    n = 400
    x, y = _random(dtype, TAIL_BLOCK, gen), _random(dtype, TAIL_BLOCK // 4, gen)
    *_, got = _run(ptx, [x, y, _poisoned(dtype, TAIL_BLOCK)], {3: n})
    index = torch.arange(TAIL_BLOCK)
    _same(got, torch.where(index < n, y.double()[index // 4], x.double()))


@pytest.mark.parametrize("name,warps,stores", [("fp16", 8, 1), ("fp16", 4, 2), ("fp32", 4, 4)], ids=str)
def test_a_store_under_row_and_column_bounds_compares_each_row_run_once(name, warps, stores, tmp_path):
    """A 128 x 128 tile stored under `(rows < M) & (cols < N)`, M and N multiples of 16: a thread's rows
    (16, 8 or 4 apart) are compared once per 16 rows (8 compares, `constancy_leaders`) and its columns once
    (one run), each row compare combined with the column bit by one `and` just before the stores of those
    rows (`mask_bits`); no bit packed into an integer (LLVM did so for the 8-warp layout's wide i1 vector:
    a selp/shl/or chain per row). The interpreter checks the stored region."""
    dtype, gen = DTYPES[name], torch.Generator().manual_seed(7)
    size, (M, N) = 128, (80, 112)
    compiled = inductor_tile.compile(scale_tile_kernel, {"x_ptr": f"*{name}", "out_ptr": f"*{name}", "M": "i32",
                                                         "N": "i32", "stride": "i32"},
                                     constexprs={"ROWS": size, "COLS": size}, target="cuda:90", num_warps=warps,
                                     divisible_by_16=["x_ptr", "out_ptr", "M", "N", "stride"])
    ptx = compiled.asm["ptx"]
    check_ptx(ptx, "sm_90", "scale_tile_kernel")
    code = "\n".join(line for line in ptx.splitlines() if not line.strip().startswith("//"))
    group = "CHECK: setp.lt.s32 [[R{i}:%p[0-9]+]]\nCHECK: and.pred [[P{i}:%p[0-9]+]], {{{{.*}}}}[[R{i}]]\n" \
            "CHECK-NOT: setp\nCHECK: @[[P{i}]] st.global\n" + "CHECK-NEXT: @[[P{i}]] st.global\n" * (stores - 1)
    filecheck(code, "CHECK-NOT: selp\n" + "".join(group.format(i=i) for i in range(size // 16))
              + "CHECK-NOT: {{setp|st.global}}\n", tmp_path)
    assert sum(line.strip().startswith("setp.") for line in code.splitlines()) == size // 16 + 1
    x = _random(dtype, size * size, gen)
    machine = Machine(ptx, 32 * warps, [_numpy(x), _numpy(_poisoned(dtype, size * size))],
                      {2: M, 3: N, 4: size})
    machine.run()
    got = _torch(machine.buffer(1, _numpy(_poisoned(dtype, size * size))), dtype).reshape(size, size)
    want = torch.full((size, size), float("nan"), dtype=torch.float64)
    want[:M, :N] = x.double().reshape(size, size)[:M, :N]
    _same(got, want)


@pytest.mark.parametrize("name", ["fp16", "fp32"])
@pytest.mark.parametrize("aligned_sizes", [False, True], ids=["tail", "whole_runs"])
def test_row_and_column_masks_of_a_tile(name, aligned_sizes, tmp_path):
    """A 64 x 64 tile under `(rows < M) & (cols < N)` (each access's predicate the `and` of a row bit and a
    column bit, mask_bits.py), a row-only mask, and a transposed scatter (one element per access) under a
    third, element-wise factor; M and N multiples of 16 (rows and columns share bits over 16) or of unknown
    divisibility (bits per row and column). Masked lanes keep `other` or memory's NaN; no branch, and no
    mask bit packed into an integer (`selp` of a predicate)."""
    dtype, gen = DTYPES[name], torch.Generator().manual_seed(6)
    rows, cols, other = 64, 64, -3
    sizes = (48, 32) if aligned_sizes else (45, 37)
    ptx = _compile(masked_tile_kernel, {"x_ptr": f"*{name}", "out_ptr": f"*{name}", "out_t_ptr": f"*{name}",
                                        "M": "i32", "N": "i32"}, {"OTHER": other, "ROWS": rows, "COLS": cols},
                   ["x_ptr", "out_ptr", "out_t_ptr"] + (["M", "N"] if aligned_sizes else []))
    x = _random(dtype, rows * cols, gen)
    _, got, got_t = _run(ptx, [x, _poisoned(dtype, rows * cols), _poisoned(dtype, rows * cols)],
                         {3: sizes[0], 4: sizes[1]})
    r, c = torch.arange(rows)[:, None], torch.arange(cols)[None, :]
    inside = (r < sizes[0]) & (c < sizes[1])
    tile = x.double().reshape(rows, cols)
    want = torch.where(r < sizes[0], torch.where(inside, tile, float(other)), float("nan"))
    want_t = torch.where(inside & (r != c + 3), tile, float("nan")).T
    _same(got.reshape(rows, cols), want)
    _same(got_t.reshape(cols, rows), want_t)
    filecheck(ptx, "CHECK-NOT: bra\n"
                   "CHECK-NOT: selp.b{{16|32|64}} %{{[a-z]+}}{{[0-9]+}}, {{-?}}1, 0,\n", tmp_path)


def _distinct_predicates(ptx: str, opcode: str) -> int:
    """How many predicate registers guard the instructions starting with `opcode` (the scalar loads)."""
    return len({line.split()[0] for line in ptx.splitlines()
                if line.strip().startswith("@%p") and line.split()[1].startswith(opcode)})


@pytest.mark.parametrize("layout,shape", [
    (((4,), (32,), (4,), (0,)), (1024,)),
    (((8,), (32,), (4,), (0,)), (512,)),  # fewer elements than the layout covers: slots wrap around
    (((1, 4), (4, 8), (2, 2), (1, 0)), (16, 64)),
    (((2, 2), (8, 4), (1, 4), (0, 1)), (32, 64)),
    (((1, 1), (1, 1), (1, 1), (1, 0)), (4, 64)),  # the CPU's: one thread, runs longer than size_per_thread
    (((1, 4), (1, 32), (4, 1), (1, 0)), (128, 128)),  # rows 4 apart: a constancy of 16 joins 4 of them
    (((1, 2), (8, 4), (4, 1), (1, 0)), (128, 64)),  # the MMA accumulator's: rows 32 apart, column pairs 8 apart
    (((1, 8), (2, 16), (8, 1), (1, 0)), (8, 256)),  # rows wrap around: a repetition's threads hold copies
], ids=str)
@pytest.mark.parametrize("constancy", [(1, 1), (2, 1), (4, 16), (16, 2), (1024, 1024), (6, 12), (64, 32), (32, 64)],
                         ids=str)
def test_constancy_leaders_only_join_slots_of_one_constancy_run(layout, shape, constancy):
    """Every thread: a slot and its leader hold indices in the same aligned run of `constancy` along each
    dimension (so their mask bits are equal), a constancy of at least size_per_thread joins slots, and
    slots holding the same element in every thread (wrapped around a small dimension) join."""
    from inductor_tile.kernel_compiler.ir.layouts import Blocked

    _check_leaders(Blocked(*layout), shape, constancy[:len(shape)])
    spt = layout[0]
    if all(c % s == 0 for c, s in zip(constancy, spt)) and max(spt) > 1:
        from inductor_tile.kernel_compiler.ir.layouts import LayoutMap
        from inductor_tile.kernel_compiler.to_llvm.constancy import constancy_leaders

        leaders = constancy_leaders(LayoutMap(Blocked(*layout), shape), constancy[:len(shape)])
        assert len(set(leaders)) * max(spt) <= len(leaders)


@pytest.mark.parametrize("dim,shape", [(1, (128,)), (0, (128,)), (1, (32,))], ids=str)
@pytest.mark.parametrize("parent", [((1, 4), (1, 32), (4, 1), (1, 0)), ((1, 2), (8, 4), (4, 1), (1, 0)),
                                    ((2, 2), (8, 4), (1, 4), (0, 1))], ids=str)
@pytest.mark.parametrize("constancy", [1, 2, 8, 16, 64, 128], ids=str)
def test_constancy_leaders_of_slice_layouts(dim, shape, parent, constancy):
    """The rows (or columns) of a reduction's result, a slice of a blocked or MMA-like layout: the same
    guarantees (a slot's leader holds an element of its run in every thread, and every slot of its run
    joins)."""
    from inductor_tile.kernel_compiler.ir.layouts import Blocked, Slice

    _check_leaders(Slice(dim, Blocked(*parent)), shape, (constancy,))


def _check_leaders(layout, shape: tuple[int, ...], constancy: tuple[int, ...]) -> None:
    from inductor_tile.kernel_compiler.ir.layouts import LayoutMap
    from inductor_tile.kernel_compiler.to_llvm.constancy import constancy_leaders

    lmap = LayoutMap(layout, shape)
    leaders = constancy_leaders(lmap, constancy)
    warps = 1
    for w in lmap.root.warps_per_cta:
        warps *= w
    threads = [(lane, warp) for lane in range(32) for warp in range(warps)]
    for lane, warp in threads:
        for slot, leader in enumerate(leaders):
            assert leader <= slot
            here, there = lmap.index(slot, lane, warp), lmap.index(leader, lane, warp)
            assert all(a // c == b // c for a, b, c in zip(here, there, constancy)), (slot, leader, lane, warp)
    elements = [tuple(lmap.index(slot, lane, warp) for lane, warp in threads) for slot in range(len(leaders))]
    for slot, held in enumerate(elements):
        assert leaders[slot] == leaders[elements.index(held)], slot
    # complete for power-of-two constancies: slots whose elements lie in one aligned run in every thread join
    if all(c & (c - 1) == 0 for c in constancy):
        runs = [tuple(tuple(i // min(c, s) for i, c, s in zip(lmap.index(slot, lane, warp), constancy, shape))
                      for lane, warp in threads) for slot in range(len(leaders))]
        for slot, run in enumerate(runs):
            assert leaders[slot] == leaders[runs.index(run)], slot
