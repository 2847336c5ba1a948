"""Index expressions simplified with the ranges of the kernel's loop variables (codegen/index_simplify.py).

End to end: an RMSNorm over the heads of a [batch, seq, heads * 128] tensor whose result is read
transposed (Qwen3's q/k norm before the rotary embedding) is one kernel; the reduction loads row x0
at ``128*x0``, the epilogue (loops over batch, seq, heads decoded from x0) at ``128*(x0 % 4) +
512*(x0 // 4)``: the same addresses, which must print equally and load once.  Unit tests call the
simplification directly, under a graph handler that has only a size-variable allocator.
"""

import re
import types

import pytest
import sympy
import torch

from inductor_tile import metrics
from inductor_tile.backend import tile_backend
from inductor_tile.codegen.index_simplify import with_loop_ranges

from filecheck_tool import filecheck


def _rand(*shape, seed=0):
    g = torch.Generator().manual_seed(seed + 31 * sum(shape))
    x = torch.randn(*shape, generator=g, dtype=torch.float64)
    return torch.where(x == 0, 0.5, x).to(torch.float32)


def _norm_then_transpose(x, w, cos, out):
    b, s, _ = x.shape
    q = x.view(b, s, out.shape[1], 128)
    h = q * torch.rsqrt(q.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    out.copy_(h.transpose(1, 2) * cos)  # into a NaN-poisoned buffer: every element must be written
    return out


def _run(dynamic: bool, seqs) -> str:
    """Compile `_norm_then_transpose`, check it against float64 eager at each sequence length, and
    return the source of its reduction kernel."""
    torch._dynamo.reset()
    metrics.reset()
    compiled = torch.compile(_norm_then_transpose, backend=tile_backend, dynamic=dynamic)
    for seq in seqs:
        x, w, cos = _rand(2, seq, 512), _rand(128, seed=1), _rand(2, 1, seq, 128, seed=2)
        out = torch.full((2, 4, seq, 128), float("nan"))
        compiled(x, w, cos, out)
        ref = _norm_then_transpose(x.double(), w.double(), cos.double(), torch.empty(2, 4, seq, 128, dtype=torch.float64))
        torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)
    assert metrics.fallback_kernels == 0, metrics.fallback_reasons
    (source,) = [s for s in metrics.kernel_sources.values() if "tl.sum(" in s]
    return source


# the input row is loaded once (before the sum); the epilogue reuses it
_ONE_LOAD = """
CHECK: tl.load([[X:in_ptr[0-9]+]] + (r0 + (128 * x0)),
CHECK: tl.sum(
CHECK-NOT: tl.load([[X]] +
CHECK: tl.store(
"""


def test_permuted_epilogue_of_a_norm_loads_its_row_once(tmp_path):
    source = _run(dynamic=False, seqs=[16])
    filecheck(source, _ONE_LOAD, tmp_path)


def test_permuted_epilogue_loads_once_with_dynamic_sizes(tmp_path):
    """Heads and sequence are symbols (the row count is too): the digits still rejoin."""
    source = _run(dynamic=True, seqs=[16, 24, 7])
    header = next(line for line in source.splitlines() if line.startswith("def "))
    assert re.search(r"\bs[0-9]+\b", header), header  # a size symbol is an argument: the kernel is dynamic
    filecheck(source, _ONE_LOAD, tmp_path)


# ===--------------------------------------------------------------------------===
# the simplification itself
# ===--------------------------------------------------------------------------===
@pytest.fixture
def sizevars():
    from torch._inductor.sizevars import SizeVarAllocator
    from torch._inductor.virtualized import V

    allocator = SizeVarAllocator()
    with V.set_graph_handler(types.SimpleNamespace(sizevars=allocator)):
        yield allocator


def _syms(names):
    return sympy.symbols(names, integer=True, nonnegative=True)


def test_decoded_digits_of_one_variable_rejoin(sizevars):
    from torch.utils._sympy.functions import FloorDiv, ModularIndexing

    x0, r0 = _syms("x0 r0")
    digits = r0 + 128 * ModularIndexing(x0, 1, 8) + 1024 * ModularIndexing(x0, 8, 512) + 524288 * FloorDiv(x0, 4096)
    assert with_loop_ranges(digits, {x0: 32768, r0: 128}) == r0 + 128 * x0


def test_a_mod_the_range_makes_redundant_goes(sizevars):
    from torch.utils._sympy.functions import ModularIndexing

    x0, x1 = _syms("x0 x1")
    assert with_loop_ranges(ModularIndexing(x1, 1, 64) + 64 * x0, {x0: 5, x1: 64}) == x1 + 64 * x0
    # over a wider range the mod stays
    assert with_loop_ranges(ModularIndexing(x1, 1, 64), {x1: 65}) == ModularIndexing(x1, 1, 64)


def test_a_variable_over_one_element_is_zero(sizevars):
    x0, x1 = _syms("x0 x1")
    assert with_loop_ranges(7 * x0 + x1, {x0: 1, x1: 9}) == x1


def test_nested_mods_combine(sizevars):
    from torch.utils._sympy.functions import ModularIndexing

    x0 = _syms("x0")
    nested = 3 + ModularIndexing(ModularIndexing(x0, 1, 64), 1, 8)
    assert with_loop_ranges(nested, {x0: 1000}) == 3 + ModularIndexing(x0, 1, 8)


def test_symbolic_ranges(sizevars):
    """A row count that is a size symbol: the digits over a symbolic head count still rejoin."""
    from torch.utils._sympy.functions import FloorDiv, ModularIndexing

    x0, r0 = _syms("x0 r0")
    heads, rows = sympy.symbols("s1 s2", integer=True, positive=True)
    digits = r0 + 128 * ModularIndexing(x0, 1, heads) + 128 * heads * FloorDiv(x0, heads)
    assert with_loop_ranges(digits, {x0: rows * heads, r0: 128}) == r0 + 128 * x0


def test_outside_a_compile_the_expression_stays():
    from torch.utils._sympy.functions import ModularIndexing

    x0 = _syms("x0")
    expr = ModularIndexing(x0, 1, 64)
    assert with_loop_ranges(expr, {x0: 64}) == expr  # outside a compile: no size variables to ask


def test_a_failing_simplification_keeps_the_expression():
    """An expression the range analysis raises on is generated as it came (it is right as it is)."""
    from torch._inductor.virtualized import V
    from torch.utils._sympy.functions import ModularIndexing

    def refuse(expr, ranges):
        raise TypeError("cannot compare")

    x0 = _syms("x0")
    expr = ModularIndexing(x0, 1, 64)
    with V.set_graph_handler(types.SimpleNamespace(sizevars=types.SimpleNamespace(simplify_with_ranges=refuse))):
        assert with_loop_ranges(expr, {x0: 64}) == expr


# ===--------------------------------------------------------------------------===
# size functions in index expressions (issue 17 item 4): generated, not handed to Inductor
# ===--------------------------------------------------------------------------===
_SIZE_FUNCTIONS = {
    "round": lambda cols: round(cols * 0.5),  # RoundToInt (halfway cases at odd widths)
    "bitwise_and": lambda cols: cols & 6,  # BitwiseFn_bitwise_and
    "power_of_two": lambda cols: 2 ** (cols // 8),  # PowByNatural(2, s0 // 8)
}


@pytest.mark.parametrize("name", sorted(_SIZE_FUNCTIONS))
def test_a_size_function_in_an_index_is_generated(name):
    """`x[:, :n].reshape(-1)` for a dynamic width: the flat index divides by n."""
    width = _SIZE_FUNCTIONS[name]

    def fn(x, out):
        out.copy_(x[:, : width(x.shape[1])].reshape(-1) * 2)
        return out

    torch._dynamo.reset()
    metrics.reset()
    compiled = torch.compile(fn, backend=tile_backend, dynamic=True)
    for cols in (10, 21, 22):  # round: 5, 10 (10.5 to even), 11; &6: 2, 4, 6; 2**(c//8): 2, 4, 4
        x = _rand(5, cols, seed=cols)
        out = torch.full((5 * width(cols),), float("nan"))
        compiled(x, out)
        torch.testing.assert_close(out.double(), x.double()[:, : width(cols)].reshape(-1) * 2, rtol=0, atol=0)
    assert metrics.generated_kernels >= 1 and metrics.fallback_kernels == 0, metrics.fallback_reasons
