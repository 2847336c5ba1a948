"""Element-wise work computed once per run of slots that axis info proves equal (to_llvm/constancy.py).

PTX counts (sm_90) pin the savings: a layer norm over 768 of 1024 columns on 2 warps compares its
column mask once per thread's run of 8 columns, the Qwen3 norm+rotary kernel takes the sin and cos of
its gathered angles once per run of 8 rows. Correctness: a masked-rows kernel (non-power-of-two
columns, int and float compares, casts, int arithmetic constant over runs, selects of broadcast
operands, row sums of masked values) run by the PTX interpreter on one NVIDIA block and on the CPU
target with the sharing forced on (the CPU leaves it off: SIMD vectors gain nothing), against torch in
float64 with NaN-poisoned outputs.
"""

from __future__ import annotations

import platform

import numpy as np
import pytest
import torch
from reduce_ptx_sim import ReduceMachine
from filecheck_tool import filecheck
from test_nvidia_ptx import norm_rotary_kernel

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx
from inductor_tile.kernel_compiler.to_llvm.targets.cpu import CPUTarget

linux_x86 = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                               reason="ptxas and libdevice wheels exist for Linux x86-64 only")


@inductor_tile.jit
def layer_norm_768_kernel(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, rnumel, XBLOCK: tl.constexpr,
                          RBLOCK: tl.constexpr):
    # tile's generated layer norm forward over 768 fp16 columns (BERT/GPT-2's width), one row per program
    rnumel = 768
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xmask = xindex < xnumel
    rindex = tl.arange(0, RBLOCK)[None, :]
    rmask = rindex < rnumel
    tmp0 = tl.load(in_ptr0 + (rindex + (768 * xindex)), mask=xmask & rmask, other=0)
    tmp13 = tl.load(in_ptr1 + rindex, mask=rmask, other=0)
    tmp16 = tl.load(in_ptr2 + rindex, mask=rmask, other=0)
    tmp1 = tmp0.to(tl.float32)
    tmp3 = tl.sum(tl.where(rmask & xmask, tmp1, 0.0), 1)[:, None] / 768.0
    tmp4 = tl.where(rmask & xmask, tmp1 - tmp3, 0.0)
    tmp11 = tl.rsqrt(tl.sum(tmp4 * tmp4, 1)[:, None] / 768.0 + 1e-05)
    tmp18 = (tmp1 - tmp3) * tmp11 * tmp13.to(tl.float32) + tmp16.to(tl.float32)
    tl.store(out_ptr0 + (rindex + (768 * xindex)), tmp18.to(tl.float16), mask=xmask & rmask)


@inductor_tile.jit
def masked_rows_kernel(x_ptr, w_ptr, out_ptr, sums_ptr, rows, N: tl.constexpr, ROWS: tl.constexpr,
                       BLOCK: tl.constexpr):
    """Per row r < rows over the N of BLOCK columns c: s = x*w where c < N/2 else -x (w broadcast along the
    rows); sums[r] = sum of s; out = s - mean where that is > 0.5, else (c // 8) % 3 + r, doubled on odd rows."""
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    row_ok = r < rows
    col_ok = c < N
    mask = row_ok & col_ok
    x = tl.load(x_ptr + r * N + c, mask=mask, other=0.0)
    w = tl.load(w_ptr + c, mask=col_ok, other=0.0)
    s = tl.where(c < N // 2, x * w, -x)
    total = tl.sum(tl.where(mask, s, 0.0), 1)
    tl.store(sums_ptr + r, total[:, None], mask=row_ok)
    centered = tl.where(mask, s - total[:, None] / N, 0.0)
    group = ((c // 8) % 3).to(tl.float32) + r.to(tl.float32)
    y = tl.where(centered > 0.5, centered, group)
    y = tl.where(r % 2 == 1, y * 2.0, y)
    tl.store(out_ptr + r * N + c, y, mask=mask)


def masked_rows_reference(x: torch.Tensor, w: torch.Tensor, rows: int, n: int):
    x, w = x.double()[:rows * n].reshape(rows, n), w.double()[:n]
    c = torch.arange(n)
    r = torch.arange(rows)[:, None].double()
    s = torch.where(c < n // 2, x * w, -x)
    total = s.sum(1)
    centered = s - total[:, None] / n
    y = torch.where(centered > 0.5, centered, ((c // 8) % 3).double() + r)
    return torch.where(r % 2 == 1, y * 2.0, y), total


def _ptx(kernel, signature: dict[str, str], constexprs: dict, warps: int) -> str:
    """sm_90 PTX with pointers and the size arguments of the generated kernels (xnumel, rnumel) taken as
    multiples of 16, as the launcher specializes them (`rows` stays any number)."""
    aligned = [name for name, ty in signature.items() if ty.startswith("*") or name.endswith("numel")]
    compiled = inductor_tile.compile(kernel, signature, constexprs=constexprs, target="cuda:90", num_warps=warps,
                                     divisible_by_16=aligned)
    ptx = compiled.asm["ptx"]
    check_ptx(ptx, "sm_90", kernel.__name__)
    return ptx


LN_SIGNATURE = {"in_ptr0": "*fp16", "in_ptr1": "*fp16", "in_ptr2": "*fp16", "out_ptr0": "*fp16", "xnumel": "i32",
                "rnumel": "i32"}


@linux_x86
def test_layer_norm_compares_its_column_mask_once_per_run(tmp_path):
    # 2 warps, 8 columns per thread and rep: `rindex < 768` holds over each run of 8 (768 = 96 * 8), so one
    # compare per rep (2) and one for the row; every other compare was one per column (17 setp before)
    ptx = _ptx(layer_norm_768_kernel, LN_SIGNATURE, {"XBLOCK": 1, "RBLOCK": 1024}, 2)
    filecheck(ptx, "CHECK-COUNT-3: setp.\n"
                   "CHECK-NOT: setp.\n", tmp_path)


@linux_x86
def test_rotary_takes_sin_and_cos_once_per_run_of_equal_angles():
    # 16 rows x 128 columns on 4 warps: a thread's 4 rows hold angles of one position (`x0 // 8`), gathered
    # once per run; the sin, the cos, their quadrant selects and the `r0 < 64` halves follow the run
    # (105 setp and 2177 instructions before)
    sig = {"in_ptr0": "*fp16", "in_ptr1": "*fp16", "in_ptr2": "*fp32", "out_ptr0": "*fp16", "xnumel": "i32",
           "rnumel": "i32"}
    ptx = _ptx(norm_rotary_kernel, sig, {"XBLOCK": 16, "RBLOCK": 128}, 4)
    setps = [line for line in ptx.splitlines() if line.strip().startswith("setp.")]
    assert len(setps) <= 30, len(setps)
    assert sum(1 for line in setps if line.rstrip(";").endswith((", 64", ", 63"))) == 2  # r0 < 64 and r0 >= 64


def _sim(ptx: str, warps: int, buffers: list[np.ndarray], scalars: dict[int, int]) -> list[np.ndarray]:
    machine = ReduceMachine(ptx, 32 * warps, buffers, scalars)
    machine.run()
    return [machine.buffer(i, b) for i, b in enumerate(buffers)]


def _inputs(rows_total: int, n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(rows_total * n, generator=gen), torch.randn(n, generator=gen)


ROWS_SIGNATURE = {"x_ptr": "*fp32", "w_ptr": "*fp32", "out_ptr": "*fp32", "sums_ptr": "*fp32", "rows": "i32"}


@linux_x86
@pytest.mark.parametrize("n, block, rows_per_program, warps", [(200, 256, 2, 2), (96, 128, 4, 4), (40, 64, 4, 1)])
def test_masked_rows_on_one_nvidia_block(n, block, rows_per_program, warps):
    rows = rows_per_program - 1  # the last row of the block is masked off
    x, w = _inputs(rows_per_program, n, seed=n)
    ptx = _ptx(masked_rows_kernel, ROWS_SIGNATURE, {"N": n, "ROWS": rows_per_program, "BLOCK": block}, warps)
    out = np.full(rows_per_program * n, np.nan, dtype=np.float32)
    sums = np.full(rows_per_program, np.nan, dtype=np.float32)
    *_, got_out, got_sums = _sim(ptx, warps, [x.numpy(), w.numpy(), out, sums], {4: rows})
    want_out, want_sums = masked_rows_reference(x, w, rows, n)
    torch.testing.assert_close(torch.from_numpy(got_out[:rows * n]).double(), want_out.flatten(), rtol=1e-5,
                               atol=1e-5)
    torch.testing.assert_close(torch.from_numpy(got_sums[:rows]).double(), want_sums, rtol=1e-5, atol=1e-5)
    assert np.isnan(got_out[rows * n:]).all() and np.isnan(got_sums[rows:]).all()


@pytest.fixture
def cpu_shares_equal_slots(monkeypatch):
    """The CPU target with the sharing on (its default is off), in a fresh kernel cache."""
    monkeypatch.setattr(CPUTarget, "shares_equal_slots", True)
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")


@pytest.mark.parametrize("n, block, rows_per_program", [(200, 256, 1), (96, 128, 2), (40, 64, 4), (24, 32, 8)])
def test_masked_rows_on_the_cpu_with_shared_slots(cpu_shares_equal_slots, n, block, rows_per_program):
    rows = 3 * rows_per_program - 1  # the last program's last row is masked off
    programs = 3
    x, w = _inputs(programs * rows_per_program, n, seed=n + 1)
    out = torch.full((programs * rows_per_program * n,), float("nan"))
    sums = torch.full((programs * rows_per_program,), float("nan"))
    masked_rows_kernel[(programs,)](x, w, out, sums, rows, N=n, ROWS=rows_per_program, BLOCK=block)
    want_out, want_sums = masked_rows_reference(x, w, rows, n)
    torch.testing.assert_close(out[:rows * n].double(), want_out.flatten(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(sums[:rows].double(), want_sums, rtol=1e-5, atol=1e-5)
    assert out[rows * n:].isnan().all() and sums[rows:].isnan().all()


@inductor_tile.jit
def masked_row_reductions_kernel(x_ptr, out_ptr, counts_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    """Reductions of one row of N values in a BLOCK-wide tile whose masked slots hold the reduction's
    neutral value: a sum, a sum of squares, a max, an int count."""
    c = tl.arange(0, BLOCK)
    m = c < N
    x = tl.load(x_ptr + c, mask=m, other=0.0)
    tl.store(out_ptr, tl.sum(tl.where(m, x, 0.0), 0))
    xm = tl.where(m, x, 0.0)
    tl.store(out_ptr + 1, tl.sum(xm * xm, 0))
    tl.store(out_ptr + 2, tl.max(tl.where(m, x, float("-inf")), 0))
    tl.store(counts_ptr, tl.sum(tl.where(m, (x > 0).to(tl.int32), 0), 0))


REDUCTIONS_SIGNATURE = {"x_ptr": "*fp32", "out_ptr": "*fp32", "counts_ptr": "*i32"}


@linux_x86
def test_sums_leave_out_slots_masked_in_every_thread(tmp_path):
    # 768 of 1024 columns on one warp: a thread's last 8 slots are columns 768..1023 in every thread. They
    # add nothing: each sum adds +0.0 once (not 8 times: `acc + 0.0` is kept for acc = -0.0) and the max
    # leaves out its -inf
    ptx = _ptx(masked_row_reductions_kernel, REDUCTIONS_SIGNATURE, {"N": 768, "BLOCK": 1024}, 1)
    zero_adds = [line for line in ptx.splitlines() if line.strip().startswith("add.f32") and "0f00000000" in line]
    assert len(zero_adds) <= 2, zero_adds
    assert "0fFF800000" not in ptx.split("shfl.sync")[0].split("ld.global")[-1]  # no max with -inf in the thread


@linux_x86
@pytest.mark.parametrize("n, block, warps", [(768, 1024, 1), (200, 1024, 1), (200, 256, 2), (1000, 1024, 4)])
@pytest.mark.parametrize("negative_zeros", [False, True], ids=["random", "negative_zeros"])
def test_masked_row_reductions_on_one_nvidia_block(n, block, warps, negative_zeros):
    # negative zeros: the padded +0.0 makes the sum +0.0 (the kernel sums BLOCK values), so one +0.0 must stay
    x = torch.full((n,), -0.0) if negative_zeros else torch.randn(n, generator=torch.Generator().manual_seed(n))
    ptx = _ptx(masked_row_reductions_kernel, REDUCTIONS_SIGNATURE, {"N": n, "BLOCK": block}, warps)
    out, counts = np.full(4, np.nan, dtype=np.float32), np.full(2, 1234567, dtype=np.int32)
    _, got, got_counts = _sim(ptx, warps, [x.numpy(), out, counts], {})
    padded = torch.cat([x.double(), torch.zeros(block - n, dtype=torch.float64)])
    want = torch.stack([padded.sum(), (padded * padded).sum(), x.double().max()])
    torch.testing.assert_close(torch.from_numpy(got[:3]).double(), want, rtol=1e-5, atol=1e-5)
    assert np.isnan(got[3]) and got_counts[1] == 1234567
    assert got_counts[0] == int((x > 0).sum())
    if negative_zeros:
        assert not np.signbit(got[0]) and not np.signbit(got[1]), got[:2]


@inductor_tile.jit
def rotate_half_kernel(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    # tile's generated rotary `cat([-x[..., 64:], x[..., :64]]) * sin + x * cos` over rows of 128 (Llama-style
    # decoders): `x2 < 64` and `x2 >= 64` pick the halves
    xindex = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex // 262144
    x1 = (xindex // 128) % 2048
    x2 = xindex % 128
    tmp0 = tl.load(in_ptr0 + (x2 + (128 * x1) + (262144 * x0)), mask=xmask, other=0)
    tmp1 = tl.load(in_ptr1 + (x2 + (128 * x1)), mask=xmask, other=0)
    tmp3 = x2.to(tl.int64)
    tmp7 = tmp3 < 64
    tmp8 = tl.load(in_ptr0 + (64 + x2 + (128 * x1) + (262144 * x0)), mask=xmask & tmp7, other=0)
    tmp10 = tl.where(tmp7, -tmp8, 0.0)
    tmp11 = tmp3 >= 64
    tmp14 = tl.load(in_ptr0 + ((-64) + x2 + (128 * x1) + (262144 * x0)), mask=xmask & tmp11, other=0)
    tmp16 = tl.where(tmp7, tmp10, tl.where(tmp11, tmp14, 0.0))
    tmp17 = tl.load(in_ptr2 + (x2 + (128 * x1)), mask=xmask, other=0)
    tl.store(out_ptr0 + (x2 + (128 * x1) + (262144 * x0)), tmp0 * tmp1 + tmp16 * tmp17, mask=xmask)


def rotate_half_reference(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, n: int) -> torch.Tensor:
    """The kernel over x (positions * 128 values, position p using row p % 2048 of cos and sin), float64."""
    rows = x.double().reshape(-1, 128)
    rotated = torch.cat([-rows[:, 64:], rows[:, :64]], 1)
    table = torch.arange(rows.shape[0]) % 2048
    return (rows * cos.double().reshape(-1, 128)[table] + rotated * sin.double().reshape(-1, 128)[table]).flatten()[:n]


ROTATE_SIGNATURE = {"in_ptr0": "*fp16", "in_ptr1": "*fp16", "in_ptr2": "*fp16", "out_ptr0": "*fp16", "xnumel": "i32"}


@linux_x86
def test_rotate_half_compares_once_per_thread_and_selects_once(tmp_path):
    # 1024 values on 4 warps: a thread's 8 values lie in one half of a row, so `x2 < 64`, `x2 >= 64` and the
    # masks are one compare each (10 setp before), and LLVM sees the second as the first's inverse: the
    # nested where is one select per value pair (selp 16 before sharing, 8 with it)
    ptx = _ptx(rotate_half_kernel, ROTATE_SIGNATURE, {"XBLOCK": 1024}, 4)
    filecheck(ptx, "CHECK-COUNT-3: setp.\n"
                   "CHECK-NOT: setp.\n", tmp_path)
    assert sum(1 for line in ptx.splitlines() if line.strip().startswith("selp")) <= 8


@linux_x86
def test_rotate_half_on_one_nvidia_block():
    # fp32 variant of the generated kernel (the interpreter's f16 arithmetic is partial), positions of one row
    # each; xnumel a multiple of 16 as the launcher specializes
    gen = torch.Generator().manual_seed(5)
    n = 1024
    x, cos, sin = (torch.randn(n, generator=gen) for _ in range(3))
    signature = {name: ("*fp32" if ty.startswith("*") else ty) for name, ty in ROTATE_SIGNATURE.items()}
    ptx = _ptx(rotate_half_kernel, signature, {"XBLOCK": 1024}, 4)
    out = np.full(n, np.nan, dtype=np.float32)
    *_, got = _sim(ptx, 4, [x.numpy(), cos.numpy(), sin.numpy(), out], {4: n - 16})
    want = rotate_half_reference(x, cos, sin, n - 16)
    torch.testing.assert_close(torch.from_numpy(got[:n - 16]).double(), want, rtol=1e-5, atol=1e-5)
    assert np.isnan(got[n - 16:]).all()
