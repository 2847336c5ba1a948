"""Whether two index expressions address the same element for every loop index in range.

A pointwise node fused into a reduction over other loop sizes writes its buffer at an index
decoded from the reduction's variables, and the reduction reads it back at its own spelling:
Swin's masked attention scores (written as ``[4096, 3, 49, 49]``, softmaxed as rows of 49) are
written at ``2401*(x0 // 49) + (r0 + 49*x0) % 2401`` and read at ``r0 + 49*x0``.  These are the
same element because ``r0 < 49``, which sympy's ``expand`` cannot see and Inductor's
``simplify_with_ranges`` does not derive (it drops a ``%`` or ``//`` only when the whole
operand is below the divisor).

``same_address`` rewrites both sides with identities exact for every integer, plus one that
needs the ranges, then compares their difference with zero:

- ``(a // d) % m == a // d - m * (a // (d*m))`` (floor division, positive d and m);
- ``(m*H + L) // m == H + L // m``;
- ``(c*H + L) // m == H // (m/c)`` when ``c`` divides ``m`` and ``0 <= L < c`` for every
  variable in range (bounds from the loop ranges; a term without bounds leaves it alone).

It answers True only when the rewritten difference is identically zero; False means
"not shown", never "different".

``split_row_digits`` applies the last rule to how an index prints: ``(r0 + 49*x0) % 2401`` becomes
``r0 + 49*(x0 % 49)`` and ``(r0 + 49*x0) // 2401`` becomes ``x0 // 49`` when ``r0 < 49``, so the
division runs once a row (on ``x0``, a column of the tile) instead of once an element.
"""

from __future__ import annotations

import math

import sympy


def same_address(a, b, ranges: dict) -> bool:
    """``a == b`` for every loop variable ``0 <= v < ranges[v]`` (shown, not sampled)."""
    diff = sympy.expand(_normal(sympy.sympify(a), ranges) - _normal(sympy.sympify(b), ranges))
    return diff == 0


def _normal(expr, ranges: dict):
    from torch.utils._sympy.functions import FloorDiv, ModularIndexing

    def mod(base, divisor, modulus):
        if not (divisor.is_Integer and modulus.is_Integer and divisor > 0 and modulus > 0):
            return ModularIndexing(base, divisor, modulus)
        return floor_div(base, divisor) - modulus * floor_div(base, divisor * modulus)

    def floor_div(base, divisor):
        base = sympy.expand(base)
        if not (divisor.is_Integer and divisor > 0):
            return FloorDiv(base, divisor)
        return _split_floor_div(base, int(divisor), ranges)

    for _ in range(4):  # nested divisions: each pass rewrites the innermost ones it finds
        new = sympy.sympify(sympy.sympify(expr.replace(ModularIndexing, mod)).replace(FloorDiv, floor_div))
        if new == expr:
            break
        expr = new
    return expr


def _split_floor_div(base, divisor: int, ranges: dict):
    """``base // divisor`` with whole multiples of ``divisor`` taken out, and a part of ``base``
    below a common factor of the rest dropped when the ranges bound it."""
    from torch.utils._sympy.functions import FloorDiv

    if divisor == 1:
        return base
    terms = [(coeff, rest) for term in sympy.Add.make_args(base) for coeff, rest in [_coeff(term)]]
    whole = sum(((coeff // divisor) * rest for coeff, rest in terms if coeff % divisor == 0), sympy.Integer(0))
    left = [(coeff, rest) for coeff, rest in terms if coeff % divisor != 0]
    if not left:
        return whole
    low_bounds = _bounds(sum(coeff * rest for coeff, rest in left), ranges)
    if low_bounds is not None and 0 <= low_bounds[0] and low_bounds[1] < divisor:
        return whole  # the remainder never reaches the divisor
    for factor in sorted({math.gcd(abs(coeff), divisor) for coeff, _ in left}, reverse=True):
        parts = _digits(left, factor, ranges) if factor > 1 else None
        if parts is not None:
            return whole + FloorDiv(parts[0], sympy.Integer(divisor // factor))
    return whole + FloorDiv(sum(coeff * rest for coeff, rest in left), sympy.Integer(divisor))


def _digits(terms, factor: int, ranges: dict):
    """(H, L) with the sum of ``coeff * rest`` over ``terms`` equal to ``factor*H + L`` and ``0 <= L < factor``
    for every loop index in range (L: the terms whose coefficient ``factor`` does not divide), or None."""
    high = [(coeff, rest) for coeff, rest in terms if coeff % factor == 0]
    low = sum(coeff * rest for coeff, rest in terms if coeff % factor != 0)
    bounds = _bounds(low, ranges)
    if high and bounds is not None and 0 <= bounds[0] and bounds[1] < factor:
        return sum((coeff // factor) * rest for coeff, rest in high), low
    return None


def _coeff(term) -> tuple[int, object]:
    """``term`` as an integer coefficient times the rest (1 for a constant)."""
    coeff, rest = term.as_coeff_Mul()
    if coeff.is_Integer:
        return int(coeff), rest
    return 1, term


def _bounds(expr, ranges: dict):
    """Integer (low, high) of ``expr`` over the loop ranges, or None when not known."""
    from torch.utils._sympy.functions import FloorDiv, ModularIndexing

    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return int(expr), int(expr)
    if expr.is_Symbol:
        size = sympy.sympify(ranges.get(expr))
        return (0, int(size) - 1) if size is not None and size.is_Integer and size > 0 else None
    if expr.is_Add:
        parts = [_bounds(arg, ranges) for arg in expr.args]
        if any(p is None for p in parts):
            return None
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    if expr.is_Mul:
        coeff, rest = expr.as_coeff_Mul()
        inner = _bounds(rest, ranges) if coeff.is_Integer else None
        if inner is None:
            return None
        ends = (int(coeff) * inner[0], int(coeff) * inner[1])
        return min(ends), max(ends)
    if isinstance(expr, FloorDiv) and expr.args[1].is_Integer and expr.args[1] > 0:
        inner = _bounds(expr.args[0], ranges)
        divisor = int(expr.args[1])
        return None if inner is None else (inner[0] // divisor, inner[1] // divisor)
    if isinstance(expr, ModularIndexing) and expr.args[2].is_Integer and expr.args[2] > 0:
        return 0, int(expr.args[2]) - 1
    return None


def split_row_digits(expr, ranges: dict):
    """``expr`` with each ``(c*H + L) % m`` and ``(c*H + L) // m`` (``c`` dividing ``m``,
    ``0 <= L < c`` over the ranges) written as ``c*(H % (m/c)) + L`` and ``H // (m/c)``."""
    from torch.utils._sympy.functions import FloorDiv, ModularIndexing

    def split(base):
        """(c, H, L) with base == c*H + L and 0 <= L < c, or None."""
        terms = [_coeff(term) for term in sympy.Add.make_args(sympy.expand(base))]
        for factor in sorted({abs(coeff) for coeff, _ in terms if abs(coeff) > 1}, reverse=True):
            parts = _digits(terms, factor, ranges)
            if parts is not None and parts[1] != 0:
                return factor, *parts
        return None

    def mod(base, divisor, modulus):
        parts = split(base) if divisor == 1 and modulus.is_Integer else None
        if parts is None or int(modulus) % parts[0]:
            return ModularIndexing(base, divisor, modulus)
        factor, high, low = parts
        return factor * ModularIndexing(high, sympy.Integer(1), sympy.Integer(int(modulus) // factor)) + low

    def floor_div(base, divisor):
        parts = split(base) if divisor.is_Integer and divisor > 0 else None
        if parts is None or int(divisor) % parts[0]:
            return FloorDiv(base, divisor)
        factor, high, _ = parts
        return FloorDiv(high, sympy.Integer(int(divisor) // factor))

    if not expr.has(ModularIndexing, FloorDiv):
        return expr
    return sympy.sympify(sympy.sympify(expr.replace(ModularIndexing, mod)).replace(FloorDiv, floor_div))
