"""Tuples as kernel arguments (Triton's rule): nested tuples, lists, torch.Size and NamedTuples holding
tensors, numbers, None and tl.constexpr values. Each element specializes as a parameter of its own
would (an int equal to 1 is the constant 1, a tl.constexpr is known when compiling), so a tuple of
strides can describe a tensor to tl.make_tensor_descriptor. In the kernel: indexing, len(),
unpacking, `t[i] = v` (a new tuple) and NamedTuple construction. Interpreter and CPU target, random
inputs, NaN-poisoned outputs, float64 references."""

from __future__ import annotations

import platform
from typing import NamedTuple

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def _bump(values):
    for i in tl.static_range(len(values)):
        values[i] = values[i] * 2 + 1
    return values


@inductor_tile.jit
def nested_tuples(out_ptr, pointers, numbers, BLOCK: tl.constexpr):
    """out[k * BLOCK:(k + 1) * BLOCK] for k = 0, 1, 2: (loaded a) * 2 + 1, b scaled by numbers[0] (when
    numbers[1] is None), and numbers[2][0] + the constexpr numbers[2][1]."""
    offs = tl.arange(0, BLOCK)
    a_ptr, (b_ptr,) = pointers
    tl.static_assert(numbers[1] is None)
    tl.static_assert(numbers[2][1] == 3)
    a, = _bump((tl.load(a_ptr + offs),))
    tl.store(out_ptr + offs, a)
    tl.store(out_ptr + BLOCK + offs, tl.load(b_ptr + offs) * numbers[0])
    tl.store(out_ptr + 2 * BLOCK + offs, tl.zeros([BLOCK], tl.float32) + numbers[2][0] + numbers[2][1])


class Strided(NamedTuple):
    ptr: object
    shape: tuple
    stride: tuple


@inductor_tile.jit
def _window(t, BM: tl.constexpr, BN: tl.constexpr):
    """The [BM, BN] window at the origin of a Strided tensor, zero outside it."""
    rows, cols = tl.arange(0, BM)[:, None], tl.arange(0, BN)[None, :]
    mask = (rows < t.shape[0]) & (cols < t.shape[1])
    return tl.load(t.ptr + rows * t.stride[0] + cols * t.stride[1], mask=mask, other=0.0)


@inductor_tile.jit
def named_tuples(x, y, BM: tl.constexpr, BN: tl.constexpr):
    """y = 3x - 1 on y's extent (x at least as large), through NamedTuples of pointer, shape and strides; the
    last dimension also through a descriptor made from the tuples."""
    dst = Strided(ptr=y.ptr, shape=y.shape, stride=y.stride)
    v = _window(x, BM, BN) * 3 - 1
    rows, cols = tl.arange(0, BM)[:, None], tl.arange(0, BN)[None, :]
    mask = (rows < dst.shape[0]) & (cols < dst.shape[1])
    tl.store(dst.ptr + rows * dst.stride[0] + cols * dst.stride[1], v, mask=mask)


@inductor_tile.jit
def descriptor_from_tuples(out_ptr, a_ptr, shape, strides, BLOCK_SHAPE):
    """out (BLOCK_SHAPE[1:], contiguous) = the block at the origin of a 3-d tensor described by tuples."""
    desc = tl.make_tensor_descriptor(a_ptr, shape=shape, strides=strides, block_shape=BLOCK_SHAPE)
    ndim: tl.constexpr = len(BLOCK_SHAPE)
    block = desc.load((0,) * ndim)
    tl.store(out_ptr + tl.arange(0, BLOCK_SHAPE[1])[:, None] * BLOCK_SHAPE[2] + tl.arange(0, BLOCK_SHAPE[2])[None, :],
             tl.reshape(block, [BLOCK_SHAPE[1], BLOCK_SHAPE[2]]))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_nested_tuples(mode, request, gen):
    request.getfixturevalue(mode)
    block = 16
    a, b = torch.randn(block, generator=gen), torch.randn(block, generator=gen)
    out = torch.full((3 * block,), float("nan"))
    nested_tuples[(1,)](out, (a, [b]), (2.5, None, (7, tl.constexpr(3))), BLOCK=block)
    want = torch.cat([a.double() * 2 + 1, b.double() * 2.5, torch.full((block,), 10.0, dtype=torch.float64)])
    torch.testing.assert_close(out.double(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_named_tuples(mode, request, gen):
    request.getfixturevalue(mode)
    x = torch.randn(20, 40, generator=gen)[:, ::2]  # strided columns
    y = torch.full((13, 17), float("nan"))
    named_tuples[(1,)](Strided(x, x.shape, x.stride()), Strided(y, y.shape, y.stride()), BM=16, BN=32)
    torch.testing.assert_close(y.double(), x[:13, :17].double() * 3 - 1, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_tuples_describe_a_tensor(mode, request, gen):
    request.getfixturevalue(mode)
    a = torch.randn(1, 5, 24, generator=gen)[..., :21]  # rows 24 apart, 21 long: the block sticks out
    out = torch.full((8, 32), float("nan"))
    block = tuple(tl.constexpr(v) for v in (1, 8, 32))
    descriptor_from_tuples[(1,)](out, a, a.shape, a.stride(), block)
    want = torch.zeros(8, 32, dtype=torch.float64)
    want[:5, :21] = a[0].double()
    assert torch.equal(out.double(), want)


def test_tuple_elements_specialize_like_parameters(compiled, gen):
    a = torch.randn(1, 5, 24, generator=gen)[..., :21]
    block = tuple(tl.constexpr(v) for v in (1, 8, 32))
    descriptor_from_tuples.cache.clear()
    descriptor_from_tuples.launch_cache.clear()
    for shape in ((1, 5, 21), (1, 6, 21), (1, 5, 16)):
        descriptor_from_tuples[(1,)](torch.empty(8, 32), a, shape, a.stride(), block)
    # 5 and 6 are plain integers alike (one kernel); 16 is divisible by 16 (another)
    assert len(descriptor_from_tuples.cache) == 2


class Epilogue(NamedTuple):
    fn: object
    args: tuple


@inductor_tile.jit
def _times_loaded(x, s_ptr):
    return x * tl.load(s_ptr)


@inductor_tile.jit
def _plus_loaded(x, s_ptr):
    return x + tl.load(s_ptr)


@inductor_tile.jit
def apply_epilogue(x_ptr, out_ptr, epilogue, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, epilogue.fn(tl.load(x_ptr + offs), *epilogue.args))


@pytest.mark.parametrize("mode", ["interpret", "compiled"])
def test_jit_functions_in_tuples(mode, request, gen):
    """A @jit function inside a tuple argument is called where the kernel uses it; each function is its own
    kernel (the launch cache tells them apart)."""
    request.getfixturevalue(mode)
    x, s = torch.randn(32, generator=gen), torch.randn(1, generator=gen)
    for fn, want in ((_times_loaded, x.double() * s.double()), (_plus_loaded, x.double() + s.double()),
                     (_times_loaded, x.double() * s.double())):
        out = torch.full((32,), float("nan"))
        apply_epilogue[(1,)](x, out, Epilogue(fn, (s,)), BLOCK=32)
        torch.testing.assert_close(out.double(), want, rtol=1e-6, atol=1e-6)



@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                    reason="ptxas and libdevice wheels exist for Linux x86-64 only")
def test_tuple_arguments_assemble_for_sm90():
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    x, y = torch.empty(20, 40), torch.empty(13, 17)
    bound = named_tuples.bind((Strided(x, x.shape, x.stride()), Strided(y, y.shape, y.stride())), {"BM": 16, "BN": 32})
    ptx = compile_specialized(named_tuples, named_tuples.specialize(bound), target="cuda:90", num_warps=4,
                              native=False).asm["ptx"]
    check_ptx(ptx, "sm_90", "named_tuples")
