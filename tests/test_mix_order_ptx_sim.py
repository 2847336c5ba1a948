"""The mix-order kernel with chunked rows (``MixOrderKernelSource.rchunk``: one warp per row up to 1024
columns, several warps for longer rows; at 768 columns the next step's rows loaded in this one) checked
without a GPU: the kernel the backend generates for a
layer norm / RMSNorm backward with the CUDA rule is compiled to sm_90 PTX and run for one program over
all rows in the PTX interpreter (``reduce_ptx_sim.py``), against the [XBLOCK, RBLOCK] kernel of the same graph
(``TILE_MIX_ORDER_WARP_ROWS=0``) run on the CPU target, random inputs, NaN-poisoned outputs and
workspace, several steps per program: the chunked source (its prefetch included) and the GPU lowering
of its [XBLOCK, chunks, RCHUNK] layouts (row reductions by shuffles, column partials combined across
warps after the loop) together."""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest
import torch
from dot_ptx_sim_ops import _f32, _from_f32
from reduce_ptx_sim import ReduceMachine
from test_mix_order_cuda_shapes import _compile_and_check

import inductor_tile
from inductor_tile import config, metrics
from inductor_tile.scheduler import mix_order

pytestmark = [pytest.mark.usefixtures("fresh_backend"),
              pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                 reason="the NVPTX wheels exist for Linux x86-64 only")]
NUMPY = {"*fp16": np.float16, "*fp32": np.float32}


class OneProgram(ReduceMachine):
    """One program of a one-program grid: ``tl.num_programs(0)`` is 1."""

    default_max_steps = 5_000_000

    def value(self, token: str) -> np.ndarray:
        if token.strip() in ("%nctaid.x", "%nctaid.y", "%nctaid.z"):
            return np.ones(self.threads, dtype=np.uint64)
        return super().value(token)

    def execute(self, opcode: str, ops: list[str]) -> None:
        if opcode in ("rsqrt.approx.f32", "rsqrt.approx.ftz.f32"):  # RMSNorm's rstd (the CPU: exact)
            x = _f32(self.value(ops[1]) & np.uint64(0xFFFFFFFF)).astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                return self.set(ops[0], _from_f32((1.0 / np.sqrt(x)).astype(np.float32)), 32)
        super().execute(opcode, ops)


def _generated(cuda_heuristics, monkeypatch, kind, cols):
    """The mix-order kernel of the norm's backward over `cols` columns: (fn, signature, constexprs, warps)."""
    cuda_heuristics.clear()
    torch._dynamo.reset()
    metrics.reset()
    mix, _ = _compile_and_check(kind, 1001, cols, torch.float16, monkeypatch)
    (fn, signature, constexprs), = [r for r in cuda_heuristics if r[0].__name__.startswith("tile_mix_")]
    return fn, signature, constexprs, int(re.search(r"num_warps=(\d+)", mix).group(1))


@pytest.mark.parametrize("kind, rows, cols, warps_per_row, prefetch", [
    ("layernorm", 22, 768, 1, True), ("rmsnorm", 12, 2000, 2, False), ("layernorm", 6, 4096, 4, False)])
def test_chunked_rows_on_the_ptx_interpreter(cuda_heuristics, monkeypatch, kind, rows, cols, warps_per_row,
                                             prefetch):
    monkeypatch.setattr(mix_order, "_sm_count", lambda index=None: 132)
    # the reference: the [XBLOCK, RBLOCK] kernel of the same graph (same parameters) on the CPU target
    with monkeypatch.context() as patch:
        patch.setattr(config, "mix_order_warp_rows", False)
        reference, _, reference_blocks, _ = _generated(cuda_heuristics, monkeypatch, kind, cols)
    fn, signature, constexprs, warps = _generated(cuda_heuristics, monkeypatch, kind, cols)
    assert constexprs["RCHUNK"] == 256 and warps // constexprs["XBLOCK"] == warps_per_row
    assert ("_next = tl.load(" in metrics.kernel_sources[fn.__name__]) == prefetch  # the next step's rows
    one_program = {"SPLIT": -(-rows // constexprs["XBLOCK"]) * constexprs["XBLOCK"]}
    assert one_program["SPLIT"] > constexprs["XBLOCK"]  # several steps
    params = [name for name in fn.arg_names if name in signature]  # the PTX's parameters, in order
    assert params == [name for name in reference.arg_names if name in signature]
    pointers = [name for name in params if signature[name].startswith("*")]
    ptx = inductor_tile.compile(fn, signature, constexprs={**constexprs, **one_program}, target="cuda:90",
                                num_warps=warps, divisible_by_16=[n for n, ty in signature.items() if ty[0] in "*i"]
                                ).asm["ptx"]
    gen = np.random.default_rng(rows + cols)
    buffers, outputs = [], []
    sizes = {"xnumel": rows, "rnumel": cols}
    sums = len(re.findall(r"tl\.store\(ws_ptr", metrics.kernel_sources[fn.__name__]))
    for name in pointers:
        dtype = NUMPY[signature[name]]
        # rows x columns, a row (mean, rstd) or a column (weight) vector: the largest is enough
        shape = (sums, 1, cols) if name == "ws_ptr" else (rows, cols)
        if name.startswith("out_ptr") or name == "ws_ptr":
            buffers.append(np.full(shape, np.nan, dtype=dtype))
            outputs.append(len(buffers) - 1)
        else:
            buffers.append((gen.standard_normal(shape) * 0.5 + 1.0).astype(dtype))
    scalars = {position: sizes[name] for position, name in enumerate(params) if name in sizes}
    machine = OneProgram(ptx, 32 * warps, buffers, scalars)
    machine.run()
    tensors = [torch.from_numpy(b.copy()) for b in buffers]
    reference[(1, 1, 1)](*tensors, *[sizes[n] for n in params if n in sizes], **{**reference_blocks, **one_program})
    for i in outputs:
        got, want = torch.from_numpy(machine.buffer(i, buffers[i])).double(), tensors[i].double()
        assert torch.isfinite(got).all() and torch.isfinite(want).all()
        torch.testing.assert_close(got, want, rtol=2e-3, atol=2e-3 * want.abs().max().item())
