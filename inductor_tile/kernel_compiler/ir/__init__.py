"""TTIR and TTGIR: xdsl dialects for tile kernels (tt and ttg, plus builtin/arith/math/scf/func)."""

from .context import make_context, parse_ttir, print_ir
from .tt import TT
from .ttg import TTG
from .tt_types import PointerType, element_of, shape_of, with_shape
from .types import to_ir_type

__all__ = [
    "TT",
    "TTG",
    "PointerType",
    "element_of",
    "make_context",
    "parse_ttir",
    "print_ir",
    "shape_of",
    "to_ir_type",
    "with_shape",
]
