"""Norm kernels whose weight rows convert before their broadcast (remove-layout-conversions' narrowing),
run without a GPU: the sm_90 PTX executes in the PTX interpreter of the reduction tests
(`reduce_ptx_sim.py`, one CTA; grown here by the two instructions a layer norm adds, `rsqrt.approx` and
the packing `cvt.rn.f16x2.f32`) on random inputs with NaN-poisoned outputs, compared with float64 numpy.
The last row of the block is masked off (xnumel < XBLOCK) and must stay NaN. Each case first checks that
the TTGIR converts a [1, N] row, so the numbers test the narrowed conversion, not another plan.
"""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest
from dot_ptx_sim_ops import _f32, _from_f32
from reduce_ptx_sim import ReduceMachine

import inductor_tile
import inductor_tile.language as tl

pytestmark = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                reason="ptxas and libdevice wheels exist for Linux x86-64 only")

EPS32 = 2.0 ** -23
U32 = np.uint64(0xFFFFFFFF)


class NormMachine(ReduceMachine):
    def execute(self, opcode: str, ops: list[str]) -> None:
        if opcode in ("rsqrt.approx.f32", "rsqrt.approx.ftz.f32"):
            a = _f32(self.value(ops[1]) & U32).astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                return self.set(ops[0], _from_f32((1 / np.sqrt(a)).astype(np.float32)), 32)
        if opcode == "cvt.rn.f16x2.f32":  # d = {a in the upper half, b in the lower}
            upper, lower = (_f32(self.value(op) & U32).astype(np.float16).view(np.uint16).astype(np.uint64)
                            for op in ops[1:3])
            return self.set(ops[0], (upper << np.uint64(16)) | lower, 32)
        return super().execute(opcode, ops)


@inductor_tile.jit
def layer_norm_backward_kernel(dy_ptr, w_ptr, xhat_ptr, rstd_ptr, dx_ptr, xnumel, XBLOCK: tl.constexpr,
                               RBLOCK: tl.constexpr):
    # BERT's layer-norm backward over 768 columns (fp16 gradient, fp32 weight and normalized input)
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, RBLOCK)[None, :]
    mask = (rows < xnumel) & (cols < 768)
    dy = tl.load(dy_ptr + cols + 768 * rows, mask=mask, other=0).to(tl.float32)
    dyw = dy * tl.load(w_ptr + cols, mask=cols < 768, other=0)
    xhat = tl.load(xhat_ptr + cols + 768 * rows, mask=mask, other=0)
    sum_dyw = tl.sum(tl.where(mask, dyw, 0.0), 1)[:, None]
    sum_dyw_xhat = tl.sum(tl.where(mask, dyw * xhat, 0.0), 1)[:, None]
    rstd = tl.load(rstd_ptr + rows, mask=rows < xnumel, other=0)
    dx = rstd * (dyw * 768.0 - sum_dyw - xhat * sum_dyw_xhat)
    tl.store(dx_ptr + cols + 768 * rows, dx, mask=mask)


@inductor_tile.jit
def rms_norm_backward_kernel(dy_ptr, x_ptr, w_ptr, rstd_ptr, dx_ptr, xnumel, XBLOCK: tl.constexpr,
                             RBLOCK: tl.constexpr):
    # an RMSNorm backward over 4096 columns (fp16 activations, fp32 weight, as under AMP)
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, RBLOCK)[None, :]
    mask = (rows < xnumel) & (cols < 4096)
    dy = tl.load(dy_ptr + cols + 4096 * rows, mask=mask, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=cols < 4096, other=0)
    x = tl.load(x_ptr + cols + 4096 * rows, mask=mask, other=0).to(tl.float32)
    dyw = dy * w
    s = tl.sum(tl.where(mask, dyw * x, 0.0), 1)[:, None]
    rstd = tl.load(rstd_ptr + rows, mask=rows < xnumel, other=0)
    tl.store(dx_ptr + cols + 4096 * rows, rstd * dyw - x * (rstd * rstd * rstd * s / 4096.0), mask=mask)


@inductor_tile.jit
def layer_norm_forward_kernel(x_ptr, w_ptr, b_ptr, y_ptr, xnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    # a layer norm over 768 columns with fp32 weight and bias (as under AMP): fp16 rows in and out
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    cols = tl.arange(0, RBLOCK)[None, :]
    mask = (rows < xnumel) & (cols < 768)
    x = tl.load(x_ptr + cols + 768 * rows, mask=mask, other=0).to(tl.float32)
    mean = tl.sum(tl.where(mask, x, 0.0), 1)[:, None] / 768.0
    d = tl.where(mask, x - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(d * d, 1)[:, None] / 768.0 + 1e-5)
    w = tl.load(w_ptr + cols, mask=cols < 768, other=0)
    b = tl.load(b_ptr + cols, mask=cols < 768, other=0)
    tl.store(y_ptr + cols + 768 * rows, ((x - mean) * rstd * w + b).to(tl.float16), mask=mask)


def _layer_norm_forward(gen, rows: int, live: int):
    x = gen.standard_normal((rows, 768)).astype(np.float16)
    w = gen.standard_normal(768).astype(np.float32)
    b = gen.standard_normal(768).astype(np.float32)
    wide = x.astype(np.float64)
    mean = wide.mean(1, keepdims=True)
    expected = (wide - mean) / np.sqrt(((wide - mean) ** 2).mean(1, keepdims=True) + 1e-5) * w + b
    # the fp16 result's rounding, and the approximate reciprocal square root's error (2 ulp) on top
    return [x, w, b], expected, 2.0 ** -11 * np.abs(expected) + 2.0 ** -20 * (np.abs(expected) + np.abs(b)) + 1e-6


def _layer_norm(gen, rows: int, live: int):
    dy = gen.standard_normal((rows, 768)).astype(np.float16)
    w = gen.standard_normal(768).astype(np.float32)
    xhat = gen.standard_normal((rows, 768)).astype(np.float32)
    rstd = (gen.random(rows) + 0.5).astype(np.float32)
    d = dy.astype(np.float64) * w
    expected = rstd[:, None] * (768 * d - d.sum(1, keepdims=True) - xhat * (d * xhat).sum(1, keepdims=True))
    # rounding of the sums and products in fp32: far below one weight element misplaced
    scale = rstd[:, None] * (768 * np.abs(d) + np.abs(d).sum(1, keepdims=True)
                             + np.abs(xhat) * np.abs(d * xhat).sum(1, keepdims=True))
    return [dy, w, xhat, rstd], expected, 16 * np.log2(768) * EPS32 * scale


def _rms_norm(gen, rows: int, live: int):
    dy = gen.standard_normal((rows, 4096)).astype(np.float16)
    x = gen.standard_normal((rows, 4096)).astype(np.float16)
    w = gen.standard_normal(4096).astype(np.float32)
    rstd = (gen.random(rows) + 0.5).astype(np.float32)
    d, xf, r = dy.astype(np.float64) * w, x.astype(np.float64), rstd.astype(np.float64)[:, None]
    expected = r * d - xf * (r**3 * (d * xf).sum(1, keepdims=True) / 4096)
    scale = r * np.abs(d) + np.abs(xf) * r**3 * np.abs(d * xf).sum(1, keepdims=True) / 4096
    return [dy, x, w, rstd], expected, 16 * np.log2(4096) * EPS32 * scale


CASES = [
    # (kernel, signature, XBLOCK, RBLOCK, warps, inputs, columns)
    pytest.param(layer_norm_forward_kernel,
                 {"x_ptr": "*fp16", "w_ptr": "*fp32", "b_ptr": "*fp32", "y_ptr": "*fp16", "xnumel": "i32"},
                 8, 1024, 4, _layer_norm_forward, 768, id="layer_norm_forward"),
    pytest.param(layer_norm_backward_kernel,
                 {"dy_ptr": "*fp16", "w_ptr": "*fp32", "xhat_ptr": "*fp32", "rstd_ptr": "*fp32", "dx_ptr": "*fp32",
                  "xnumel": "i32"}, 8, 1024, 4, _layer_norm, 768, id="layer_norm_backward"),
    pytest.param(rms_norm_backward_kernel,
                 {"dy_ptr": "*fp16", "x_ptr": "*fp16", "w_ptr": "*fp32", "rstd_ptr": "*fp32", "dx_ptr": "*fp32",
                  "xnumel": "i32"}, 2, 4096, 8, _rms_norm, 4096, id="rms_norm_backward"),
]


@pytest.mark.parametrize("kernel,signature,xblock,rblock,warps,inputs,columns", CASES)
def test_norm_backward_with_narrowed_weight_conversion(kernel, signature, xblock, rblock, warps, inputs, columns):
    compiled = inductor_tile.compile(kernel, signature, constexprs={"XBLOCK": xblock, "RBLOCK": rblock},
                                     target="cuda:90", num_warps=warps,
                                     divisible_by_16=[n for n, ty in signature.items() if ty.startswith("*")])
    converted = re.findall(r"ttg\.convert_layout %\S+ : tensor<([0-9x]+)xf(?:16|32)", compiled.asm["ttgir"])
    assert f"1x{rblock}" in converted, converted  # the weight row, before its broadcast
    live = xblock - 1  # the last row is masked off
    arrays, expected, bound = inputs(np.random.default_rng(0), xblock, live)
    out_type = [ty for ty in signature.values() if ty.startswith("*")][-1]  # the output is the last pointer
    out = np.full((xblock, columns), np.nan, dtype=np.float16 if out_type == "*fp16" else np.float32)
    machine = NormMachine(compiled.asm["ptx"], 32 * warps, [*arrays, out], scalars={len(arrays) + 1: live})
    machine.run(max_steps=5_000_000)
    got = machine.buffer(len(arrays), out)
    error = np.abs(got[:live].astype(np.float64) - expected[:live])
    assert not np.isnan(got[:live]).any() and (error <= bound[:live] + 1e-30).all(), np.unravel_index(
        np.argmax(error - bound[:live]), error.shape)
    assert np.isnan(got[live:]).all()  # masked rows left as they were
