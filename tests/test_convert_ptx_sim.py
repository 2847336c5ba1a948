"""`ttg.convert_layout` through shared memory, checked without a GPU: for pairs of layouts (1-D and 2-D,
transposed orders, dimensions smaller than the layout's tile so that threads hold copies, 1/4/8 warps) and
fp16/fp32/int8/i1 elements (and reshapes, which go the same way), the sm_90 PTX of a load-convert-store
kernel runs in the PTX interpreter (`convert_ptx_sim.py`) on random input with a poisoned output, and every
element must land where it belongs (old and new lowerings alike). FileCheck then checks the vector accesses
expected of a few pairs; last, the element moves of test_language_moves.py run the same way.
"""

from __future__ import annotations

import platform

import numpy as np
import pytest

from convert_ptx_sim import conversion_ptx, run_conversion
from inductor_tile.kernel_compiler.ir.layouts import Blocked

needs_llvm_nvptx = pytest.mark.skipif(platform.system() != "Linux" or platform.machine() != "x86_64",
                                      reason="the NVPTX wheels exist for Linux x86-64 only")


def B(spt, tpw, wpc, order=None):
    return Blocked(tuple(spt), tuple(tpw), tuple(wpc), tuple(order or reversed(range(len(spt)))))


# (id, shape, src, dst, warps, element types)
PAIRS = [
    # BERT's layer-norm backward: 16-byte runs on both sides, the tiles of the two layouts differ
    ("ln_f32", (8, 1024), B([1, 4], [1, 32], [1, 4]), B([1, 16], [1, 32], [2, 2]), 4, ["f32", "f16"]),
    ("ln_f16", (8, 1024), B([1, 16], [1, 32], [2, 2]), B([1, 8], [1, 32], [1, 4]), 4, ["f16", "i8"]),
    # one element per thread to runs of 8 (and the other way)
    ("default_to_runs", (64, 64), B([1, 1], [1, 32], [4, 1]), B([1, 8], [8, 4], [2, 2]), 4, ["f32", "f16", "i1"]),
    ("runs_to_default", (64, 64), B([1, 8], [8, 4], [2, 2]), B([1, 1], [1, 32], [4, 1]), 4, ["f16", "i8"]),
    # a transpose of the thread arrangement: rows held by a thread on one side, columns on the other
    ("transpose", (64, 64), B([1, 4], [4, 8], [4, 1]), B([4, 1], [8, 4], [1, 4], [0, 1]), 4, ["f32", "f16", "i8"]),
    ("columns_both", (64, 64), B([4, 1], [16, 2], [1, 4], [0, 1]), B([8, 1], [8, 4], [2, 2], [0, 1]), 4,
     ["f32", "f16"]),
    # 1-D, 8 warps and 1 warp
    ("1d_8warps", (1024,), B([4], [32], [8]), B([1], [32], [8]), 8, ["f32", "f16", "i1"]),
    ("1d_1warp", (256,), B([8], [32], [1]), B([2], [32], [1]), 1, ["f16", "i8", "f32"]),
    # dimensions smaller than the layout's tile: several threads (and slots) hold one element
    ("broadcast_row", (1, 1024), B([1, 16], [1, 32], [2, 2]), B([1, 4], [1, 32], [1, 4]), 4, ["f32", "f16"]),
    ("broadcast_column", (64, 1), B([1, 1], [32, 1], [4, 1]), B([1, 1], [1, 32], [1, 4]), 4, ["f32", "i1"]),
    ("wrapped_small", (16, 16), B([1, 4], [2, 16], [8, 1]), B([2, 2], [4, 8], [1, 8]), 8, ["f32", "f16"]),
    ("8warps_2d", (32, 128), B([1, 16], [4, 8], [2, 4]), B([1, 4], [1, 32], [8, 1]), 8, ["f16", "i1", "i8"]),
]
CASES = [pytest.param(shape, element, src, dst, warps, id=f"{name}-{element}")
         for name, shape, src, dst, warps, elements in PAIRS for element in elements]


@needs_llvm_nvptx
@pytest.mark.parametrize("shape,element,src,dst,warps", CASES)
def test_every_element_lands_where_it_belongs(shape, element, src, dst, warps):
    ptx = conversion_ptx(shape, element, src, dst, warps)
    got, expected = run_conversion(ptx, shape, element, warps)
    wrong = np.argwhere(~(got == expected))
    assert wrong.size == 0, f"{len(wrong)} elements wrong, first at {tuple(wrong[0])}: {got[tuple(wrong[0])]} " \
                            f"instead of {expected[tuple(wrong[0])]}"


# (shape, result shape, src, dst, warps, element)
RESHAPES = [((8, 128), (1024,), B([1, 4], [1, 32], [4, 1]), B([8], [32], [4]), 4, "f32"),
            ((1024,), (32, 32), B([8], [32], [4]), B([1, 1], [32, 1], [1, 4]), 4, "f16"),
            ((16, 64), (64, 16), B([1, 16], [16, 2], [1, 4]), B([4, 4], [16, 2], [4, 1]), 4, "i8")]


@needs_llvm_nvptx
@pytest.mark.parametrize("shape,dst_shape,src,dst,warps,element", RESHAPES, ids=lambda v: str(v))
def test_reshapes_keep_row_major_order(shape, dst_shape, src, dst, warps, element):
    ptx = conversion_ptx(shape, element, src, dst, warps, dst_shape=dst_shape)
    got, expected = run_conversion(ptx, shape, element, warps)
    assert np.array_equal(got.reshape(-1), expected.reshape(-1))


# FileCheck on the PTX: (pair, element) -> the shared accesses expected, in order, between the two barriers
ACCESSES = {
    # BERT's layer-norm backward: 16 bytes a thread on both sides, addresses as immediates from one register
    ("ln_f32", "f32"): ["CHECK: bar.sync", "CHECK-COUNT-16: st.shared.v4.b32 [%rd{{[0-9]+}}{{(\\+[0-9]+)?}}]",
                        "CHECK-NOT: st.shared", "CHECK: bar.sync",
                        "CHECK-COUNT-16: ld.shared.v4.b32", "CHECK-NOT: {{(ld|st)}}.shared"],
    ("ln_f16", "f16"): ["CHECK: bar.sync", "CHECK-COUNT-8: st.shared.v4.b32", "CHECK-NOT: st.shared",
                        "CHECK: bar.sync", "CHECK-COUNT-8: ld.shared.v4.b32", "CHECK-NOT: {{(ld|st)}}.shared"],
    # int8 from runs of 16 to runs of 8: 16-byte stores, 8-byte loads
    ("ln_f16", "i8"): ["CHECK: bar.sync", "CHECK-COUNT-4: st.shared.v4.b32", "CHECK-NOT: st.shared",
                       "CHECK: bar.sync", "CHECK-COUNT-8: ld.shared.v2.b32", "CHECK-NOT: {{(ld|st)}}.shared"],
    # one element per thread on the store side: scalar stores, vector loads
    ("default_to_runs", "f32"): ["CHECK: bar.sync", "CHECK-COUNT-32: st.shared.b32", "CHECK: bar.sync",
                                 "CHECK-COUNT-8: ld.shared.v4.b32", "CHECK-NOT: {{(ld|st)}}.shared"],
    # columns on both sides: the buffer is column-major, and both sides move 16 bytes
    ("columns_both", "f32"): ["CHECK: bar.sync", "CHECK-COUNT-8: st.shared.v4.b32", "CHECK: bar.sync",
                              "CHECK-COUNT-16: ld.shared.v4.b32", "CHECK-NOT: {{(ld|st)}}.shared"],
    # 64 copies of a [64, 1] column in every thread of the destination: 16 loads of 16 bytes, not 64
    ("broadcast_column", "f32"): ["CHECK: bar.sync", "CHECK-COUNT-1: st.shared.b32", "CHECK-NOT: st.shared",
                                  "CHECK: bar.sync", "CHECK-COUNT-16: ld.shared.v4.b32",
                                  "CHECK-NOT: {{(ld|st)}}.shared"],
}


@needs_llvm_nvptx
@pytest.mark.parametrize("name,element", list(ACCESSES), ids=lambda v: str(v))
def test_vector_shared_accesses(name, element, tmp_path):
    from filecheck_tool import filecheck

    _, shape, src, dst, warps, _ = next(pair for pair in PAIRS if pair[0] == name)
    filecheck(conversion_ptx(shape, element, src, dst, warps), "\n".join(ACCESSES[name, element]) + "\n", tmp_path)


# The element moves of test_language_moves.py (transposes, 3-D permutes, flips, join/split/interleave, cat),
# whose NVIDIA lowerings go through the same exchange, compiled for sm_90 and run in the interpreter
MOVES_SHAPES = [((8, 16), 1), ((32, 64), 4), ((64, 128), 8)]


@needs_llvm_nvptx
@pytest.mark.parametrize("shape,warps", MOVES_SHAPES, ids=str)
@pytest.mark.parametrize("element", ["fp32", "fp16", "i1"])
def test_element_moves(element, shape, warps):
    import torch

    from dot_ptx_sim import Machine
    from inductor_tile.kernel_compiler.compiler import compile_specialized
    from inductor_tile.kernel_compiler.frontend.specialization import spec_from_signature
    from test_language_moves import OPS, _inputs, _reference, moves_kernel

    dtype = {"fp32": torch.float32, "fp16": torch.float16, "i1": torch.bool}[element]
    memory = {"fp32": np.float32, "fp16": np.float16, "i1": np.uint8}[element]
    for op in OPS:
        constants = {"M": shape[0], "N": shape[1], "OP": op}
        specs = [spec_from_signature(name, f"*{element}", divisible_by_16=True) if name.endswith("_ptr")
                 else spec_from_signature(name, "constexpr", constants[name]) for name in moves_kernel.arg_names]
        ptx = compile_specialized(moves_kernel, specs, target="cuda:90", num_warps=warps, native=False).asm["ptx"]
        x, y = _inputs(dtype, torch.Generator().manual_seed(7), *shape)
        want = _reference(op, x, y).numpy().astype(memory).reshape(-1)
        out = np.full(want.size, 0x5A if element == "i1" else np.nan, dtype=memory)
        machine = Machine(ptx, 32 * warps, [x.numpy().astype(memory), y.numpy().astype(memory), out])
        machine.run(max_steps=3_000_000)
        assert np.array_equal(machine.buffer(2, out), want), op
