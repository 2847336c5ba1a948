"""`while cond:` loops on runtime values (scf.while): a scalar loop, a loop carrying a tensor
and a loop whose trip count comes from memory. Interpreter and CPU target against Python/torch
references in float64 or exact integers; outputs start as NaN (or a sentinel); the PTX of each
kernel assembles with ptxas."""

from __future__ import annotations

import math
import platform

import pytest
import torch
from filecheck_tool import filecheck

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.errors import CompilationError

N = 32


@inductor_tile.jit
def collatz_kernel(start_ptr, steps_ptr):
    """The number of Collatz steps from the program's start value down to 1."""
    pid = tl.program_id(0)
    n = tl.load(start_ptr + pid)
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    tl.store(steps_ptr + pid, steps)


def collatz_steps(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@inductor_tile.jit
def halve_until_small_kernel(x_ptr, out_ptr, rounds_ptr, limit, N: tl.constexpr):
    """Halves a row until its largest magnitude is below `limit` (a tensor carried through the loop)."""
    row = tl.program_id(0)
    offsets = row * N + tl.arange(0, N)
    x = tl.load(x_ptr + offsets)
    rounds = 0
    while tl.max(tl.abs(x), axis=0) >= limit:
        x = x * 0.5
        rounds += 1
    tl.store(out_ptr + offsets, x)
    tl.store(rounds_ptr + row, rounds)


@inductor_tile.jit
def loaded_trip_count_kernel(x_ptr, count_ptr, out_ptr, N: tl.constexpr):
    """Accumulates `count[row]` shifted copies of a row: the trip count is a loaded value."""
    row = tl.program_id(0)
    offsets = tl.arange(0, N)
    count = tl.load(count_ptr + row)
    acc = tl.zeros([N], dtype=tl.float64)
    i = 0
    while i < count:
        acc += tl.load(x_ptr + row * N + (offsets + i) % N) * (i + 1)
        i += 1
    tl.store(out_ptr + row * N + offsets, acc)


@inductor_tile.jit
def gcd_sum_kernel(a_ptr, b_ptr, out_ptr, N: tl.constexpr):
    """Per program: the sum of gcds of N pairs by repeated subtraction (while loops in a while in a for)."""
    pid = tl.program_id(0)
    total = 0
    for k in range(N):
        a = tl.load(a_ptr + pid * N + k)
        b = tl.load(b_ptr + pid * N + k)
        while a != b:
            while a > b:
                a -= b
            while b > a:
                b -= a
        total += a
    tl.store(out_ptr + pid, total)


@inductor_tile.jit
def locked_add_kernel(data_ptr, lock_ptr, N: tl.constexpr):
    """Each program adds pid + 1 to a shared row inside a spin lock (an atomic in the condition)."""
    offsets = tl.arange(0, N)
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    row = tl.load(data_ptr + offsets)
    tl.store(data_ptr + offsets, row + (tl.program_id(0) + 1).to(tl.float64))
    tl.debug_barrier()
    tl.atomic_xchg(lock_ptr, 0)


def check_collatz(device: str, gen: torch.Generator) -> None:
    starts = torch.randint(1, 200, (24,), generator=gen, dtype=torch.int32)
    starts[0] = 1  # a loop that runs zero times
    steps = torch.full_like(starts, -7).to(device)
    collatz_kernel[(starts.numel(),)](starts.to(device), steps)
    want = torch.tensor([collatz_steps(int(s)) for s in starts], dtype=torch.int32)
    assert want.max() > 10
    torch.testing.assert_close(steps.cpu(), want, rtol=0, atol=0)


def check_halving(device: str, gen: torch.Generator) -> None:
    rows, limit = 6, 0.75
    x = torch.randn(rows, N, generator=gen, dtype=torch.float64) * torch.logspace(-1, 3, rows, dtype=torch.float64)[:, None]
    x[0] *= 0.5 / x[0].abs().max()  # already below the limit: no round
    out = torch.full_like(x, float("nan")).to(device)
    rounds = torch.full((rows,), float("nan"), dtype=torch.float64, device=device)
    halve_until_small_kernel[(rows,)](x.to(device), out, rounds, limit, N=N)
    want, want_rounds = x.clone(), torch.zeros(rows, dtype=torch.float64)
    for r in range(rows):
        while want[r].abs().max() >= limit:
            want[r] *= 0.5
            want_rounds[r] += 1
    assert want_rounds[0] == 0 and want_rounds.max() > 5
    torch.testing.assert_close(out.cpu(), want, rtol=0, atol=0)
    torch.testing.assert_close(rounds.cpu(), want_rounds, rtol=0, atol=0)


def check_loaded_trip_count(device: str, gen: torch.Generator) -> None:
    rows = 5
    x = torch.randn(rows, N, generator=gen, dtype=torch.float64)
    count = torch.randint(0, 9, (rows,), generator=gen, dtype=torch.int32)
    count[0] = 0
    out = torch.full_like(x, float("nan")).to(device)
    loaded_trip_count_kernel[(rows,)](x.to(device), count.to(device), out, N=N)
    want = torch.zeros_like(x)
    for r in range(rows):
        for i in range(int(count[r])):
            want[r] += torch.roll(x[r], -i) * (i + 1)
    torch.testing.assert_close(out.cpu(), want, rtol=1e-12, atol=1e-12)


def check_nested_gcd(device: str, gen: torch.Generator) -> None:
    rows, n = 4, 8
    a = torch.randint(1, 60, (rows, n), generator=gen, dtype=torch.int32)
    b = torch.randint(1, 60, (rows, n), generator=gen, dtype=torch.int32)
    out = torch.full((rows,), -1, dtype=torch.int32, device=device)
    gcd_sum_kernel[(rows,)](a.to(device), b.to(device), out, N=n)
    want = torch.tensor([sum(math.gcd(int(x), int(y)) for x, y in zip(ra, rb)) for ra, rb in zip(a, b)],
                        dtype=torch.int32)
    torch.testing.assert_close(out.cpu(), want, rtol=0, atol=0)


def check_spin_lock(device: str, gen: torch.Generator) -> None:
    programs = 300
    data = torch.randint(-1000, 1000, (N,), generator=gen).to(torch.float64)  # integers: sums are exact in any order
    lock = torch.zeros(1, dtype=torch.int32, device=device)
    out = data.clone().to(device)
    locked_add_kernel[(programs,)](out, lock, N=N)
    torch.testing.assert_close(out.cpu(), data + programs * (programs + 1) // 2, rtol=0, atol=0)
    assert int(lock[0]) == 0


CHECKS = {"collatz": check_collatz, "halving": check_halving, "loaded_trip_count": check_loaded_trip_count,
          "nested_gcd": check_nested_gcd, "spin_lock": check_spin_lock}


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_while_loops_on_the_cpu(name, mode, request, gen):
    request.getfixturevalue(mode)
    CHECKS[name]("cpu", gen)


def _compile(kernel, target):
    if kernel is collatz_kernel:
        return inductor_tile.compile(kernel, signature={"start_ptr": "*i32", "steps_ptr": "*i32"}, target=target)
    if kernel is halve_until_small_kernel:
        signature = {"x_ptr": "*fp32", "out_ptr": "*fp32", "rounds_ptr": "*fp32", "limit": "fp32"}
    elif kernel is locked_add_kernel:
        signature = {"data_ptr": "*fp64", "lock_ptr": "*i32"}
    elif kernel is gcd_sum_kernel:
        signature = {"a_ptr": "*i32", "b_ptr": "*i32", "out_ptr": "*i32"}
    else:
        signature = {"x_ptr": "*fp64", "count_ptr": "*i32", "out_ptr": "*fp64"}
    return inductor_tile.compile(kernel, signature=signature, constexprs={"N": N}, target=target)


def test_while_lowers_to_a_condition_block_with_phis(tmp_path):
    from inductor_tile.kernel_compiler.passes.pipeline import make_ttgir
    from inductor_tile.kernel_compiler.to_llvm.lowering import lower_to_llvm
    from inductor_tile.kernel_compiler.to_llvm.targets import get_target

    compiled = _compile(collatz_kernel, "cpu")
    filecheck(compiled.asm["ttir"], "CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (i32, i32) -> (i32, i32)\n"
                                    "CHECK: scf.condition(%{{.*}}) %{{.*}}, %{{.*}} : i32, i32\n"
                                    "CHECK: } do {\nCHECK: scf.if\nCHECK: scf.yield\n", tmp_path)
    ttgir = make_ttgir(compiled.module.clone(), num_warps=1, threads_per_warp=1)
    llvm_ir = lower_to_llvm(ttgir, get_target("cpu"), num_warps=1).llvm_ir
    # the carried values are phis of the condition block, fed by the entry and by the body's last block
    filecheck(llvm_ir, 'CHECK: br label %"while.before"\n'
                       "CHECK: while.before:\n"
                       'CHECK-NEXT: phi {{ *}}i32 [%"{{.*}}", %"entry"], [%"[[N:.*]]", %"if.end"]\n'
                       'CHECK-NEXT: phi {{ *}}i32 [0, %"entry"], [%"[[S:.*]]", %"if.end"]\n'
                       'CHECK: br i1 %"{{.*}}", label %"while.after", label %"while.exit"\n'
                       "CHECK: while.after:\n"
                       "CHECK: while.exit:\n"
                       'CHECK: %"[[N]]" = phi {{ *}}i32\n'
                       'CHECK: %"[[S]]" = add i32\n'
                       'CHECK-NEXT: br label %"while.before"\n', tmp_path)


@pytest.mark.parametrize("kernel", [collatz_kernel, halve_until_small_kernel, loaded_trip_count_kernel, gcd_sum_kernel,
                                    locked_add_kernel],
                         ids=lambda k: k.__name__)
def test_while_kernels_assemble_with_ptxas(kernel):
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    if platform.system() != "Linux" or platform.machine() != "x86_64":
        pytest.skip("ptxas exists for Linux x86-64 only")
    ptx = _compile(kernel, "cuda:90").asm["ptx"]
    check_ptx(ptx, "sm_90", kernel.__name__)


@inductor_tile.jit
def break_kernel(x_ptr):
    x = tl.load(x_ptr)
    while x > 0:
        x -= 1
        break
    tl.store(x_ptr, x)


@inductor_tile.jit
def block_condition_kernel(x_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    while x > 0:
        x -= 1
    tl.store(x_ptr + tl.arange(0, N), x)


@inductor_tile.jit
def retyped_kernel(x_ptr):
    x = tl.load(x_ptr)
    while x > 0:
        x = x.to(tl.float64) - 1
    tl.store(x_ptr, x)


def test_unsupported_while_forms_name_the_line():
    cases = [(break_kernel, {"x_ptr": "*fp32"}, "break", "unsupported in a kernel: `break`"),
             (block_condition_kernel, {"x_ptr": "*fp32"}, "while x > 0:", "needs a scalar condition"),
             (retyped_kernel, {"x_ptr": "*fp32"}, "while x > 0:", "loop-carried variable 'x' is float32 before the loop")]
    for kernel, signature, line, message in cases:
        with pytest.raises(CompilationError) as info:
            inductor_tile.compile(kernel, signature=signature, constexprs={"N": N} if "N" in kernel.arg_names else {})
        assert line in info.value.source_line and message in str(info.value), str(info.value)
