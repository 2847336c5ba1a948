"""Index expressions printed as tile source (`codegen.common.index_to_source`), run on the CPU target.

Inductor's FloorDiv, ModularIndexing and PythonMod round toward minus infinity; the tile
language's `//` and `%` truncate. Each expression is compiled into a kernel over random
(negative and positive) values and compared with the same expression evaluated by sympy.
"""

from __future__ import annotations

import pytest
import sympy
import torch
from torch.utils._sympy.functions import (BitwiseFn_bitwise_and, BitwiseFn_bitwise_or, BitwiseFn_bitwise_xor,
                                          CeilToInt, FloorDiv, FloorToInt, Identity, ModularIndexing, PowByNatural,
                                          PythonMod, RoundToInt, ToFloat, TruncToInt)
from torch.utils._sympy.functions import Mod as TorchMod

from inductor_tile.codegen.common import Unsupported, index_to_source
from inductor_tile.codegen.runtime import load_kernel

t = sympy.Symbol("tmp0", integer=True)  # an indirect index: any sign
x = sympy.Symbol("x0", integer=True, nonnegative=True)  # a loop index
n = sympy.Symbol("ks0", integer=True, positive=True)  # a size

class OtherIdentity(sympy.Function):
    """Another torch version's Identity: the same name, another class."""

    nargs = 1


OtherIdentity.__name__ = "Identity"

CASES = {
    "floordiv_negative": FloorDiv(t - 5, 3),
    "floordiv_nonnegative": FloorDiv(x, 3),
    "modular_negative": ModularIndexing(t - 7, 2, 5),
    "modular_div1_negative": ModularIndexing(t, 1, 4),
    "modular_identity": 64 * x + ModularIndexing(Identity(x), 2, 32) + 32,
    "pythonmod_negative": PythonMod(t + 3, 7),
    "identity_of_another_class": 6144 * x + OtherIdentity(x) + 18,  # partial rotary (torch 2.11)
    "floordiv_by_size": FloorDiv(t, n),
    "sympy_mod_negative": sympy.Mod(t + 3, 7),
    "torch_mod": ModularIndexing(x + TorchMod(n + FloorDiv(n, 2), n), 1, n),  # fft.fftshift's shift
    "trunc_to_int": TruncToInt(1.7 * ToFloat(n)) * x + TruncToInt(-0.3 * ToFloat(t)),  # interpolate's sizes
    "floor_and_ceil_to_int": FloorToInt(0.5 * ToFloat(t)) + 3 * CeilToInt(0.25 * ToFloat(t - n)),
    # round(s * 0.4) as a slice's size; odd t make halfway cases (to even, as Python's round)
    "round_to_int": RoundToInt(0.5 * ToFloat(t)) + x * RoundToInt(0.4 * ToFloat(n + 1)),
    "bitwise_and": BitwiseFn_bitwise_and(t, 6) + x * BitwiseFn_bitwise_and(n, 3),  # `s0 & 6`
    "bitwise_or": BitwiseFn_bitwise_or(t, 5) - BitwiseFn_bitwise_or(x, n),
    "bitwise_xor": BitwiseFn_bitwise_xor(t, 12) + BitwiseFn_bitwise_xor(n, 3) * x,
    "power_of_two_of_a_size": x * PowByNatural(2, FloorDiv(n, 2)) + PowByNatural(4, FloorDiv(x, 100)),  # 2 ** (s0 // 8)
}


def _kernel(name: str, source_expr: str):
    source = f'''
import inductor_tile
import inductor_tile.language as tl


@inductor_tile.jit
def {name}(t_ptr, x_ptr, out_ptr, ks0, numel, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < numel
    tmp0 = tl.load(t_ptr + offs, mask)
    x0 = tl.load(x_ptr + offs, mask)
    tl.store(out_ptr + offs, {source_expr}, mask)
'''
    return load_kernel(name, source)


def check_index_case(case: str, device: str) -> None:
    expr = CASES[case]
    g = torch.Generator().manual_seed(len(case))
    tvals = torch.randint(-200, 200, (128,), generator=g, dtype=torch.int32)
    xvals = torch.randint(0, 400, (128,), generator=g, dtype=torch.int32)
    size = 6
    out = torch.full((128,), -(2**31), dtype=torch.int32, device=device)  # poison: no result is INT_MIN
    kernel = _kernel(f"index_{case}", index_to_source(expr))
    kernel[(1,)](tvals.to(device), xvals.to(device), out, size, 128, BLOCK=128)
    plain = expr.replace(lambda e: isinstance(e, (Identity, OtherIdentity)), lambda e: e.args[0])
    want = [int(plain.subs({t: int(a), x: int(b), n: size})) for a, b in zip(tvals, xvals)]
    assert out.cpu().tolist() == want


@pytest.mark.parametrize("case", sorted(CASES))
def test_index_source_rounds_like_sympy(case):
    check_index_case(case, "cpu")


def test_index_source_refuses_a_divisor_of_unknown_sign():
    with pytest.raises(Unsupported, match="possibly non-positive"):
        index_to_source(FloorDiv(x, t))

