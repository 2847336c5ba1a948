"""fold-known-selects end to end: a kernel nesting `where`s on a few conditions many times over (as Inductor's
index-heavy kernels do) computes what torch computes, on the CPU target, with fewer selects; inputs random
with NaNs and signed zeros among them (the fold changes no arithmetic), outputs poisoned with NaN."""

from __future__ import annotations

import torch

import inductor_tile
import inductor_tile.language as tl

N = 512


@inductor_tile.jit
def nested_wheres_kernel(x_ptr, y_ptr, out_ptr, n, N: tl.constexpr):
    i = tl.arange(0, N)
    m = i < n
    x = tl.load(x_ptr + i, mask=m, other=0.0)
    y = tl.load(y_ptr + i, mask=m, other=0.0)
    low, high, odd = i < 128, i >= 384, (i % 2) == 1
    a = tl.where(low, x, y)
    b = tl.where(odd, -0.0, a)
    c = tl.where(low, b, float("-inf"))          # under low: a is x
    d = tl.where(high, y * 2.0, tl.where(low & odd, x, c))
    e = tl.where(low, tl.where(low & odd, d, a), tl.where(high, d, b))
    tl.store(out_ptr + i, e + tl.where(odd, c, 1.0), mask=m)


def _reference(x: torch.Tensor, y: torch.Tensor, n: int) -> torch.Tensor:
    i = torch.arange(N)
    x, y = x.double(), y.double()
    low, high, odd = i < 128, i >= 384, i % 2 == 1
    a = torch.where(low, x, y)
    b = torch.where(odd, torch.tensor(-0.0, dtype=torch.float64), a)
    c = torch.where(low, b, float("-inf"))
    d = torch.where(high, y * 2.0, torch.where(low & odd, x, c))
    e = torch.where(low, torch.where(low & odd, d, a), torch.where(high, d, b))
    return e + torch.where(odd, c, 1.0)


def test_nested_wheres_fold_and_compute_the_same():
    signature = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}
    ttir = inductor_tile.compile(nested_wheres_kernel, signature, constexprs={"N": N}, target="cpu").asm["ttir"]
    assert ttir.count("arith.select") < 9, ttir  # 9 wheres in the source
    gen = torch.Generator().manual_seed(7)
    for n in (N, 300):
        x, y = torch.randn(N, generator=gen), torch.randn(N, generator=gen)
        x[::17], y[5::23], x[3::29] = float("nan"), float("nan"), -0.0
        out = torch.full((N,), float("nan"))
        nested_wheres_kernel[(1,)](x, y, out, n, N=N)
        want = _reference(x, y, n)
        torch.testing.assert_close(out[:n].double(), want[:n], rtol=1e-6, atol=1e-6, equal_nan=True)
        numbers = ~want[:n].isnan()
        assert torch.equal(torch.signbit(out[:n][numbers]), torch.signbit(want[:n][numbers]))
        assert out[n:].isnan().all()


def test_a_long_where_chain_compiles():
    # a select chain thousands long (a cat of many pieces nests as deep) folds within the step bound
    from inductor_tile.kernel_compiler.ir.context import make_context
    from inductor_tile.kernel_compiler.passes.fold_known_selects import FoldKnownSelectsPass
    from xdsl.parser import Parser

    links = 3000
    lines = ["func.func @chain(%c: tensor<8xi1>, %d: tensor<8xi1>, %x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {",
             "  %v0 = arith.select %d, %x, %y : tensor<8xi1>, tensor<8xf32>"]
    for i in range(1, links):
        cond = "%c" if i % 2 else "%d"
        lines.append(f"  %v{i} = arith.select {cond}, %v{i - 1}, %y : tensor<8xi1>, tensor<8xf32>")
    lines += [f"  func.return %v{links - 1} : tensor<8xf32>", "}"]
    ctx = make_context()
    module = Parser(ctx, "\n".join(lines)).parse_module()
    FoldKnownSelectsPass().apply(ctx, module)
    module.verify()
    assert "arith.select" in str(module)
