"""Tensor descriptors: tl.make_tensor_descriptor in a kernel and host TensorDescriptor arguments, with
desc.load / desc.store, tl.load_tensor_descriptor / tl.store_tensor_descriptor, desc.atomic_*,
desc.gather / desc.scatter, in loops and runtime branches.

Windows reach past every edge of the tensors (negative offsets too): loads must give the padding
there, stores must leave memory alone. Inputs are random, outputs start as NaN (or a sentinel),
references are computed by torch in float64 (or exactly, for integers). Each check runs in the
interpreter and on the CPU target (tests/gpu/test_tensor_descriptor_gpu.py runs them on CUDA);
the PTX of the kernels assembles with ptxas.
"""

from __future__ import annotations

import platform

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.tools.tensor_descriptor import TensorDescriptor


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


# ===------------------------------------------------------------------------===
# Windows through a descriptor made in the kernel or given by the host
# ===------------------------------------------------------------------------===
@inductor_tile.jit
def as_descriptor(x, shape, strides, block_shape, padding: tl.constexpr):
    """`x` itself if it is a descriptor already (a host TensorDescriptor), else one made here (the
    pattern of Triton's fused-attention tutorial)."""
    if isinstance(x, tl.tensor_descriptor):
        return x
    else:
        return tl.make_tensor_descriptor(x, shape, strides, block_shape, padding_option=padding)


@inductor_tile.jit
def scale_windows(x, y, blocks_ptr, M, N, stride_m, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    """y = 2x + 1 window by window; the windows start half a block above the tensor, so the first and
    last rows of windows stick out. `blocks` gets every window as loaded, padding included."""
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    src = as_descriptor(x, [M, N], [stride_m, 1], [BM, BN], PAD)
    dst = as_descriptor(y, [M, N], [N, 1], [BM, BN], "zero")
    row, col = pid_m * BM - BM // 2, pid_n * BN
    v = src.load([row, col])
    dst.store([row, col], v * 2 + 1)
    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    tl.store(blocks_ptr + rows[:, None] * (tl.num_programs(1) * BN) + cols[None, :], v)


def _windows_reference(x: torch.Tensor, bm: int, bn: int, pad: str) -> tuple[torch.Tensor, torch.Tensor]:
    m, n = x.shape
    grid = (cdiv(m + bm // 2, bm), cdiv(n, bn))
    blocks = torch.full((grid[0] * bm, grid[1] * bn), 0.0 if pad == "zero" else float("nan"), dtype=torch.float64)
    blocks[bm // 2:bm // 2 + m, :n] = x.double()
    return (x.double() * 2 + 1), blocks


def check_windows(device: str, gen: torch.Generator, host: bool) -> None:
    for (m, n, bm, bn, pad) in ((37, 50, 16, 16, "zero"), (20, 33, 8, 32, "nan")):
        storage = torch.randn(m, n + 11, generator=gen).to(device)  # rows 61 elements apart: strided
        x = storage[:, :n]
        y = torch.full((m, n), float("nan"), device=device)
        grid = (cdiv(m + bm // 2, bm), cdiv(n, bn))
        blocks = torch.full((grid[0] * bm, grid[1] * bn), 7.0, device=device)
        if host:
            src = TensorDescriptor(x, list(x.shape), list(x.stride()), [bm, bn], padding=pad)
            dst = TensorDescriptor.from_tensor(y, [bm, bn])
        else:
            src, dst = x, y
        scale_windows[grid](src, dst, blocks, m, n, x.stride(0), BM=bm, BN=bn, PAD=pad)
        want_y, want_blocks = _windows_reference(x.cpu(), bm, bn, pad)
        assert torch.equal(y.cpu().double(), want_y.float().double())
        got = blocks.cpu().double()
        assert torch.equal(got.isnan(), want_blocks.isnan())
        assert torch.equal(got.nan_to_num(3.0), want_blocks.nan_to_num(3.0))


# ===------------------------------------------------------------------------===
# Rank 3, the function forms, a descriptor chosen by a runtime branch and used in a loop
# ===------------------------------------------------------------------------===
@inductor_tile.jit
def depth_sums(a_ptr, b_ptr, out_ptr, D, R, C, BR: tl.constexpr, BC: tl.constexpr):
    """out[r, c] = sum_d a[d, r, c] for even column blocks, sum_d b[d, r, c] for odd ones (a and b are
    [D, R, C]); the last row and column blocks stick out of the tensors."""
    pid_r, pid_c = tl.program_id(0), tl.program_id(1)
    a = tl.make_tensor_descriptor(a_ptr, [D, R, C], [R * C, C, 1], [1, BR, BC])
    src = tl.make_tensor_descriptor(b_ptr, [D, R, C], [R * C, C, 1], [1, BR, BC])
    if pid_c % 2 == 0:
        src = a
    acc = tl.zeros([BR, BC], dtype=tl.float32)
    for d in range(0, D):
        block = tl.load_tensor_descriptor(src, [d, pid_r * BR, pid_c * BC])
        acc += tl.reshape(block, [BR, BC])
    out = tl.make_tensor_descriptor(out_ptr, [R, C], [C, 1], [BR, BC])
    tl.store_tensor_descriptor(out, [pid_r * BR, pid_c * BC], acc)


def check_depth_sums(device: str, gen: torch.Generator) -> None:
    d, r, c, br, bc = 5, 19, 45, 8, 16
    a, b = (torch.randn(d, r, c, generator=gen).to(device) for _ in range(2))
    out = torch.full((r, c), float("nan"), device=device)
    depth_sums[(cdiv(r, br), cdiv(c, bc))](a, b, out, d, r, c, BR=br, BC=bc)
    even = (torch.arange(c) // bc) % 2 == 0
    want = torch.where(even[None, :], a.cpu().double().sum(0), b.cpu().double().sum(0))
    torch.testing.assert_close(out.cpu().double(), want, rtol=1e-6, atol=1e-5)


# ===------------------------------------------------------------------------===
# Atomics, gathers and scatters
# ===------------------------------------------------------------------------===
@inductor_tile.jit
def add_windows(target, values_ptr, BM: tl.constexpr, BN: tl.constexpr):
    """Program p adds its [BM, BN] values at rows p * BM // 2 - 3 (windows overlap, and stick out at both
    ends) and takes the maximum with them one column block to the right."""
    pid = tl.program_id(0)
    offsets = (pid * BM + tl.arange(0, BM))[:, None] * BN + tl.arange(0, BN)[None, :]
    v = tl.load(values_ptr + offsets)
    target.atomic_add([pid * (BM // 2) - 3, 0], v)
    target.atomic_max([pid * (BM // 2) - 3, BN], v)


def check_atomics(device: str, gen: torch.Generator) -> None:
    m, n, bm, bn, programs = 21, 24, 8, 16, 5
    target = torch.randint(-50, 50, (m, n), generator=gen, dtype=torch.int32)
    values = torch.randint(-100, 100, (programs * bm, bn), generator=gen, dtype=torch.int32)
    want = target.clone().long()
    for p in range(programs):
        row = p * (bm // 2) - 3
        for i in range(bm):
            if 0 <= row + i < m:
                want[row + i, :bn] += values[p * bm + i]
                width = n - bn
                want[row + i, bn:] = torch.maximum(want[row + i, bn:], values[p * bm + i, :width].long())
    target_dev = target.to(device)
    add_windows[(programs,)](TensorDescriptor.from_tensor(target_dev, [bm, bn]), values.to(device), BM=bm, BN=bn)
    assert torch.equal(target_dev.cpu().long(), want)


@inductor_tile.jit
def gather_scatter(table, rows_ptr, column, gathered_ptr, out, NR: tl.constexpr, BC: tl.constexpr):
    """gathered = table[rows, column:column + BC] (rows and columns outside the table: zero); then the same
    rows of `out` get those values plus 1 (rows outside: nothing written)."""
    rows = tl.load(rows_ptr + tl.arange(0, NR))
    g = table.gather(rows, column)
    tl.store(gathered_ptr + tl.arange(0, NR)[:, None] * BC + tl.arange(0, BC)[None, :], g)
    out.scatter(g + 1, rows, column)


def check_gather_scatter(device: str, gen: torch.Generator) -> None:
    r, c, nr, bc, column = 13, 40, 8, 16, 30  # columns 30..45 of 40: the last 6 are outside
    table = torch.randn(r, c, generator=gen)
    rows = torch.tensor([3, -1, 12, 0, 13, 7, 5, 20], dtype=torch.int32)  # unique; -1, 13 and 20 are outside
    gathered = torch.full((nr, bc), float("nan"), device=device)
    out = torch.full((r, c), float("nan"), device=device)
    table_desc = TensorDescriptor.from_tensor(table.to(device), [1, bc])
    out_desc = TensorDescriptor.from_tensor(out, [1, bc])
    gather_scatter[(1,)](table_desc, rows.to(device), column, gathered, out_desc, NR=nr, BC=bc)
    want = torch.zeros(nr, bc, dtype=torch.float64)
    want_out = torch.full((r, c), float("nan"), dtype=torch.float64)
    for i, row in enumerate(rows.tolist()):
        if 0 <= row < r:
            want[i, :c - column] = table[row, column:].double()
            want_out[row, column:] = table[row, column:].double() + 1
    assert torch.equal(gathered.cpu().double(), want)
    torch.testing.assert_close(out.cpu().double(), want_out, rtol=1e-7, atol=0, equal_nan=True)  # NaN: unwritten


CHECKS = {
    "windows, descriptors made in the kernel": lambda device, gen: check_windows(device, gen, host=False),
    "windows, host descriptors": lambda device, gen: check_windows(device, gen, host=True),
    "rank 3, a runtime branch, a loop": check_depth_sums,
    "atomic_add and atomic_max": check_atomics,
    "gather and scatter": check_gather_scatter,
}


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_tensor_descriptors_match_torch(name, mode, request, gen):
    request.getfixturevalue(mode)
    CHECKS[name]("cpu", gen)


@inductor_tile.jit
def copy_rows(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    dst.store([tl.program_id(0) * BM, 0], src.load([tl.program_id(0) * BM, 0]))


def test_host_descriptors_specialize_on_block_shape(compiled, gen):
    x = torch.randn(20, 32, generator=gen)
    compiled_before = len(copy_rows.cache)
    for bm, bn in ((8, 32), (16, 32), (8, 32)):
        y = torch.full_like(x, float("nan"))
        copy_rows[(cdiv(20, bm),)](TensorDescriptor.from_tensor(x, [bm, bn]), TensorDescriptor.from_tensor(y, [bm, bn]),
                                   BM=bm, BN=bn)
        assert torch.equal(y, x)
    assert len(copy_rows.cache) == compiled_before + 2  # one kernel per block shape


# ===------------------------------------------------------------------------===
# Errors
# ===------------------------------------------------------------------------===
@inductor_tile.jit
def strided_columns(x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    tl.make_tensor_descriptor(x_ptr, [M, N], [1, M], [BM, BN]).load([0, 0])


@inductor_tile.jit
def narrow_rows(x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN]).load([0, 0])


@inductor_tile.jit
def wrong_offsets(x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN]).load([0])


@inductor_tile.jit
def wrong_value_shape(x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN]).store([0, 0], tl.zeros([BM, BN * 2], tl.float32))


@inductor_tile.jit
def nan_padded_ints(x_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN], padding_option="nan").load([0, 0])


@pytest.mark.parametrize("kernel, block, dtype, message", [
    (strided_columns, (8, 8), torch.float32, "last dimension must be contiguous"),
    (narrow_rows, (8, 2), torch.float32, "at least 16 bytes"),
    (narrow_rows, (8, 12), torch.float32, "power of two"),
    (wrong_offsets, (8, 8), torch.float32, "1 offsets for a descriptor of rank 2"),
    (wrong_value_shape, (8, 8), torch.float32, "must have the block's shape [8, 8]"),
    (nan_padded_ints, (8, 8), torch.int32, "padding_option='nan' needs floating-point"),
])
def test_descriptor_errors_point_at_the_kernel(kernel, block, dtype, message, compiled):
    x = torch.zeros(16, 16, dtype=dtype)
    with pytest.raises(CompilationError) as info:
        kernel[(1,)](x, 16, 16, BM=block[0], BN=block[1])
    assert message in str(info.value) and kernel.__name__ in str(info.value)


def test_host_descriptor_errors(compiled):
    x = torch.zeros(8, 16)
    with pytest.raises(ValueError, match="last dimension must be contiguous"):
        TensorDescriptor(x, [16, 8], [1, 16], [8, 8])
    with pytest.raises(ValueError, match="padding must be 'zero' or 'nan'"):
        TensorDescriptor.from_tensor(x, [8, 8], padding="edge")
    with pytest.raises(ValueError, match="same length"):
        TensorDescriptor.from_tensor(x, [8])
    y = torch.empty(8, 16)
    with pytest.raises(Exception, match="argument 'x' \\(a TensorDescriptor\\).*at least 16 bytes"):
        # a block shape left as a placeholder (autotuning pre-hooks set the real one)
        scale_windows[(1, 1)](TensorDescriptor.from_tensor(x, [1, 1]), TensorDescriptor.from_tensor(y, [1, 1]),
                              y, 8, 16, 16, BM=1, BN=1, PAD="zero")


# ===------------------------------------------------------------------------===
# NVIDIA: the PTX assembles
# ===------------------------------------------------------------------------===
@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
@pytest.mark.parametrize("host", [False, True])
def test_descriptor_kernels_assemble_for_sm90(host):
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    x, y, blocks = torch.empty(64, 64), torch.empty(64, 64), torch.empty(128, 64)
    if host:
        x, y = TensorDescriptor.from_tensor(x, [32, 64]), TensorDescriptor.from_tensor(y, [32, 64])
    bound = scale_windows.bind((x, y, blocks, 64, 64, 64), {"BM": 32, "BN": 64, "PAD": "zero"})
    specs = scale_windows.specialize(bound)
    ptx = compile_specialized(scale_windows, specs, target="cuda:90", num_warps=4, native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", "scale_windows")


# ===------------------------------------------------------------------------===
# A Python `assert` on a runtime value is tl.device_assert (Triton's rule; its descriptor kernels check
# `assert desc.shape[0] == M`): checked in debug mode, compiled out otherwise
# ===------------------------------------------------------------------------===
def _check_extent(x_ptr, M, BM: tl.constexpr, BN: tl.constexpr):
    desc = tl.make_tensor_descriptor(x_ptr, [M, BN], [BN, 1], [BM, BN])
    assert desc.block_shape == [BM, BN]  # known now: a compile-time check
    assert desc.shape[0] == 16, "the descriptor has 16 rows"
    desc.store([0, 0], desc.load([0, 0]) + 1)


def test_runtime_assert_is_a_device_assertion(compiled):
    """(Also: a @jit(debug=True) kernel never loads the disk cache entry of the same kernel without debug.)"""
    from inductor_tile.kernel_compiler.runtime.device_assert import DeviceAssertionError

    checked, unchecked = inductor_tile.jit(debug=True)(_check_extent), inductor_tile.jit(_check_extent)
    x = torch.zeros(16, 16)
    checked[(1,)](x, 16, BM=8, BN=16)
    unchecked[(1,)](x, 15, BM=8, BN=16)
    assert torch.equal(x[:8], torch.full((8, 16), 2.0)) and torch.equal(x[8:], torch.zeros(8, 16))
    with pytest.raises(DeviceAssertionError, match="the descriptor has 16 rows"):
        checked[(1,)](x, 15, BM=8, BN=16)


# ===------------------------------------------------------------------------===
# A dimension known at compile time to lie inside the tensor gets no bounds check
# ===------------------------------------------------------------------------===
@inductor_tile.jit
def rows_of_known_width(x_ptr, y_ptr, M, N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    dst = tl.make_tensor_descriptor(y_ptr, [M, N], [N, 1], [BM, BN])
    dst.store([tl.program_id(0) * BM, 0], src.load([tl.program_id(0) * BM, 0]) + 1)


@pytest.mark.parametrize("n, checks_columns", [(16, False), (12, True)])
def test_columns_known_inside_are_not_checked(n, checks_columns, tmp_path, gen):
    from filecheck_tool import filecheck

    from inductor_tile.kernel_compiler.compiler import compile_specialized

    x = torch.randn(10, n, generator=gen)
    bound = rows_of_known_width.bind((x, x, 10), {"N": n, "BM": 4, "BN": 16})
    ttir = compile_specialized(rows_of_known_width, rows_of_known_width.specialize(bound), target="cpu",
                               native=False).asm["ttir"]
    rows = "CHECK: arith.cmpi slt, {{.*}} : tensor<4x1xi64>\n"
    columns = "arith.cmpi slt, {{.*}} : tensor<1x16xi64>\n"
    filecheck(ttir, rows + ("CHECK: " if checks_columns else "CHECK-NOT: ") + columns + "CHECK: tt.load", tmp_path)
    if n == 12:  # and the values: 16 columns of which 12 exist
        y = torch.full_like(x, float("nan"))
        rows_of_known_width[(3,)](x, y, 10, N=n, BM=4, BN=16)
        torch.testing.assert_close(y.double(), x.double() + 1, rtol=1e-7, atol=1e-7)
