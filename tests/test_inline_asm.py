"""tl.inline_asm_elementwise on the CPU target (x86 assembly, AT&T syntax), its typing errors, purity, and the
interpreter's refusal. NVIDIA (PTX): tests/test_inline_asm_ptx.py; on a GPU: tests/gpu/test_inline_asm_gpu.py.

Every kernel runs on random inputs into poisoned outputs, against torch computed in int64 / float64.
"""

from __future__ import annotations

import platform
import re

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from test_errors import compile_error

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                                reason="the kernels' assembly is x86")

M, N = 8, 32


def _ints(shape, gen, dtype=torch.int32, low=-1000, high=1000) -> torch.Tensor:
    return torch.randint(low, high, shape, generator=gen, dtype=torch.int64).to(dtype)


def _poisoned(shape, dtype) -> torch.Tensor:
    return torch.full(shape, float("nan") if dtype.is_floating_point else 0x5A, dtype=dtype)


@inductor_tile.jit
def lea_kernel(x_ptr, y_ptr, out_ptr, scaled_ptr, M: tl.constexpr, N: tl.constexpr):
    """out[i, j] = x[i] + 4 * y[j] (a [M, 1] column and a [1, N] row broadcast); scaled = out * 3 (a literal)."""
    x = tl.load(x_ptr + tl.arange(0, M))[:, None]
    y = tl.load(y_ptr + tl.arange(0, N))[None, :]
    out = tl.inline_asm_elementwise("leal ($1,$2,4), $0", "=r,r,r", [x, y], dtype=tl.int32, is_pure=True, pack=1)
    offs = tl.arange(0, M)[:, None] * N + tl.arange(0, N)[None, :]
    tl.store(out_ptr + offs, out)
    scaled = tl.inline_asm_elementwise("movl $1, $0; imull $2, $0", "=&r,r,r", [out, 3], dtype=tl.int32,
                                       is_pure=True, pack=1)
    tl.store(scaled_ptr + offs, scaled)


def test_int32_asm_broadcasts_its_arguments(compiled, gen):
    x, y = _ints((M,), gen), _ints((N,), gen)
    out, scaled = _poisoned((M, N), torch.int32), _poisoned((M, N), torch.int32)
    lea_kernel[(1,)](x, y, out, scaled, M=M, N=N)
    want = x.long()[:, None] + 4 * y.long()[None, :]
    assert torch.equal(out.long(), want)
    assert torch.equal(scaled.long(), want * 3)


@inductor_tile.jit
def float_and_pair_kernel(x_ptr, y_ptr, i_ptr, prod_ptr, same_ptr, as_float_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x, y, i = tl.load(x_ptr + offs), tl.load(y_ptr + offs), tl.load(i_ptr + offs)
    prod = tl.inline_asm_elementwise("mulss $2, $0", "=x,0,x", [x, y], dtype=tl.float32, is_pure=True, pack=1)
    tl.store(prod_ptr + offs, prod)
    same, as_float = tl.inline_asm_elementwise("cvtsi2ssl $2, $1; movl $2, $0", "=r,=x,r", [i],
                                               dtype=(tl.int32, tl.float32), is_pure=True, pack=1)
    tl.store(same_ptr + offs, same)
    tl.store(as_float_ptr + offs, as_float)


def test_float_operands_and_a_tuple_of_results(compiled, gen):
    x, y, i = torch.randn(N, generator=gen), torch.randn(N, generator=gen), _ints((N,), gen)
    prod, same, as_float = _poisoned((N,), torch.float32), _poisoned((N,), torch.int32), _poisoned((N,), torch.float32)
    float_and_pair_kernel[(1,)](x, y, i, prod, same, as_float, N=N)
    assert torch.equal(prod, (x.double() * y.double()).float())  # one rounding of the exact product
    assert torch.equal(same, i)
    assert torch.equal(as_float.double(), i.double())


@inductor_tile.jit
def packed_kernel(b_ptr, h_ptr, w_ptr, bytes_ptr, halves_ptr, swapped_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    b, h, w = tl.load(b_ptr + offs), tl.load(h_ptr + offs), tl.load(w_ptr + offs)
    # four int8 in one 32-bit register: reversed; two int16: swapped
    tl.store(bytes_ptr + offs, tl.inline_asm_elementwise("bswapl $0", "=r,0", [b], dtype=tl.int8, is_pure=True,
                                                         pack=4))
    tl.store(halves_ptr + offs, tl.inline_asm_elementwise("roll $$16, $0", "=r,0", [h], dtype=tl.int16,
                                                          is_pure=True, pack=2))
    # two int32 per execution: one register each ($0 $1 out, $2 $3 in)
    tl.store(swapped_ptr + offs, tl.inline_asm_elementwise("movl $3, $0; movl $2, $1", "=&r,=&r,r,r", [w],
                                                           dtype=tl.int32, is_pure=True, pack=2))


def test_pack_groups_elements_per_execution(compiled, gen):
    b, h, w = _ints((N,), gen, torch.int8, -128, 128), _ints((N,), gen, torch.int16, -30000, 30000), _ints((N,), gen)
    outs = [_poisoned((N,), torch.int8), _poisoned((N,), torch.int16), _poisoned((N,), torch.int32)]
    packed_kernel[(1,)](b, h, w, *outs, N=N)
    assert torch.equal(outs[0], b.reshape(-1, 4).flip(1).reshape(-1))
    assert torch.equal(outs[1], h.reshape(-1, 2).flip(1).reshape(-1))
    assert torch.equal(outs[2], w.reshape(-1, 2).flip(1).reshape(-1))


@inductor_tile.jit
def odd_pack_kernel(b_ptr, out_ptr, N: tl.constexpr):
    """A scalar (one slot) with pack=4: the other three elements of its execution are padding."""
    offs = tl.arange(0, N)
    x = tl.load(b_ptr + offs)
    tl.store(out_ptr + offs, tl.inline_asm_elementwise("notl $0", "=r,0", [x], dtype=tl.int8, is_pure=True, pack=4))
    s = tl.load(b_ptr + 1)
    tl.store(out_ptr + N, tl.inline_asm_elementwise("notl $0", "=r,0", [s], dtype=tl.int8, is_pure=True, pack=4))


def test_pack_of_a_scalar_pads_the_execution(compiled, gen):
    b = _ints((16,), gen, torch.int8, -128, 128)
    out = _poisoned((17,), torch.int8)
    odd_pack_kernel[(1,)](b, out, N=16)
    assert torch.equal(out, torch.cat([~b, ~b[1:2]]))


@inductor_tile.jit
def purity_kernel(x_ptr, out_ptr, N: tl.constexpr, PURE: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    a = tl.inline_asm_elementwise("negl $0", "=r,0", [x], dtype=tl.int32, is_pure=PURE, pack=1)
    b = tl.inline_asm_elementwise("negl $0", "=r,0", [x], dtype=tl.int32, is_pure=PURE, pack=1)
    tl.inline_asm_elementwise("notl $0", "=r,0", [x], dtype=tl.int32, is_pure=PURE, pack=1)  # result unused
    tl.store(out_ptr + offs, a - b * 2)


@pytest.mark.parametrize("pure", [True, False])
def test_pure_asm_is_merged_and_dropped_impure_stays(pure, compiled, gen):
    compiled_kernel = inductor_tile.compile(purity_kernel, {"x_ptr": "*i32", "out_ptr": "*i32"},
                                            constexprs={"N": 16, "PURE": pure})
    ttgir = compiled_kernel.asm["ttgir"]
    assert ttgir.count("tt.elementwise_inline_asm") == (1 if pure else 3), ttgir
    calls = re.findall(r"call \S+ asm (sideeffect )?\"(\w+)", compiled_kernel.asm["llir"])
    assert {name for _, name in calls} == ({"negl"} if pure else {"negl", "notl"})
    assert all(bool(side) != pure for side, _ in calls)
    x, out = _ints((16,), gen), _poisoned((16,), torch.int32)
    purity_kernel[(1,)](x, out, N=16, PURE=pure)
    assert torch.equal(out, x)  # -x - 2 * -x


def test_the_interpreter_refuses_at_the_kernel_line(interpret, gen):
    x, y = _ints((M,), gen), _ints((N,), gen)
    out, scaled = _poisoned((M, N), torch.int32), _poisoned((M, N), torch.int32)
    with pytest.raises(ValueError, match=r"test_inline_asm.py:\d+: tl.inline_asm_elementwise cannot run in the "
                                         r"interpreter") as info:
        lea_kernel[(1,)](x, y, out, scaled, M=M, N=N)
    line = int(re.search(r"test_inline_asm.py:(\d+)", str(info.value)).group(1))
    with open(__file__) as f:
        assert "tl.inline_asm_elementwise(\"leal" in f.read().splitlines()[line - 1]
    assert torch.equal(out, _poisoned((M, N), torch.int32))


# --- typing errors, at the kernel line -------------------------------------------------------------
@inductor_tile.jit
def bad_kernel(x_ptr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if CASE == "too_few_constraints":
        y = tl.inline_asm_elementwise("leal ($1,$2,4), $0", "=r,r", [x, x], dtype=tl.int32, is_pure=True, pack=1)
    elif CASE == "pack_registers":
        y = tl.inline_asm_elementwise("bswapl $0", "=r,r,r,r,0", [x.to(tl.int8)], dtype=tl.int8, is_pure=True, pack=4)
    elif CASE == "args_not_a_list":
        y = tl.inline_asm_elementwise("negl $0", "=r,0", x, dtype=tl.int32, is_pure=True, pack=1)
    elif CASE == "arg_not_a_value":
        y = tl.inline_asm_elementwise("negl $0", "=r,0", ["x"], dtype=tl.int32, is_pure=True, pack=1)
    elif CASE == "dtype_not_a_dtype":
        y = tl.inline_asm_elementwise("negl $0", "=r,0", [x], dtype="int32", is_pure=True, pack=1)
    elif CASE == "pack_zero":
        y = tl.inline_asm_elementwise("negl $0", "=r,0", [x], dtype=tl.int32, is_pure=True, pack=0)
    elif CASE == "pack_over_the_elements":
        y = tl.inline_asm_elementwise("bswapl $0", "=r,0", [tl.load(x_ptr + tl.arange(0, 2)).to(tl.int8)],
                                      dtype=tl.int8, is_pure=True, pack=4)
    else:
        y = x
    tl.store(x_ptr + tl.arange(0, 16), y)


@pytest.mark.parametrize("case, message", [
    ("too_few_constraints", r"constraints '=r,r' name 1 output\(s\) and 1 input\(s\), but the call has 1 result\(s\) "
                            r"and 2 argument\(s\), which take 1 output and 2 input register\(s\)"),
    ("pack_registers", r"name 1 output\(s\) and 4 input\(s\).*which take 1 output and 1 input register\(s\) "
                       r"\(pack=4"),
    ("args_not_a_list", r"args must be a list or tuple of tensors, got tensor \(wrap a single argument: \[x\]\)"),
    ("arg_not_a_value", r"tl.inline_asm_elementwise: args: cannot use a value of Python type str"),
    ("dtype_not_a_dtype", r"dtype must be a tl dtype \(or a tuple of them\), got 'int32'"),
    ("pack_zero", r"pack must be a positive int, got 0"),
    ("pack_over_the_elements", r"pack=4 runs the assembly on 4 consecutive elements \(in row-major order\) at a "
                               r"time, but the \[2\] tensor's 2 elements do not divide into groups of 4"),
])
def test_typing_errors_point_at_the_call(case, message):
    error = compile_error(bad_kernel, {"x_ptr": "*i32"}, {"CASE": case})
    assert "tl.inline_asm_elementwise(" in error.source_line and f'CASE == "{case}"' not in error.source_line
    with open(__file__) as f:
        lines = f.read().splitlines()
    assert lines[error.lineno - 2].strip().endswith(f'CASE == "{case}":'), "the error points at another case's call"
    assert f"{__file__}:{error.lineno}" in str(error)
    assert re.search(message, str(error)), str(error)


def test_the_amd_target_refuses_at_the_kernel_line():
    from inductor_tile.kernel_compiler.to_llvm.context import LoweringError

    with pytest.raises(LoweringError, match=r"test_inline_asm.py:\d+: tl.inline_asm_elementwise is not supported on "
                                            r"the AMD target: llvmlite's LLVM has no AMDGPU assembly parser"):
        inductor_tile.compile(purity_kernel, {"x_ptr": "*i32", "out_ptr": "*i32"}, constexprs={"N": 16, "PURE": True},
                              target="hip:gfx942")
