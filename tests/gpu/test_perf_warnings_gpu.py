"""Performance warnings for kernels launched on an NVIDIA GPU: the JIT's specialization (from
the tensors' addresses and the ints' values) decides what is known, ptxas's `-v` report of the
launched binary gives spills, and a clean kernel stays silent. Outputs are checked too."""

import warnings

import pytest
import torch

import inductor_tile
from test_perf_warnings import line_of, masked_copy, row_softmax, strided_copy

pytestmark = pytest.mark.gpu


def _launch(kernel, grid, *args, **meta):
    for cached in (kernel.cache, kernel.launch_cache):
        cached.clear()
    with inductor_tile.config.patch(perf_warnings=True), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kernel[grid](*args, **meta)
        torch.cuda.synchronize()
    return [w for w in caught if issubclass(w.category, inductor_tile.PerformanceWarning)]


def test_strided_view_warns_naming_the_stride(compiled):
    g = torch.Generator(device="cuda").manual_seed(0)
    matrix = torch.randn(4096, 3, device="cuda", generator=g)
    dst = torch.full((4096,), float("nan"), device="cuda")
    caught = _launch(strided_copy, (4096 // 1024,), matrix, dst, 3, BLOCK=1024)
    torch.testing.assert_close(dst.double(), matrix[:, 0].double(), rtol=0, atol=0)
    assert [w.lineno for w in caught] == [line_of(strided_copy, "tl.load(")]
    assert "runtime stride `stride`" in str(caught[0].message)


def test_clean_kernel_is_silent_on_the_gpu(compiled):
    g = torch.Generator(device="cuda").manual_seed(0)
    src = torch.randn(1 << 16, device="cuda", generator=g)
    dst = torch.full_like(src, float("nan"))
    caught = _launch(masked_copy, (src.numel() // 1024,), src, dst, src.numel(), BLOCK=1024)
    torch.testing.assert_close(dst.double(), src.double() * 2, rtol=0, atol=0)
    assert caught == []


def test_unaligned_view_warns(compiled):
    g = torch.Generator(device="cuda").manual_seed(0)
    src = torch.randn((1 << 16) + 1, device="cuda", generator=g)[1:]  # 4 bytes past an aligned address
    dst = torch.full_like(src, float("nan"))
    caught = _launch(masked_copy, (src.numel() // 1024,), src, dst, src.numel(), BLOCK=1024)
    torch.testing.assert_close(dst.double(), src.double() * 2, rtol=0, atol=0)
    assert [w.lineno for w in caught] == [line_of(masked_copy, "tl.load(")]
    assert "`src` is not known to be 16-byte aligned" in str(caught[0].message)


def test_spills_of_a_launched_kernel(compiled):
    g = torch.Generator(device="cuda").manual_seed(0)
    src = torch.randn(4, 8192, device="cuda", generator=g)
    dst = torch.full_like(src, float("nan"))
    caught = _launch(row_softmax, (4,), src, dst, 8192, BLOCK=8192, num_warps=1)
    torch.testing.assert_close(dst.double(), torch.softmax(src.double(), 1), rtol=1e-5, atol=1e-6)
    texts = [str(w.message) for w in caught if w.lineno == line_of(row_softmax, "def row_softmax")]
    assert any("spilled registers" in text for text in texts), texts


def test_generated_kernel_with_an_odd_size_names_the_mask_and_its_fx_nodes(compiled):
    def scaled_gelu(x, y):
        return torch.nn.functional.gelu(x * y) + 1.0

    g = torch.Generator(device="cuda").manual_seed(0)
    x, y = (torch.randn(1000, 1001, device="cuda", generator=g) for _ in range(2))  # 1001000 = 8 mod 16
    torch._dynamo.reset()
    with inductor_tile.config.patch(perf_warnings=True), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = torch.compile(scaled_gelu, backend="tile")(x, y)
        torch.cuda.synchronize()
    torch.testing.assert_close(out.double(), scaled_gelu(x.double(), y.double()), rtol=1e-5, atol=1e-5)
    texts = [str(w.message) for w in caught if issubclass(w.category, inductor_tile.PerformanceWarning)]
    assert texts and all("generated from FX nodes" in text for text in texts), texts
    assert any("depends on `xnumel`" in text for text in texts), texts
