"""Special functions that targets build from their own library math (scalar_code.py): name -> how,
and `function`, which defines one in a module on first use.

A function of `precision` "float64" is built once in float64 and float32 calls it widened (rounding
once); "element" ones are built in the element type, as torch computes them (the orthogonal
polynomials: the same overflow to inf and NaN in float32). Bodies may call each other through
`f.call` (polygamma calls zeta and digamma), resolved by the same `library`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from . import airy, bessel_k, incomplete_gamma, normal_distribution, orthogonal_polynomials, zeta
from .scalar_code import F64, define, widened

NAME = "__tile_special_"


@dataclass(frozen=True)
class Special:
    arity: int
    body: Callable
    precision: str = "float64"  # or "element"


SPECIAL: dict[str, Special] = {
    "erfcx": Special(1, normal_distribution.erfcx),
    "ndtri": Special(1, normal_distribution.ndtri),
    "zeta": Special(2, zeta.zeta),
    "polygamma": Special(2, zeta.polygamma),
    "igamma": Special(2, incomplete_gamma.igamma),
    "igammac": Special(2, incomplete_gamma.igammac),
    "modified_bessel_k0": Special(1, bessel_k.k_function(0, scaled=False)),
    "modified_bessel_k1": Special(1, bessel_k.k_function(1, scaled=False)),
    "scaled_modified_bessel_k0": Special(1, bessel_k.k_function(0, scaled=True)),
    "scaled_modified_bessel_k1": Special(1, bessel_k.k_function(1, scaled=True)),
    "spherical_bessel_j0": Special(1, bessel_k.spherical_j0),
    "airy_ai": Special(1, airy.airy_ai),
    **{name: Special(2, body, "element") for name, body in orthogonal_polynomials.bodies().items()},
}


def function(module: ir.Module, op: str, element: ir.Type, library: Callable[[str, ir.Type], str]) -> ir.Function:
    """The module's scalar `op` on `element` (float or double); `library(name, element)` names the
    target's math function `name` (it may define another special function of the module first)."""
    spec = SPECIAL[op]
    suffix = "f32" if element != F64 else "f64"
    if spec.precision == "element":
        return define(module, f"{NAME}{op}_{suffix}", element, spec.arity, library, spec.body)
    f64 = define(module, f"{NAME}{op}_f64", F64, spec.arity, library, spec.body)
    return f64 if element == F64 else widened(module, f64, f"{NAME}{op}_f32")
