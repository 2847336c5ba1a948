"""The sanitizer on an NVIDIA GPU: out-of-bounds accesses and division by zero are reported (the
bad lanes are skipped, so the CUDA context survives and later kernels run), views run clean, and
the kernel suite and the atomic cases run clean sanitized.

    pytest -q tests/gpu/test_sanitizer_gpu.py
"""

import pytest
import torch

import inductor_tile
from atomic_cases import ATOMIC_CASES
from gpu.test_suite_gpu import on_gpu  # noqa: F401 (fixture: the suite's tensors moved to the GPU)
from suite import CASES, assert_checks, poison
from test_sanitizer import _expected_location, divide_kernel, shifted_copy_kernel, strided_copy_kernel

pytestmark = pytest.mark.gpu


@pytest.fixture
def sanitize(monkeypatch):
    monkeypatch.delenv("TILE_INTERPRET", raising=False)
    with inductor_tile.config.patch(sanitize=True):
        yield


def _randn(n: int) -> torch.Tensor:
    return torch.randn(n, generator=torch.Generator().manual_seed(n)).cuda()


def _clean_copy_still_works() -> None:
    x = _randn(1000)
    out = poison(torch.empty(1000, device="cuda"))
    strided_copy_kernel[(8,)](x, out, 1000, 1, BLOCK=128)
    torch.testing.assert_close(out, x, rtol=0, atol=0)


def test_out_of_bounds_read_is_caught_on_gpu(sanitize):
    n = 127  # one lane of program 1 (element 127) is outside
    x = _randn(n)
    out = poison(torch.empty(n, device="cuda"))
    with pytest.raises(inductor_tile.SanitizerError) as info:
        shifted_copy_kernel[(2,)](x, out, n, 0, 0, BLOCK=64)
    assert str(info.value) == (
        "out-of-bounds load in kernel `shifted_copy_kernel`, "
        + _expected_location(shifted_copy_kernel, "x = tl.load", "tl.load")
        + "program id (1, 0, 0) loaded element offset 127 of argument 'src_ptr' (a float32 tensor of shape (127,); "
        "its storage holds 127 elements, the view starts at element 0)")
    torch.testing.assert_close(out, x, rtol=0, atol=0)
    _clean_copy_still_works()


@pytest.mark.parametrize("shift, pid, offset", [(1, 1, 100), (-1, 0, -1)])
def test_out_of_bounds_write_is_caught_on_gpu(sanitize, shift, pid, offset):
    n = 100
    x = _randn(128)
    out = poison(torch.empty(n, device="cuda"))
    with pytest.raises(inductor_tile.SanitizerError) as info:
        shifted_copy_kernel[(2,)](x, out, n, 0, shift, BLOCK=64)
    assert str(info.value).endswith(
        f"program id ({pid}, 0, 0) stored element offset {offset} of argument 'dst_ptr' (a float32 tensor of shape "
        "(100,); its storage holds 100 elements, the view starts at element 0)")
    _clean_copy_still_works()


def test_division_by_zero_is_caught_on_gpu(sanitize):
    n = 100
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-1000, 1000, (n,), generator=g, dtype=torch.int32).cuda()
    b = torch.randint(1, 50, (n,), generator=g, dtype=torch.int32).cuda()
    q = poison(torch.empty(n, dtype=torch.int32, device="cuda"))
    divide_kernel[(2,)](a, b, q, n, BLOCK=64)
    torch.testing.assert_close(q, torch.div(a, b, rounding_mode="trunc"), rtol=0, atol=0)
    b[70] = 0
    with pytest.raises(inductor_tile.SanitizerError, match=r"program id \(1, 0, 0\): the divisor is 0 at element 6 "):
        divide_kernel[(2,)](a, b, q, n, BLOCK=64)


@pytest.mark.parametrize("view", ["negative_stride", "storage_offset", "broadcast"])
def test_views_run_clean_on_gpu(sanitize, view):
    base, n = _randn(300), 100
    if view == "negative_stride":
        src, stride, expected = base[-1:], -1, base.flip(0)[:n]
    elif view == "storage_offset":
        src, stride, expected = base[150:250], 1, base[150:250]
    else:
        src, stride, expected = base[7:8].expand(n), 0, base[7].expand(n)
    out = poison(torch.empty(n, device="cuda"))
    strided_copy_kernel[(2,)](src, out, n, stride, BLOCK=64)
    torch.testing.assert_close(out, expected, rtol=0, atol=0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_suite_case_sanitized_on_gpu(name, on_gpu, sanitize, gen):  # noqa: F811
    assert_checks(CASES[name](gen))


@pytest.mark.parametrize("name", sorted(ATOMIC_CASES))
def test_atomic_case_sanitized_on_gpu(name, sanitize, gen):
    assert_checks(ATOMIC_CASES[name](gen, "cuda"))
    torch.cuda.synchronize()
