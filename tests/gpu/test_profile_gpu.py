"""The profiler on the GPU (issue 22, item 3): kernel times come from torch.profiler (CUPTI).

The total kernel time of the profile's rows must agree with an independent torch.profiler run
over the same calls within 5%, for our kernels and for all kernels together, and with the device
total of the profile's own trace; cuBLAS and the attention kernels are in the rows of their aten
ops, never rows of their own.
"""

import copy

import pytest
import torch
import torch.nn.functional as F

import inductor_tile
from inductor_tile.backend import tile_backend
from inductor_tile.profile import report

pytestmark = pytest.mark.gpu

STEPS = 20


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = torch.nn.LayerNorm(d)
        self.fc = torch.nn.Linear(d, d)

    def forward(self, x):
        h = self.ln(x)  # LINE:ln
        h = F.gelu(self.fc(h))
        q = h.view(8, -1, 8, 128).transpose(1, 2)  # 8 sequences of 1024 tokens, 8 heads of 128
        a = F.scaled_dot_product_attention(q, q, q, is_causal=True).transpose(1, 2).reshape(x.shape)
        return x + h + a


def _kernel_seconds(prof, names=None) -> float:
    total = 0.0
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CUDA or event.is_user_annotation:
            continue  # record_function ranges have GPU-side spans too: not kernels
        if names is None or event.name in names:
            total += (event.time_range.end - event.time_range.start) / 1e6
    return total


def test_kernel_time_agrees_with_torch_profiler():
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Block(1024).cuda().half().eval()
    compiled = torch.compile(model, backend=tile_backend)
    x = torch.randn(8192, 1024, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        for _ in range(3):  # compile and warm up
            out = compiled(x)
        torch.cuda.synchronize()
        with inductor_tile.profile(device="cuda") as p:
            for _ in range(STEPS):
                compiled(x)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as ref:
            for _ in range(STEPS):
                compiled(x)
            torch.cuda.synchronize()
        expected = copy.deepcopy(model).double()(x.double())
    torch.testing.assert_close(out.double(), expected, rtol=2e-2, atol=2e-2)

    tile_rows = [r for r in p.rows if r.kind == "tile"]
    assert len(tile_rows) >= 2
    names = {r.name for r in tile_rows}
    ours = sum(r.seconds for r in tile_rows)
    assert ours == pytest.approx(_kernel_seconds(ref, names), rel=0.05)
    assert sum(r.seconds for r in p.rows) == pytest.approx(_kernel_seconds(ref), rel=0.05)
    assert sum(r.seconds for r in p.rows) == pytest.approx(p.device_total, rel=0.05)  # the header's two totals
    assert "torch.profiler's device total" in p.text().splitlines()[0]
    assert not [r.name for r in p.rows if r.kind == "other"]  # every kernel ran inside the compiled graph
    attention = next(r for r in p.rows if r.kind == "extern" and "scaled_dot_product" in r.name)
    assert attention.calls == STEPS and attention.seconds > 0 and attention.kernels
    assert 500e9 < p.copy_bandwidth < 20e12  # a GPU's copy bandwidth, measured once
    for row in tile_rows:
        assert row.calls == STEPS and row.seconds > 0
        assert 0.01 < row.roofline < 1.3 and not row.bytes_bound, (row.name, row.roofline)  # no gathers here
        assert not report.roofline_text(row).startswith("<=")
        assert row.info is not None and any(line.file == __file__ for line in row.info.lines)
    matmul = next(r for r in p.rows if r.kind == "extern" and r.name != attention.name)
    assert matmul.name in ("aten::addmm", "aten::mm") and matmul.calls == STEPS and matmul.seconds > 0
    ln_line = next(i for i, text in enumerate(open(__file__).read().splitlines(), 1) if text.endswith("# LINE:ln"))
    assert f"test_profile_gpu.py:{ln_line}" in p.text()
