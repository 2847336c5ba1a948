"""Background compiles: JITFunction.precompile starts a specialization's compile in a thread;
the launch that needs it waits for it and never compiles twice."""

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler import compiler
from inductor_tile.kernel_compiler.errors import CompilationError
from inductor_tile.kernel_compiler.frontend.specialization import specialize
from inductor_tile.kernel_compiler.runtime.jit import Future


@inductor_tile.jit
def scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * scale, mask=mask)


@inductor_tile.jit
def broken_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.no_such_function(BLOCK))


def _specs(fn, *args, **constexprs):
    bound = fn.bind(args, constexprs)
    return fn.specialize(bound)


@pytest.fixture
def count_compiles(monkeypatch):
    calls = []
    original = compiler.compile_specialized

    def counting(*args, **kwargs):
        calls.append(args[0].__name__)
        return original(*args, **kwargs)

    monkeypatch.setattr(compiler, "compile_specialized", counting)
    return calls


def test_launch_waits_for_the_background_compile(count_compiles):
    n = 1000
    x = torch.randn(n, generator=torch.Generator().manual_seed(0))
    outs = {block: torch.full((n,), float("nan")) for block in (64, 128, 256)}
    for block, out in outs.items():  # three specializations compile side by side
        scale_kernel.precompile(_specs(scale_kernel, x, out, n, 1.5, BLOCK=block), "cpu")
    pending = [v for v in scale_kernel.cache.values() if isinstance(v, Future)]
    assert len(pending) >= 1
    for block, out in outs.items():
        scale_kernel[(inductor_tile.cdiv(n, block),)](x, out, n, 1.5, BLOCK=block)
        torch.testing.assert_close(out.double(), x.double() * 1.5)
    assert count_compiles.count("scale_kernel") == 3  # each specialization compiled once, in the background
    assert not any(isinstance(v, Future) for v in scale_kernel.cache.values())


def test_failed_background_compile_raises_at_launch():
    x = torch.randn(16)
    broken_kernel.precompile([specialize("x_ptr", x, False), specialize("BLOCK", 16, True)], "cpu")
    with pytest.raises(CompilationError, match="no_such_function"):
        broken_kernel[(1,)](x, BLOCK=16)


def test_precompile_of_a_known_specialization_is_a_no_op(count_compiles):
    x, out = torch.randn(32), torch.full((32,), float("nan"))
    scale_kernel[(1,)](x, out, 32, 2.0, BLOCK=32)
    before = len(count_compiles)
    scale_kernel.precompile(_specs(scale_kernel, x, out, 32, 2.0, BLOCK=32), "cpu")
    assert len(count_compiles) == before
    torch.testing.assert_close(out, x * 2.0)
