"""CPU launches through the compiled trampoline (runtime/cpu_trampoline.py) against struct + ctypes:
the same frame for every scalar kind, Python's errors for bad values before the kernel runs."""

from __future__ import annotations

import functools

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from filecheck_tool import filecheck
from suite import poison

from inductor_tile.kernel_compiler.compiler import compile_specialized, spec_from_signature
from inductor_tile.kernel_compiler.runtime import cpu_launcher
from inductor_tile.kernel_compiler.runtime.cpu_trampoline import trampoline_ir

SIGNATURE = {"out_ptr": "*fp64", "a": "fp32", "b": "fp64", "c": "i64", "d": "i32", "e": "i8", "f": "i16", "g": "u8",
             "flag": "i1"}


@inductor_tile.jit
def scalars_kernel(out_ptr, a, b, c, d, e, f, g, flag):
    pid = (tl.program_id(2) * tl.num_programs(1) + tl.program_id(1)) * tl.num_programs(0) + tl.program_id(0)
    base = out_ptr + pid * 8
    tl.store(base, a.to(tl.float64))
    tl.store(base + 1, b)
    tl.store(base + 2, c.to(tl.float64))
    tl.store(base + 3, d.to(tl.float64))
    tl.store(base + 4, e.to(tl.float64))
    tl.store(base + 5, f.to(tl.float64))
    tl.store(base + 6, g.to(tl.float64))
    tl.store(base + 7, tl.where(flag, pid.to(tl.float64), -1.0))


@functools.cache
def _kernel() -> cpu_launcher.CPUKernel:
    """Loaded once: a process cannot load the same object file into a second engine."""
    specs = [spec_from_signature(name, SIGNATURE[name]) for name in scalars_kernel.arg_names]
    kernel = compile_specialized(scalars_kernel, specs, target="cpu").runner
    assert isinstance(kernel, cpu_launcher.CPUKernel) and kernel.direct is not None
    return kernel


def _values(gen: torch.Generator) -> list:
    r = torch.randn(2, generator=gen, dtype=torch.float64).tolist()
    ints = torch.randint(-100, 100, (4,), generator=gen).tolist()
    return [r[0], r[1], 3_000_000_011 * ints[0], ints[1] * 20_000_000, ints[2], ints[3] * 300, abs(ints[0]) + 100,
            ints[1] > 0]


@pytest.mark.parametrize("grid", [(1, 1, 1), (4, 1, 1), (3, 2, 5)])
def test_trampoline_writes_the_frame_as_struct_and_ctypes_do(grid, monkeypatch):
    kernel = _kernel()
    gen = torch.Generator().manual_seed(sum(grid))
    total = grid[0] * grid[1] * grid[2]
    for _ in range(3):
        values = _values(gen)
        outs = []
        for direct in (kernel.direct, None):  # the trampoline, then struct + ctypes
            monkeypatch.setattr(kernel, "direct", direct)
            out = poison(torch.empty(total, 8, dtype=torch.float64))
            kernel.launch_addresses([out.data_ptr(), *values], grid)
            outs.append(out)
        a, b, c, d, e, f, g, flag = values
        expected = torch.tensor([[torch.tensor(a, dtype=torch.float32).item(), b, c, d, e, f, g, p if flag else -1.0]
                                 for p in range(total)], dtype=torch.float64)
        torch.testing.assert_close(outs[0], expected, rtol=0, atol=0)
        torch.testing.assert_close(outs[1], expected, rtol=0, atol=0)


@pytest.mark.parametrize("change, error", [
    (lambda v: v[:-1], "takes 9 values and the grid"),  # one value missing
    # values: out_ptr, a (fp32), b (fp64), c (i64), d (i32), e (i8), f (i16), g (u8), flag
    (lambda v: v[:4] + [2.5] + v[5:], "integer"),  # a float for the i32
    (lambda v: v[:4] + [2**31] + v[5:], "does not fit"),  # beyond int32
    (lambda v: v[:5] + [200] + v[6:], "does not fit"),  # beyond int8
    (lambda v: v[:6] + [-40000] + v[7:], "does not fit"),  # beyond int16
    (lambda v: v[:7] + [-1] + v[8:], "does not fit"),  # a negative uint8
    (lambda v: v[:3] + [2**64] + v[4:], "too big"),  # beyond int64
    (lambda v: v[:1] + ["x"] + v[2:], "must be real number"),  # a string for the fp32
])
def test_bad_values_raise_before_the_kernel_runs(change, error):
    direct = _kernel().direct
    out = poison(torch.empty(1, 8, dtype=torch.float64))
    values = [out.data_ptr(), *_values(torch.Generator().manual_seed(5))]
    with pytest.raises((TypeError, OverflowError), match=error):
        direct(*change(values), 1, 1, 1)
    assert out.isnan().all()  # nothing written


def test_trampoline_ir_reads_every_value_then_checks_errors_before_the_call(tmp_path):
    text = trampoline_ir(["Q", "f", "i"], 11, 22, 33)
    filecheck(text, """
CHECK-LABEL: define ptr @trampoline(ptr %self, ptr %args, i64 %nargs)
CHECK: icmp eq i64 %nargs, 6
CHECK: call void @PyErr_SetString(ptr inttoptr (i64 22 to ptr), ptr @count)
CHECK: call i64 @PyLong_AsUnsignedLongLong
CHECK: store i64 {{.*}}, ptr
CHECK: call double @PyFloat_AsDouble
CHECK: fptrunc double
CHECK: getelementptr i8, ptr %frame, i64 8
CHECK: call i64 @PyLong_AsLongLong
CHECK: trunc i64 {{.*}} to i32
CHECK: getelementptr i8, ptr %frame, i64 16
CHECK: getelementptr i8, ptr %frame, i64 24
CHECK: store i32
CHECK: getelementptr i8, ptr %frame, i64 40
CHECK: store i64 0
CHECK: getelementptr i8, ptr %frame, i64 48
CHECK: store i64 %total
CHECK: call ptr @PyErr_Occurred()
CHECK: br i1 %failed, label %fail, label %check_range
CHECK: call void @PyErr_SetString(ptr inttoptr (i64 33 to ptr), ptr @range)
CHECK: run:
CHECK-NEXT: call void %entry_fn(ptr %frame)
CHECK-NEXT: call void @Py_IncRef(ptr inttoptr (i64 11 to ptr))
""", tmp_path)


def test_a_trampoline_that_cannot_be_built_leaves_ctypes_launches(monkeypatch):
    """An interpreter whose C API the trampoline's IR does not fit: one warning, then every kernel
    launches through struct + ctypes, with the same results."""
    from inductor_tile.kernel_compiler.runtime import cpu_trampoline

    def broken(formats, address):
        raise RuntimeError("no such C API symbol")

    warnings = []

    class Log:  # the module's logger (other tests may configure the package's logging)
        def warning(self, message, *args):
            warnings.append(message % args)

    monkeypatch.setattr(cpu_trampoline, "direct_launcher", broken)
    monkeypatch.setattr(cpu_launcher, "_trampoline_failed", False)
    monkeypatch.setattr(cpu_launcher, "log", Log())
    assert cpu_launcher._direct_launcher(["Q", "f"], 0) is None
    assert cpu_launcher._direct_launcher(["Q", "d"], 0) is None
    assert len(warnings) == 1 and "no such C API symbol" in warnings[0]
    kernel = _kernel()
    monkeypatch.setattr(kernel, "direct", None)  # what a kernel loaded after the failure has
    values = _values(torch.Generator().manual_seed(7))
    out = poison(torch.empty(2, 8, dtype=torch.float64))
    kernel.launch_addresses([out.data_ptr(), *values], (2, 1, 1))
    assert not out.isnan().any() and out[1, 7].item() in (1.0, -1.0)


def test_trampolines_of_every_layout_share_one_engine_and_each_launches():
    """Start-up: one MCJIT engine holds every layout's trampoline (each added as a module of its own)."""
    import ctypes

    from inductor_tile.kernel_compiler.runtime import cpu_trampoline
    from inductor_tile.kernel_compiler.to_llvm import llvm_tools

    # an entry that stores the frame's second slot (an i64) at the address in its first, times the grid size
    entry_ir = """
define void @store_second(ptr %frame) {
  %address = load i64, ptr %frame
  %slot1 = getelementptr i8, ptr %frame, i64 8
  %value = load i64, ptr %slot1
  %end_at = getelementptr i8, ptr %frame, i64 FRAME_END
  %programs = load i64, ptr %end_at
  %scaled = mul i64 %value, %programs
  %out = inttoptr i64 %address to ptr
  store i64 %scaled, ptr %out
  ret void
}
"""
    entries = []
    for formats in (["Q", "q"], ["Q", "q", "f"], ["Q", "q", "i", "i"]):
        text = entry_ir.replace("store_second", f"store_second_{len(formats)}").replace(
            "FRAME_END", str(8 * len(formats) + 24))
        engine = llvm_tools.jit_engine(llvm_tools.parse(text), llvm_tools.host_target_machine())
        engine.finalize_object()
        entries.append((formats, engine, engine.get_function_address(f"store_second_{len(formats)}")))
    out = (ctypes.c_int64 * 1)()
    for value, (formats, _, address) in zip((-5, 123456789012, 77), entries):
        direct = cpu_trampoline.direct_launcher(formats, address)
        out[0] = 0
        extra = {2: (), 3: (2.5,), 4: (3, -4)}[len(formats)]
        direct(ctypes.addressof(out), value, *extra, 2, 3, 1)
        assert out[0] == value * 6  # the entry ran once with the range [0, 2*3*1)
    engines = {id(cpu_trampoline._compiled["".join(formats)][0]) for formats, _, _ in entries}
    assert len(engines) == 1 and cpu_trampoline._engine and engines == {id(cpu_trampoline._engine[0][0])}
