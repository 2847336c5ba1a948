"""The orthogonal polynomials of torch.special as scalar functions of (x, n), computed in the element
type as torch computes them (float32 in float32):

- Chebyshev T, U, V, W on [-1, 1] and their shifted versions on [0, 1] (y = 2x - 1): the three-term
  recurrence P_(k+1) = 2y P_k - P_(k-1) from the first two polynomials, stopped early once a value is
  NaN; above a small order and strictly inside the interval, the trigonometric closed forms
  (T_n = cos(n t), U_n = sin((n+1) t) / sin t, V_n = cos((n+1/2) t) / cos(t/2),
  W_n = sin((n+1/2) t) / sin(t/2), t = acos y); the ends of the interval by their exact values;
- Hermite H (physicists') and He (probabilists'): H_(k+1) = 2x H_k - 2k H_(k-1),
  He_(k+1) = x He_k - k He_(k-1); NaN above order 128 (float32) or 512 (float64), as torch;
- Laguerre L: (k+1) L_(k+1) = (2k + 1 - x) L_k - k L_(k-1); 1 at x = 0;
- Legendre P: (k+1) P_(k+1) = (2k+1) x P_k - k P_(k-1); +-1 at x = +-1.

n is a float tensor: its integer part is the order (NaN, +-inf and |n| >= 2^63 count as negative),
and every polynomial of a negative order is 0, as in torch.
"""

from __future__ import annotations

from .scalar_code import F32, Condition, ScalarFunction, Value

# Chebyshev kind -> order above which the closed form is used (unshifted, shifted)
_CLOSED_FORM_ABOVE = {"t": (6, 6), "u": (8, 6), "v": (8, 6), "w": (8, 4)}


def _order(f: ScalarFunction, n: Value) -> Value:
    """The integer order of n; -1 for NaN, infinities and values no int64 holds (torch casts to int64)."""
    return f.select(f.call("fabs", n) < 2.0 ** 63, f.call("trunc", n), -1.0)


def _even(f: ScalarFunction, n: Value) -> Condition:
    return n - 2.0 * f.call("floor", n * 0.5) == 0.0


def _recurrence(f: ScalarFunction, first: Value, limit: Value, step, stop_on_nan: bool = True,
                start: float = 1.0) -> Value:
    """P_(k+1) = step(k, P_k, P_(k-1)) from P_0 = 1 and P_1 = first while k <= limit (k from `start`);
    the last value computed (`first` if none)."""
    def condition(k, p, q):
        keep_going = k <= limit
        return keep_going & (q == q) if stop_on_nan else keep_going

    def body(k, p, q):
        return [k + 1.0, q, step(k, q, p)]

    _, _, q = f.loop([start, 1.0, first], condition, body)
    return q


def chebyshev(kind: str, shifted: bool):
    """The body of Chebyshev polynomial `kind` ("t", "u", "v", "w"), shifted to [0, 1] if `shifted`."""
    def body(f: ScalarFunction, x: Value, n: Value) -> Value:
        n = _order(f, n)
        y = x + x - 1.0 if shifted else x
        twice = y + y
        even = _even(f, n)
        odd_sign = f.select(even, 1.0, -1.0)
        two_n_plus_1 = n + n + 1.0
        top = x == 1.0
        bottom = x == 0.0 if shifted else x == -1.0
        top_value, bottom_value = {"t": (f.c(1.0), odd_sign), "u": (n + 1.0, odd_sign * (n + 1.0)),
                                   "v": (f.c(1.0), odd_sign * two_n_plus_1), "w": (two_n_plus_1, odd_sign)}[kind]
        first = {"t": y, "u": twice, "v": twice - 1.0, "w": twice + 1.0}[kind]
        closed = (n > float(_CLOSED_FORM_ABOVE[kind][shifted])) & (f.call("fabs", y) < 1.0)
        t = f.call("acos", y)
        if kind == "t":
            closed_value = f.call("cos", n * t)
        elif kind == "u":
            sine = f.call("sin", t)
            closed_value = f.select(sine != 0.0, f.call("sin", (n + 1.0) * t) / sine,
                                    (n + 1.0) * f.call("cos", (n + 1.0) * t) / y)
        elif kind == "v":
            closed_value = f.select(f.call("sin", t * 0.5) != 1.0,
                                    f.call("cos", (n + 0.5) * t) / f.call("cos", t * 0.5), bottom_value)
        else:
            at_end = odd_sign if shifted else f.select(x > 0.0, two_n_plus_1, odd_sign)
            closed_value = f.select(f.call("cos", t * 0.5) != 1.0,
                                    f.call("sin", (n + 0.5) * t) / f.call("sin", t * 0.5), at_end)
        needs_recurrence = ~(top | bottom | closed) & (n >= 2.0)
        limit = f.select(needs_recurrence, n, 0.0)
        recurrence = _recurrence(f, first, limit, lambda k, q, p: twice * q - p, start=2.0)
        result = f.select(n == 1.0, first, recurrence)
        result = f.select(n == 0.0, 1.0, result)
        result = f.select(closed, closed_value, result)
        result = f.select(bottom, bottom_value, result)
        result = f.select(top, top_value, result)
        return f.select(n < 0.0, 0.0, result)
    return body


def hermite(probabilists: bool):
    """The body of Hermite He (`probabilists`) or H."""
    def body(f: ScalarFunction, x: Value, n: Value) -> Value:
        n = _order(f, n)
        highest = 128.0 if f.element == F32 else 512.0
        too_high = n > highest
        limit = f.select(too_high, 0.0, n - 1.0)
        if probabilists:
            first = x
            recurrence = _recurrence(f, first, limit, lambda k, q, p: x * q - k * p, stop_on_nan=False)
        else:
            first = x + x
            recurrence = _recurrence(f, first, limit, lambda k, q, p: first * q - (k + k) * p, stop_on_nan=False)
        result = f.select(too_high, f.nan, recurrence)
        result = f.select(n == 1.0, first, result)
        result = f.select(n == 0.0, 1.0, result)
        return f.select(n < 0.0, 0.0, result)
    return body


def laguerre(f: ScalarFunction, x: Value, n: Value) -> Value:
    n = _order(f, n)
    first = 1.0 - x
    at_zero = f.call("fabs", x) == 0.0
    limit = f.select(at_zero, 0.0, n - 1.0)
    recurrence = _recurrence(f, first, limit, lambda k, q, p: (((k + k) + first) * q - k * p) / (k + 1.0))
    result = f.select(n == 0.0, 1.0, recurrence)
    result = f.select(at_zero, 1.0, result)
    return f.select(n < 0.0, 0.0, result)


def legendre(f: ScalarFunction, x: Value, n: Value) -> Value:
    n = _order(f, n)
    end = f.call("fabs", x) == 1.0
    end_value = f.select((x > 0.0) | _even(f, n), 1.0, -1.0)
    limit = f.select(end, 0.0, n - 1.0)
    recurrence = _recurrence(f, x, limit, lambda k, q, p: ((k + k + 1.0) * x * q - k * p) / (k + 1.0))
    result = f.select(n == 0.0, 1.0, recurrence)
    result = f.select(end, end_value, result)
    return f.select(n < 0.0, 0.0, result)


def bodies() -> dict:
    """op name -> body, for every polynomial."""
    table = {}
    for kind in "tuvw":
        table[f"chebyshev_polynomial_{kind}"] = chebyshev(kind, shifted=False)
        table[f"shifted_chebyshev_polynomial_{kind}"] = chebyshev(kind, shifted=True)
    table["hermite_polynomial_h"] = hermite(probabilists=False)
    table["hermite_polynomial_he"] = hermite(probabilists=True)
    table["laguerre_polynomial_l"] = laguerre
    table["legendre_polynomial_p"] = legendre
    return table

