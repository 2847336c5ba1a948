"""Values of the tile language (`constexpr`, `tensor`) and the active semantic.

A kernel body manipulates `tensor`s: a handle from the active builder plus a language
type. Python operators and builtins (in `builtins.py`, `math.py`) hand the work to the
active `Semantic`, which the compiler front end or the interpreter installs with
`semantic_scope` while it runs a kernel. Calling a builtin outside a kernel is an error.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from functools import wraps
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from .dtypes import block_type, dtype

if TYPE_CHECKING:
    from .semantic import Semantic

_state = threading.local()
F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def semantic_scope(semantic: "Semantic"):
    """Install `semantic` as the one builtins and operators use, for this thread."""
    previous = getattr(_state, "semantic", None)
    _state.semantic = semantic
    try:
        yield semantic
    finally:
        _state.semantic = previous


def current_semantic() -> "Semantic":
    semantic = getattr(_state, "semantic", None)
    if semantic is None:
        raise RuntimeError(
            "tile-language builtins can only be used inside a kernel: "
            "decorate the function with @inductor_tile.jit and launch it as kernel[grid](...)"
        )
    return semantic


def builtin(fn: F) -> F:
    """Mark a language function: it may only run while a semantic is active."""

    @wraps(fn)
    def wrapper(*args, **kwargs):
        current_semantic()
        return fn(*args, **kwargs)

    wrapper.__tile_builtin__ = True  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]


def is_builtin(fn: Any) -> bool:
    return getattr(fn, "__tile_builtin__", False)


def _unwrap(x: Any) -> Any:
    return x.value if isinstance(x, constexpr) else x


class const:
    """The annotation `ptr: tl.const`: the kernel only reads through this pointer argument. Its type is
    then a const pointer (`*kfp32`): storing through it is a compile error."""


class constexpr:
    """A value known when the kernel is compiled. Also the annotation `BLOCK: tl.constexpr`.

    Arithmetic between constexprs is evaluated in Python and stays a constexpr.
    """

    def __init__(self, value: Any):
        self.value = _unwrap(value)

    def __repr__(self) -> str:
        return f"constexpr[{self.value!r}]"

    def __format__(self, spec: str) -> str:  # f"{BLOCK}" in a kernel shows the value, as the compiler's f-strings do
        return format(self.value, spec)

    def __index__(self) -> int:
        return self.value.__index__()

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __hash__(self) -> int:
        return hash(self.value)

    def __call__(self, *args, **kwargs):
        return self.value(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name == "value":
            raise AttributeError(name)
        return getattr(self.value, name)

    def to(self, dtype: Any, *args: Any, **kwargs: Any) -> Any:
        """A number as a tile value of `dtype`: an integer argument specialized because it equals 1
        is a constexpr in the kernel, and `n.to(tl.float32)` must still work on it."""
        if not isinstance(self.value, (bool, int, float)):
            raise AttributeError(f"{type(self.value).__name__} constexpr has no attribute 'to'")
        return current_semantic().to_tensor(self.value).to(dtype, *args, **kwargs)


def _constexpr_binary(op: Callable[[Any, Any], Any], reflected: bool = False):
    def method(self: constexpr, other: Any) -> Any:
        if isinstance(other, tensor):
            return NotImplemented
        a, b = self.value, _unwrap(other)
        return constexpr(op(b, a) if reflected else op(a, b))

    return method


def _constexpr_unary(op: Callable[[Any], Any]):
    def method(self: constexpr) -> constexpr:
        return constexpr(op(self.value))

    return method


import operator as _op  # noqa: E402

_BINARY_OPERATORS = {
    "add": _op.add, "sub": _op.sub, "mul": _op.mul, "truediv": _op.truediv, "floordiv": _op.floordiv,
    "mod": _op.mod, "pow": _op.pow, "and": _op.and_, "or": _op.or_, "xor": _op.xor,
    "lshift": _op.lshift, "rshift": _op.rshift,
}
for _name, _fn in _BINARY_OPERATORS.items():
    setattr(constexpr, f"__{_name}__", _constexpr_binary(_fn))
    setattr(constexpr, f"__r{_name}__", _constexpr_binary(_fn, reflected=True))
for _name, _fn in {"eq": _op.eq, "ne": _op.ne, "lt": _op.lt, "le": _op.le, "gt": _op.gt, "ge": _op.ge}.items():
    setattr(constexpr, f"__{_name}__", _constexpr_binary(_fn))
for _name, _fn in {"neg": _op.neg, "pos": _op.pos, "invert": _op.invert, "abs": abs}.items():
    setattr(constexpr, f"__{_name}__", _constexpr_unary(_fn))


class tensor:
    """A tile-language value: a scalar or a block (tile) of a static shape.

    `handle` belongs to the active builder (an SSA value when compiling, a torch tensor
    when interpreting); `type` is a `dtype` (scalars, pointers) or a `block_type`.
    """

    def __init__(self, handle: Any, type: dtype | block_type):
        self.handle = handle
        self.type = type

    @property
    def dtype(self) -> dtype:
        return self.type.scalar

    @property
    def shape(self) -> list[constexpr]:
        return [constexpr(d) for d in self.type.shape]

    @property
    def numel(self) -> constexpr:
        n = 1
        for d in self.type.shape:
            n *= d
        return constexpr(n)

    def __repr__(self) -> str:
        return f"tensor({self.type})"

    # --- conversions to Python (only the interpreter has concrete values) ---
    def __bool__(self) -> bool:
        return bool(current_semantic().to_python(self))

    def __index__(self) -> int:
        return int(current_semantic().to_python(self))

    def __int__(self) -> int:
        return int(current_semantic().to_python(self))

    def __float__(self) -> float:
        return float(current_semantic().to_python(self))

    # --- methods, as in Triton ----------------------------------------------
    def to(self, dtype: dtype, fp_downcast_rounding: Any = None, bitcast: bool = False) -> "tensor":
        if _unwrap(fp_downcast_rounding) is not None:
            if _unwrap(bitcast):
                raise ValueError("x.to(...): fp_downcast_rounding and bitcast=True exclude each other")
            return current_semantic().cast_rounded(self, _unwrap(dtype), fp_downcast_rounding)
        return current_semantic().cast(self, _unwrap(dtype), bitcast=bool(_unwrap(bitcast)))

    def __getitem__(self, slices: Any) -> "tensor":
        return current_semantic().getitem(self, slices)

    def reshape(self, *shape: Any) -> "tensor":
        from .builtins import reshape

        return reshape(self, *shape)

    def broadcast_to(self, *shape: Any) -> "tensor":
        from .builtins import broadcast_to

        return broadcast_to(self, *shape)

    def expand_dims(self, axis: Any) -> "tensor":
        from .builtins import expand_dims

        return expand_dims(self, axis)

    def sum(self, axis: Any = None, keep_dims: Any = False) -> "tensor":
        from .builtins import sum as sum_

        return sum_(self, axis, keep_dims=keep_dims)

    def __hash__(self) -> int:
        return id(self)


def _tensor_binary(method: str, reflected: bool = False):
    def fn(self: tensor, other: Any) -> tensor:
        semantic = current_semantic()
        if reflected:
            return getattr(semantic, method)(other, self)
        return getattr(semantic, method)(self, other)

    return fn


_TENSOR_BINARY = {
    "add": "add", "sub": "sub", "mul": "mul", "truediv": "truediv", "floordiv": "floordiv", "mod": "mod",
    "and": "and_", "or": "or_", "xor": "xor_", "lshift": "shl", "rshift": "shr",
}
for _name, _method in _TENSOR_BINARY.items():
    setattr(tensor, f"__{_name}__", _tensor_binary(_method))
    setattr(tensor, f"__r{_name}__", _tensor_binary(_method, reflected=True))
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(tensor, f"__{_name}__", _tensor_binary(_name))
tensor.__neg__ = lambda self: current_semantic().minus(self)  # type: ignore[assignment]
tensor.__pos__ = lambda self: self  # type: ignore[assignment]
tensor.__invert__ = lambda self: current_semantic().invert(self)  # type: ignore[assignment]
tensor.__abs__ = lambda self: current_semantic().abs(self)  # type: ignore[assignment]
