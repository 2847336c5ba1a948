"""@inductor_tile.must_use_result (Triton's `triton.must_use_result`): calling such a helper as a statement,
dropping its result, is a compile error naming it; using the result compiles and computes as usual."""

from __future__ import annotations

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl


@inductor_tile.must_use_result("Assign it to a name.")
@inductor_tile.jit
def _cubed(x):
    return x * x * x


@inductor_tile.jit
def cube_kernel(x_ptr, USE: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, 16))
    if USE:
        x = _cubed(x)
    else:
        _cubed(x)
    tl.store(x_ptr + tl.arange(0, 16), x)


def test_a_dropped_result_is_a_compile_error(compiled, gen):
    from inductor_tile.kernel_compiler.errors import CompilationError

    x = torch.randn(16, generator=gen)
    want = x.double() ** 3
    cube_kernel[(1,)](x, USE=True)
    torch.testing.assert_close(x.double(), want, rtol=1e-6, atol=1e-6)
    with pytest.raises(CompilationError, match="The result of _cubed is not being used. Assign it to a name."):
        cube_kernel[(1,)](x, USE=False)
