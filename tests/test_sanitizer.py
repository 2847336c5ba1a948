"""The sanitizer (config.sanitize / TILE_SANITIZE=1) on the CPU target: out-of-bounds reads and
writes and integer division by zero are reported at their kernel line with the program id, the
element offset and the tensor; masked-off lanes, negative strides, views with a storage offset
and broadcast (stride 0) inputs run clean; sanitized PTX assembles; the suite runs clean."""

from __future__ import annotations

import inspect
import platform
import re

import pytest
import torch

import inductor_tile
import inductor_tile.language as tl
from inductor_tile.kernel_compiler.compiler import compile_specialized
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from suite import CASES, assert_checks, poison


@pytest.fixture
def sanitize(compiled):
    with inductor_tile.config.patch(sanitize=True):
        yield


@inductor_tile.jit
def shifted_copy_kernel(src_ptr, dst_ptr, n, src_shift, dst_shift, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src_ptr + offsets + src_shift)
    tl.store(dst_ptr + offsets + dst_shift, x, mask=offsets < n)


@inductor_tile.jit(do_not_specialize=("stride",))
def strided_copy_kernel(src_ptr, dst_ptr, n, stride, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets * stride, mask=mask), mask=mask)


@inductor_tile.jit
def divide_kernel(a_ptr, b_ptr, q_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask, other=0)  # masked-off lanes divide by 0: never reported
    tl.store(q_ptr + offsets, a // b, mask=mask)


@inductor_tile.jit
def guarded_divide_kernel(a_ptr, b_ptr, q_ptr, r_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    a = tl.load(a_ptr + offsets, mask=mask)
    b = tl.load(b_ptr + offsets, mask=mask, other=1)
    tl.store(q_ptr + offsets, tl.where(b != 0, a // b, 0), mask=mask)  # a zero divisor's quotient is dropped
    tl.store(r_ptr + offsets, tl.where(b == 0, -1, a % b), mask=mask)  # ... here as the false side


def _expected_location(fn, text: str, at: str) -> str:
    """`file:line:col:`, the source line and a caret under `at`, for the line of `fn` containing `text`."""
    lines, first = inspect.getsourcelines(fn.fn)
    index = next(i for i, line in enumerate(lines) if text in line)
    raw = lines[index].rstrip("\n")
    stripped = raw.lstrip()
    return f"{__file__}:{first + index}:{raw.index(at) + 1}:\n    {stripped}\n    {' ' * stripped.index(at)}^\n"


def test_out_of_bounds_read_is_reported_at_its_line(sanitize, gen):
    n, block = 100, 64
    x = torch.randn(n, generator=gen)
    out = poison(torch.empty(n))
    with pytest.raises(inductor_tile.SanitizerError) as info:
        shifted_copy_kernel[(2,)](x, out, n, 0, 0, BLOCK=block)
    message = str(info.value)
    where = _expected_location(shifted_copy_kernel, "x = tl.load", "tl.load")
    assert message == (f"out-of-bounds load in kernel `shifted_copy_kernel`, {where}"
                       "program id (1, 0, 0) loaded element offset 100 of argument 'src_ptr' (a float32 tensor of "
                       "shape (100,); its storage holds 100 elements, the view starts at element 0)")
    torch.testing.assert_close(out, x, rtol=0, atol=0)  # the in-bounds lanes ran; the others read nothing


@pytest.mark.parametrize("shift, pid, offset", [(1, 1, 100), (-1, 0, -1)])
def test_out_of_bounds_write_is_reported_at_its_line(sanitize, gen, shift, pid, offset):
    n, block = 100, 64
    x = torch.randn(n + 28, generator=gen)
    out = poison(torch.empty(n))
    with pytest.raises(inductor_tile.SanitizerError) as info:
        shifted_copy_kernel[(2,)](x, out, n, 0, shift, BLOCK=block)
    message = str(info.value)
    assert message.startswith("out-of-bounds store in kernel `shifted_copy_kernel`, "
                              + _expected_location(shifted_copy_kernel, "tl.store(dst_ptr", "tl.store"))
    assert message.endswith(f"program id ({pid}, 0, 0) stored element offset {offset} of argument 'dst_ptr' (a float32 "
                            "tensor of shape (100,); its storage holds 100 elements, the view starts at element 0)")
    inside = slice(max(shift, 0), n + min(shift, 0))  # what the in-bounds lanes wrote
    torch.testing.assert_close(out[inside], x[inside.start - shift:inside.stop - shift], rtol=0, atol=0)


def test_division_by_zero_is_reported_and_masked_off_lanes_are_not(sanitize, gen):
    n, block = 100, 64
    a = torch.randint(-1000, 1000, (n,), generator=gen, dtype=torch.int32)
    b = torch.randint(1, 50, (n,), generator=gen, dtype=torch.int32)
    q = poison(torch.empty(n, dtype=torch.int32))
    divide_kernel[(2,)](a, b, q, n, BLOCK=block)  # lanes 100..127 load b = 0 but are masked off
    torch.testing.assert_close(q, torch.div(a, b, rounding_mode="trunc"), rtol=0, atol=0)
    b[70] = 0
    with pytest.raises(inductor_tile.SanitizerError) as info:
        divide_kernel[(2,)](a, b, q, n, BLOCK=block)
    assert str(info.value) == ("integer division by zero in kernel `divide_kernel`, "
                               + _expected_location(divide_kernel, "a // b", "a // b")
                               + "program id (1, 0, 0): the divisor is 0 at element 6 of the tile")


def test_division_whose_zero_lanes_a_where_drops_is_not_reported(sanitize, gen):
    n = 100
    a = torch.randint(-1000, 1000, (n,), generator=gen, dtype=torch.int32)
    b = torch.randint(-5, 5, (n,), generator=gen, dtype=torch.int32)
    b[::7] = 0
    q, r = poison(torch.empty(n, dtype=torch.int32)), poison(torch.empty(n, dtype=torch.int32))
    guarded_divide_kernel[(2,)](a, b, q, r, n, BLOCK=64)
    safe = torch.where(b != 0, b, torch.ones_like(b))
    torch.testing.assert_close(q, torch.where(b != 0, torch.div(a, safe, rounding_mode="trunc"), 0), rtol=0, atol=0)
    torch.testing.assert_close(r, torch.where(b == 0, -1, torch.fmod(a, safe)), rtol=0, atol=0)


@pytest.mark.parametrize("view", ["negative_stride", "storage_offset", "broadcast"])
def test_views_run_clean(sanitize, gen, view):
    base = torch.randn(300, generator=gen)
    n = 100
    if view == "negative_stride":  # starts at the storage's last element and walks back
        src, stride, expected = base[-1:], -1, base.flip(0)[:n]
    elif view == "storage_offset":
        src, stride, expected = base[150:250], 1, base[150:250]
    else:
        src, stride, expected = base[7:8].expand(n), 0, base[7].expand(n)
    out = poison(torch.empty(n))
    strided_copy_kernel[(2,)](src, out, n, stride, BLOCK=64)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


def test_sanitized_kernels_are_cached_apart_and_keep_their_checks_on_disk(compiled, gen):
    x = torch.randn(100, generator=gen)
    out = poison(torch.empty(100))
    strided_copy_kernel.cache.clear()
    strided_copy_kernel.launch_cache.clear()
    strided_copy_kernel[(2,)](x, out, 100, 1, BLOCK=64)
    with inductor_tile.config.patch(sanitize=True):
        strided_copy_kernel[(2,)](x, out, 100, 1, BLOCK=64)
    plain, checked = sorted(strided_copy_kernel.cache.values(), key=lambda k: k.sanitizer_sites is not None)
    assert plain.sanitizer_sites is None and "tt.sanitizer_report" not in plain.asm["ttir"]
    assert [site["kind"] for site in checked.sanitizer_sites] == ["load", "store"]
    assert checked.asm["ttir"].count("tt.sanitizer_report") == 2
    with inductor_tile.config.patch(sanitize=True):
        shifted_copy_kernel[(1,)](x, out, 64, 0, 0, BLOCK=64)  # in bounds: compiled and stored on disk
        shifted_copy_kernel.cache.clear()
        shifted_copy_kernel.launch_cache.clear()
        with pytest.raises(inductor_tile.SanitizerError, match=r"^out-of-bounds load .*\n.*x = tl.load"):
            shifted_copy_kernel[(2,)](x, out, 100, 0, 0, BLOCK=64)
    (reloaded,) = shifted_copy_kernel.cache.values()
    assert reloaded.from_disk and reloaded.sanitizer_sites


@pytest.mark.parametrize("name", ["vector_add", "layernorm", "tile_2d_strided", "integer_arithmetic", "control_flow",
                                  "transpose_bf16"])
def test_suite_kernels_run_clean_sanitized(sanitize, gen, name):
    """A representative part of the kernel suite. The whole suite, the atomic cases and the suite's PTX, sanitized:
    TILE_SANITIZE=1 pytest -q tests/test_suite_ttir.py tests/test_atomics.py::test_atomic_case_compiled_for_the_cpu
    tests/test_nvidia_ptx.py::test_every_suite_kernel_assembles_for_sm90_and_sm80   (7.5 min on the shared 2 cores)"""
    assert_checks(CASES[name](gen))


@pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64", reason="ptxas wheels: x86-64 Linux")
def test_sanitized_ptx_assembles_for_sm90():
    from inductor_tile.kernel_compiler.runtime.cuda_tools import check_ptx

    specs = [spec_from_signature("a_ptr", "*i32"), spec_from_signature("b_ptr", "*i32"),
             spec_from_signature("q_ptr", "*i32"), spec_from_signature("n", "i32"),
             spec_from_signature("BLOCK", "constexpr", 256)]
    kernel = compile_specialized(divide_kernel, specs, target="cuda:90", num_warps=4, native=False, sanitize=True)
    ptx = kernel.asm["ptx"]
    assert len(re.findall(r"atom[.\w]*\.cas\.b64", ptx)) == 4, "each report claims the record with a 64-bit CAS"
    check_ptx(ptx, "sm_90")


def test_amd_target_compiles_sanitized_kernels():
    specs = [spec_from_signature("src_ptr", "*fp32"), spec_from_signature("dst_ptr", "*fp32"),
             spec_from_signature("n", "i32"), spec_from_signature("stride", "i32"),
             spec_from_signature("BLOCK", "constexpr", 256)]
    kernel = compile_specialized(strided_copy_kernel, specs, target="hip:gfx942", num_warps=4, native=False,
                                 sanitize=True)
    assert re.search(r"global_atomic_cmpswap_x2|flat_atomic_cmpswap_x2", kernel.asm["amdgcn"])


def test_launch_sites_follow_the_setting(compiled, gen):
    """Generated wrappers launch through `jit_fn.launcher(...)`, whose fast path must not skip the checks."""
    site = shifted_copy_kernel.launcher(BLOCK=64)
    x = torch.randn(100, generator=gen)
    out = poison(torch.empty(100))
    site((1, 1, 1), x, out, 64, 0, 0)
    site((1, 1, 1), x, out, 64, 0, 0)
    assert site.fast_launches == 1
    with inductor_tile.config.patch(sanitize=True):
        with pytest.raises(inductor_tile.SanitizerError, match=r"element offset 100 of argument 'src_ptr'"):
            site((2, 1, 1), x, out, 100, 0, 0)
    assert site.fast_launches == 1
    torch.testing.assert_close(out, x, rtol=0, atol=0)
