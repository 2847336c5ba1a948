"""The lines tl.device_print writes, compiled for the CPU and in the interpreter (the same text in both).

Each element is one line: `pid (x, y, z) idx (i, j) <label>: <value>`, where the label is the prefix
without its trailing colon and spaces, each index is padded to the width of its dimension's largest
index, and `(operand n)` follows the colon when several values are printed. Integers print by their
language type (unsigned ones as unsigned, though IR integers are signless), `hex=True` prints them
zero-padded to their size in hexadecimal, floats as C's %f, pointers in hexadecimal.
"""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl

ROWS, COLS = 4, 16


@inductor_tile.jit
def print_grid_kernel(x_ptr, y_ptr, HEX: tl.constexpr):
    rows = tl.arange(0, 4)[:, None]
    cols = tl.arange(0, 16)[None, :]
    x = tl.load(x_ptr + rows * 16 + cols)
    tl.device_print("x: ", x, hex=HEX)
    tl.store(y_ptr + rows * 16 + cols, x)


@inductor_tile.jit
def print_two_kernel(a_ptr, b_ptr):
    offs = tl.arange(0, 8)
    tl.device_print("", tl.load(a_ptr + offs), tl.load(b_ptr + offs))
    tl.device_print("done")


def _lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("pid (")]


def _expected_grid(values: torch.Tensor, pid: int, hex: bool, digits: int) -> list[str]:
    lines = []
    for i in range(ROWS):
        for j in range(COLS):
            v = int(values[i, j])
            text = f"0x{v & ((1 << 4 * digits) - 1):0{digits}x}" if hex else str(v)
            lines.append(f"pid ({pid}, 0, 0) idx ({i}, {j:2}) x: {text}")
    return lines


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("dtype, hex, digits", [(torch.int8, False, 2), (torch.uint8, False, 2),
                                                (torch.int16, True, 4), (torch.uint32, False, 8),
                                                (torch.int32, True, 8), (torch.int64, False, 16)])
def test_integers_print_by_their_language_type(mode, dtype, hex, digits, request, capfd):
    request.getfixturevalue(mode)
    info = torch.iinfo(dtype)
    gen = torch.Generator().manual_seed(7)
    x = torch.randint(max(info.min, -2**62), min(info.max, 2**62), (ROWS, COLS), generator=gen, dtype=torch.int64)
    x = x.to(dtype)
    y = torch.full_like(x, 0x5A)  # poisoned: the kernel overwrites every element
    print_grid_kernel[(1,)](x, y, HEX=hex)
    lines = _lines(capfd.readouterr().out)
    assert sorted(lines) == sorted(_expected_grid(x.to(torch.int64), 0, hex, digits))
    assert torch.equal(y, x)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_several_values_are_numbered_and_floats_print_as_c_does(mode, request, capfd):
    request.getfixturevalue(mode)
    gen = torch.Generator().manual_seed(11)
    a = torch.randint(-1000, 1000, (8,), generator=gen, dtype=torch.int32)
    b = (torch.rand(8, generator=gen, dtype=torch.float64) * 200 - 100).to(torch.float32)
    print_two_kernel[(1,)](a, b)
    lines = _lines(capfd.readouterr().out)
    expected = [f"pid (0, 0, 0) idx ({i}): (operand 0) {int(a[i])}" for i in range(8)]
    expected += [f"pid (0, 0, 0) idx ({i}): (operand 1) {float(b[i]):f}" for i in range(8)]
    expected += ["pid (0, 0, 0) done"]
    assert sorted(lines) == sorted(expected)


def test_wide_tiles_print_in_a_loop_and_the_op_keeps_signedness_and_hex(tmp_path):
    """tt.print carries the label, `hex` and per-value signedness; a 64-element tile prints in one loop (one
    printf call in the code, not 64), a small one element by element."""
    from filecheck_tool import filecheck

    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature

    specs = [spec_from_signature("x_ptr", "*u16", None), spec_from_signature("y_ptr", "*u16", None),
             spec_from_signature("HEX", "constexpr", True)]
    compiled = compile_specialized(print_grid_kernel, specs, target="cpu", num_warps=1, native=False)
    filecheck(compiled.asm["ttir"], 'CHECK: tt.print {{.*}}prefix = "x", hex = true, is_signed = array<i32: 0>'
                                    "{{.*}} : tensor<4x16xi16>\n", tmp_path)
    filecheck(compiled.asm["llir"], "CHECK: idx (%1d, %2d) x: 0x%04llx\\0A\n"
                                    "CHECK-COUNT-1: call {{.*}} @printf(\n"
                                    "CHECK-NOT: call {{.*}} @printf(\n", tmp_path)
    specs = [spec_from_signature("a_ptr", "*i32", None), spec_from_signature("b_ptr", "*fp32", None)]
    compiled = compile_specialized(print_two_kernel, specs, target="cpu", num_warps=1, native=False)
    filecheck(compiled.asm["llir"], "CHECK-COUNT-17: call {{.*}} @printf(\n", tmp_path)


@inductor_tile.jit
def print_wide_kernel(x_ptr):
    tl.device_print("x", tl.load(x_ptr + tl.arange(0, 1024)))


@pytest.mark.skipif(not __import__("platform").machine() == "x86_64", reason="ptxas wheels exist for x86-64 only")
def test_print_loop_assembles_for_sm90():
    """A thread holding more than a few elements prints them in a loop on the GPU too (vprintf)."""
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    specs = [spec_from_signature("x_ptr", "*i32", divisible_by_16=True)]
    ptx = compile_specialized(print_wide_kernel, specs, target="cuda:90", num_warps=1, native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", "print_wide_kernel")  # 1024 elements over 32 threads: 32 per thread
    assert ptx.count("vprintf") < 32  # a loop (LLVM may unroll it a few times), not a call per element
