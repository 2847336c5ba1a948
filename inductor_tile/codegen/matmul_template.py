"""Tile-language source of the matmul template: ``mm``, ``addmm`` and ``bmm`` with a fused epilogue.

One program computes one ``BLOCK_M x BLOCK_N`` tile of the output (of one batch for ``bmm``:
``tl.program_id(1)``), stepping through K in ``BLOCK_K`` slices with ``tl.dot`` into a float32
accumulator. Tiles are visited in bands of ``GROUP_M`` tile rows, so programs that run together
share rows of A and columns of B in the L2 cache. ``addmm``'s ``alpha * acc + beta * bias`` is
computed on the float32 accumulator, then the result is rounded once to the output dtype.

Sizes, strides and offsets are static and written into the source as literals (a template is
chosen per shape; dynamic shapes keep the aten kernel). Operands are read through their strides,
so transposed operands need no copy.

Two kernels are built from the same main loop:

- ``benchmark_source``: the template alone (stores its result), for timing against aten while
  Inductor lowers the graph;
- ``MatmulTemplateKernel``: the template followed by the pointwise epilogue nodes that the
  scheduler fused into it. After the main loop the tile variables are named like a tiled
  pointwise kernel's (``x0``, ``x1`` [, ``x2``] over the output's dims, ``xmask``), the result is
  "stored" to the template's buffer through ``TileKernelSource.store`` and the epilogue's loop
  bodies are replayed with ``TileOps`` as in any pointwise kernel: a load of the template's buffer
  at the index it was stored at is the value itself, and a buffer read only by the epilogue is
  never written to memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy
import torch

from .common import Unsupported, literal, tl_dtype
from .heuristics import LaunchConfig, cdiv
from .kernel import TileKernelSource
from .plan import GroupPlan, NodePlan, _size

# operand dtypes the template takes (the accumulator is float32)
DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@dataclass(frozen=True)
class Operand:
    """A matrix read by the template: its buffer, and where element [batch, row, col] is."""

    name: str
    offset: int
    strides: tuple[int, int, int]  # elements per step of (batch, row, col)

    def address(self, row: str, col: str, batch: str | None) -> str:
        """The source of the element offsets of [row, col] (of `batch`) from the buffer's start."""
        terms = [str(self.offset)] if self.offset else []
        if batch is not None and self.strides[0]:
            terms.append(f"{batch} * {self.strides[0]}")
        for index, stride in ((row, self.strides[1]), (col, self.strides[2])):
            if stride:
                terms.append(index if stride == 1 else f"{index} * {stride}")
        return " + ".join(terms) or "0"


@dataclass(frozen=True)
class MatmulSpec:
    """One ``[batch x] M x K @ K x N`` product (``batched``: a bmm) and what ``addmm`` adds to it."""

    batched: bool
    batch: int
    m: int
    n: int
    k: int
    a: Operand
    b: Operand
    dtype: torch.dtype  # operands (and output) dtype
    bias: Operand | None = None  # addmm: beta * bias[row, col] is added
    alpha: float = 1
    beta: float = 1
    precision: str = "ieee"  # tl.dot input_precision of float32 operands ("tf32" where torch allows it)

    @property
    def sizes(self) -> list[int]:
        return [self.batch, self.m, self.n] if self.batched else [self.m, self.n]

    def output_index(self, syms: list) -> sympy.Expr:
        """Flat index of the (contiguous) output element at the tile variables `syms`."""
        if self.batched:
            return syms[0] * (self.m * self.n) + syms[1] * self.n + syms[2]
        return syms[0] * self.n + syms[1]

    def bias_index(self, syms: list) -> sympy.Expr:
        batch, row, col = (syms if self.batched else [0, *syms])
        s = self.bias.strides
        return self.bias.offset + batch * s[0] + row * s[1] + col * s[2]


@dataclass(frozen=True)
class TemplateConfig:
    block_m: int
    block_n: int
    block_k: int
    group_m: int = 8
    num_warps: int = 4

    def constexprs(self) -> dict[str, int]:
        return {"BLOCK_M": self.block_m, "BLOCK_N": self.block_n, "BLOCK_K": self.block_k, "GROUP_M": self.group_m}

    def __str__(self) -> str:
        return f"{self.block_m}x{self.block_n}x{self.block_k}/{self.num_warps}w"


def grid(spec: MatmulSpec, cfg: TemplateConfig) -> tuple[int, ...]:
    tiles = cdiv(spec.m, cfg.block_m) * cdiv(spec.n, cfg.block_n)
    return (tiles, spec.batch) if spec.batched else (tiles,)


def main_loop(spec: MatmulSpec, cfg: TemplateConfig, a_ptr: str, b_ptr: str) -> list[str]:
    """The template up to the float32 accumulator ``acc`` (before alpha and bias), then the tile
    variables ``x0``.. over the output's dims and their mask ``xmask``. Loads are masked only
    along the sizes that are not multiples of their block."""
    if spec.dtype not in DTYPES:
        raise Unsupported(f"matmul template on {spec.dtype}")
    batch = "batch" if spec.batched else None
    lines = [
        f"M, N, K = {spec.m}, {spec.n}, {spec.k}",
        "pid = tl.program_id(0)",
        "tiles_m = (M + BLOCK_M - 1) // BLOCK_M",
        "tiles_n = (N + BLOCK_N - 1) // BLOCK_N",
        "band_size = GROUP_M * tiles_n",
        "first_m = (pid // band_size) * GROUP_M",
        "band_height = tl.minimum(tiles_m - first_m, GROUP_M)",
        "tile_m = first_m + (pid % band_size) % band_height",
        "tile_n = (pid % band_size) // band_height",
        "rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)",
        "cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)",
        "ks = tl.arange(0, BLOCK_K)",
    ]
    if spec.batched:
        lines.append("batch = tl.program_id(1)")
    ragged_m, ragged_n, ragged_k = spec.m % cfg.block_m, spec.n % cfg.block_n, spec.k % cfg.block_k
    a_mask = ["rows[:, None] < M"] * bool(ragged_m) + ["k[None, :] < K"] * bool(ragged_k)
    b_mask = ["k[:, None] < K"] * bool(ragged_k) + ["cols[None, :] < N"] * bool(ragged_n)
    precision = f", input_precision={spec.precision!r}" if spec.dtype == torch.float32 else ""
    lines += [
        "acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)",
        "for k_start in range(0, K, BLOCK_K):",
        "    k = k_start + ks",
        f"    a = tl.load({a_ptr} + ({spec.a.address('rows[:, None]', 'k[None, :]', batch)}){_masked(a_mask)})",
        f"    b = tl.load({b_ptr} + ({spec.b.address('k[:, None]', 'cols[None, :]', batch)}){_masked(b_mask)})",
        f"    acc = tl.dot(a, b, acc{precision})",
    ]
    if spec.batched:
        lines += ["x0 = batch + tl.zeros([1, 1], dtype=tl.int32)", "x1 = rows[:, None]", "x2 = cols[None, :]",
                  "xmask = (x1 < M) & (x2 < N)"]
    else:
        lines += ["x0 = rows[:, None]", "x1 = cols[None, :]", "xmask = (x0 < M) & (x1 < N)"]
    return lines


def _masked(conditions: list[str]) -> str:
    return f", mask={' & '.join(f'({c})' for c in conditions)}, other=0.0" if conditions else ""


def scaled(spec: MatmulSpec, acc: str, bias: str | None) -> str:
    """``alpha * acc + beta * bias`` in float32 (`bias`: the loaded bias tile, any float dtype)."""
    value = acc if spec.alpha == 1 else f"{acc} * {literal(spec.alpha, torch.float32)}"
    if bias is not None and spec.beta != 0:
        term = f"{bias}.to(tl.float32)"
        value = f"{value} + {term}" if spec.beta == 1 else f"{value} + {term} * {literal(spec.beta, torch.float32)}"
    return value


def _params(spec: MatmulSpec) -> list[str]:
    return ["a_ptr", "b_ptr"] + (["bias_ptr"] if spec.bias is not None else []) + ["out_ptr"]


def benchmark_source(spec: MatmulSpec, cfg: TemplateConfig, name: str) -> str:
    """A kernel computing the template alone into a contiguous output:
    ``name[grid](a, b, [bias,] out, BLOCK_M=.., BLOCK_N=.., BLOCK_K=.., GROUP_M=..)``."""
    syms = [sympy.Symbol(f"x{i}", integer=True, nonnegative=True) for i in range(len(spec.sizes))]
    body = main_loop(spec, cfg, "a_ptr", "b_ptr")
    bias = None
    if spec.bias is not None:
        body.append(f"bias = tl.load(bias_ptr + ({_source(spec.bias_index(syms))}), mask=xmask, other=0.0)")
        bias = "bias"
    body.append(f"result = ({scaled(spec, 'acc', bias)}).to({tl_dtype(spec.dtype)})")
    body.append(f"tl.store(out_ptr + ({_source(spec.output_index(syms))}), result, mask=xmask)")
    params = _params(spec) + [f"{c}: tl.constexpr" for c in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")]
    header = ["import inductor_tile", "import inductor_tile.language as tl", "", "", "@inductor_tile.jit",
              f"def {name}({', '.join(params)}):"]
    return "\n".join(header + ["    " + line for line in body]) + "\n"


def _source(expr) -> str:
    from .common import index_to_source

    return index_to_source(sympy.sympify(expr))


class MatmulTemplateKernel(TileKernelSource):
    """The template with the scheduler's epilogue nodes (``epilogue``: scheduler nodes, in order)."""

    def __init__(self, spec: MatmulSpec, cfg: TemplateConfig, out_name: str, epilogue: list, name: str,
                 num_warps: int | None, elide: set[str] = frozenset()):
        plan = GroupPlan("pointwise", list(spec.sizes), [])
        numel = sympy.Integer(math.prod(spec.sizes))
        for snode in epilogue:
            sizes, rsizes = snode.get_ranges()
            sizes = [_size(s) for s in sizes]
            if rsizes or snode.is_reduction() or sympy.expand(sympy.Mul(*sizes) - numel) != 0:
                raise Unsupported(f"epilogue node {snode.get_name()} over {sizes} x {list(rsizes)} "
                                  f"does not match the matmul's {spec.sizes}")
            plan.nodes.append(NodePlan(snode, "pointwise", sizes, []))
        super().__init__(plan, name, LaunchConfig(xblock=cfg.block_n, num_warps=num_warps), elide)
        self.spec, self.cfg, self.out_name = spec, cfg, out_name

    @property
    def scalar_shape(self) -> str:
        return "[1, 1]"

    def numels(self) -> dict:
        return {}  # every size is a literal of the source

    def blocks(self) -> dict[str, int]:
        return self.cfg.constexprs()

    def generate(self) -> str:
        from torch._inductor.virtualized import V

        from .ops import TileOps, _kernel_dtypes

        spec = self.spec
        self.xsyms = [sympy.Symbol(f"x{i}", integer=True, nonnegative=True) for i in range(len(spec.sizes))]
        self.rsyms = []
        for line in main_loop(spec, self.cfg, self.input_arg(spec.a.name), self.input_arg(spec.b.name)):
            self.emit(line)
        bias = None
        if spec.bias is not None:
            bias = self.load(spec.bias.name, spec.bias_index(self.xsyms))
        result = self.define(f"({scaled(spec, 'acc', bias)}).to({tl_dtype(spec.dtype)})")
        _kernel_dtypes(self)[result] = spec.dtype
        self.emit(f"# {self.out_name} (matmul template)")
        self.store(self.out_name, spec.output_index(self.xsyms), result)
        for node in self.plan.nodes:
            self.current = node
            self.emit(f"# {node.snode.get_name()} (epilogue)")
            with V.set_ops_handler(TileOps(self)):
                node.snode._body(*self._loop_args(node))
        self.current = None
        self._check_int32()
        return self._assemble()
