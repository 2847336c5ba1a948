"""Inline assembly the target cannot assemble is an error at the user's call, and the process lives on.

On the CPU, LLVM's assembler exits the process on such assembly, so a kernel with inline assembly gets its
machine code from a child process (to_llvm/isolated_codegen.py): its object must be the one this process
would make, and kernels without inline assembly must start no process. On NVIDIA, ptxas's rejection of the
user's assembly names the call too. Every test that raises goes on to run a kernel (so the process lived).
"""

from __future__ import annotations

import platform
import re
import subprocess

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.to_llvm.inline_asm_errors import InlineAsmError

pytestmark = pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the kernels' assembly is x86")

N = 32


@inductor_tile.jit
def asm_kernel(x_ptr, out_ptr, N: tl.constexpr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    a = tl.inline_asm_elementwise("negl $0", "=r,0", [x], dtype=tl.int32, is_pure=True, pack=1)
    if CASE == "typo":
        y = tl.inline_asm_elementwise("bogus $0, $1", "=r,r", [a], dtype=tl.int32, is_pure=True, pack=1)
    elif CASE == "ptx":
        y = tl.inline_asm_elementwise("add.s32 $0, $1, $1;", "=r,r", [a], dtype=tl.int32, is_pure=True, pack=1)
    elif CASE == "second_line":
        y = tl.inline_asm_elementwise("movl $1, $0\n  addl %eaxx, $0", "=r,r", [a], dtype=tl.int32, is_pure=True,
                                      pack=1)
    elif CASE == "immediate":  # the operand is no constant: LLVM's code generator, not its parser, refuses
        y = tl.inline_asm_elementwise("movl $1, $0", "=r,i", [a], dtype=tl.int32, is_pure=True, pack=1)
    elif CASE == "warning":  # LLVM warns and goes on
        y = tl.inline_asm_elementwise(".warning \"from the kernel\"\n leal ($1,$1,2), $0", "=r,r", [a],
                                      dtype=tl.int32, is_pure=True, pack=1)
    elif CASE == "quoted":  # quotes, a backslash and UTF-8 in a comment: escaped in the LLVM IR, not lost
        y = tl.inline_asm_elementwise('leal ($1,$1,2), $0 # "3 * x" \\ é', "=r,r", [a], dtype=tl.int32,
                                      is_pure=True, pack=1)
    else:  # good: 3 * -x
        y = tl.inline_asm_elementwise("leal ($1,$1,2), $0", "=r,r", [a], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(out_ptr + tl.arange(0, N), y)


@inductor_tile.jit
def plain_kernel(x_ptr, out_ptr, N: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.store(out_ptr + tl.arange(0, N), x * 3 - 7)


def _line_of(fragment: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f.read().splitlines(), 1) if fragment in line)


def _inputs(gen) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randint(-10**6, 10**6, (N,), generator=gen, dtype=torch.int64).to(torch.int32)
    return x, torch.full((N,), 0x5A5A5A5A, dtype=torch.int32)


def _good_asm_runs(gen) -> None:
    x, out = _inputs(gen)
    asm_kernel[(1,)](x, out, N=N, CASE="good")
    assert torch.equal(out.long(), -3 * x.long())


@pytest.mark.parametrize("case, call, message", [
    ("typo", '"bogus $0, $1"', r"error: <inline asm>:1:\d+: invalid instruction mnemonic 'bogus'\n\s*bogus %\w+"),
    ("ptx", '"add.s32 $0, $1, $1;"', r"invalid instruction mnemonic 'add.s32'[\s\S]*PTX assembles only for the "
                                     r"cuda target"),
    ("second_line", '"movl $1, $0\\n  addl %eaxx', r"<inline asm>:2:\d+: invalid register name\n\s*addl %eaxx"),
    ("immediate", '"=r,i"', r"error: invalid operand for inline asm constraint 'i'"),
])
def test_bad_cpu_asm_is_an_error_at_its_call(case, call, message, compiled, gen):
    x, out = _inputs(gen)
    with pytest.raises(InlineAsmError) as info:
        asm_kernel[(1,)](x, out, N=N, CASE=case)
    error = info.value
    line = _line_of(call)
    assert (error.filename, error.lineno) == (__file__, line), str(error)  # not the good `negl` call before it
    assert str(error).startswith(f"{__file__}:{line}: tl.inline_asm_elementwise: LLVM (x86_64"), str(error)
    assert call in str(error).splitlines()[1]  # the user's source line
    assert re.search(message, str(error)), str(error)
    assert ("PTX assembles only" in str(error)) == (case == "ptx")
    assert torch.equal(out, torch.full((N,), 0x5A5A5A5A, dtype=torch.int32))
    _good_asm_runs(gen)  # the process lived, and compiles on


def _fail_and_keep_the_error(case: str) -> None:
    try:
        inductor_tile.compile(asm_kernel, {"x_ptr": "*i32", "out_ptr": "*i32"}, constexprs={"N": N, "CASE": case})
    except InlineAsmError as caught:
        error = caught  # noqa: F841 - this frame -> error -> its traceback -> this frame: a cycle, left to the GC


def test_errors_left_in_reference_cycles_are_collected_safely(compiled, gen):
    """An error's frames hold the kernel's LLVM module: collected with its LLVM context in one garbage
    collection, the context could be disposed of first (a segfault), unless the compiler closed the module."""
    import gc

    gc.collect()
    for case in ("typo", "ptx", "second_line", "immediate"):
        _fail_and_keep_the_error(case)
    gc.collect()
    _good_asm_runs(gen)


def test_llvm_warnings_become_python_warnings(compiled, gen):
    x, out = _inputs(gen)
    with pytest.warns(UserWarning) as record:
        asm_kernel[(1,)](x, out, N=N, CASE="warning")
    assert torch.equal(out.long(), -3 * x.long())
    (warning,) = [w for w in record if "tl.inline_asm_elementwise" in str(w.message)]
    line = _line_of('".warning')
    assert str(warning.message).startswith(f"{__file__}:{line}: tl.inline_asm_elementwise: LLVM (x86_64"), \
        str(warning.message)
    # once, though the assembly runs (and was assembled) once per element
    assert re.search(rf"warns about this call's inline assembly:\n.*\nwarning: <inline asm>:1:\d+: from the kernel"
                     rf"\n.*\n.*\n\(printed {N} times: once per execution of the assembly\)$", str(warning.message))


def test_quotes_and_backslashes_reach_the_assembler(compiled, gen):
    x, out = _inputs(gen)
    asm_kernel[(1,)](x, out, N=N, CASE="quoted")
    assert torch.equal(out.long(), -3 * x.long())
    compiled_kernel = inductor_tile.compile(asm_kernel, {"x_ptr": "*i32", "out_ptr": "*i32"},
                                            constexprs={"N": N, "CASE": "quoted"})
    assert '# "3 * x" \\ é' in compiled_kernel.asm["asm"]


def _native(kernel, case: str | None = None, load: bool = True):
    specs = [spec_from_signature("x_ptr", "*i32"), spec_from_signature("out_ptr", "*i32"),
             spec_from_signature("N", "constexpr", N)]
    if case is not None:
        specs.append(spec_from_signature("CASE", "constexpr", case))
    return compile_specialized(kernel, specs, target="cpu", load=load)


def test_only_kernels_with_inline_asm_start_a_process(monkeypatch, tmp_path, gen):
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path))  # compiled here, not loaded from an earlier test's cache
    started = []
    popen = subprocess.Popen

    def counting_popen(*args, **kwargs):
        started.append(args[0] if args else kwargs.get("args"))
        return popen(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", counting_popen)
    plain = _native(plain_kernel)
    assert not plain.from_disk and started == []
    x, out = _inputs(gen)
    plain.launch_values(plain_kernel, (x, out, N), (1, 1, 1))
    assert torch.equal(out.long(), x.long() * 3 - 7)
    with_asm = _native(asm_kernel, "good")
    assert not with_asm.from_disk and len(started) == 1
    x, out = _inputs(gen)
    with_asm.launch_values(asm_kernel, (x, out, N, "good"), (1, 1, 1))
    assert torch.equal(out.long(), -3 * x.long())


def test_the_child_makes_the_machine_code_this_process_would(monkeypatch, tmp_path):
    """The same object (and assembly text, made first as in this process) from the same optimized IR."""
    from inductor_tile.kernel_compiler.to_llvm import llvm_tools

    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path))
    kernel = _native(asm_kernel, "good", load=False)
    machine = llvm_tools.host_target_machine()
    assert kernel.binary == machine.emit_object(llvm_tools.parse(kernel.asm["llir"]))
    compiled = inductor_tile.compile(asm_kernel, {"x_ptr": "*i32", "out_ptr": "*i32"}, constexprs={"N": N,
                                                                                                   "CASE": "good"})
    assert compiled.asm["asm"] == machine.emit_assembly(llvm_tools.parse(compiled.asm["llir"]))
    assert "leal" in compiled.asm["asm"]


def test_an_ahead_of_time_compile_raises_too():
    """`inductor_tile.compile` (assembly text, no object) assembles the inline assembly as well."""
    with pytest.raises(InlineAsmError, match=r"invalid instruction mnemonic 'bogus'"):
        inductor_tile.compile(asm_kernel, {"x_ptr": "*i32", "out_ptr": "*i32"}, constexprs={"N": N, "CASE": "typo"})


# --- NVIDIA: ptxas is a child process already; its rejection of the user's assembly names the call -------------
@inductor_tile.jit
def ptx_kernel(x_ptr, out_ptr, N: tl.constexpr, CASE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    a = tl.inline_asm_elementwise("neg.s32 $0, $1;", "=r,r", [x], dtype=tl.int32, is_pure=True, pack=1)
    if CASE == "typo":
        y = tl.inline_asm_elementwise("mul.lo.s32 $0, $1, 3; bogus.u32 $0;", "=r,r", [a], dtype=tl.int32,
                                      is_pure=True, pack=1)
    else:
        y = tl.inline_asm_elementwise("mul.lo.s32 $0, $1, 3;", "=r,r", [a], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(out_ptr + tl.arange(0, N), y)


def _ptxas_or_skip() -> None:
    from inductor_tile.kernel_compiler.runtime.cuda_tools import find_ptxas

    try:
        find_ptxas()
    except FileNotFoundError as e:
        pytest.skip(f"no ptxas: {e}")


def _cuda_native(case: str):
    specs = [spec_from_signature("x_ptr", "*i32", divisible_by_16=True),
             spec_from_signature("out_ptr", "*i32", divisible_by_16=True), spec_from_signature("N", "constexpr", 128),
             spec_from_signature("CASE", "constexpr", case)]
    return compile_specialized(ptx_kernel, specs, target="cuda:90", num_warps=4, load=False)


def test_bad_ptx_asm_is_an_error_at_its_call(monkeypatch, tmp_path):
    from inductor_tile.kernel_compiler.runtime.cuda_tools import PTXASError

    _ptxas_or_skip()
    monkeypatch.setenv("TILE_CACHE_DIR", str(tmp_path))
    with pytest.raises(InlineAsmError) as info:
        _cuda_native("typo")
    error, line = info.value, _line_of('"mul.lo.s32 $0, $1, 3; bogus')
    assert (error.filename, error.lineno) == (__file__, line), str(error)
    assert str(error).startswith(f"{__file__}:{line}: tl.inline_asm_elementwise: ptxas (sm_90"), str(error)
    assert re.search(r"line \d+; error\s*: .*'bogus", str(error)), str(error)
    assert isinstance(error.tool_error, PTXASError) and error.tool_error.ptx_path in str(error)
    assert _cuda_native("good").binary  # and the process compiles on


def test_ptxas_errors_outside_the_users_assembly_stay_ptxas_errors():
    """A rejected line that is no user call's (the compiler's own PTX, its own inline assembly) is not the
    user's: no InlineAsmError."""
    from inductor_tile.kernel_compiler.runtime.cuda_tools import PTXASError
    from inductor_tile.kernel_compiler.to_llvm.inline_asm_errors import ptxas_error

    module = inductor_tile.compile(ptx_kernel, {"x_ptr": "*i32", "out_ptr": "*i32"}, constexprs={"N": 128,
                                   "CASE": "good"}, target="cuda:90").module
    ptx = "\n".join(["\tmov.u32 %r1, %tid.x;", "\t// begin inline asm", "\tneg.s32 %r2, %r1;",
                     "\t// end inline asm", "\t// begin inline asm", "\tcvt.rn.bf16x2.f32 %r3, %f1, %f2;",
                     "\t// end inline asm"])

    def rejected(line: int) -> PTXASError:
        return PTXASError("k", "sm_90", f"ptxas /tmp/k.ptx, line {line}; error   : something", "/tmp/k.ptx", [])

    assert ptxas_error(module, ptx, rejected(1)) is None  # outside inline assembly
    assert ptxas_error(module, ptx, rejected(6)) is None  # the compiler's own inline assembly
    blamed = ptxas_error(module, ptx, rejected(3))
    assert blamed is not None and blamed.lineno == _line_of('"neg.s32 $0, $1;"')
