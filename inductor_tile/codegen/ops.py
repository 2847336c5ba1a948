"""The ops handler: each Inductor op of a node's loop body becomes one line of tile source.

Inductor replays a scheduler node's ``LoopBody`` under ``V.set_ops_handler(TileOps(kernel))``;
each method returns the name of the tile variable holding the result.  An op without a
method raises ``Unsupported`` (the node falls back to Inductor's own kernel).

Every variable's torch dtype is recorded (``dtypes``, shared by all nodes of a kernel):
integer and float versions of an op differ (``floordiv``, ``signbit``, ``pow``), masked
blocks need an ``other`` of the right type, and bools are ``tl.int1``.  Python numbers
passed as operands stay Python literals in the source (weakly typed, as in torch).

What each op computes follows torch's eager semantics (see Inductor's ``ops_handler.py``):
``floordiv``/``remainder`` round like Python, ``truncdiv``/``mod`` like C; float
``remainder`` is fmod plus the divisor where the signs differ, as ATen computes it.

Indirect indexing (embeddings, gathers, ``x[idx]``): ``indirect_indexing`` returns a sympy
symbol named after the tile variable that holds the wrapped index, so index expressions
render it by name.  Inductor's GPU kernels assert that such an index is in bounds; tile
kernels have no device assert, so every load through an index checked by Inductor is
masked with ``0 <= index < size`` instead: an out-of-range index reads 0, and a store
through it writes nothing, rather than touching memory outside the tensor.
"""

from __future__ import annotations

import functools

import sympy
import torch

from . import ldexp, reductions, scans
from .common import (Unsupported, float_index_to_source, index_to_source, literal, tl_dtype,
                     without_precomputed_sizes)

_BOOL = torch.bool


def _kernel_dtypes(kernel) -> dict:
    """The dtype of every tile variable of `kernel` (created on first use, shared by all nodes)."""
    dtypes = getattr(kernel, "var_dtypes", None)
    if dtypes is None:
        dtypes = kernel.var_dtypes = {}
    return dtypes


def _kernel_bounds(kernel) -> dict:
    """Indirect index variable name -> (size, its source): loads and stores through it are masked."""
    bounds = getattr(kernel, "indirect_bounds", None)
    if bounds is None:
        bounds = kernel.indirect_bounds = {}
    return bounds


def _number_dtype(value) -> torch.dtype:
    if isinstance(value, bool):
        return torch.bool
    return torch.int64 if isinstance(value, int) else torch.get_default_dtype()


class TileOps:
    """Ops handler: each Inductor op becomes one line of tile-language source."""

    def __init__(self, kernel):  # a TileKernelSource
        self.k = kernel
        self.dtypes = _kernel_dtypes(kernel)

    def __getattr__(self, name):
        raise Unsupported(f"op {name} (Inductor's ops.{name} has no rule in codegen/ops.py)")

    # -- helpers ------------------------------------------------------------------
    def _def(self, expr: str, dtype: torch.dtype) -> str:
        var = self.k.define(expr)
        self.dtypes[var] = dtype
        return var

    def _dtype(self, x) -> torch.dtype:
        if isinstance(x, (bool, int, float)):
            return _number_dtype(x)
        dtype = self.dtypes.get(x)
        if dtype is None:
            raise Unsupported(f"operand {x!r} of unknown dtype")
        return dtype

    def _src(self, x) -> str:
        """An operand as source: variables by name, Python numbers as (weak) literals."""
        if isinstance(x, (bool, int, float)):
            return literal(x, _number_dtype(x))
        return x

    def _promote(self, *xs) -> torch.dtype:
        """torch's result dtype of an arithmetic op (Python numbers are weak, as in torch)."""
        tensors = [self._dtype(x) for x in xs if not isinstance(x, (bool, int, float))]
        numbers = [x for x in xs if isinstance(x, (bool, int, float))]
        if not tensors:  # numbers only: as torch.tensor would type them
            tensors, numbers = [torch.tensor(numbers[0]).dtype], numbers[1:]
        dtype = tensors[0]
        for other in tensors[1:]:
            dtype = torch.promote_types(dtype, other)
        for number in numbers:  # weak: a number only raises the kind (bool < int < float)
            dtype = torch.result_type(torch.empty(1, dtype=dtype), number)
        return dtype

    def _is_float(self, x) -> bool:
        return self._dtype(x).is_floating_point

    def _as_bool(self, x) -> str:
        return self._src(x) if self._dtype(x) == _BOOL else f"({self._src(x)} != 0)"

    # -- values -------------------------------------------------------------------
    def constant(self, value, dtype):
        return self._def(f"tl.full({self.k.scalar_shape}, {literal(value, dtype)}, {tl_dtype(dtype)})", dtype)

    def index_expr(self, expr, dtype):
        expr = without_precomputed_sizes(sympy.sympify(expr))
        if expr.free_symbols and (not expr.is_integer or expr.atoms(sympy.Float)):  # a float-valued size expression
            self.k._note_size_symbols(expr)
            return self._def(f"({float_index_to_source(expr)}).to({tl_dtype(dtype)})", dtype)
        src = self.k.index(expr)  # records size symbols; int32 arithmetic
        self._note_decoded_dims(expr)
        if dtype == torch.int64 and self._may_exceed_int32(expr):
            src = index_to_source(expr, wide=True)
        if not expr.free_symbols:
            return self._def(f"tl.full({self.k.scalar_shape}, {src}, {tl_dtype(dtype)})", dtype)
        return self._def(f"({src}).to({tl_dtype(dtype)})", dtype)

    def _note_decoded_dims(self, expr) -> None:
        """An index value over several decoded loop dims keeps them apart in every access.

        The kernel then addresses memory through the decode (``x1 + 40 * x0``), which the CPU
        target sees as short runs, not one contiguous tile, and compiles like a gather (slowly
        for wide tiles): mark the kernel so that it gets gather-sized tiles.
        """
        plan = self.k.plan
        loop = set(self.k.xsyms) | set(self.k.rsyms)
        if expr.free_symbols & loop and (len(plan.xsizes) > 1 or len(plan.rsizes) > 1):
            self.k.gather = True

    def _may_exceed_int32(self, expr) -> bool:
        """Whether `expr` may leave int32 over the kernel's loop ranges (then it is computed in int64)."""
        bound = self._bound(expr)
        return bound is None or not (-(2**31) <= bound[0] and bound[1] < 2**31)

    def _bound(self, expr) -> tuple[int, int] | None:
        """(min, max) of an index expression over the kernel's loop ranges, or None if unknown."""
        from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

        ranges = {}
        plan = self.k.plan
        for syms, sizes in ((self.k.xsyms, plan.xsizes), (self.k.rsyms, plan.rsizes)):
            for sym, size in zip(syms, sizes):
                if not sympy.sympify(size).is_Integer:
                    return None
                ranges[sym] = ValueRanges(0, max(int(size) - 1, 0))
        for name, (size, _) in _kernel_bounds(self.k).items():
            if size.is_Integer:
                ranges[sympy.Symbol(name, integer=True, nonnegative=True)] = ValueRanges(0, max(int(size) - 1, 0))
        if expr.free_symbols - set(ranges):
            return None
        try:
            bound = bound_sympy(expr, ranges)
            return int(bound.lower), int(bound.upper)
        except Exception:  # noqa: BLE001 - an expression sympy cannot bound (or unbounded)
            return None

    def to_dtype(self, x, dtype, src_dtype=None, use_compute_types=True):
        if isinstance(x, (bool, int, float)):
            return self.constant(x, dtype)
        src = self._dtype(x)
        if src.is_floating_point and dtype in (torch.int8, torch.int16, torch.uint8):
            # eager on the CPU converts through a wide integer and wraps (-1.0 -> 255 as uint8,
            # 300.0 -> 44 as int8); a direct cast would saturate
            return self._def(f"{self._src(x)}.to(tl.int64).to({tl_dtype(dtype)})", dtype)
        if dtype in (torch.float16, torch.bfloat16) and src == torch.float64:
            # eager builds a Half/BFloat16 from a float: float64 rounds to float32 first, and a
            # value just past a float16 midpoint rounds twice, to the even neighbour
            return self._def(f"{self._src(x)}.to(tl.float32).to({tl_dtype(dtype)})", dtype)
        return self._def(f"{self._src(x)}.to({tl_dtype(dtype)})", dtype)

    def to_dtype_bitcast(self, x, dtype, src_dtype):
        if dtype.itemsize != src_dtype.itemsize or _BOOL in (dtype, src_dtype):
            raise Unsupported(f"bitcast {src_dtype} -> {dtype}")
        return self._def(f"{x}.to({tl_dtype(dtype)}, bitcast=True)", dtype)

    def _to_int(self, fn, x, dtype):
        return self._def(f"{fn}({x}).to({tl_dtype(dtype)})", dtype)

    def trunc_to_int(self, x, dtype):
        return self._to_int("tl.extra.libdevice.trunc", x, dtype)

    def floor_to_int(self, x, dtype):
        return self._to_int("tl.floor", x, dtype)

    def ceil_to_int(self, x, dtype):
        return self._to_int("tl.ceil", x, dtype)

    def round_to_int(self, x, dtype):
        return self._to_int("tl.extra.libdevice.nearbyint", x, dtype)

    def identity(self, x):
        return x

    def value_expr(self, expr, dtype):
        """A sympy value as a tile value of exactly `dtype` (constants need not fit int32)."""
        expr = sympy.sympify(expr)
        if expr.free_symbols:
            return self.index_expr(expr, dtype)
        return self.constant(int(expr) if expr.is_Integer else float(expr), dtype)

    # -- random numbers -------------------------------------------------------------
    # Inductor fills an int64 buffer of seeds with one aten call per graph; a random node reads
    # its seed with ``load_seed`` and draws element i with Philox counter ``offset`` (i plus the
    # node's base offset), as tl.rand does.  Eager's bits are not reproduced (no backend does):
    # the distributions are the same, the streams differ.
    def load_seed(self, name, offset):
        self.k.draws_random = True
        ptr = self.k.input_arg(name)
        scalar = self.k.define(f"tl.load({ptr} + {self.k.seed_offset_arg(int(offset))})")
        var = self.k.define(f"tl.broadcast_to({scalar}, {self.k.scalar_shape})")
        self.dtypes.setdefault(var, torch.int64)
        return var

    def _random_offset(self, offset) -> str:
        """Each element's Philox counter: an int32/int64 tile variable (an int: the same for all)."""
        if isinstance(offset, int) and not isinstance(offset, bool):
            return f"tl.full({self.k.scalar_shape}, {offset}, tl.int32)"
        if isinstance(offset, (bool, float)) or self._dtype(offset) not in (torch.int32, torch.int64):
            raise Unsupported(f"random offset {offset!r} that is not an int32/int64 index")
        return offset

    def rand(self, seed, offset):
        return self._def(f"tl.rand({seed}, {self._random_offset(offset)})", torch.float32)

    def randn(self, seed, offset):
        return self._def(f"tl.randn({seed}, {self._random_offset(offset)})", torch.float32)

    def randint64(self, seed, offset, low, high):
        """int64 uniform in [low, high): 64 random bits (two Philox words) modulo high - low."""
        words = self.k.define(f"tl.randint4x({seed}, {self._random_offset(offset)})")
        bits = self.k.define(f"{words}[0].to(tl.uint64) | ({words}[1].to(tl.uint64) << 32)")
        if isinstance(low, int) and isinstance(high, int):
            span = str(high - low)
        else:
            span = f"({self._src(high)} - {self._src(low)}).to(tl.uint64)"
        return self._def(f"({bits} % {span}).to(tl.int64) + {self._src(low)}", torch.int64)

    # -- memory -------------------------------------------------------------------
    def indirect_indexing(self, var, size, check=True, wrap_neg=True):
        size = sympy.sympify(size)
        size_src = self.k.index(size)  # a symbolic size becomes a kernel argument
        dtype = self._dtype(var)
        if dtype.is_floating_point or dtype == _BOOL:
            raise Unsupported(f"indirect index of dtype {dtype}")
        if wrap_neg:
            var = self._def(f"tl.where({var} < 0, {var} + {size_src}, {var})", dtype)
        if check:
            _kernel_bounds(self.k)[var] = (size, size_src)
        return sympy.Symbol(var, integer=True, nonnegative=True)

    def _indirect(self, index) -> list[str]:
        names = {s.name for s in sympy.sympify(index).free_symbols}
        return sorted(names & set(self.dtypes))

    def check_bounds(self, expr, size, lower, upper):
        """Inductor asks for a device assert on the sides `lower` (0 <= expr) and `upper` (expr < size).

        Sides the loop ranges prove need nothing; the others become a ``tl.device_assert`` (the kernel
        is compiled in debug mode, as Inductor compiles its Triton kernels), which ends a program
        with an out-of-range index before it reads or writes through it.  The AMD target has no
        assertion yet: there the node falls back unless the ranges prove both sides.
        """
        bound = self._bound(sympy.sympify(expr))
        size = sympy.sympify(size)
        need_lower = lower and (bound is None or bound[0] < 0)
        need_upper = upper and (bound is None or not size.is_Integer or bound[1] >= int(size))
        if not (need_lower or need_upper):
            return
        if not asserts_compile(self.k):
            raise Unsupported(f"check_bounds: cannot prove 0 <= {expr} < {size} (no device assert on this target)")
        index = self.k.index(expr)
        sides = ([f"({index}) >= 0"] if need_lower else []) + ([f"({index}) < {self.k.index(size)}"] if need_upper else [])
        text = f"index out of bounds: {expr} is not in [0, {size})"
        self.k.emit(f"tl.device_assert({' & '.join(sides)}, {text!r}, mask={self.k.mask(index=expr)})")
        self.k.debug_asserts = True

    def device_assert_async(self, cond, msg):
        """``aten._assert_async`` (one_hot's class check, ``torch._assert_async``): a ``tl.device_assert``
        where the condition is false, as Inductor's Triton kernels do; the kernel compiles in debug
        mode.  The AMD target has no assertion yet: there the node falls back."""
        if not asserts_compile(self.k):
            raise Unsupported(f"device_assert_async ({msg!r}): no device assert on this target")
        self.k.emit(f"tl.device_assert({self._src(cond)}, {msg!r}, mask={self.k.mask()})")
        self.k.debug_asserts = True

    def _in_bounds(self, index) -> list[str]:
        """Variables holding `0 <= i < size` for each checked indirect index `i` in `index`."""
        bounds = _kernel_bounds(self.k)
        return [self._def(f"({v} >= 0) & ({v} < {bounds[v][1]})", _BOOL) for v in self._indirect(index) if v in bounds]

    def load(self, name, index):
        from torch._inductor.virtualized import V

        masks = self._in_bounds(index)
        self.k.masks.extend(masks)
        try:
            var = self.k.load(name, index)
        finally:
            del self.k.masks[len(self.k.masks) - len(masks):]
        self.dtypes.setdefault(var, V.graph.get_dtype(name))
        return var

    def store(self, name, index, value, mode=None):
        if value is None:  # the node's op had only a side effect (device_assert_async): nothing to write
            return
        masks = self._in_bounds(index)
        self.k.store(name, index, self._src(value), bounds=" & ".join(masks) or None, mode=mode)

    def store_reduction(self, name, index, value):
        self.k.store(name, index, value, reduced=True)

    def scan(self, dtypes, combine_fn, values):
        return scans.scan(self, dtypes, combine_fn, values)

    def sort(self, dtypes, values, stable, descending):
        return scans.sort(self, dtypes, values, stable, descending)

    def masked(self, mask, body, other):
        self.k.masks.append(mask)
        try:
            result = body()
        finally:
            self.k.masks.pop()
        dtype = self._dtype(result)
        return self._def(f"tl.where({mask}, {result}, {literal(other, dtype)})", dtype)

    def reduction(self, dtype, src_dtype, reduction_type, value):
        result = self.k.reduction(dtype, src_dtype, reduction_type, value)
        for r in result if isinstance(result, tuple) and not _is_handle(result) else (result,):
            if isinstance(r, str):
                kept = reductions.result_dtype(dtype, reduction_type)
                self.dtypes.setdefault(r, torch.int64 if reduction_type in ("argmax", "argmin") else kept)
        return result

    # -- arithmetic ---------------------------------------------------------------
    def _binary(self, op: str, a, b, dtype=None) -> str:
        dtype = dtype or self._promote(a, b)
        expr = f"{self._src(a)} {op} {self._src(b)}"
        if op in ("/", "%") and dtype in (torch.float16, torch.bfloat16):
            # the tile language computes half `/` and `%` in float32 (as Triton does); eager rounds
            # each op to the half type, and so must we: a recomputed value compared with a stored
            # one (amax's backward: `x == max`) only matches when both were rounded alike
            expr = f"({expr}).to({tl_dtype(dtype)})"
        return self._def(expr, dtype)

    def add(self, a, b):
        if self._promote(a, b) == _BOOL:
            return self._binary("|", a, b)
        return self._binary("+", a, b)

    def sub(self, a, b):
        return self._binary("-", a, b)

    def mul(self, a, b):
        if self._promote(a, b) == _BOOL:
            return self._binary("&", a, b)
        return self._binary("*", a, b)

    def truediv(self, a, b):
        if not self._promote(a, b).is_floating_point:
            raise Unsupported("truediv of integers")
        return self._binary("/", a, b)

    div_rn = truediv

    def _compare(op):
        def fn(self, a, b):
            return self._binary(op, a, b, _BOOL)
        return fn

    eq = _compare("==")
    ne = _compare("!=")
    lt = _compare("<")
    le = _compare("<=")
    gt = _compare(">")
    ge = _compare(">=")
    del _compare

    def _bitwise(op):
        def fn(self, a, b):
            if self._promote(a, b).is_floating_point:
                raise Unsupported(f"bitwise {op} on floats")
            return self._binary(op, a, b)
        return fn

    bitwise_and = and_ = _bitwise("&")  # and_/or_/xor: Python's operators on ops values
    bitwise_or = or_ = _bitwise("|")
    bitwise_xor = xor = _bitwise("^")
    bitwise_left_shift = lshift = _bitwise("<<")
    bitwise_right_shift = rshift = _bitwise(">>")
    del _bitwise

    def bitwise_not(self, x):
        if self._is_float(x):
            raise Unsupported("bitwise_not on floats")
        return self._def(f"~{x}", self._dtype(x))

    def logical_and(self, a, b):
        return self._def(f"{self._as_bool(a)} & {self._as_bool(b)}", _BOOL)

    def logical_or(self, a, b):
        return self._def(f"{self._as_bool(a)} | {self._as_bool(b)}", _BOOL)

    def logical_xor(self, a, b):
        return self._def(f"{self._as_bool(a)} ^ {self._as_bool(b)}", _BOOL)

    def logical_not(self, x):
        return self._def(f"{self._src(x)} == 0", _BOOL)

    # integer division: `//` and `%` of the tile language truncate (C); Inductor's
    # floordiv/remainder round toward -inf (Python)
    def _int_operands(self, op, a, b):
        dtype = self._promote(a, b)
        if dtype.is_floating_point or dtype == _BOOL:
            raise Unsupported(f"{op} on {dtype}")
        return dtype

    def truncdiv(self, a, b):
        return self._binary("//", a, b, self._int_operands("truncdiv", a, b))

    def _sign_differs(self, r, b) -> str:
        """Where the C remainder `r` is nonzero with a sign other than `b`'s: where Python's floor
        division and remainder differ from C's truncating ones."""
        return self._def(f"({r} != 0) & (({r} < 0) != ({self._src(b)} < 0))", _BOOL)

    def floordiv(self, a, b):
        dtype = self._int_operands("floordiv", a, b)
        q = self._binary("//", a, b, dtype)
        adjust = self._sign_differs(self._binary("%", a, b, dtype), b)
        return self._def(f"tl.where({adjust}, {q} - 1, {q})", dtype)

    def mod(self, a, b):  # C: the sign of a (ints: remsi; floats: fmod)
        if self._promote(a, b) == _BOOL:
            raise Unsupported("mod on bool")
        return self._binary("%", a, b)

    fmod = mod

    def remainder(self, a, b):  # Python: the sign of b
        dtype = self._promote(a, b)
        if dtype == _BOOL:
            raise Unsupported("remainder on bool")
        r = self._binary("%", a, b, dtype)
        adjust = self._sign_differs(r, b)
        return self._def(f"tl.where({adjust}, {r} + {self._src(b)}, {r})", dtype)

    def pow(self, a, b):
        dtype = self._promote(a, b)
        if not dtype.is_floating_point:
            raise Unsupported(f"pow on {dtype}")
        a_src, b_src = self._src(a), self._src(b)
        if not isinstance(b, (int, float)) and self._dtype(b) != dtype:
            b_src = f"{b_src}.to({tl_dtype(dtype)})"
        if isinstance(a, (int, float)):
            a_src = f"tl.full({self.k.scalar_shape}, {literal(a, dtype)}, {tl_dtype(dtype)})"
        elif self._dtype(a) != dtype:
            a_src = f"{a_src}.to({tl_dtype(dtype)})"
        return self._def(f"tl.extra.libdevice.pow({a_src}, {b_src})", dtype)

    # -- math ---------------------------------------------------------------------
    def _float_math(self, fn_name: str, dtype: torch.dtype, *args: str) -> str:
        """`fn_name(args...)` of type `dtype`; Unsupported unless `dtype` is a float type the target's
        `fn_name` implements."""
        if not dtype.is_floating_point:
            raise Unsupported(f"{fn_name} on {dtype}")
        if lacks_math(self.k, fn_name):
            raise Unsupported(f"{fn_name} on the AMD target (no implementation there)")
        return self._def(f"{fn_name}({', '.join(args)})", dtype)

    def _math(fn_name):
        def fn(self, x):
            return self._float_math(fn_name, self._dtype(x), f"{x}")
        return fn

    exp = _math("tl.exp")
    exp2 = _math("tl.exp2")
    log = _math("tl.log")
    log2 = _math("tl.log2")
    sqrt = _math("tl.sqrt")
    rsqrt = _math("tl.rsqrt")
    sin = _math("tl.sin")
    cos = _math("tl.cos")
    floor = _math("tl.floor")
    ceil = _math("tl.ceil")
    erf = _math("tl.erf")
    sigmoid = _math("tl.sigmoid")
    tanh = _math("tl.extra.libdevice.tanh")
    log1p = _math("tl.extra.libdevice.log1p")
    expm1 = _math("tl.extra.libdevice.expm1")
    log10 = _math("tl.extra.libdevice.log10")
    tan = _math("tl.extra.libdevice.tan")
    sinh = _math("tl.extra.libdevice.sinh")
    cosh = _math("tl.extra.libdevice.cosh")
    asin = _math("tl.extra.libdevice.asin")
    acos = _math("tl.extra.libdevice.acos")
    atan = _math("tl.extra.libdevice.atan")
    asinh = _math("tl.extra.libdevice.asinh")
    acosh = _math("tl.extra.libdevice.acosh")
    atanh = _math("tl.extra.libdevice.atanh")
    trunc = _math("tl.extra.libdevice.trunc")
    round = _math("tl.extra.libdevice.nearbyint")  # torch.round: halfway cases to even
    erfc = _math("tl.extra.libdevice.erfc")
    lgamma = _math("tl.extra.libdevice.lgamma")
    erfinv = _math("tl.extra.libdevice.erfinv")
    digamma = _math("tl.extra.libdevice.digamma")
    bessel_j0 = _math("tl.extra.libdevice.j0")
    bessel_j1 = _math("tl.extra.libdevice.j1")
    bessel_y0 = _math("tl.extra.libdevice.y0")
    bessel_y1 = _math("tl.extra.libdevice.y1")
    i0 = _math("tl.extra.libdevice.cyl_bessel_i0")
    modified_bessel_i0 = _math("tl.extra.libdevice.cyl_bessel_i0")
    i1 = _math("tl.extra.libdevice.cyl_bessel_i1")
    modified_bessel_i1 = _math("tl.extra.libdevice.cyl_bessel_i1")
    i0e = _math("tl.extra.libdevice.i0e")
    i1e = _math("tl.extra.libdevice.i1e")
    erfcx = _math("tl.extra.libdevice.erfcx")
    ndtri = _math("tl.extra.libdevice.ndtri")
    modified_bessel_k0 = _math("tl.extra.libdevice.modified_bessel_k0")
    modified_bessel_k1 = _math("tl.extra.libdevice.modified_bessel_k1")
    scaled_modified_bessel_k0 = _math("tl.extra.libdevice.scaled_modified_bessel_k0")
    scaled_modified_bessel_k1 = _math("tl.extra.libdevice.scaled_modified_bessel_k1")
    spherical_bessel_j0 = _math("tl.extra.libdevice.spherical_bessel_j0")
    airy_ai = _math("tl.extra.libdevice.airy_ai")
    del _math

    def _math_binary(fn_name):
        def fn(self, a, b):
            dtype = self._promote(a, b)
            if isinstance(a, (int, float)):
                raise Unsupported(f"{fn_name} on {dtype}")
            return self._float_math(fn_name, dtype, self._src(a), self._src(b))
        return fn

    atan2 = _math_binary("tl.extra.libdevice.atan2")
    copysign = _math_binary("tl.extra.libdevice.copysign")
    hypot = _math_binary("tl.extra.libdevice.hypot")
    _nextafter = _math_binary("tl.extra.libdevice.nextafter")
    del _math_binary

    def nextafter(self, a, b):
        dtype = self._promote(a, b)
        if dtype in (torch.float16, torch.bfloat16):  # computed in fp32, the step would round away
            raise Unsupported(f"nextafter on {dtype}")
        return self._nextafter(a, b)

    def _special_binary(fn_name):
        """A special function of two floats whose operands may be numbers or integer tensors (the order n
        of polygamma and of the orthogonal polynomials): both become the result's float type."""
        def fn(self, a, b):
            dtype = self._promote(a, b)
            if not dtype.is_floating_point:
                raise Unsupported(f"{fn_name} on {dtype}")
            operands = []
            for v in (a, b):
                if isinstance(v, (bool, int, float)):
                    operands.append(f"tl.full({self.k.scalar_shape}, {literal(float(v), dtype)}, {tl_dtype(dtype)})")
                elif self._dtype(v) != dtype:
                    operands.append(f"{self._src(v)}.to({tl_dtype(dtype)})")
                else:
                    operands.append(self._src(v))
            return self._float_math(f"tl.extra.libdevice.{fn_name}", dtype, *operands)
        return fn

    zeta = _special_binary("zeta")
    polygamma = _special_binary("polygamma")  # polygamma(n, x)
    igamma = _special_binary("igamma")  # igamma(a, x)
    igammac = _special_binary("igammac")
    chebyshev_polynomial_t = _special_binary("chebyshev_polynomial_t")  # the polynomials: (x, n)
    chebyshev_polynomial_u = _special_binary("chebyshev_polynomial_u")
    chebyshev_polynomial_v = _special_binary("chebyshev_polynomial_v")
    chebyshev_polynomial_w = _special_binary("chebyshev_polynomial_w")
    shifted_chebyshev_polynomial_t = _special_binary("shifted_chebyshev_polynomial_t")
    shifted_chebyshev_polynomial_u = _special_binary("shifted_chebyshev_polynomial_u")
    shifted_chebyshev_polynomial_v = _special_binary("shifted_chebyshev_polynomial_v")
    shifted_chebyshev_polynomial_w = _special_binary("shifted_chebyshev_polynomial_w")
    hermite_polynomial_h = _special_binary("hermite_polynomial_h")
    hermite_polynomial_he = _special_binary("hermite_polynomial_he")
    laguerre_polynomial_l = _special_binary("laguerre_polynomial_l")
    legendre_polynomial_p = _special_binary("legendre_polynomial_p")
    del _special_binary

    def frexp(self, x):
        """(mantissa, exponent) with x = mantissa * 2^exponent, 0.5 <= |mantissa| < 1, from the bits: subnormals
        are scaled into the normal range first; 0, +-inf and NaN give themselves and exponent 0 (torch's
        frexp). fp16/bf16 go through float32 (exact both ways)."""
        dtype = self._dtype(x)
        if not dtype.is_floating_point:
            raise Unsupported(f"frexp on {dtype}")
        wide = torch.float32 if dtype.itemsize < 4 else dtype
        # bits of the mantissa, exponent bias, scale that makes every subnormal normal, int type
        mantissa_bits, bias, scale, ints = (23, 127, 25, torch.int32) if wide == torch.float32 else \
            (52, 1023, 54, torch.int64)
        smallest_normal = torch.finfo(wide).tiny
        mask = (1 << (64 if wide == torch.float64 else 32)) - 1
        keep = ~(((2 * bias + 1) << mantissa_bits)) & mask  # sign and mantissa bits
        keep = keep - (mask + 1) if keep >> (63 if wide == torch.float64 else 31) else keep  # as a signed literal
        v = self._def(f"{x}.to({tl_dtype(wide)})", wide) if wide != dtype else x
        subnormal = self._def(f"tl.abs({v}) < {literal(smallest_normal, wide)}", _BOOL)
        scaled = self._def(f"tl.where({subnormal}, {v} * {literal(2.0 ** scale, wide)}, {v})", wide)
        bits = self._def(f"{scaled}.to({tl_dtype(ints)}, bitcast=True)", ints)
        biased = self._def(f"({bits} >> {mantissa_bits}) & {2 * bias + 1}", ints)
        special = self._def(f"({v} == 0) | ({v} != {v}) | (tl.abs({v}) == float(\"inf\"))", _BOOL)
        exponent = self._def(f"tl.where({special}, 0, {biased} - {bias - 1} - tl.where({subnormal}, {scale}, 0))"
                             f".to(tl.int32)", torch.int32)
        mantissa = self._def(f"(({bits} & {keep}) | {(bias - 1) << mantissa_bits}).to({tl_dtype(wide)}, bitcast=True)",
                             wide)
        mantissa = self._def(f"tl.where({special}, {v}, {mantissa})", wide)
        if wide != dtype:
            mantissa = self._def(f"{mantissa}.to({tl_dtype(dtype)})", dtype)
        return mantissa, exponent

    def ldexp(self, x, n):
        return ldexp.ldexp(self, x, n)

    def fma(self, a, b, c):
        dtype = self._promote(a, b, c)
        if not dtype.is_floating_point or any(isinstance(v, (int, float)) for v in (a, b, c)):
            raise Unsupported(f"fma on {dtype}")
        return self._def(f"tl.fma({a}, {b}, {c})", dtype)

    def abs(self, x):
        if self._dtype(x) == _BOOL:
            return x
        return self._def(f"tl.abs({x})", self._dtype(x))

    def neg(self, x):
        if self._dtype(x) == _BOOL:
            raise Unsupported("neg on bool")
        return self._def(f"-{x}", self._dtype(x))

    def reciprocal(self, x):
        if not self._is_float(x):
            raise Unsupported(f"reciprocal on {self._dtype(x)}")
        return self._def(f"1.0 / {x}", self._dtype(x))

    def square(self, x):
        return self.mul(x, x)

    def sign(self, x):
        dtype = self._dtype(x)
        if dtype == _BOOL:
            return x
        # (0 < x) - (x < 0): NaN and -0.0 give 0, as in torch
        return self._def(f"(({x} > 0).to(tl.int8) - ({x} < 0).to(tl.int8)).to({tl_dtype(dtype)})", dtype)

    def signbit(self, x):
        dtype = self._dtype(x)
        if not dtype.is_floating_point:
            return self._def(f"{x} < 0" if dtype != _BOOL else f"{x} & False", _BOOL)
        bits = {2: "tl.int16", 4: "tl.int32", 8: "tl.int64"}[dtype.itemsize]
        return self._def(f"{x}.to({bits}, bitcast=True) < 0", _BOOL)

    def where(self, cond, a, b):
        dtype = self._promote(a, b)
        return self._def(f"tl.where({self._as_bool(cond)}, {self._src(a)}, {self._src(b)})", dtype)

    def relu(self, x):
        # relu(nan) is nan in torch: compare so that nan keeps x
        return self._def(f"tl.where({x} < 0, 0, {x})", self._dtype(x))

    def maximum(self, a, b):
        dtype = self._promote(a, b)
        if dtype == _BOOL:
            return self._binary("|", a, b)
        if not dtype.is_floating_point:
            return self._def(f"tl.maximum({self._src(a)}, {self._src(b)})", dtype)
        a, b = self._src(a), self._src(b)  # NaN-propagating like torch.maximum
        return self._def(f"tl.where(({a} > {b}) | ({a} != {a}), {a}, {b})", dtype)

    def minimum(self, a, b):
        dtype = self._promote(a, b)
        if dtype == _BOOL:
            return self._binary("&", a, b)
        if not dtype.is_floating_point:
            return self._def(f"tl.minimum({self._src(a)}, {self._src(b)})", dtype)
        a, b = self._src(a), self._src(b)
        return self._def(f"tl.where(({a} < {b}) | ({a} != {a}), {a}, {b})", dtype)

    def isnan(self, x):
        return self._def(f"{x} != {x}", _BOOL)  # always False for integers

    def isinf(self, x):
        if not self._is_float(x):
            return self._def(f"{x} != {x}", _BOOL)  # always False
        return self._def(f"tl.abs({x}) == float(\"inf\")", _BOOL)


def lacks_math(kernel, fn_name: str) -> bool:
    """Whether the kernel's target has no code for the library function `fn_name` ("tl.extra.libdevice.j0"):
    the target says (Target.implements_math); only AMD's lacks some. Such nodes fall back."""
    if not fn_name.startswith("tl.extra.libdevice.") or not on_amd(kernel):
        return False  # the core language's math (tl.exp...) compiles everywhere
    name = fn_name.rsplit(".", 1)[-1]
    return not _amd_target().implements_math(_LOWERED_AS.get(name, name))


_LOWERED_AS = {"nearbyint": "roundeven"}  # libdevice names whose lowering op has another name


@functools.cache
def _amd_target():
    from ..kernel_compiler.to_llvm.targets import get_target

    return get_target("hip")


def on_amd(kernel) -> bool:
    """Whether the kernel is generated for an AMD GPU (a ROCm build of torch)."""
    if not torch.version.hip:
        return False
    plan = getattr(kernel, "plan", None)  # (a scan's combine helper body has none)
    return bool(plan and plan.nodes and plan.nodes[0].snode.get_device().type == "cuda")


def asserts_compile(kernel) -> bool:
    """Whether the kernel's target compiles ``tl.device_assert`` (every one but AMD's)."""
    return not on_amd(kernel)


def _is_handle(value) -> bool:
    """A looped reduction's pending result (resolved after its loop closes)."""
    return isinstance(value, tuple) and len(value) == 2 and value[0] == "__acc__"
