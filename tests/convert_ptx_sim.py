"""Layout conversions run without a GPU: a TTGIR kernel that loads a tile in one layout, converts it
(`ttg.convert_layout`) and stores it from another, compiled to sm_90 PTX and executed by the PTX
interpreter of `dot_ptx_sim.py` (one CTA, every thread). The kernel text is written here, so any pair of
layouts can be tried, not only those the layout passes happen to pick.

Elements other than fp16/fp32 travel through global memory as int32: int8 and i1 tiles are truncated
from it before the conversion and extended after (so only the conversion moves them as 8-bit values).
"""

from __future__ import annotations

import numpy as np

from dot_ptx_sim import Machine
from inductor_tile.kernel_compiler.ir.context import parse_ttir
from inductor_tile.kernel_compiler.ir.layouts import Blocked
from inductor_tile.kernel_compiler.to_llvm.lowering import lower_to_llvm
from inductor_tile.kernel_compiler.to_llvm.nvptx import compile_to_ptx
from inductor_tile.kernel_compiler.to_llvm.targets import get_target

# element type in the tile -> (element type in global memory, numpy dtype of global memory)
GLOBAL = {"f16": ("f16", np.float16), "f32": ("f32", np.float32), "i32": ("i32", np.int32),
          "i8": ("i32", np.int32), "i1": ("i32", np.int32)}


def encoding(layout: Blocked) -> str:
    def lst(values):
        return "[" + ", ".join(map(str, values)) + "]"

    return (f"#ttg.blocked<{{sizePerThread = {lst(layout.size_per_thread)}, threadsPerWarp = "
            f"{lst(layout.threads_per_warp)}, warpsPerCTA = {lst(layout.warps_per_cta)}, "
            f"order = {lst(layout.order)}}}>")


class _Text:
    def __init__(self):
        self.lines: list[str] = []
        self.count = 0

    def op(self, text: str) -> str:
        self.count += 1
        name = f"%v{self.count}"
        self.lines.append(f"    {name} = {text}")
        return name


def _tensor(shape: tuple[int, ...], element: str, enc: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}, {enc}>"


def _offsets(t: _Text, shape: tuple[int, ...], enc: str) -> str:
    """Row-major element offsets of a tile of `shape` in layout `enc` (i32 tensor)."""
    if len(shape) == 1:
        return t.op(f"tt.make_range {{end = {shape[0]} : i32, start = 0 : i32}} : {_tensor(shape, 'i32', enc)}")
    rows, cols = shape
    row_slice, col_slice = f"#ttg.slice<{{dim = 1, parent = {enc}}}>", f"#ttg.slice<{{dim = 0, parent = {enc}}}>"
    r = t.op(f"tt.make_range {{end = {rows} : i32, start = 0 : i32}} : tensor<{rows}xi32, {row_slice}>")
    r = t.op(f"tt.expand_dims {r} {{axis = 1 : i32}} : tensor<{rows}xi32, {row_slice}> -> "
             f"{_tensor((rows, 1), 'i32', enc)}")
    c = t.op(f"tt.make_range {{end = {cols} : i32, start = 0 : i32}} : tensor<{cols}xi32, {col_slice}>")
    c = t.op(f"tt.expand_dims {c} {{axis = 0 : i32}} : tensor<{cols}xi32, {col_slice}> -> "
             f"{_tensor((1, cols), 'i32', enc)}")
    n = t.op(f"arith.constant {cols} : i32")
    n = t.op(f"tt.splat {n} : i32 -> {_tensor((rows, 1), 'i32', enc)}")
    r = t.op(f"arith.muli {r}, {n} : {_tensor((rows, 1), 'i32', enc)}")
    r = t.op(f"tt.broadcast {r} : {_tensor((rows, 1), 'i32', enc)} -> {_tensor(shape, 'i32', enc)}")
    c = t.op(f"tt.broadcast {c} : {_tensor((1, cols), 'i32', enc)} -> {_tensor(shape, 'i32', enc)}")
    return t.op(f"arith.addi {r}, {c} : {_tensor(shape, 'i32', enc)}")


def _pointers(t: _Text, arg: str, shape, memory: str, enc: str) -> str:
    offsets = _offsets(t, shape, enc)
    p = t.op(f"tt.splat {arg} : !tt.ptr<{memory}> -> {_tensor(shape, f'!tt.ptr<{memory}>', enc)}")
    return t.op(f"tt.addptr {p}, {offsets} : {_tensor(shape, f'!tt.ptr<{memory}>', enc)}, "
                f"{_tensor(shape, 'i32', enc)}")


def conversion_ttgir(shape: tuple[int, ...], element: str, src: Blocked, dst: Blocked, num_warps: int,
                     dst_shape: tuple[int, ...] | None = None) -> str:
    """The kernel's text; with `dst_shape`, a `tt.reshape` to it instead of the conversion."""
    memory = GLOBAL[element][0]
    dst_shape = dst_shape or shape
    a, b = encoding(src), encoding(dst)
    t = _Text()
    p = _pointers(t, "%src", shape, memory, a)
    v = t.op(f"tt.load {p} : {_tensor(shape, f'!tt.ptr<{memory}>', a)} -> {_tensor(shape, memory, a)}")
    if element != memory:
        v = t.op(f"arith.trunci {v} : {_tensor(shape, memory, a)} to {_tensor(shape, element, a)}")
    move = "ttg.convert_layout" if dst_shape == shape else "tt.reshape"
    v = t.op(f"{move} {v} : {_tensor(shape, element, a)} -> {_tensor(dst_shape, element, b)}")
    if element != memory:
        extend = "arith.extui" if element == "i1" else "arith.extsi"
        v = t.op(f"{extend} {v} : {_tensor(dst_shape, element, b)} to {_tensor(dst_shape, memory, b)}")
    q = _pointers(t, "%dst", dst_shape, memory, b)
    t.lines.append(f"    tt.store {q}, {v} : {_tensor(dst_shape, f'!tt.ptr<{memory}>', b)}, "
                   f"{_tensor(dst_shape, memory, b)}")
    arg = f"!tt.ptr<{memory}> {{tt.divisibility = 16 : i32}}"
    return (f'builtin.module attributes {{"ttg.num-warps" = {num_warps} : i32, "ttg.threads-per-warp" = 32 : i32}} {{\n'
            f"  func.func public @convert(%src: {arg}, %dst: {arg}) {{\n" + "\n".join(t.lines) +
            "\n    func.return\n  }\n}\n")


def conversion_kernel(shape, element: str, src: Blocked, dst: Blocked, num_warps: int,
                      capability: int = 90, dst_shape=None) -> tuple[str, int]:
    """The PTX of the kernel `convert(src, dst)` and the shared memory it needs, in bytes."""
    module = parse_ttir(conversion_ttgir(tuple(shape), element, src, dst, num_warps,
                                         tuple(dst_shape) if dst_shape else None))
    module.verify()
    lowered = lower_to_llvm(module, get_target(f"cuda:{capability}"), num_warps=num_warps)
    return compile_to_ptx(lowered.llvm_ir, lowered.entry, capability)[1], lowered.shared_bytes


def conversion_ptx(shape, element: str, src: Blocked, dst: Blocked, num_warps: int, capability: int = 90,
                   dst_shape=None) -> str:
    return conversion_kernel(shape, element, src, dst, num_warps, capability, dst_shape)[0]


def run_conversion(ptx: str, shape, element: str, num_warps: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(what the kernel stored, what it should have): random input, output poisoned before the run."""
    dtype = GLOBAL[element][1]
    gen = np.random.default_rng(seed)
    if element in ("f16", "f32"):
        source = gen.standard_normal(shape).astype(dtype)
        out = np.full(shape, np.nan, dtype=dtype)
    else:
        source = gen.integers(-2**31, 2**31 - 1, size=shape, dtype=np.int64).astype(np.int32)
        out = np.full(shape, 0x5A5A5A5A, dtype=np.int32)  # no i8 or i1 extends to this
    expected = source
    if element == "i8":
        expected = source.astype(np.int8).astype(np.int32)
    elif element == "i1":
        expected = source & 1
    machine = Machine(ptx, 32 * num_warps, [source, out])
    machine.run(max_steps=2_000_000)
    return machine.buffer(1, out), expected  # (a reshape's output: the same elements in row-major order)
