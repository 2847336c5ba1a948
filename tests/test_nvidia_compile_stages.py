"""model_benchmarks/nvidia_compile_stages.py (and cpu_compile_stages' `--heuristics cuda` record): kernels
recorded as a CUDA device would shape them, replayed for sm_90 with every NVIDIA stage timed (no GPU needed:
ptxas and libdevice only)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch

from inductor_tile.codegen import heuristics
from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
from inductor_tile.kernel_compiler.runtime import cuda_tools
from model_benchmarks import cpu_compile_stages, models
from model_benchmarks import nvidia_compile_stages as stages

ROW_SOFTMAX = '''
import inductor_tile
import inductor_tile.language as tl
from inductor_tile.language.extra import libdevice


@inductor_tile.jit
def row_softmax(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * n + cols, mask=cols < n, other=float("-inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + tl.program_id(0) * n + cols, libdevice.tanh(e / tl.sum(e, 0)), mask=cols < n)
'''


def _needs_cuda_tools() -> None:
    try:
        cuda_tools.find_ptxas()
        cuda_tools.find_libdevice()
    except FileNotFoundError as e:
        pytest.skip(f"no ptxas/libdevice here: {e}")


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    specs = [spec_from_signature("x_ptr", "*fp32", divisible_by_16=True),
             spec_from_signature("out_ptr", "*fp32", divisible_by_16=True), spec_from_signature("n", "i32")]
    kernels = [("row_softmax", ROW_SOFTMAX, [*specs, spec_from_signature("BLOCK", "constexpr", block)], warps)
               for block, warps in ((128, 1), (1024, 4))]
    path = tmp_path / "kernels.pkl"
    path.write_bytes(pickle.dumps(kernels))
    return path


def test_replay_times_every_nvidia_stage_and_saves_the_ptx(recorded, tmp_path, monkeypatch):
    _needs_cuda_tools()
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")
    result = stages.replay_once(str(recorded), "cuda:90", save_dir=str(tmp_path / "ptx"))
    assert list(result["once"]) == list(stages.ONCE) and all(s >= 0 for s in result["once"].values())
    assert sorted(result["kernels"]) == ["00 row_softmax", "01 row_softmax"]
    for kernel in result["kernels"].values():
        timed = [name for name in stages.STAGES if name in kernel]
        assert timed == list(stages.STAGES)  # every stage, in order
        assert kernel["children"] > 0  # ptxas's own process
        assert kernel["total"] >= sum(kernel[name] for name in stages.STAGES) * 0.999
    saved = sorted((tmp_path / "ptx").iterdir())
    assert [p.name for p in saved] == ["00.ptx", "01.ptx"]
    for path in saved:
        text = path.read_text()
        assert ".target sm_90" in text and ".entry row_softmax" in text


def test_replay_command_line_prints_the_tables(recorded, tmp_path, capsys):
    _needs_cuda_tools()
    assert stages.main(["--replay", str(recorded), "--runs", "1", "--save-ptx", str(tmp_path / "ptx"),
                        "--gc-freeze"]) == 0
    out = capsys.readouterr().out
    assert "| sum of 2 |" in out and "| max |" in out and "Python's collector" in out
    assert "| once per process | imports | llvm_init | libdevice_parse | first_kernel |" in out
    assert len(list((tmp_path / "ptx").iterdir())) == 2
    with pytest.raises(SystemExit):
        stages.main(["--replay", str(recorded), "--target", "cpu"])


class _Norm(torch.nn.Module):
    """A layer norm then a softmax over 48 columns: two reduction kernels."""

    config = None

    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(48)

    def forward(self, x):
        return torch.softmax(self.norm(x) * 3.0, dim=-1)


@pytest.mark.parametrize("device_heuristics", ["cpu", "cuda"])
def test_record_shapes_kernels_for_the_named_device(device_heuristics, tmp_path, monkeypatch):
    monkeypatch.setitem(models.SPECS, "tiny_norm", None)
    monkeypatch.setattr(models, "build_model", lambda spec, **kw: _Norm())
    gen = torch.Generator().manual_seed(0)
    monkeypatch.setattr(models, "make_inputs", lambda spec, config, **kw: {"x": torch.randn(64, 48, generator=gen)})
    monkeypatch.setenv("TILE_GRAPH_CACHE", "0")
    monkeypatch.setenv("TILE_CACHE_DISABLE", "1")  # record() sets it for its process: put back after
    is_gpu = heuristics.is_gpu
    path = tmp_path / "kernels.pkl"
    assert cpu_compile_stages.record(str(path), ["tiny_norm"], device_heuristics) == 0
    assert heuristics.is_gpu is is_gpu  # put back
    kernels = pickle.loads(path.read_bytes())
    sources = [source for _, source, _, _ in kernels]
    rblocks = {dict((s.name, s.value) for s in specs if s.kind == "constexpr")["RBLOCK"] for _, _, specs, _ in kernels}
    if device_heuristics == "cuda":  # the GPU's shape (each 48-wide row in one block), and the configs tuned among
        assert rblocks == {64} and len(kernels) > len(set(sources)) and len({w for *_, w in kernels}) > 1
    else:  # one config per kernel
        assert len(kernels) == len(set(sources))
